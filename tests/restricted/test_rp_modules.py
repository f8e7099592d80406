"""Imports and modules under the RestrictedPython layer alone: every basic module runs its
everyday code, modules are proxies, a refused import or name says why, and
SANDBOX_ALLOWED_IMPORTS wildcards admit only what they name."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from sandbox import profiles

from rp_calls import BASIC, blocked, ok, run, validate


# --------------------------------------------------------------------- every basic module

MODULE_SNIPPETS = {
    "math": ("import math\nresult = math.factorial(5) + math.gcd(12, 18) + math.floor(math.pi)", 129),
    "cmath": ("import cmath\nresult = cmath.sqrt(-4) == 2j", True),
    "random": ("import random\nr = random.Random(1)\nresult = r.randint(1, 100)", 18),
    "statistics": ("import statistics\nresult = statistics.median([3, 1, 2])", 2),
    "decimal": ("import decimal\nresult = str(decimal.Decimal('1.10') * 3)", "3.30"),
    "fractions": ("import fractions\nresult = str(fractions.Fraction(3, 6))", "1/2"),
    "numbers": ("import numbers\nresult = isinstance(3, numbers.Integral) and not isinstance(1.5, numbers.Integral)", True),
    "collections": ("import collections\nP = collections.namedtuple('P', 'x y')\nresult = [P(1, 2).y, collections.OrderedDict(a=1)]", [2, {"a": 1}]),
    "collections.abc": ("import collections.abc\nresult = [isinstance({}, collections.abc.Mapping), isinstance(1, collections.abc.Iterable)]", [True, False]),
    "itertools": ("import itertools\nresult = list(itertools.islice(itertools.count(5), 3))", [5, 6, 7]),
    "functools": ("import functools\nresult = functools.partial(int, base=2)('101')", 5),
    "operator": ("import operator\nresult = [operator.itemgetter(1)([5, 6]), operator.add(2, 3), operator.attrgetter('real')(3), operator.methodcaller('upper')('a')]", [6, 5, 3, "A"]),
    "heapq": ("import heapq\nh = []\nheapq.heappush(h, 3)\nheapq.heappush(h, 1)\nresult = [heapq.heappop(h), heapq.nsmallest(2, [5, 1, 4, 2])]", [1, [1, 2]]),
    "bisect": ("import bisect\nresult = bisect.bisect_left([1, 3, 5], 4)", 2),
    "copy": ("import copy\na = [[1]]\nb = copy.deepcopy(a)\nb[0].append(2)\nresult = [a, b, copy.copy(a) == a]", [[[1]], [[1, 2]], True]),
    "array": ("import array\na = array.array('i', [1, 2, 3])\na[0] = 7\nresult = a.tolist()", [7, 2, 3]),
    "string": ("import string\nresult = string.ascii_lowercase[:3] + string.Template('$x!').substitute(x='hi') + string.capwords('a b')", "abchi!A B"),
    "textwrap": ("import textwrap\nresult = textwrap.wrap('aaa bbb ccc', 7)", ["aaa bbb", "ccc"]),
    "re": ("import re\nresult = re.sub(r'\\s+', ' ', 'a   b')", "a b"),
    "difflib": ("import difflib\nresult = difflib.SequenceMatcher(None, 'abcd', 'abed').ratio()", 0.75),
    "unicodedata": ("import unicodedata\nresult = unicodedata.name('A')", "LATIN CAPITAL LETTER A"),
    "base64": ("import base64\nresult = base64.b64decode('aGk=').decode()", "hi"),
    "binascii": ("import binascii\nresult = binascii.hexlify(b'\\x01\\xff').decode()", "01ff"),
    "hashlib": ("import hashlib\nresult = hashlib.sha1(b'abc').hexdigest()", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    "hmac": ("import hmac\nresult = hmac.new(b'key', b'msg', 'sha256').hexdigest()", "2d93cbc1be167bcb1637a4a23cbff01a7878f0c50ee833954ea5221bb1b8c628"),
    "secrets": ("import secrets\nresult = [len(secrets.token_hex(8)), secrets.choice([7])]", [16, 7]),
    "json": ("import json\nresult = json.dumps({'b': 1, 'a': [True, None]}, sort_keys=True)", '{"a": [true, null], "b": 1}'),
    "csv": ("import csv\nresult = list(csv.reader(['a,b', '1,\"2,3\"']))", [["a", "b"], ["1", "2,3"]]),
    "html": ("import html\nresult = [html.escape('<a&b>'), html.unescape('&lt;')]", ["&lt;a&amp;b&gt;", "<"]),
    "html.parser": ("""
from html.parser import HTMLParser
class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
p = Tags()
p.feed('<p><b>x</b><i>y</i></p>')
result = p.tags
""", ["p", "b", "i"]),
    "xml.etree.ElementTree": ("import xml.etree.ElementTree as ET\nroot = ET.fromstring('<r><i>1</i><i>2</i></r>')\nresult = [i.text for i in root.findall('i')]", ["1", "2"]),
    "urllib.parse": ("import urllib.parse\nu = urllib.parse.urlparse('https://x.org/p?q=1&q=2')\nresult = [u.netloc, urllib.parse.parse_qs(u.query), urllib.parse.quote('a b')]", ["x.org", {"q": ["1", "2"]}, "a%20b"]),
    "datetime": ("import datetime\nresult = (datetime.date(2024, 3, 1) - datetime.date(2024, 2, 1)).days", 29),
    "time": ("import time\nresult = [time.gmtime(0).tm_year, time.time() > 0, time.strftime('%Y', time.gmtime(0))]", [1970, True, "1970"]),
    "calendar": ("import calendar\nresult = [calendar.isleap(2024), calendar.monthrange(2024, 2)]", [True, [3, 29]]),
    "uuid": ("import uuid\nresult = [str(uuid.uuid5(uuid.NAMESPACE_DNS, 'python.org')), uuid.uuid4().version]", ["886313e1-3b8a-5372-9b90-0c9aee199e5d", 4]),
    "dataclasses": ("import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass P:\n    x: int\nresult = [dataclasses.is_dataclass(P), [f.name for f in dataclasses.fields(P)], dataclasses.replace(P(1), x=2).x]", [True, ["x"], 2]),
    "enum": ("import enum\nN = enum.IntEnum('N', 'A B')\nresult = [N.B.value, N.A < N.B]", [2, True]),
    "typing": ("import typing\nresult = [typing.get_origin(typing.List[int]) is list, typing.TYPE_CHECKING, typing.cast(int, '1')]", [True, False, "1"]),
    "abc": ("""
import abc
class Base(abc.ABC):
    @abc.abstractmethod
    def area(self):
        ...
class Sq(Base):
    def __init__(self, s):
        self.s = s
    def area(self):
        return self.s ** 2
try:
    Base()
    refused = False
except TypeError:
    refused = True
result = [refused, Sq(3).area()]
""", [True, 9]),
    "contextlib": ("""
import contextlib
log = []
@contextlib.contextmanager
def tag(name):
    log.append("<" + name + ">")
    yield
    log.append("</" + name + ">")
with tag("b"):
    log.append("x")
result = "".join(log)
""", "<b>x</b>"),
    "types": ("import types\nns = types.SimpleNamespace(a=1)\nns.b = 2\nresult = [ns.a, ns.b, isinstance(None, types.NoneType)]", [1, 2, True]),
    "pprint": ("import pprint\nresult = pprint.pformat({'b': 1, 'a': 2})", "{'a': 2, 'b': 1}"),
    "reprlib": ("import reprlib\nresult = reprlib.repr(list(range(100)))", "[0, 1, 2, 3, 4, 5, ...]"),
    "zlib": ("import zlib\nresult = [zlib.crc32(b'abc'), zlib.decompress(zlib.compress(b'abc' * 10)) == b'abc' * 10]", [891568578, True]),
    "struct": ("import struct\nresult = list(struct.unpack('<hI', struct.pack('<hI', -2, 7)))", [-2, 7]),
    "colorsys": ("import colorsys\nresult = colorsys.rgb_to_hsv(1.0, 0.0, 0.0)", [0.0, 1.0, 1.0]),
    "graphlib": ("import graphlib\nresult = list(graphlib.TopologicalSorter({'b': {'a'}}).static_order())", ["a", "b"]),
    "keyword": ("import keyword\nresult = [keyword.iskeyword('def'), keyword.iskeyword('x')]", [True, False]),
    "ipaddress": ("import ipaddress\nresult = str(ipaddress.ip_network('10.0.0.0/24').broadcast_address)", "10.0.0.255"),
    "fnmatch": ("import fnmatch\nresult = fnmatch.fnmatch('data.csv', '*.csv')", True),
    "queue": ("import queue\nq = queue.LifoQueue()\nq.put(1)\nq.put(2)\nresult = [q.get(), q.qsize()]", [2, 1]),
    "tomllib": ("import tomllib\nresult = tomllib.loads('a = [1, 2]')", {"a": [1, 2]}),
    "configparser": ("import configparser\nc = configparser.ConfigParser()\nc.read_string('[a]\\nx = 1')\n"
                     "result = [c.sections(), c.getint('a', 'x')]", [["a"], 1]),
    "errno": ("import errno\nresult = [errno.errorcode[errno.ENOENT], errno.EEXIST > 0]", ["ENOENT", True]),
    "http": ("from http import HTTPStatus\nresult = [HTTPStatus(418).phrase, int(HTTPStatus.CREATED)]",
             ["I'm a Teapot", 201]),
}


def test_uuid_reads_no_hardware_address():
    """uuid.getnode() and uuid1() read the network card's MAC address: in this process, whose
    network namespace is the host's, the snippet gets a random node of its own instead."""
    import uuid
    result, _ = ok("import uuid\nfrom uuid import uuid1, getnode\n"
                   "result = [getnode(), uuid.getnode(), uuid1().node, uuid.uuid1().node, uuid1(node=5).node,\n"
                   "          uuid.uuid1().version]")
    node = result[0]
    assert result[1:4] == [node] * 3 and result[4:] == [5, 1], result
    assert node != uuid.getnode() and node & (1 << 40), (hex(node), hex(uuid.getnode()))


def test_every_basic_module_has_a_snippet():
    assert set(MODULE_SNIPPETS) == set(profiles.BASIC)


@pytest.mark.parametrize("module", sorted(MODULE_SNIPPETS))
def test_basic_module(module):
    if importlib.util.find_spec(module.split(".")[0]) is None:
        pytest.skip(f"{module} is not in this Python (tomllib is new in 3.11)")
    code, expected = MODULE_SNIPPETS[module]
    assert ok(code)[0] == expected


def test_refused_import_is_visible_and_recorded():
    code = "try:\n    import mmap\nexcept ImportError as e:\n    result = str(e)"
    reply, _, _ = run(code)
    assert reply["success"] and "'mmap'" in reply["result"]
    assert reply["security_events"] == [{"kind": "import_blocked", "detail": reply["result"]}]
    reply = blocked("import subprocess")
    assert "subprocess" in reply["error"]


def test_refused_attribute_is_an_attribute_error_and_recorded():
    code = "import typing\ntry:\n    typing.sys\nexcept AttributeError as e:\n    result = 'refused'"
    reply, _, _ = run(code)
    assert reply["result"] == "refused"
    assert reply["security_events"][0]["kind"] == "attribute_blocked"


def test_attribute_error_obj_is_never_the_real_module():
    code = ("import json\ntry:\n    json.nope\nexcept AttributeError as e:\n    o = e.obj\n"
            "result = [repr(o), o is json]")
    result, _ = ok(code)
    assert "sandboxed" in result[0] and result[1] is True


def test_module_write_does_not_persist_across_snippets():
    run("import json\ntry:\n    json.dumps = lambda *a, **k: 'ESCAPED'\nexcept Exception:\n    pass")
    run("import xml.etree.ElementTree as ET\nET.fromstring = None")
    assert ok("import json\njson.dumps(1)")[0] == "1"
    assert ok("import xml.etree.ElementTree as ET\nET.fromstring('<a/>').tag")[0] == "a"
    import json as real_json
    assert real_json.dumps(1) == "1"


def test_modules_are_proxies_and_the_same_per_execution():
    result, _ = ok("import json\nimport json as j\nfrom json import dumps\nresult = [json is j, repr(json), dumps is json.dumps]")
    assert result == [True, "<module 'json' (sandboxed)>", True]


def test_operator_and_types_are_sanitized():
    result, _ = ok("import operator\nresult = [operator.attrgetter('real', 'imag')(3), operator.methodcaller('count', 'a')('banana')]")
    assert result == [[3, 0], 3]
    blocked("import operator\noperator.attrgetter('__class__')(1)")
    blocked("import operator\noperator.methodcaller('__reduce__')(1)")
    blocked("import types\ntypes.MethodType")
    blocked("import types\ntypes.prepare_class")
    assert ok("import types\nresult = types.MappingProxyType({'a': 1})['a']")[0] == 1


def test_typing_type_checking_and_everyday_typing_work():
    code = ("from typing import TYPE_CHECKING, NamedTuple, Optional\nclass P(NamedTuple):\n"
            "    x: int\n    y: Optional[str] = None\nresult = [TYPE_CHECKING, P(1).x, P(1, 'a').y]")
    assert ok(code)[0] == [False, 1, "a"]


def test_dataclasses_fields_expose_nothing_dangerous():
    code = ("import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int = 1\n"
            "f = dataclasses.fields(P)[0]\nresult = [f.name, repr(f.type), f.default, f.init]")
    assert ok(code)[0] == ["x", "<class 'int'>", 1, True]


def test_filesystem_profile_gives_os_path_and_the_os_subset_only():
    allowed = profiles.allowed_modules(["basic", "filesystem"])
    assert ok("import os.path\nos.path.join('a', 'b')", allowed=allowed)[0] == "a/b"
    assert ok("from os import path\npath.basename('/x/y')", allowed=allowed)[0] == "y"
    assert ok("import os\nos.path.join('a', 'b')", allowed=allowed)[0] == "a/b"
    blocked("import os.path\nos.system", allowed=allowed)
    blocked("import os.path\nos.path.os.system", allowed=allowed)
    blocked("import os.path\nos.path.sys", allowed=allowed)
    blocked("import os\nos.system", allowed=allowed)


def test_dangerous_names_in_allowed_modules_are_still_refused():
    allowed = BASIC | {"os", "sys", "subprocess", "ctypes", "builtins"}
    for name in ("subprocess", "ctypes", "builtins"):
        blocked(f"import {name}", allowed=allowed)
    blocked("import sys\nsys.modules", allowed=allowed)   # only ever the subset
    blocked("import os\nos.execv", allowed=allowed)


def test_network_profile_allows_socket_import():
    allowed = profiles.allowed_modules(["basic", "network"])
    assert ok("import socket\nresult = socket.AF_INET > 0", allowed=allowed)[0] is True
    blocked("import socket\nsocket.os", allowed=allowed)


def test_c_level_imports_of_library_helpers_work():
    # datetime.strptime imports _strptime from C through the import hook; json, decimal and
    # re raise their own errors from inside C code.
    code = ("import datetime, time\nd = datetime.datetime.strptime('2024-01-02', '%Y-%m-%d')\n"
            "result = [d.day, time.strptime('2024', '%Y').tm_year]")
    reply, _, _ = run(code)
    assert reply["success"] and reply["result"] == [2, 2024] and reply["security_events"] == []
    reply = blocked("import datetime\ndatetime.datetime.strptime('not a date', '%Y-%m-%d')",
                    error_types=("runtime_error",))
    assert reply["error"].startswith("ValueError") and ".py" not in reply["traceback"]


def test_library_stdout_writes_are_captured():
    reply, out, _ = run("import calendar\ncalendar.prmonth(2024, 1)\nimport pprint\npprint.pprint({'k': 1})")
    assert reply["success"]
    assert "January 2024" in out and "{'k': 1}" in out


# --------------------------------------------------------------------- SANDBOX_ALLOWED_IMPORTS=pkg.*
def test_a_wildcard_entry_imports_the_packages_submodules():
    allowed = profiles.allowed_modules(["basic"], ["packaging.*"])
    result, _ = ok("import packaging.version\nfrom packaging.specifiers import SpecifierSet\n"
                   "result = [str(packaging.version.Version('1.2.3').release), '1.5' in SpecifierSet('>=1,<2')]",
                   allowed=allowed)
    assert result == ["(1, 2, 3)", True]


@pytest.mark.parametrize("code, says", [
    ("import packaging.tags\nresult = packaging.tags.sys", "packaging.tags.sys is the module 'sys', which is not"),
    ("import packaging._parser", "import of 'packaging._parser' is not allowed"),
    ("import urllib.request", "it is in the network profile, which is off"),
    # (refused on import, or as the package's attribute when another module imported it first)
    ("from http import client", "http.client"),
    ("import numpy.ctypeslib", "no setting allows it in the sandbox (loads shared libraries)"),
])
def test_a_wildcard_hands_out_no_module_refused_by_name(code, says):
    """Private modules, modules refused by name or under such a name, a profile's modules
    (urllib.request, http.client: the network profile, off), modules reached as attributes."""
    if "numpy" in code:
        pytest.importorskip("numpy")
    allowed = profiles.allowed_modules(["basic"], ["packaging.*", "urllib.*", "http.*", "numpy.*"])
    reply = blocked(code, allowed=allowed)
    assert says in reply["error"], reply


@pytest.mark.parametrize("code", [
    "import setuptools.config.expand as ex\nresult = ex.read_attr('gc.get_objects')",
    "import setuptools.config.expand as ex\nresult = ex.read_attr('os.getuid')()",
    "import setuptools.sandbox as sb\nresult = sb.run_setup",
])
def test_a_wildcard_on_a_package_that_imports_by_name_is_refused(code):
    """setuptools resolves 'module.attribute' strings with the real import system
    (config.expand.read_attr) and runs setup scripts as unrestricted Python."""
    pytest.importorskip("setuptools")
    allowed = profiles.allowed_modules(["basic"], ["setuptools.*"])
    reply = blocked(code, allowed=allowed)
    assert "no setting allows it in the sandbox" in reply["error"], reply


@pytest.fixture
def aliasing_package(tmp_path, monkeypatch):
    """A package that puts another module under a submodule's name, as six.moves and
    os.path do: pkg.shell is os (in sys.modules and as an attribute), pkg.ok is its own."""
    name = f"aliasing_{tmp_path.name.replace('-', '_')}"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("import os as _os, sys as _sys\n"
                                         "_sys.modules[__name__ + '.shell'] = shell = _os\n")
    (package / "ok.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


@pytest.mark.parametrize("code, says", [
    ("import {p}.shell\nresult = {p}.shell.system('true')", "{p}.shell is the module 'os', which is not allowed"),
    ("from {p}.shell import system\nresult = system('true')", "only the allowed submodules of {p}.shell are"),
    ("from {p} import shell\nresult = shell.system('true')", "{p}.shell is the module 'os', which is not allowed"),
    ("import {p}\nresult = {p}.shell.system('true')", "{p}.shell is the module 'os', which is not allowed"),
    ("import {p}.ok\nresult = {p}.shell.getcwd()", "{p}.shell is the module 'os', which is not allowed"),
])
def test_a_wildcard_admits_a_module_under_its_own_name_only(aliasing_package, code, says):
    allowed = profiles.allowed_modules(["basic"], [aliasing_package + ".*"])
    reply = blocked(code.format(p=aliasing_package), allowed=allowed)   # (its first import of the package)
    assert says.format(p=aliasing_package) in reply["error"], reply
    assert ok(f"import {aliasing_package}.ok\nresult = {aliasing_package}.ok.VALUE", allowed=allowed)[0] == 42


# --------------------------------------------------------------------- an import's policy, applied in full
def test_a_policy_that_failed_to_apply_after_an_import_is_completed_before_any_attribute(monkeypatch):
    """Near the recursion limit (or out of memory) the tables an import brings in can
    fail part way; the snippet may catch that, but nothing is handed out before they
    are applied in full."""
    from sandbox.restricted.libraries.policy import POLICY as library_policy
    calls, real = [], library_policy.refresh

    def refresh():
        calls.append(len(calls))
        if len(calls) == 1:
            raise RecursionError("maximum recursion depth exceeded")
        real()
    monkeypatch.setattr(library_policy, "refresh", refresh)
    result, _ = ok("try:\n    import json\nexcept RecursionError:\n    pass\nresult = [1].count(1)")
    assert result == 1
    assert len(calls) == 2, calls   # the failed one, then the attribute read's, before .count was handed out



def test_a_refused_name_imported_with_from_says_why():
    """from X import Y, where Y is refused: the refusal and what to use, not Python's
    "cannot import name" (IMPORT_FROM would replace the guard's message)."""
    reply = blocked("from typing import ForwardRef", error_types=("security_violation",))
    assert "ForwardRef" in reply["error"] and "cannot import name" not in reply["error"], reply


@pytest.mark.parametrize("code,instead", [
    ("from typing import ForwardRef", "the class itself"),
    ("import contextlib\nwith contextlib.chdir('/tmp'):\n    pass", "os.path.join"),
    ("import enum\nclass C(enum.Enum):\n    RED = 1\nenum.global_enum(C)", "Color.RED"),
    ("import dataclasses\nf = dataclasses.FunctionType", "callable(x)"),
])
def test_a_denied_library_object_says_what_to_write_instead(code, instead):
    """Each object no module hands out (rp_modules.DENIED_ADVICE) has its own advice,
    in execute's refusal and validate's report alike."""
    if "chdir" in code and sys.version_info < (3, 11):
        pytest.skip("contextlib.chdir is new in 3.11")
    if "global_enum" in code and sys.version_info < (3, 11):
        pytest.skip("enum.global_enum is new in 3.11")
    if "dataclasses.FunctionType" in code and sys.version_info >= (3, 13):
        pytest.skip("dataclasses no longer imports FunctionType in 3.13")
    reply = blocked(code, error_types=("security_violation",))
    assert instead in reply["error"], reply
    assert any(instead in e["message"] for e in validate(code)["validation"]["errors"]), validate(code)


def test_every_denied_object_has_advice_of_its_own():
    from sandbox.restricted import imports as rp_modules
    for denied in rp_modules.DENIED_OBJECTS.values():
        name, instead = denied.split(": ", 1)
        assert "." in name and len(instead) > 30, denied


def test_an_allowed_module_that_is_not_installed_says_so_and_stays_an_import_error():
    """`import seaborn` under the data-science profile on a server without seaborn says
    the module is allowed but missing (not a bare "No module named", like a typo),
    and is still a ModuleNotFoundError, so `except ImportError:` fallbacks work."""
    allowed = BASIC | {"absentlib"}
    reply, out, _ = run("try:\n    import absentlib\nexcept ImportError as e:\n    print(type(e).__name__)\n"
                        "from absentlib import thing", allowed=allowed)
    assert out == "ModuleNotFoundError\n", out
    assert not reply["success"] and reply["error"].startswith("ModuleNotFoundError: No module named 'absentlib': "
                                                              "it is allowed here but not installed"), reply
