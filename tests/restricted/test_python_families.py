"""Gadget families against the RestrictedPython layer alone (in-process,
no kernel layer): each family's cause is fixed where the stdlib uses the value,
and each test tries several variants of its own.

1. mutable registries in allowed modules (copy.dispatch_table and the like), and
   stdlib code that sets attributes by name on their behalf;
2. code generated from snippet-controlled names (dataclasses, the enum
   functional API, namedtuple);
3. values that reach the snippet without a guard: call results, items of
   iteration, unpacking, callbacks from library code, *args, and type(x).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from forked import run_in_child
from sandbox import profiles
from sandbox.restricted import run as restricted

REPO = Path(__file__).resolve().parents[2]
# The ordinary-user run has no data-science libraries: their families are skipped there.
needs_data_science = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("sympy", "pandas", "numpy")),
    reason="the data-science libraries are not installed here (make install-datascience)")
BASIC = profiles.allowed_modules(["basic"])
DS = profiles.allowed_modules(["basic", "data_science"])


def run(code, allowed=BASIC):
    """In-process for the basic profile; in a forked child when the data-science libraries
    are allowed, so that this test process never imports them (they would change what
    other tests see: copy.dispatch_table gains numpy's metaclass, sys.modules grows)."""
    def execute():
        out = io.StringIO()
        reply = restricted.execute(code, restricted=True, allowed_modules=allowed, stdout=out, stderr=out)
        return reply, out.getvalue()
    if allowed == BASIC:
        return execute()
    payload, status = run_in_child(execute)
    assert payload is not None and "error" not in payload, (status, payload)
    return tuple(payload["value"])


def refused(code, allowed=BASIC, error_types=("security_violation",)):
    reply, out = run(code, allowed)
    assert "ESCAPED" not in out + str(reply["result"]), (out, reply)
    assert not reply["success"] and reply["error_type"] in error_types, reply
    return reply


def works(code, allowed=BASIC):
    reply, out = run(code, allowed)
    assert reply["success"], reply
    return reply["result"]


# ---------------------------------------------------------------- 1. registries

REDUCER_CHAIN = """
import copy
class C:
    pass
def reducer(obj):
    return (lambda: TARGET, (), None, None, None)
copy.dispatch_table[C] = reducer
copy.copy(C())
print('ESCAPED:registry_write')
"""


@pytest.mark.parametrize("write", [
    "copy.dispatch_table[C] = reducer",
    "copy.dispatch_table.update({C: reducer})",
    "copy.dispatch_table.setdefault(C, reducer)",
    "copy.dispatch_table |= {C: reducer}",
    "from copy import dispatch_table\ndispatch_table[C] = reducer",
])
def test_registry_of_copy_is_read_only(write):
    code = REDUCER_CHAIN.replace("copy.dispatch_table[C] = reducer", write).replace("TARGET", "copy")
    refused(code, error_types=("security_violation", "runtime_error"))


@pytest.mark.parametrize("code", [
    "import urllib.parse\nurllib.parse.uses_netloc.append('evil')",
    "import hashlib\nhashlib.algorithms_available.add('evil')",
    "import typing\ntyping.EXCLUDED_ATTRIBUTES.append('evil')",
    "import calendar\ncalendar.mdays[1] = 99",
    "import xml.etree.ElementTree as ET\nET.HTML_EMPTY.add('evil')",
])
def test_every_module_level_container_is_read_only(code):
    refused(code, error_types=("security_violation", "runtime_error"))


def test_read_only_registries_can_still_be_read_and_copied():
    assert works("import calendar, urllib.parse\nm = list(calendar.mdays)\nm[1] = 99\n"
                 "u = list(urllib.parse.uses_netloc) + ['x']\n"
                 "result = [m[1], calendar.mdays[1], 'x' in u, 'x' in urllib.parse.uses_netloc]") == [99, 31, True, False]


CLEAN_PROCESS = """
import io, json, sys
from sandbox import profiles
from sandbox.restricted import run as restricted
out = io.StringIO()
reply = restricted.execute(sys.argv[1], restricted=True, allowed_modules=profiles.allowed_modules(["basic"]),
                           stdout=out, stderr=out)
print(json.dumps(reply))
"""


def test_writing_into_a_module_registry_says_what_to_do():
    """In a fresh interpreter: once numpy is imported (as in this test process, which
    collected the data-science tests), copy.dispatch_table holds numpy's metaclass as a
    key and is refused whole, with another message."""
    code = "import copy\nd = dict(copy.dispatch_table)\nd['x'] = 1\ncopy.dispatch_table[int] = print"
    done = subprocess.run([sys.executable, "-c", CLEAN_PROCESS, code], capture_output=True, text=True,
                          timeout=60, cwd=str(REPO))
    reply = json.loads(done.stdout)
    assert reply["error_type"] == "security_violation" and reply["line"] == 4, reply
    assert "read-only" in reply["error"] and "dict(" in reply["error"], reply["error"]



# copy.deepcopy's memo keeps every original alive in memo[id(memo)], a library object's
# real __dict__ among them: read, it writes past the guards; written in advance, it swaps
# the snippet's objects into a library object's copy.
MEMO_WRITE = """
import copy, textwrap
target = textwrap.TextWrapper(width=10)
def plant(memo):
    for kept in list(memo.values()):
        for original in (kept if isinstance(kept, list) else []):
            if isinstance(original, dict) and 'width' in original:
                original['width'] = 3
GET_MEMO
print('ESC' + 'APED' if target.width == 3 else 'held')
"""


@pytest.mark.parametrize("get_memo", [
    "memo = {}\ncopy.deepcopy([target, 1], memo)\nplant(memo)",                 # the snippet's own memo
    "from copy import deepcopy\nmemo = {}\ndeepcopy([target], memo)\nplant(memo)",
    "import functools\nmemo = {}\nfunctools.partial(copy.deepcopy, memo=memo)([target])\nplant(memo)",
    # the memo a __deepcopy__ is given, however the class got it
    "class Spy:\n    def __deepcopy__(self, memo):\n        plant(memo)\n        return 1\ncopy.deepcopy([target, Spy()])",
    "Spy = type('Spy', (), {'__deepcopy__': lambda self, memo: plant(memo)})\ncopy.deepcopy([target, Spy()])",
    "Spy = type('Spy', (), {'__deepcopy__': staticmethod(plant)})\ncopy.deepcopy([target, Spy()])",
    "class Base:\n    def __deepcopy__(self, memo):\n        plant(memo)\n        return 1\nclass Spy(Base):\n"
    "    pass\ncopy.deepcopy([target, Spy()])",
    "class Spy(textwrap.TextWrapper):\n    def __deepcopy__(self, memo):\n        plant(memo)\n        return 1\n"
    "copy.deepcopy([target, Spy()])",
    "import dataclasses\nclass Spy:\n    def __deepcopy__(self, memo):\n        plant(memo)\n        return 1\n"
    "@dataclasses.dataclass\nclass D:\n    x: object\ndataclasses.asdict(D([target, Spy()]))",  # library-made memo
])
def test_the_copy_memo_never_reaches_the_snippet(get_memo):
    refused(MEMO_WRITE.replace("GET_MEMO", get_memo), error_types=("security_violation", "runtime_error"))


@pytest.mark.parametrize("use", [
    "memo[id(target)]", "memo.get(id(target))", "id(target) in memo", "list(memo)", "len(memo)",
    "memo._memo", "getattr(memo, '_memo')", "vars(memo)", "type(memo)({}, target, None, None)",
    "memo[id(target)] = 1",
])
def test_a_memo_handle_gives_nothing_but_its_own_key(use):
    refused("import copy, textwrap\ntarget = textwrap.TextWrapper()\nclass Spy:\n    def __deepcopy__(self, memo):\n"
            f"        {use}\n        return 1\ncopy.deepcopy([target, Spy()])",
            error_types=("security_violation", "runtime_error"))


def test_a_deepcopy_method_passes_its_memo_on_and_records_its_copy():
    assert works("import copy\nclass Node:\n    def __init__(self):\n        self.me = self\n        self.items = [1, [2]]\n"
                 "    def __deepcopy__(self, memo):\n        if id(self) in memo:\n            return memo[id(self)]\n"
                 "        new = Node()\n        memo[id(self)] = new\n        new.items = copy.deepcopy(self.items, memo)\n"
                 "        new.me = copy.deepcopy(self.me, memo)\n        return new\n"
                 "n = Node()\nc = copy.deepcopy([n, n])\n"
                 "result = [c[0] is c[1], c[0].me is c[0], c[0].items, c[0].items is not n.items]") == \
        [True, True, [1, [2]], True]


# __new__ (a singleton's, an immutable type's): every __new__ a snippet reaches makes
# instances of its own classes only, or object.__new__ would make a library object whose
# __init__ never ran (a stand-in's checks, a library's invariants).
@pytest.mark.parametrize("code", [
    "import string\nobject.__new__(string.Template)",
    "import string\ngetattr(object, '__new__')(string.Template)",
    "import string\nclass E:\n    def __new__(cls, target):\n        return super().__new__(target)\nE(string.Template)",
    "import string\nclass S:\n    def __new__(cls):\n        return object.__new__(cls)\nS.__new__(string.Template)",
    "import string\nclass P(tuple):\n    def __new__(cls, *a):\n        return super().__new__(cls, a)\n"
    "P.__new__(string.Template)",
    "import string\nX = type('X', (), {'__new__': lambda cls: object.__new__(string.Template)})\nX()",
    "import types\nclass N:\n    def __new__(cls):\n        return super().__new__(types.SimpleNamespace)\nN()",
    "class Plain:\n    pass\nPlain.__new__(dict)",                       # an inherited __new__: own classes only
    "class Plain:\n    pass\nPlain().__new__(dict)",
    "import string\nclass T(string.Template):\n    pass\nT.__new__(T)",   # a library base's __init__ skipped
    "import collections\nclass D(collections.OrderedDict):\n    pass\nD.__new__(D)",
    "int.__new__(int, 5)",
])
def test_new_makes_only_the_snippets_own_objects(code):
    refused(code, error_types=("security_violation",))


def test_new_works_for_singletons_and_immutable_types():
    assert works("class Point(tuple):\n    def __new__(cls, x, y):\n        return super().__new__(cls, (x, y))\n"
                 "class Upper(str):\n    def __new__(cls, value):\n        return super().__new__(cls, value.upper())\n"
                 "class One:\n    _instance = None\n    def __new__(cls):\n        if cls._instance is None:\n"
                 "            cls._instance = object.__new__(cls)\n        return cls._instance\n"
                 "class User:\n    def __init__(self, name):\n        self.name = name\n    @classmethod\n"
                 "    def from_dict(cls, d):\n        u = cls.__new__(cls)\n        u.__dict__.update(d)\n        return u\n"
                 "class Bag(dict):\n    pass\n"
                 "result = [Point(1, 2), Upper('ab'), One() is One(), isinstance(Point(0, 0), tuple),\n"
                 "          User.from_dict({'name': 'a'}).name, type(Bag.__new__(Bag)).__name__]") == \
        [[1, 2], "AB", True, True, "a", "Bag"]

# ---------------------------------------------------------------- 2. names pasted into code

@pytest.mark.parametrize("names", [
    "[('__reduce_ex__', f), ('a', 1)]",
    "{'__getattr__': f, 'a': 1}",
    "'a __init_subclass__'",
    "[('_missing_', f), ('a', 1)]",
    "[('_generate_next_value_', f)]",
    "((n, 1) for n in ['__format__', 'a'])",
    "'a,_ignore_'",
    "[('a;b', 1)]",
    "[['__class_getitem__', f]]",
])
@pytest.mark.parametrize("base", ["Enum", "IntEnum", "Flag", "StrEnum"])
def test_enum_functional_api_refuses_hook_names(names, base):
    if base == "StrEnum" and not hasattr(__import__("enum"), "StrEnum"):
        pytest.skip("StrEnum is 3.11+")
    refused(f"import enum\ndef f(*a):\n    print('ESCAPED:enum_hook')\nE = enum.{base}('E', {names})\n"
            "E.a\nimport copy\ncopy.copy(E.a)\nformat(E.a, '')\n")


def test_enum_functional_api_still_works():
    assert works("import enum\nColor = enum.Enum('Color', 'RED GREEN')\nP = enum.IntEnum('P', [('LOW', 1), ('HIGH', 5)])\n"
                 "F = enum.Flag('F', {'R': 1, 'W': 2})\n"
                 "result = [Color.GREEN.value, P.HIGH + 1, (F.R | F.W).value, [c.name for c in Color]]") == \
        [2, 6, 3, ["RED", "GREEN"]]


@pytest.mark.parametrize("code", [
    "import collections\nP = collections.namedtuple('P', ['__class__'])",
    "import collections\nP = collections.namedtuple('P; import os', ['x'])",
    "import collections\nP = collections.namedtuple('P', 'x, y=__import__(\"os\")')",
    "import dataclasses\nC = dataclasses.make_dataclass('C', [('x: int = 0\\nimport os', int)])",
    "import dataclasses\nC = dataclasses.make_dataclass('C', [('__init__', int)], namespace={'__repr__': print})",
])
def test_generated_code_refuses_bad_names(code):
    refused(code, error_types=("security_violation", "runtime_error"))


def test_inherited_dataclass_fields_are_checked_where_dataclass_uses_them():
    """A base's field renamed after its creation (here by the test, standing for any
    write primitive) is caught when a subclass is decorated: the name is checked at
    the point dataclasses pastes it into source, not where the snippet first gave it."""
    @dataclasses.dataclass
    class Base:
        x: int = 0

    Base.__dataclass_fields__["x"].name = "x=0):\n    import os\n    os.system('id')\ndef f(y"
    ctx = restricted.ExecutionContext(BASIC, restricted.Events())

    class Sub(Base):
        y: int = 1
    ctx.classes.add(Sub)  # (standing for a class of the snippet's)

    with pytest.raises(restricted.SandboxAttributeError, match="field name"):
        ctx.dataclass(Sub)
    with pytest.raises(restricted.SandboxAttributeError, match="field name"):
        ctx.make_dataclass("M", ["z"], bases=(Base,))


def test_field_objects_cannot_be_renamed_by_the_snippet():
    for rename in ("f.name = 'x=0): pass\\ndef g(y'", "setattr(f, 'name', 'evil')",
                   "f.name += '; import os'"):
        refused("import dataclasses\n@dataclasses.dataclass\nclass B:\n    x: int = 0\n"
                f"f = dataclasses.fields(B)[0]\n{rename}\n")


def test_dataclasses_still_work():
    assert works("from dataclasses import dataclass, field\n@dataclass\nclass P:\n    x: int\n    y: int = 2\n"
                 "    tags: list = field(default_factory=list)\n@dataclass\nclass Q(P):\n    z: int = 3\n"
                 "q = Q(1)\nresult = [q.x, q.y, q.z, repr(P(5))]") == [1, 2, 3, "P(x=5, y=2, tags=[])"]


def test_private_dataclass_fields_run_on_the_snippets_own_classes():
    assert works("from dataclasses import dataclass, field, asdict, replace\n"
                 "@dataclass\nclass Account:\n    owner: str\n    _balance: float = 0.0\n"
                 "    _log: list = field(default_factory=list)\n    __pin: int = 0\n"
                 "    def deposit(self, amount):\n        self._balance += amount\n        self._log.append(amount)\n"
                 "        return self._balance\n"
                 "@dataclass(frozen=True, slots=True)\nclass Key:\n    _id: int\n"
                 "@dataclass\nclass Savings(Account):\n    _rate: float = 0.1\n"
                 "s = Savings('a', 5.0)\n"
                 "result = [s.deposit(2), asdict(s), replace(s, _balance=1.0)._balance, Key(3)._id, repr(Key(4))]") == \
        [7.0, {"owner": "a", "_balance": 7.0, "_log": [2], "_Account__pin": 0, "_rate": 0.1}, 1.0, 3,
         "Key(_id=4)"]


@pytest.mark.parametrize("field", [
    "_dflt_x: int = 0", "_type_x: int = 0", "_HAS_DEFAULT_FACTORY: int = 0", "_return_type: int = 0",  # dataclasses' own
    "_getattr_: int = 0", "_write_: int = 0", "_tmp0: int = 0", "_sandbox_x: int = 0", "__init__: int = 0",
])
def test_private_dataclass_fields_are_never_names_of_the_generated_code_or_guards(field):
    refused(f"import dataclasses\n@dataclasses.dataclass\nclass C:\n    x: int = 0\n    {field}\nC()",
            error_types=("security_violation", "syntax_error"))


@pytest.mark.parametrize("base", ["string.Template", "collections.OrderedDict", "json.JSONEncoder"])
def test_private_dataclass_fields_never_on_a_library_class(base):
    """The generated __init__ writes self._x with the real setattr: on a subclass of a library
    class that would be the library's private state, which `self._x = v` may not write either."""
    module = base.split(".")[0]
    reply = refused(f"import dataclasses, {module}\n@dataclasses.dataclass\nclass C({base}):\n    _x: int = 0\nC()",
                    error_types=("security_violation",))
    assert "field name '_x' is not allowed" in reply["error"], reply


def test_private_field_renamed_in_an_own_base_is_checked_where_dataclass_uses_it():
    @dataclasses.dataclass
    class Base:
        _x: int = 0

    ctx = restricted.ExecutionContext(BASIC, restricted.Events())
    ctx.classes.add(Base)
    for name in ("_x=0):\n    import os\ndef f(y", "_getattr_", "_dflt_y", "__init__"):
        Base.__dataclass_fields__["_x"].name = name

        class Sub(Base):
            y: int = 1
        ctx.classes.add(Sub)
        with pytest.raises(restricted.SandboxAttributeError, match="field name"):
            ctx.dataclass(Sub)


# ---------------------------------------------------------------- 3. values without a guard

SYMPY_FNS = "import sympy.strategies.util as u\n"  # a dict whose values include the metaclass `type`


@needs_data_science
@pytest.mark.parametrize("grab", [
    "T = u.basic_fns['op']",
    "T = [v for v in u.basic_fns.values()][0]",
    "for v in u.basic_fns.values():\n    T = v",
    "T = max(u.basic_fns.values(), key=str)",
    "T = next(iter(u.basic_fns.values()))",
    "import functools\nT = functools.reduce(lambda a, b: b, list(u.basic_fns.values()))",
    "def grab(*vals):\n    return vals\nT = grab(*u.basic_fns.values())[0]",
    "T = list(map(lambda v: v, u.basic_fns.values()))[0]",
    "a, *rest = u.basic_fns.values()\nT = a",
    "import operator\nT = operator.itemgetter('op')(u.basic_fns)",
    "import itertools, functools\nT = list(itertools.starmap(functools.partial, zip(u.basic_fns.values())))[0]",
    "d = dict(u.basic_fns)\nT = d['op']",
])
def test_items_results_and_callbacks_are_vetted(grab):
    """The metaclass `type` sits in a sympy dict: whichever way it is reached, the snippet
    never holds it (with it, type(name, bases, {'__getattr__': ...}) skips the class-body policy)."""
    refused(SYMPY_FNS + grab + "\nX = T('X', (), {'__getattr__': print})\nprint('ESCAPED:metaclass')\n",
            allowed=DS)


@needs_data_science
@pytest.mark.parametrize("code", [
    "import pandas as pd\nm = pd.compat.import_optional_dependency('os')\nprint('ESCAPED:' + m.getcwd())",
    "import pandas as pd\nfor m in [pd.compat.import_optional_dependency('os')]:\n    print('ESCAPED', m)",
    "import pandas as pd\nf = pd.compat.import_optional_dependency\nm = list(map(f, ['os']))\n"
    "print('ESCAPED', m)",
])
def test_call_results_that_are_modules_are_vetted(code):
    pytest.importorskip("pandas")
    refused(code, allowed=DS, error_types=("security_violation", "runtime_error"))


@pytest.mark.parametrize("code", [
    "import types\nF = type(lambda: 0)\nprint('ESCAPED', F)",
    "def f():\n    pass\nF = type(f)\nprint('ESCAPED', F)",
    "import typing\nR = type(typing.get_args(typing.Optional['x'])[0])\nprint('ESCAPED', R)",
    "import typing\nfor a in typing.get_args(typing.Optional['x']):\n    R = type(a)\n",
])
def test_type_of_a_value_never_hands_out_a_denied_class(code):
    refused(code)


@needs_data_science
def test_callbacks_from_library_code_get_vetted_arguments():
    """sorted/map/filter call snippet functions with items no guard saw: vetted on entry."""
    refused(SYMPY_FNS + "def key(v, *more, **kw):\n    v('X', (), {'__getattr__': print})\n    return 0\n"
            "sorted(u.basic_fns.values(), key=key)\nprint('ESCAPED')\n", allowed=DS)


def test_ordinary_code_through_the_new_guards():
    assert works("import functools, itertools, operator\n"
                 "def add(a, b=1, *rest, scale=1, **extra):\n    return (a + b + sum(rest)) * scale\n"
                 "rows = [{'n': i, 'sq': i * i} for i in range(5)]\n"
                 "total = functools.reduce(operator.add, map(lambda r: r['sq'], rows))\n"
                 "pairs = list(itertools.starmap(add, [(1, 2), (3, 4)]))\n"
                 "a, *rest = sorted(rows, key=lambda r: -r['n'])\n"
                 "result = [total, pairs, a['n'], add(1, 2, 3, scale=2), type(3) is int,\n"
                 "          (lambda *xs, **kw: len(xs) + len(kw))(1, 2, k=3)]") == [30, [3, 7], 4, 12, True, 3]


@needs_data_science
@pytest.mark.parametrize("code", [
    "import sympy\nresult = str(sympy.S('x.real'))",
    "import pandas as pd\nresult = str(pd.DataFrame({'a': [1]}).query('a.real > 0'))",
    "import pandas as pd\nresult = str(getattr(pd.DataFrame({'a': [1]}), 'style'))",
    "import numpy as np\nresult = str(np.lib.stride_tricks.as_strided)",
])
def test_library_tables_apply_to_modules_imported_by_the_snippet(code):
    """Without a fork server that imported the libraries first (this forked child has not),
    the snippet's own import brings them in: the tables are resolved again after it, and
    the string parser it loaded is switched off for the rest of the run."""
    pytest.importorskip("sympy")
    refused(code, allowed=DS)


@needs_data_science
@pytest.mark.parametrize("grab", [
    "lst = [*u.basic_fns.values()]",
    "d = {**u.basic_fns}",
    "t = (*u.basic_fns.values(),)",
])
def test_displays_that_unpack_library_containers(grab):
    refused(SYMPY_FNS + grab + "\nprint('ESCAPED:unpacked')\n", allowed=DS)


def test_recursion_is_as_deep_as_in_plain_python():
    """The guards add a frame per call (_call_): the limit is raised to match, so a
    recursion plain Python runs (depth 950 of its default 1000) runs here too, and
    unbounded recursion still ends in RecursionError, not a crash."""
    code = "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\nresult = depth(950)"
    assert works(code) == 950
    reply, _ = run("def f(n):\n    return f(n + 1) + 1\nf(0)")
    assert reply["error_type"] == "runtime_error" and "RecursionError" in reply["error"]


# ---------------------------------------------------------------- 4. names chosen past the setattr guard
# An instance attribute named like a protocol (__reduce_ex__, __deepcopy__, numpy's
# __array_interface__) is read by library code from the instance: copy then rebuilds
# and writes onto any object the snippet holds, numpy reads any memory address.

COPY_WRITE = """
import copy, string, types
target = string.Template('x')
def reduce_ex(*args):
    return (lambda: target, (), {'delimiter': '%'})
SETUP
copy.copy(HOLDER)
print('ESCAPED:' + target.delimiter if target.delimiter == '%' else 'held')
"""


@pytest.mark.parametrize("setup, holder", [
    ("ns = types.SimpleNamespace(**{'__reduce_ex__': reduce_ex})", "ns"),
    ("ns = types.SimpleNamespace(**dict([('__reduce_ex__', reduce_ex)]))", "ns"),
    ("ns = types.SimpleNamespace({'__reduce_ex__': reduce_ex})", "ns"),  # (a mapping: 3.13)
    ("T = type(types.SimpleNamespace())\nns = T(**{'__reduce_ex__': reduce_ex})", "ns"),
    ("class N(types.SimpleNamespace):\n    def __init__(self, **kw):\n        super().__init__(**kw)\n"
     "ns = N(**{'__reduce_ex__': reduce_ex})", "ns"),
    ("class N(types.SimpleNamespace):\n    pass\nns = N(a=1)\n"
     "super(types.SimpleNamespace, ns).__init__(**{'__reduce_ex__': reduce_ex})", "ns"),  # past the stand-in
    ("class O:\n    pass\no = O()\no.__dict__['__reduce_ex__'] = reduce_ex", "o"),
    ("class O:\n    pass\no = O()\no.__dict__.update({'__reduce_ex__': reduce_ex})", "o"),
    ("class O:\n    pass\no = O()\no.__dict__.setdefault('__reduce_ex__', reduce_ex)", "o"),
    ("class O:\n    pass\no = O()\no.__dict__ |= {'__reduce_ex__': reduce_ex}", "o"),
    # functools.cached_property stores under self.attrname, which a subclass sets
    ("import functools\nclass P(functools.cached_property):\n    def __set_name__(self, owner, name):\n"
     "        self.attrname = '__reduce_ex__'\nclass O:\n    x = P(lambda self: reduce_ex)\no = O()\no.x", "o"),
    ("import functools\nclass P(functools.cached_property):\n    def plant(self):\n"
     "        self.attrname = '__reduce_ex__'\nclass O:\n    x = P(lambda self: reduce_ex)\n"
     "vars(O)['x'].plant()\no = O()\no.x", "o"),
])
def test_protocol_names_cannot_be_set_on_an_instance(setup, holder):
    refused(COPY_WRITE.replace("SETUP", setup).replace("HOLDER", holder))


@pytest.mark.skipif(sys.version_info < (3, 13), reason="copy.replace is new in Python 3.13")
def test_copy_replace_sets_no_protocol_name():
    """SimpleNamespace.__replace__ sets every name copy.replace passes it."""
    refused(COPY_WRITE.replace("SETUP", "ns = copy.replace(types.SimpleNamespace(a=1), **{'__reduce_ex__': reduce_ex})")
            .replace("HOLDER", "ns"))
    assert works("import copy, types, collections\nP = collections.namedtuple('P', 'x y')\n"
                 "ns = copy.replace(types.SimpleNamespace(a=1), b=2)\n"
                 "result = [ns.a, ns.b, copy.replace(P(1, 2), y=5)]") == [1, 2, [1, 5]]


def test_cached_property_still_caches_under_its_own_name():
    assert works("import functools\nclass C:\n    calls = 0\n    @functools.cached_property\n    def total(self):\n"
                 "        C.calls += 1\n        return 42\n    @functools.cached_property\n    def _part(self):\n"
                 "        return 7\nc = C()\n"
                 "result = [c.total, c.total, C.calls, c._part, isinstance(C.__dict__['total'] if False else "
                 "functools.cached_property(len), functools.cached_property), sorted(vars(c))]"
                 ) == [42, 42, 1, 7, True, ["_part", "total"]]


def test_an_own_dict_written_around_its_methods_does_not_reach_the_object():
    """dict.update(o.__dict__, ...) and dict.__setitem__ write into the copy the snippet
    got, not into the instance: the copy protocol stays unreachable."""
    code = COPY_WRITE.replace("SETUP", "class O:\n    pass\no = O()\n"
                              "dict.update(o.__dict__, {'__reduce_ex__': reduce_ex})").replace("HOLDER", "o")
    reply, out = run(code)
    assert reply["success"] and out.strip() == "held", (reply, out)


def test_namespaces_and_own_dicts_still_work():
    assert works("import types, json\n"
                 "ns = types.SimpleNamespace(a=1, b='x')\nns.c = 3\n"
                 "class N(types.SimpleNamespace):\n    pass\n"
                 "class P:\n    def __init__(self, **kw):\n        self.__dict__.update(kw)\n"
                 "p = P(a=1, b=[2])\np.__dict__['c'] = 3\np.__dict__.setdefault('d', 4)\n"
                 "del p.__dict__['a']\np.__dict__['_private'] = 5\n"
                 "result = [ns == types.SimpleNamespace(a=1, b='x', c=3), isinstance(ns, types.SimpleNamespace),\n"
                 "          type(ns) is types.SimpleNamespace, isinstance(N(a=1), types.SimpleNamespace),\n"
                 "          N(a=1).a, json.loads(json.dumps(p.__dict__)), p.c, p.d, hasattr(p, 'a'),\n"
                 "          p.__dict__.pop('d'), hasattr(p, 'd')]") == [
        True, True, True, True, 1, {"b": [2], "c": 3, "d": 4, "_private": 5}, 3, 4, False, 4, False]


def test_an_own_dict_copies_as_a_plain_dict():
    assert works("import copy\nclass O:\n    def __init__(self):\n        self.a = [1]\no = O()\n"
                 "c, d, e = copy.copy(o.__dict__), copy.deepcopy(vars(o)), o.__dict__.copy()\n"
                 "d['a'].append(2)\nresult = [type(c) is dict, c, d, e, o.a]") == [
        True, {"a": [1]}, {"a": [1, 2]}, {"a": [1]}, [1]]


def test_the_view_class_makes_no_view_of_a_foreign_object():
    """type(obj.__dict__) reaches the view's class: called on a library object it would copy
    that object's private attributes (here the real logging.Logger behind the snippet's)."""
    reply = refused("import logging\nclass O:\n    pass\nView = type(O().__dict__)\n"
                    "print('ESCAPED:' + str(View(logging.getLogger('x'), print, print)))",
                    error_types=("runtime_error", "security_violation"))
    assert "vars(obj)" in reply["error"], reply


def test_vars_of_an_own_object_writes_through_like_its_dict():
    """vars(self).update(kw) updates the object, not a copy that loses the values silently."""
    assert works("class P:\n    def __init__(self, **kw):\n        vars(self).update(kw)\n"
                 "p = P(a=1)\nvars(p)['b'] = 2\nresult = [p.a, p.b, vars(p)]") == [1, 2, {"a": 1, "b": 2}]
    refused("class O:\n    pass\nvars(O())['__reduce_ex__'] = 1")


@pytest.mark.parametrize("code", [
    "class O:\n    pass\no = O()\no.__dict__ |= {'e': 5}",
    "def f():\n    pass\nf.__doc__ += 'x'",
    "class C:\n    pass\nC.__qualname__ += 'x'",
])
def test_augmented_assignment_never_writes_a_dunder(code):
    reply = refused(code)
    assert "cannot be assigned" in reply["error"], reply


def test_augmented_assignment_of_a_private_name_follows_the_private_rule():
    refused("import string\nclass T(string.Template):\n    def go(self):\n        self._x += 1\n"
            "T('x').go()")
    assert works("class C:\n    def __init__(self):\n        self._n = 1\n        self.__m = 1\n"
                 "    def bump(self):\n        self._n += 2\n        self.__m += 3\n"
                 "        return [self._n, self.__m]\nresult = C().bump()") == [3, 4]


# ---------------------------------------------------------------- 5. raw memory (data science)
# An array of object pointers over bytes the snippet wrote is a forged object, and
# through a forged bytearray all of the interpreter's memory.

FORGED = """
import numpy as np
x = ['target']
raw = bytearray(id(x).to_bytes(8, 'little'))
MAKE
print('ESCAPED:forged' if a.tolist()[0] is x or 'target' in str(a) else 'held')
"""


@needs_data_science
@pytest.mark.parametrize("make", [
    "a = np.ndarray((1,), dtype=object, buffer=raw)",
    "a = np.ndarray((1,), object, raw)",
    "a = np.ndarray((1,), dtype=[('o', 'O')], buffer=raw)['o']",
    "a = np.ndarray((1,), dtype=np.dtype(('O', (1,))), buffer=raw)[0]",
    "a = type(np.zeros(1))((1,), object, raw)",
    "a = list(map(np.ndarray, [(1,)], [object], [raw]))[0]",
    "import numpy.typing as npt\na = npt.NDArray((1,), object, raw)",
    "a = np.ndarray[int, np.dtype[np.float64]]((1,), object, raw)",
    "class A(np.ndarray):\n    pass\na = A((1,), dtype=object, buffer=raw)",
    "a = np.recarray((1,), dtype=[('o', 'O')], buf=raw)['o']",
    "a = np.rec.fromstring(bytes(raw), dtype=[('o', 'O')])['o']",
    "a = np.rec.array(bytes(raw), dtype=[('o', 'O')])['o']",
    "a = np.memmap('/dev/zero', dtype=object, mode='r', shape=(1,))",
    "import numpy.ma.mrecords as mr\na = mr.MaskedRecords((1,), dtype=[('o', 'O')], buf=raw)['o']",
])
def test_object_arrays_over_raw_memory_are_refused(make):
    refused(FORGED.replace("MAKE", make), allowed=DS)


FORGED_OVER_OBJECTS = """
import numpy as np, io
x = ['target']
a = np.array([None], dtype=object)
address = id(x).to_bytes(8, 'little')
WRITE
print('ESCAPED:forged' if a[0] is x else 'held')
"""


@needs_data_science
@pytest.mark.parametrize("write", [
    "io.BytesIO(address).readinto(a)",
    "io.BytesIO.readinto(io.BytesIO(address), a)",
    "list(map(io.BytesIO(address).readinto, [a]))",
    "io.BytesIO(address).readinto1(a)",
    "m = a.data.cast('B')\nm[0:8] = address",
    "v = np.frombuffer(a, dtype=np.int64)\nv[0] = int.from_bytes(address, 'little')",
    "v = np.ndarray((1,), dtype=np.int64, buffer=a)\nv[0] = int.from_bytes(address, 'little')",
    "c = np.char.chararray((1,), itemsize=8, buffer=a)\nc[0] = address",
    "r = np.rec.fromstring(a, dtype=[('i', 'i8')])\nr['i'][0] = int.from_bytes(address, 'little')",
    # ndarray.data read from the class, kept under another name, applied to an object array
    "class S(np.ndarray):\n    d = np.ndarray.data\nm = a.view(S).d.cast('B')\nm[0:8] = address",
    "S = type('S', (np.ndarray,), {'d': np.ndarray.data})\nm = a.view(S).d.cast('B')\nm[0:8] = address",
    "class S(np.ndarray):\n    pass\nS.d = type(a).data\nm = a.view(S).d.cast('B')\nm[0:8] = address",
])
def test_bytes_laid_over_an_object_array_are_refused(write):
    refused(FORGED_OVER_OBJECTS.replace("WRITE", write), allowed=DS)


@needs_data_science
@pytest.mark.parametrize("write", [
    "import struct\nstruct.pack_into('Q', a, 0, id(x))",
    "import struct\nstruct.Struct('Q').pack_into(a, 0, id(x))",
    "import struct\nlist(map(struct.Struct('Q').pack_into, [a], [0], [id(x)]))",
    # IMPORT_FROM does not go through the guards' getattr: the module hands it out guarded
    "from struct import pack_into\npack_into('Q', a, 0, id(x))",
    "from struct import *\npack_into('Q', a, 0, id(x))",
    "import struct, operator\noperator.methodcaller('pack_into', a, 0, id(x))(struct.Struct('Q'))",
])
def test_struct_cannot_pack_into_an_object_array(write):
    """struct is in the basic profile (before, an operator who allowed it gave pack_into,
    which wrote a forged pointer into an object array; and `from struct import pack_into`
    still did, until the module handed it out guarded)."""
    refused(FORGED_OVER_OBJECTS.replace("WRITE", write), allowed=DS)
    assert works("from struct import pack_into\nb = bytearray(8)\npack_into('<Q', b, 0, 7)\nresult = bytes(b).hex()",
                 allowed=DS) == "0700000000000000"


@needs_data_science
def test_resize_never_skips_its_reference_check():
    reply = refused("import numpy as np\na = np.zeros(4)\nb = a[:]\na.resize(10**6, refcheck=False)", allowed=DS)
    assert "numpy.resize" in reply["error"], reply
    refused("import numpy as np\nclass A(np.ndarray):\n    def grow(self):\n"
            "        super().resize(10**6, refcheck=False)\nnp.zeros(4).view(A).grow()", allowed=DS)
    assert works("import numpy as np, io\na = np.zeros(4)\na.resize(6)\nb = bytearray(3)\n"
                 "io.BytesIO(b'abc').readinto(b)\n"
                 "result = [a.shape, bytes(b).decode(), bytes(np.arange(2, dtype=np.uint8).data).hex(),\n"
                 "          np.frombuffer(b'\\x01\\x02', dtype=np.uint8).tolist()]", allowed=DS) == [
        [6], "abc", "0001", [1, 2]]


@needs_data_science
@pytest.mark.parametrize("holder", [
    "types.SimpleNamespace(**{'__array_interface__': interface})",
    "O()\nholder.__dict__['__array_interface__'] = interface",
])
def test_array_interface_cannot_name_an_address(holder):
    code = ("import numpy as np, types\nclass O:\n    pass\nx = bytearray(b'secret')\n"
            "interface = {'data': (id(x), False), 'shape': (8,), 'typestr': '|u1', 'version': 3}\n"
            f"holder = {holder}\na = np.asarray(holder)\n"
            "print('ESCAPED:read' if a.dtype == np.uint8 else 'held')")
    refused(code, allowed=DS)


@needs_data_science
def test_the_raw_memory_doors_are_real_without_restricted_python():
    """Plain Python builds the forged array: the refusals above are the layer's doing."""
    def forge():
        import numpy as np
        x = ["target"]
        a = np.ndarray((1,), dtype=object, buffer=bytearray(id(x).to_bytes(8, "little")))
        return a[0] is x
    payload, status = run_in_child(forge)
    assert payload == {"value": True}, (payload, status)


@needs_data_science
def test_arrays_still_work_as_usual():
    assert works("import numpy as np\n"
                 "a = np.ndarray((2,), dtype=float, buffer=np.arange(2.0))\n"
                 "b = np.ndarray((2, 3))\n"
                 "o = np.array([1, 'x'], dtype=object)\n"
                 "s = np.zeros(2, dtype=[('a', 'O'), ('b', 'i8')])\n"
                 "class MyArr(np.ndarray):\n    pass\n"
                 "m = np.arange(3).view(MyArr)\n"
                 "r = np.rec.array([(1, 'a')], dtype=[('x', 'i8'), ('y', 'O')])\n"
                 "n = np.rec.fromstring(bytes(16), dtype=[('a', 'i8'), ('b', 'f8')])\n"
                 "result = [a.tolist(), b.shape, type(b) is np.ndarray, isinstance(o, np.ndarray), o[1:].tolist(),\n"
                 "          s['a'].tolist(), isinstance(m, MyArr), isinstance(m, np.ndarray),\n"
                 "          isinstance(np.zeros(1), MyArr), issubclass(np.recarray, np.ndarray),\n"
                 "          r.y.tolist(), n.a.tolist(), str(np.ndarray[int])]", allowed=DS) == [
        [0.0, 1.0], [2, 3], True, True, ["x"], [0, 0], True, True, False, True, ["a"], [0], "numpy.ndarray[int]"]


# ---------------------------------------------------------------- 6. format strings run by library code
# str.format walks attributes and items of its arguments: a library that formats a
# string the snippet gave, with an argument the snippet chose, walks them past the guards.

@needs_data_science
@pytest.mark.parametrize("code", [
    "f = t.StrMethodFormatter('{x.__globals__}')\nprint(f(lambda: 0, 0))",
    "f = t.StrMethodFormatter('{x[0].__class__}')\nprint(f([1], 0))",
    "f = t.StrMethodFormatter('{x:{pos.__class__}}')\nprint(f(1.0, 0))",
    "class F(t.StrMethodFormatter):\n    pass\nf = F('{x}')\nf.fmt = '{x.__globals__}'\nprint(f(lambda: 0, 0))",
])
def test_matplotlib_formats_no_attribute_of_its_argument(code):
    reply = refused("import matplotlib.ticker as t\n" + code, allowed=DS)
    # (a subclass's fmt is the library's state: its write is refused before any formatting)
    assert "names or positions" in reply["error"] or "keeps its own state under this name" in reply["error"], reply


@needs_data_science
def test_matplotlib_formats_the_string_it_checked():
    """fmt as a property would answer each read anew (the check one string, the formatting
    another): a subclass may not shadow the formatter's own state at all."""
    reply = refused("import matplotlib.ticker as t\nclass F(t.StrMethodFormatter):\n    reads = 0\n"
                    "    @property\n    def fmt(self):\n        F.reads += 1\n"
                    "        return '{x}' if F.reads == 1 else '{x.__class__.__mro__}'\n"
                    "    @fmt.setter\n    def fmt(self, value):\n        pass\nresult = F('{x}')(1)", DS)
    assert "keeps its own state under this name" in reply["error"], reply


@needs_data_science
@pytest.mark.parametrize("call", ["np.load(buf, allow_pickle=Flip())", "np.load(buf, None, Flip())"])
def test_numpy_load_asks_allow_pickle_once(call):
    """An object whose truth changes between the guard's question and numpy's: numpy gets False."""
    reply, out = run("import numpy as np, io\nclass Flip:\n    asked = 0\n    def __bool__(self):\n"
                     "        Flip.asked += 1\n        return Flip.asked > 1\nbuf = io.BytesIO()\n"
                     "np.save(buf, np.array([{'a': 1}], dtype=object), allow_pickle=True)\nbuf.seek(0)\n"
                     f"x = {call}\nprint('ESC' + 'APED')", DS)
    assert not reply["success"] and "allow_pickle=False" in reply["error"], (reply, out)
    assert "ESCAPED" not in out, out


@needs_data_science
def test_matplotlib_format_strings_still_work():
    assert works("import matplotlib.ticker as t\nf = t.StrMethodFormatter('{x:,.2f} ({pos})')\n"
                 "result = [f(1234.5, 1), isinstance(f, t.StrMethodFormatter)]", allowed=DS) == ["1,234.50 (1)", True]


# ---------------------------------------------------------------- 5. a subclass's word about itself
# Library code trusts its own classes' attributes: contextlib's redirect_stdout swaps
# getattr(sys, self._stream), dataclasses pastes a Field's name into source it exec()s.
# A snippet's subclass may add names and override methods, but not define the library's
# private names, nor put a data descriptor (a property answers each read anew, so what
# was checked is not what is used) where the library has a name.

FIELD_NAME = "'a=0, **k):\\n raise RuntimeError(chr(69) + \"SCAPED\")\\n #'"


@pytest.mark.parametrize("code", [
    "import contextlib\nclass R(contextlib.redirect_stdout):\n    _stream = 'version'\nwith R('x'):\n    pass",
    "import contextlib\nclass R(contextlib.redirect_stderr):\n    @property\n    def _stream(self):\n"
    "        return 'version'\nwith R('x'):\n    pass",
    "import contextlib\nclass R(contextlib.redirect_stdout):\n    @property\n    def _old_targets(self):\n"
    "        return []\nwith R('x'):\n    pass",
    "import contextlib\nclass R(contextlib.redirect_stdout):\n    def _stream(self):\n        return 'version'",
    "import contextlib\nR = type('R', (contextlib.redirect_stdout,), {'x': 1})\nclass S(R):\n    _stream = 'version'",
    # a Field whose name is source text
    "import dataclasses\nclass F(dataclasses.Field):\n    @property\n    def name(self):\n        return NAME\n"
    "    @name.setter\n    def name(self, v):\n        pass\n@dataclasses.dataclass\nclass C:\n"
    "    x: int = F(dataclasses.MISSING, dataclasses.MISSING, False, True, None, True, {}, False)",
    "import dataclasses\nF = type('F', (dataclasses.Field,), {'name': property(lambda self: NAME)})",
    "import dataclasses\nF = dataclasses.make_dataclass('F', [], bases=(dataclasses.Field,), "
    "namespace={'name': property(lambda self: NAME)})",
    "import dataclasses\nclass F(dataclasses.Field):\n    __slots__ = ('name',)",
    "import dataclasses\nclass F(dataclasses.Field):\n    @property\n    def type(self):\n        return int",
    # the same names given otherwise than by the class body
    "import dataclasses\nclass Base:\n    def __init_subclass__(cls, **kw):\n        cls.name = property(lambda s: NAME)\n"
    "class F(Base, dataclasses.Field):\n    pass",
    "import dataclasses\nclass F(dataclasses.Field):\n    pass\nF.name = property(lambda s: NAME)",
    "import dataclasses\nclass F(dataclasses.Field):\n    pass\nsetattr(F, 'name', property(lambda s: NAME))",
    "import dataclasses\nclass Base:\n    pass\nclass F(Base, dataclasses.Field):\n    pass\n"
    "Base.name = property(lambda s: NAME)",
    "import dataclasses\nclass Base:\n    name = property(lambda s: NAME)\nclass F(Base, dataclasses.Field):\n    pass",
    "import contextlib\nclass Base:\n    _stream = 'version'\nclass R(Base, contextlib.redirect_stdout):\n    pass",
    "import contextlib\nclass Base:\n    pass\nclass R(Base, contextlib.redirect_stdout):\n    pass\n"
    "Base._stream = 'version'",
    # a descriptor of the snippet's own (no __set__), and slots from an iterator spent by then
    "import dataclasses\nclass Answer:\n    def __get__(self, obj, owner=None):\n        return NAME\n"
    "class F(dataclasses.Field):\n    __slots__ = ()\n    name = Answer()",
    "import dataclasses\nclass F(dataclasses.Field):\n    __slots__ = iter(['name'])",
    # enum.property is exempt only as enum's own redirect to a member (3.12+)
    pytest.param("import contextlib, enum\nclass R(contextlib.redirect_stdout):\n"
                 "    _stream = enum.property(lambda self: 'version')",
                 marks=pytest.mark.skipif(sys.version_info < (3, 11), reason="enum.property is new in 3.11")),
])
def test_a_subclass_cannot_redefine_what_the_library_trusts(code):
    reply = refused(code.replace("NAME", FIELD_NAME))
    assert "relies on its own attributes" in reply["error"] or "is not subclassed" in reply["error"], reply


def test_a_field_of_the_snippets_cannot_be_renamed_after_the_class_is_made():
    """dataclasses reads a Field's name in replace(), asdict(), fields() and getattr()s it
    on the snippet's object: renamed to __dict__, replace() handed over the real instance
    dict (where a __reduce_ex__ key is copy's protocol). Field is not subclassed at all."""
    refused("import dataclasses, copy, string\ntarget = string.Template('x')\n"
            "def reducer(proto):\n    return (lambda: target, (), (None, {'delimiter': '%'}))\n"
            "class F(dataclasses.Field):\n    pass\n@dataclasses.dataclass(init=False)\nclass C:\n"
            "    x: int = F(dataclasses.MISSING, dataclasses.MISSING, True, True, None, True, {}, False)\n"
            "    def __init__(self, **kw):\n        self.kw = kw\nc = C()\nf = dataclasses.fields(C)[0]\n"
            "f.name = '__dict__'\nd = dataclasses.replace(c).kw['__dict__']\nd['__reduce_ex__'] = reducer\n"
            "copy.copy(c)\nprint('ESCAPED' if target.delimiter == '%' else 'held')")


def test_subclasses_of_library_classes_still_work():
    """Methods override, new names (private ones too, where the base keeps no state:
    an ABC, a Generic, a Protocol, an exception) and enum members named like a mixin's method."""
    assert works("""
import abc, collections, collections.abc, contextlib, enum, io, json, random, typing
class Shape(abc.ABC):
    def __init__(self, side):
        self._side = side
    @abc.abstractmethod
    def area(self): ...
class Square(Shape):
    def area(self):
        return self._side ** 2
T = typing.TypeVar('T')
class Stack(typing.Generic[T]):
    def __init__(self):
        self._items = []
    def push(self, item: T):
        self._items.append(item)
        return self
class Mode(str, enum.Enum):
    upper = 'U'
    READ = 'r'
class Point(collections.namedtuple('Point', 'x y')):
    __slots__ = ()
    @property
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5
class Encoder(json.JSONEncoder):
    item_separator = ';'
    def default(self, o):
        return sorted(o)
class Failure(Exception):
    def __init__(self, code):
        super().__init__(code)
        self._code = code
    @property
    def code(self):
        return self._code
class Bag(dict):
    def _count(self):
        return len(self)
    @property
    def size(self):
        return self._count()
class Fixed(random.Random):       # (Random's own __init_subclass__ sets a private name on it)
    def random(self):
        return 0.0
class Registry(collections.abc.MutableMapping):
    def __init__(self):
        self._data = {}
    def __getitem__(self, key):
        return self._data[key]
    def __setitem__(self, key, value):
        self._data[key] = value
    def __delitem__(self, key):
        del self._data[key]
    def __iter__(self):
        return iter(self._data)
    def __len__(self):
        return len(self._data)
registry = Registry()
registry['a'] = 1
buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    print('hi')
result = [Square(3).area(), Stack().push(1)._items, Mode('U').value, Point(3, 4).norm,
          json.dumps([{1, 2}], cls=Encoder), Failure(7).code, Bag(a=1).size, dict(registry), buffer.getvalue(),
          Fixed().choice('abc')]
""") == [9, [1], "U", 5.0, "[[1;2]]", 7, 1, {"a": 1}, "hi\n", "a"]


SYS_SWAP = """
import contextlib
class Swap(contextlib.redirect_stdout):
    reads = 0
    @property
    def _stream(self):
        type(self).reads += 1
        return ('meta_path', 'sandbox_junk', 'version')[type(self).reads - 1]
with Swap(None):
    pass
import sys
finders = sys.version
print('ESCAPED:' + str(finders[-1]))
"""


def test_the_import_systems_finders_never_reach_the_snippet(monkeypatch):
    """The second wall under the first: with the override check switched off, real
    sys.meta_path reaches the sys subset, but neither the list nor a finder in it (whose
    loader reads any file) gets to the snippet. In a forked child: sys is changed."""
    from sandbox.restricted import guards as rp_guards
    monkeypatch.setattr(rp_guards.ExecutionContext, "check_override", lambda self, cls, name, value: None)

    def execute():
        out = io.StringIO()
        reply = restricted.execute(SYS_SWAP, restricted=True, allowed_modules=BASIC, stdout=out, stderr=out)
        return reply, out.getvalue(), isinstance(sys.version, list)
    payload, status = run_in_child(execute)
    reply, out, swapped = payload["value"]
    assert swapped, "the swap did not happen: the test no longer exercises the second wall"
    assert "ESCAPED" not in out and reply["error_type"] == "security_violation", (reply, out)
    assert "importlib.machinery" in reply["error"], reply


@pytest.mark.parametrize("code", [
    "class CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, t, e, tb):\n"
    "        self.seen = (t, tb)\n        return False\ncm = CM()\ntry:\n    with cm:\n        raise ValueError('x')\n"
    "except ValueError:\n    result = [cm.seen[0] is ValueError, cm.seen[1] is None]",
    "import contextlib\nseen = []\ndef cb(t, e, tb):\n    seen.append(tb)\n    return True\n"
    "with contextlib.ExitStack() as stack:\n    stack.push(cb)\n    raise KeyError('k')\nresult = [True, seen[0] is None]",
])
def test_a_callback_gets_none_for_a_traceback_and_the_exception_goes_on(code):
    """__exit__ and ExitStack callbacks get the traceback whenever the body raised: it
    is None for the snippet (a traceback leads to frames), and the snippet's own
    exception is not replaced by a refusal."""
    assert works(code) == [True, True]


def test_a_callback_still_gets_no_frame():
    """(The refusal happens in the loop's callback, which asyncio reports on stderr.)"""
    reply, out = run("import asyncio\nasync def main():\n    t = asyncio.current_task()\n    t.add_done_callback(cb)\n"
                     "def cb(x):\n    print('ESC' + 'APED' + str(x.get_stack()))\nasyncio.run(main())")
    assert "ESCAPED" not in out and "Task.get_stack is refused" in out, (reply, out)


# ---------------------------------------------------------------- 6. checked, then used otherwise
# A value the guards check is the value library code uses: a dict, list, tuple or str
# subclass of the snippet's could answer the check one way (its __iter__, __getitem__,
# replace) and the library another. The guards copy it into plain values and pass the copy.

LATE_NAME = """
import dataclasses
class Name(str):
    def isidentifier(self):
        return True
    def __format__(self, spec):
        return "a=0, **k):\\n raise RuntimeError('ESC' + 'APED')\\n #"
class Spec(list):
    def __getitem__(self, i):
        return ["x", int, None][i]
    def __iter__(self):
        return iter([Name("x"), int, dataclasses.field(init=False)])
"""


@pytest.mark.parametrize("code", [
    # make_dataclass: the check reads spec[0], dataclasses unpacks the spec
    LATE_NAME + "dataclasses.make_dataclass('X', [Spec(['x', int, None])])",
    # a namespace whose __iter__ hides what dict() copies
    "import copy, string\ntarget = string.Template('x')\ndef reducer(self, proto):\n"
    "    return (lambda: target, (), (None, {'delimiter': '%'}))\nclass D(dict):\n    def __iter__(self):\n"
    "        return iter([])\nd = D()\nd['__reduce_ex__'] = reducer\nX = type('X', (), d)\ncopy.copy(X())\n"
    "print('ESC' + 'APED' if target.delimiter == '%' else 'held')",
    "import copy, dataclasses, string\ntarget = string.Template('x')\ndef reducer(self, proto):\n"
    "    return (lambda: target, (), (None, {'delimiter': '%'}))\nclass D(dict):\n    def __iter__(self):\n"
    "        return iter([])\nd = D()\nd['__reduce_ex__'] = reducer\n"
    "X = dataclasses.make_dataclass('X', [], namespace=d)\ncopy.copy(X())\n"
    "print('ESC' + 'APED' if target.delimiter == '%' else 'held')",
    # the enum functional API: a pair whose __getitem__ and __iter__ disagree
    "import enum\nclass Pair(tuple):\n    def __getitem__(self, i):\n        return ('A', 1)[i]\n"
    "    def __iter__(self):\n        return iter(['_missing_', classmethod(lambda cls, v: print('ESC' + 'APED'))])\n"
    "E = enum.Enum('E', [Pair(('A', 1))])\nE(99)",
])
def test_what_was_checked_is_what_the_library_gets(code):
    reply = refused(code)
    assert "ESCAPED" not in str(reply), reply


def test_a_names_string_is_read_as_a_plain_string():
    """A str subclass's replace/split is not asked: the enum gets the checked names."""
    assert works("import enum\nclass Names(str):\n    calls = 0\n    def replace(self, a, b):\n"
                 "        Names.calls += 1\n        return 'A B' if Names.calls == 1 else '_missing_ __init__'\n"
                 "E = enum.Enum('E', Names('C D'))\nresult = [m.name for m in E]") == ["C", "D"]


def test_annotations_handed_over_are_searched_like_any_container():
    """`functools.wraps(library_function)` gives the snippet's own wrapper the library's
    annotations dict; a value in it that the snippet may not have (here a module it
    did not import, standing for a library's internal class) is refused, not handed over."""
    ctx = restricted.ExecutionContext(BASIC, restricted.Events())
    exec("def wrapper(x: int) -> str:\n    return ''", ctx.globals)   # a function of the snippet's
    wrapper = ctx.globals["wrapper"]
    assert ctx.getattr(wrapper, "__annotations__") == {"x": "int", "return": "str"}   # (this file's __future__)
    wrapper.__annotations__ = {"x": subprocess}
    with pytest.raises(restricted.SandboxAttributeError, match="__annotations__ is the module 'subprocess'"):
        ctx.getattr(wrapper, "__annotations__")


@needs_data_science
@pytest.mark.parametrize("code", [
    "import numpy as np\nclass A(np.ndarray):\n    pass\nresult = A.__mro__",        # would name the real class
    "import numpy as np\nresult = np.ndarray.__bases__",                               # behind the stand-in
    "import pandas as pd\nclass D(pd.DataFrame):\n    pass\nresult = D.__bases__",
])
def test_a_library_hierarchy_stays_unreadable_through_a_snippet_subclass(code):
    refused(code, allowed=DS)


def test_programs_are_switched_off_while_a_snippet_runs_and_back_after():
    """Library code that starts a program (sympy's ufuncify, matplotlib's usetex) gets a
    PermissionError, the OSError the kernel's refusal would be, and an event; afterwards
    the process is as it was."""
    import os
    import subprocess
    from sandbox.restricted.libraries.policy import POLICY as library_policy
    events = []

    def refuse(message):
        events.append(message)
        return RuntimeError(message)
    popen, system = subprocess.Popen._execute_child, os.system
    with library_policy.switched_off(refuse):
        with pytest.raises(PermissionError, match="no program can run in the sandbox"):
            subprocess.run(["true"], check=True)
        with pytest.raises(PermissionError):
            os.system("true")
    assert events and subprocess.Popen._execute_child is popen and os.system is system
    assert subprocess.run(["true"], check=True).returncode == 0



@needs_data_science
def test_every_binding_of_a_wrapped_library_function_is_wrapped_and_back_after():
    """scipy.ndimage.shift is also bound in the modules that define and re-export it: the
    check must be at each of them while a snippet runs, and gone after."""
    def check():
        import numpy as np
        import scipy.ndimage
        from scipy.ndimage import _interpolation, _ndimage_api
        from sandbox.restricted.libraries.policy import POLICY as library_policy
        before = _interpolation.shift
        library_policy.resolve()
        refused_at = []
        with library_policy.switched_off(lambda message: RuntimeError(message)):
            for module in (scipy.ndimage, _interpolation, _ndimage_api):
                try:
                    module.shift(np.zeros(3), 1e20, order=1)
                except RuntimeError as e:
                    refused_at.append("coordinates must be finite" in str(e))
        return [refused_at, _interpolation.shift is before and scipy.ndimage.shift is before]
    payload, status = run_in_child(check)
    assert payload == {"value": [[True, True, True], True]}, (status, payload)


@needs_data_science
def test_multiprocessing_starts_no_python_for_a_library():
    """scipy's workers=2 starts multiprocessing's forkserver through _posixsubprocess
    (not subprocess): a whole Python outside the guards that unpickles what it is sent.
    The kernel layers stop it too (no /dev/shm); this layer must on its own."""
    reply = refused("from scipy.optimize import differential_evolution\n"
                    "differential_evolution(lambda x: float(x[0] ** 2), [(-1, 1)], workers=2, maxiter=1,\n"
                    "                       updating='deferred')", allowed=DS)
    assert "no program can run in the sandbox" in reply["error"], reply


def test_multiprocessings_own_program_starter_is_switched_off_and_back_after():
    import _posixsubprocess
    from multiprocessing import util
    from sandbox.restricted.libraries.policy import POLICY as library_policy
    fork_exec, events = _posixsubprocess.fork_exec, []
    with library_policy.switched_off(lambda message: events.append(message) or RuntimeError(message)):
        with pytest.raises(PermissionError, match="no program can run in the sandbox"):
            util.spawnv_passfds("/bin/true", ["true"], [])
    assert events and _posixsubprocess.fork_exec is fork_exec


@needs_data_science
@pytest.mark.parametrize("call", [
    "mp.identify(1, ['__import__(\"posix\").getpid() and 1'])",
    "mp.identify(mp.pi, constants=('pi',))",
    "type(mp).identify(mp, 1, ['1'])",
])
def test_mpmaths_identify_evaluates_no_string_of_the_snippets(call):
    """sympy's mp context (mpmath's) is reachable as sympy.core.evalf.mp; its identify()
    eval()s each constant given as a string, with the real builtins."""
    reply = refused(f"import sympy\nmp = sympy.core.evalf.mp\n{call}\nprint('ESCAPED')", allowed=DS)
    assert "identify() evaluates the names of its constants" in reply["error"] and "dict" in reply["error"], reply


@needs_data_science
def test_identify_with_constants_by_value_and_nsimplify_still_work():
    assert works("import sympy\nmp = sympy.core.evalf.mp\n"
                 "result = [mp.identify(mp.pi * 2, {'pi': mp.pi}), str(sympy.nsimplify(6.283185307179586, [sympy.pi])),"
                 " str(sympy.nsimplify(0.333333333333))]", allowed=DS) == ["(2*pi)", "2*pi", "1/3"]


@needs_data_science
@pytest.mark.parametrize("made", [
    "sympy.Function('f', __reduce_ex__=reducer)",
    "sympy.Function('f', __dict__={'__reduce_ex__': reducer})",
    "sympy.symbols('f', cls=sympy.Function, __reduce_ex__=reducer)",
    "sympy.Function('f', bases=(sympy.Function,))",
])
def test_sympy_function_makes_no_class_with_the_snippets_dunders(made):
    """sympy.Function('f', **kwargs) puts each keyword into the namespace of the class it
    makes: __reduce_ex__ there made copy.copy write a scipy matrix's _shape and indices."""
    reply = refused("import sympy, copy, numpy as np, scipy.sparse as sp\n"
                    "m = sp.csr_matrix(np.eye(2))\n"
                    "def reducer(self, proto=None):\n"
                    "    return (sp.csr_matrix.copy, (m,), {'_shape': (50, 50)})\n"
                    f"F = {made}\n"
                    "if copy.copy(F(sympy.Symbol('x'))).shape == (50, 50):\n"
                    "    print('ESCAPED:library_object_written')", allowed=DS)
    assert "subclass sympy.Function in a class statement" in reply["error"], reply


@needs_data_science
def test_sympy_functions_with_assumptions_still_work():
    assert works("import sympy\nx = sympy.Symbol('x')\nf, g = sympy.Function('f', real=True), sympy.Function('g', nargs=1)\n"
                 "result = [f(x).is_real, str(g(x)), str(sympy.dsolve(f(x).diff(x) - f(x), f(x)))]",
                 allowed=DS) == [True, "g(x)", "Eq(f(x), C1*exp(x))"]


FAKE_MATRIX = """
import numpy as np, scipy.sparse as sp
class Fake:
    pass
fake = Fake()
fake.indptr, fake.indices = np.array([0, 2], dtype=np.int32), np.array([1, 0], dtype=np.int32)
fake.data, fake.has_sorted_indices = np.array([1.0, 2.0]), False
"""


@needs_data_science
@pytest.mark.parametrize("call", [
    "sp.csr_matrix.sort_indices(fake)",
    "getattr(sp.csr_matrix, 'sort_indices')(fake)",
    "class T(Fake):\n    sort = sp.csr_matrix.sort_indices\nt = T()\nt.__dict__.update(vars(fake))\nt.sort()",
    "sp.csr_matrix.has_sorted_indices.fget(fake)",
    "class T(Fake):\n    sorted_ = sp.csr_matrix.has_sorted_indices\nt = T()\nt.__dict__.update(vars(fake))\nt.sorted_",
])
def test_a_library_method_runs_on_instances_of_its_class_only(call):
    """Read from the class, scipy.sparse's sort_indices takes any self: it handed the
    snippet's indptr and indices to compiled code that sorts in place where they say
    (an index past the data writes out of bounds)."""
    reply = refused(FAKE_MATRIX + call + "\nprint('ESCAPED:ran_on_a_stand_in', fake.indices)", allowed=DS)
    assert "takes a _cs_matrix as self" in reply["error"] and "call it on one" in reply["error"], reply


def test_a_stdlib_method_read_from_its_class_takes_its_own_instances():
    refused("import fractions\nclass F:\n    pass\nfractions.Fraction.limit_denominator(F(), 10)")
    assert works("import fractions, collections\n"
                 "result = [str(fractions.Fraction.limit_denominator(fractions.Fraction(1, 3), 10)),\n"
                 "          sorted([fractions.Fraction(1, 2)], key=fractions.Fraction.limit_denominator) == [0.5],\n"
                 "          collections.Counter.most_common(collections.Counter('aab'), 1)]") == \
        ["1/3", True, [["a", 2]]]


@needs_data_science
def test_library_methods_read_from_their_class_still_work_on_their_instances():
    assert works("import pandas as pd, numpy as np, scipy.sparse as sp\n"
                 "df = pd.DataFrame({'a': [1, 2]})\n"
                 "class Mine(pd.DataFrame):\n    pass\n"
                 "result = [int(pd.DataFrame.sum(df)['a']), list(map(pd.Series.tolist, [df['a']])),\n"
                 "          sp.csr_matrix.toarray(sp.csr_matrix(np.eye(2))).tolist(), pd.Series.name.fget(df['a']),\n"
                 "          int(pd.DataFrame.sum(Mine({'a': [3]}))['a'])]", allowed=DS) == \
        [3, [[1, 2]], [[1.0, 0.0], [0.0, 1.0]], "a", 3]


SPLINE = ("import numpy as np\nfrom scipy.interpolate import BSpline\n"
          "t, c, k = np.array([0, 0, 0, 0, 1, 2, 3, 3, 3, 3.0]), np.ones(6), 3\n")


@needs_data_science
@pytest.mark.parametrize("code", [
    "class B(BSpline):\n    pass\nb = B(t, c, k)\nb.c = np.ones(1)",
    "class B(BSpline):\n    pass\nb = B(t, c, k)\nsetattr(b, 'c', np.ones(1))",
    "class B(BSpline):\n    pass\nb = B(t, c, k)\ndel b.c\nb.c = np.ones(1)",
    "class B(BSpline):\n    def __init__(self):\n        self.t, self.c, self.k = t, np.ones(1), 3\nb = B()",
    "class B(BSpline):\n    c = np.ones(1)",
    "class B(BSpline):\n    pass\nB.c = np.ones(1)",
    "class Mixin:\n    pass\nclass B(Mixin, BSpline):\n    pass\nMixin.c = np.ones(1)",
])
def test_a_subclass_cannot_set_the_state_a_librarys_compiled_code_trusts(code):
    """BSpline's evaluation reads c as far as t says: a c of one item, set on an instance of
    a snippet subclass, had it read the heap past the array (and return what it found)."""
    reply = refused(SPLINE + code + "\nprint('ESCAPED:', b(np.linspace(0, 3, 5)))", allowed=DS)
    assert "keeps its own state under this name" in reply["error"], reply


@needs_data_science
@pytest.mark.parametrize("cls", ["BSpline", "PPoly", "BPoly", "NdPPoly"])
def test_the_unchecked_constructors_of_scipys_splines_are_refused(cls):
    reply = refused(f"import numpy as np\nfrom scipy import interpolate\n"
                    f"interpolate.{cls}.construct_fast(np.ones((2, 1)), np.linspace(0, 100, 50))", allowed=DS)
    assert "call the class itself" in reply["error"], reply


@needs_data_science
def test_a_subclass_of_a_library_class_keeps_its_own_attributes_and_overrides():
    assert works(SPLINE + "class B(BSpline):\n    def __init__(self, *args):\n        super().__init__(*args)\n"
                 "        self.label = 'x'\n        self.label += 'y'\n    def derivative(self, nu=1):\n"
                 "        return 'mine'\nb = B(t, c, k)\nresult = [b.label, float(b(1.5)), b.derivative()]",
                 allowed=DS) == ["xy", 1.0, "mine"]


@needs_data_science
@pytest.mark.parametrize("code, said", [
    # a method Cython compiled, of a Python class: as a def method, it takes any self
    ("class F:\n    pass\npd.Timestamp.strftime(F(), '%Y')", "takes a Timestamp as self"),
    # pandas' cache_readonly calls the library's function on whatever it is placed on
    ("class T:\n    unique = pd.Index.is_unique\nT().unique", "is read on an instance"),
    ("class T:\n    index = pd.Series.index\nT().index", "is read on an instance"),
])
def test_library_descriptors_read_from_their_class_run_on_their_own_objects(code, said):
    reply = refused("import pandas as pd\n" + code + "\nprint('ESCAPED:ran_on_a_stand_in')", allowed=DS)
    assert said in reply["error"], reply


@needs_data_science
def test_class_level_reads_that_give_values_still_work():
    assert works("import pandas as pd, collections\nP = collections.namedtuple('P', 'a b')\n"
                 "result = [pd.DataFrame.plot.__name__, pd.Index.str.__name__, P.a.__doc__, "
                 "pd.Timestamp.fromordinal(700000).year, pd.Timestamp.strftime(pd.Timestamp(2020, 1, 2), '%Y')]",
                 allowed=DS) == ["PlotAccessor", "StringMethods", "Alias for field number 0", 1917, "2020"]


@needs_data_science
def test_a_custom_scipy_distribution_defines_the_hooks_scipy_documents():
    """scipy.stats' way to a distribution of one's own: subclass rv_continuous (or
    rv_discrete) and define _pdf (_pmf, _cdf...): private names of a library base, as
    methods of the snippet's."""
    assert works("import numpy as np\nfrom scipy.stats import rv_continuous, rv_discrete\n"
                 "class gaussian_gen(rv_continuous):\n    def _pdf(self, x):\n"
                 "        return np.exp(-x ** 2 / 2.) / np.sqrt(2.0 * np.pi)\n"
                 "class coin_gen(rv_discrete):\n    def _pmf(self, k):\n        return np.where((k == 0) | (k == 1), 0.5, 0.0)\n"
                 "    def _get_support(self):\n        return 0, 1\n"
                 "result = [round(float(gaussian_gen(name='gaussian').cdf(0.0)), 6),\n"
                 "          round(float(coin_gen(name='coin').pmf(1)), 6)]", allowed=DS) == [0.5, 0.5]


@needs_data_science
@pytest.mark.parametrize("body", [
    "_pdf = np.exp",                                             # a library function as the hook
    "@property\n    def _pdf(self):\n        return np.exp",    # a property answering anew
    "def _updated_ctor_param(self):\n        return {}",         # a private method that is no hook
])
def test_only_the_documented_hooks_of_a_distribution_and_only_as_methods(body):
    refused(f"import numpy as np\nfrom scipy.stats import rv_continuous\nclass G(rv_continuous):\n    {body}", allowed=DS)


@needs_data_science
def test_sympys_pollute_writes_no_name_into_the_snippets_globals():
    """sympy.utilities.magic.pollute (behind sympy.var) writes into its caller's globals:
    _write_ replaced by a function of the snippet's would write onto any object."""
    reply = refused("from sympy.utilities.magic import pollute\npollute(['_write_'], [lambda ob: ob])\n"
                    "import numpy as np\na = np.arange(3)\na.shape = (3, 1)\nprint('ESCAPED:guard_replaced')", allowed=DS)
    assert "writes into the caller's globals" in reply["error"], reply


@needs_data_science
@pytest.mark.parametrize("lookup", ["np.bmat('_METHOD_KINDS')", "np.r_['_METHOD_KINDS']", "np.c_['self, func']"])
def test_numpy_looks_no_name_up_in_the_sandboxs_frames(lookup):
    """np.bmat('A, B') reads A and B from its caller's frame, which is a guard's (its locals:
    the guards' context; its module's globals): names are never looked up there."""
    reply = refused(f"import numpy as np\nm = {lookup}\nprint('ESCAPED:', m)", allowed=DS)
    assert "looks the names in the string up in the calling frame" in reply["error"] and "np.block" in reply["error"]


@needs_data_science
def test_a_refused_name_imported_with_its_library_says_why():
    """`from sympy import var` as the run's first import of sympy: the refusal, not
    Python's bare "cannot import name"."""
    reply = refused("from sympy import var", allowed=DS, error_types=("security_violation", "runtime_error"))
    assert "var() writes into the caller's globals" in reply["error"], reply
    assert works("import numpy as np\nA = np.eye(2)\nresult = [np.bmat([[A, A]]).shape, np.r_[1:3, [5]].tolist(), "
                 "np.c_[[1, 2], [3, 4]].tolist(), np.r_['0,2', [1, 2], [3, 4]].tolist()]", allowed=DS) == \
        [[2, 4], [1, 2, 5], [[1, 3], [2, 4]], [[1, 2], [3, 4]]]


@needs_data_science
def test_a_library_loaded_before_the_first_resolve_has_all_its_bindings_switched():
    """numpy loaded, the tables never resolved (a process that did not preload), then a run
    that imports it: the run's resolve() after the import once took the replacement of
    numpy.matrixlib.defmatrix.bmat for the original, so numpy.bmat (another binding of the
    original) was left as it was."""
    def execute():
        import numpy  # noqa: F401 - loaded before any resolve(), as in this test
        out = io.StringIO()
        reply = restricted.execute("import numpy as np\nprint('ESCAPED', np.bmat('_METHOD_KINDS').shape)",
                                   restricted=True, allowed_modules=DS, stdout=out, stderr=out)
        return reply["error"], out.getvalue()
    payload, status = run_in_child(execute)
    error, out = payload["value"]
    assert "ESCAPED" not in out and "looks the names in the string up" in error, (payload, status)


@needs_data_science
def test_a_sessions_later_calls_keep_every_binding_switched_after_an_import():
    """A session's call that imports a library resolves the tables during the run; the
    next call must still switch numpy.bmat (another binding of defmatrix.bmat), which that
    mid-run pass found holding the replacement."""
    def execute():
        restricted.preload(["numpy"])
        session, out = restricted.SessionState(), io.StringIO()
        replies = [restricted.execute(code, restricted=True, allowed_modules=DS, stdout=out, stderr=out,
                                      session=session)["error"]
                   for code in ("import numpy as np\nimport scipy.special", "print('ESCAPED', np.bmat('args'))")]
        return replies, out.getvalue()
    payload, status = run_in_child(execute)
    (first, second), out = payload["value"]
    assert first is None and "ESCAPED" not in out and "looks the names in the string up" in second, payload


@needs_data_science
@pytest.mark.parametrize("set_state", [
    "rs.set_state((st[0], st[1], 5000, st[3], st[4]))",
    "np.random.RandomState.set_state(rs, (st[0], st[1], 5000, st[3], st[4]))",
    "rs.set_state({'bit_generator': 'MT19937', 'state': {'key': st[1], 'pos': 5000}})",
    "np.random.set_state((st[0], st[1], 5000, st[3], st[4]))",
])
def test_the_mersenne_twister_keeps_its_position_in_its_key(set_state):
    """set_state took any position: MT19937 then read the memory past its 624-word key and
    handed it out as random numbers. Refused, and the generator keeps its state."""
    reply, out = run("import numpy as np\nnp.random.seed(0)\nrs = np.random.RandomState(0)\nst = rs.get_state()\n"
                     f"try:\n    {set_state}\nexcept Exception as e:\n    print(e)\n"
                     "result = [int(rs.randint(0, 1000)), int(np.random.randint(0, 1000))]", DS)
    assert reply["success"] and "position is 0 to 624, not 5000" in out, (reply, out)
    assert reply["result"] == [684, 684], reply   # (what seed 0 draws first)


@needs_data_science
def test_a_bit_generator_is_not_subclassed_and_saved_states_still_load():
    refused("import numpy as np\nclass M(np.random.MT19937):\n    pass", allowed=DS)
    assert works("import numpy as np\nrs = np.random.RandomState(1)\nst = rs.get_state()\na = rs.rand()\n"
                 "rs.set_state(st)\nnp.random.set_state(np.random.get_state())\nresult = rs.rand() == a",
                 allowed=DS) is True


@needs_data_science
def test_categorical_codes_are_always_validated():
    """pandas' from_codes(validate=False): "invalid codes can lead to severe problems, such
    as segfaults" (its docstring). The check runs whatever the snippet passes; a class
    method replaced while a snippet runs stays one (it was then taken for a method)."""
    reply = refused("import pandas as pd\npd.Categorical.from_codes([300, 1], categories=['a', 'b'], validate=False)\n"
                    "print('ESCAPED:unchecked_codes')", allowed=DS, error_types=("runtime_error",))
    assert "codes need to be between -1 and len(categories)-1" in reply["error"], reply
    assert works("import pandas as pd\nresult = [pd.Categorical.from_codes([0, 1, 1], categories=['a', 'b']).tolist(),\n"
                 "          pd.Categorical.from_codes([0, -1], ['x'], validate=False).tolist()[0]]", allowed=DS) == \
        [["a", "b", "b"], "x"]


@needs_data_science
@pytest.mark.parametrize("tck", ["(t, np.ones(1), 3)", "(list(t), [1.0], 3)", "(t, np.ones(1), np.int64(3))"])
def test_fitpacks_insert_gets_as_many_coefficients_as_its_knots_say(tck):
    """insert(x, (t, c, k)) read len(t) - k - 1 coefficients whatever c held: past a shorter
    c, the heap (the result's coefficients were pointers and other memory)."""
    reply = refused("import numpy as np\nfrom scipy import interpolate\n"
                    "t = np.array([0, 0, 0, 0, 1, 2, 3, 3, 3, 3.0])\n"
                    f"print('ESCAPED:', interpolate.insert(1.5, {tck})[1])", allowed=DS)
    assert "needs 6 coefficients, not 1" in reply["error"], reply
    assert works("import numpy as np\nfrom scipy import interpolate\nx = np.linspace(0, 3, 10)\n"
                 "tck = interpolate.splrep(x, x ** 2)\n"
                 "result = [len(interpolate.insert(1.5, tck)[0]), len(interpolate.insert(1.5, (list(tck[0]), "
                 "list(tck[1]), 3))[0]), type(interpolate.insert(1.5, interpolate.make_interp_spline(x, x))).__name__]",
                 allowed=DS) == [15, 15, "BSpline"]


BUILTINS_INSERTED = ("import sympy\ng = {'Integer': sympy.Integer}\nsympy.parse_expr('1 + 2', global_dict=g)\n")


@needs_data_science
@pytest.mark.parametrize("reach", [
    "b = g['__builtins__']",
    "b = [v for k, v in g.items() if k == '__builtins__'][0]",
    "for b in g.values():\n    pass",
    "match g:\n    case {'__builtins__': b}:\n        pass",
    "match g:\n    case {'Integer': _, **rest}:\n        b = rest['__builtins__']",
    "match list(g.values()):\n    case [_, b]:\n        pass",
])
def test_the_real_builtins_dict_that_eval_put_into_a_snippets_dict_stays_out_of_reach(reach):
    """parse_expr(..., global_dict=g) has eval() put the interpreter's builtins dict into g
    as "__builtins__": held, b['isinstance'] = ... would rewrite the builtins of the
    whole process, the guards' included. Indexing, iteration and match patterns refuse it."""
    reply = refused(BUILTINS_INSERTED + reach + "\nb['ESCAPED'] = 1\nprint('ESCAPED:builtins_written')", allowed=DS)
    # (list(g.values()) is a call's result: searched, it is refused for what the dict holds)
    assert "builtins dictionary" in reply["error"] or "a value inside the result of" in reply["error"], reply


def test_match_patterns_capture_as_before():
    assert works("import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n"
                 "out = []\nfor subject in ({'a': 1, 'b': 2}, [1, 2, 3], P(5), 'other'):\n"
                 "    match subject:\n"
                 "        case {'a': x, **rest} if x == 1:\n            out.append(['map', x, rest])\n"
                 "        case [first, *others]:\n            out.append(['seq', first, others])\n"
                 "        case P(x=5) as p:\n            out.append(['cls', p.x])\n"
                 "        case _:\n            out.append('none')\nresult = out") == \
        [["map", 1, {"b": 2}], ["seq", 1, [2, 3]], ["cls", 5], "none"]


@needs_data_science
def test_a_positional_pattern_reads_no_private_attribute_a_library_class_lists():
    """QuantileTestResult.__match_args__ ends in private names ('_alternative', '_x'): a
    positional pattern read them straight from the object, past the guards."""
    code = ("from scipy import stats\nres = stats.quantile_test([1, 2, 3, 4, 5, 6], q=3)\nR = type(res)\n"
            "match res:\n    case R(s, t, p):\n        result = [s, t]\n")
    assert works(code, allowed=DS) == [3, 1]
    reply = refused(code + "match res:\n    case R(s, t, p, hidden):\n        print('ESCAPED', hidden)", allowed=DS)
    assert "'_alternative', which a pattern may not read" in reply["error"], reply


@needs_data_science
@pytest.mark.parametrize("read", ["np.bmat.__wrapped__", "getattr(np.bmat, '__wrapped__')",
                                  "functools.update_wrapper(lambda: 0, np.bmat).__wrapped__.__wrapped__"])
def test_the_unchecked_original_of_a_checked_library_function_stays_out_of_reach(read):
    """A function the sandbox checks (CHECKED_CALLS) keeps its original as __wrapped__
    (functools.wraps): __wrapped__ is readable on the snippet's own functions only."""
    refused(f"import functools\nimport numpy as np\nf = {read}\nprint('ESCAPED', f('A'))", allowed=DS)


@needs_data_science
@pytest.mark.parametrize("array", [
    "class Mine(pd.arrays.IntegerArray):\n    def factorize(self, use_na_sentinel=True):\n"
    "        return np.array([300000, 0, 0, 0], dtype=np.intp), pd.array([1])\n"
    "keys = pd.Series(Mine(np.array([1, 2, 3, 4]), np.zeros(4, dtype=bool)))",
    "class Mine(pd.arrays.SparseArray):\n    def factorize(self, use_na_sentinel=True):\n"
    "        return np.array([300000, 0, 0, 0], dtype=np.intp), pd.array([1])\nkeys = Mine([1, 2, 3, 4])",
    "class Mine(pd.Categorical):\n    pass\nkeys = Mine(['a', 'b', 'a', 'b'])",
    "class Kind(pd.CategoricalDtype):\n    pass\nkeys = pd.Series(['a', 'b', 'a', 'b'], dtype=Kind(['a', 'b']))",
])
def test_pandas_arrays_and_dtypes_are_not_subclassed(array):
    """groupby's compiled aggregations write out[code] for each code the key array's
    factorize() returns: a subclass's code past the groups wrote the heap (the child
    crashed with SIGSEGV)."""
    reply = refused("import numpy as np\nimport pandas as pd\n" + array +
                    "\nprint('ESCAPED', pd.Series(np.arange(4.0)).groupby(keys).sum().tolist())", allowed=DS)
    assert "pandas' compiled code trusts what the methods of its arrays" in reply["error"], reply


@needs_data_science
@pytest.mark.parametrize("base, made", [
    ("RangeIndex", "Far(4)"), ("DatetimeIndex", "Far(pd.date_range('2024', periods=4))"),
    ("MultiIndex", "Far.from_tuples([(1, 1), (1, 2), (2, 1), (2, 2)])"),
    ("IntervalIndex", "Far.from_breaks([0, 1, 2, 3, 4])"), ("Index", "Far([1, 2, 3, 4])"),
])
def test_pandas_indexes_are_not_subclassed(base, made):
    """Series.reindex takes the positions the index's get_indexer() returns into compiled
    code unchecked: an override's position past the data read the heap (SIGSEGV)."""
    reply = refused(f"import numpy as np\nimport pandas as pd\nclass Far(pd.{base}):\n"
                    "    def get_indexer(self, target, method=None, limit=None, tolerance=None):\n"
                    "        return np.full(len(target), 50000000, dtype=np.intp)\n"
                    f"ix = {made}\ns = pd.Series(np.arange(4.0), index=ix)\n"
                    "print('ESCAPED', s.reindex(ix[:2]).tolist())", allowed=DS)
    assert "pandas' compiled code trusts what the methods of its arrays, indexes" in reply["error"], reply


@needs_data_science
@pytest.mark.parametrize("copy", [
    "fig.canvas.copy_from_bbox(Bbox([[0, 0], [65536, 16385]]))",
    "fig.canvas.get_renderer().copy_from_bbox(Bbox([[0, 0], [65536, 16385]]))",
    "fig.canvas.get_renderer().copy_from_bbox((0, 0, 65536, 16385))",
    "fig.canvas.copy_from_bbox(Bbox([[0, 100 - (1 << 23) - 1], [128, 100]]))",
    "fig.canvas.get_renderer().copy_from_bbox((50, 50, 0, 0))",
    "fig.canvas.get_renderer().copy_from_bbox((0, 0, float('nan'), 10))",
])
def test_a_canvas_region_is_copied_only_at_a_size_its_buffer_can_hold(copy):
    """Agg's copy_from_bbox sizes the region's buffer as width * height * 4 in an int:
    65536 x 16385 pixels overflowed into a 256 KB buffer that the copy wrote past."""
    reply = refused("import matplotlib.pyplot as plt\nfrom matplotlib.transforms import Bbox\n"
                    "fig = plt.figure(figsize=(2, 2), dpi=50)\nfig.canvas.draw()\n"
                    f"print('ESCAPED', {copy}.get_extents())", allowed=DS)
    assert "copy_from_bbox takes a finite bbox with x0 <= x1 and y0 <= y1" in reply["error"], reply


@needs_data_science
@pytest.mark.parametrize("made", ["ft2font.FT2Image(-5, 10)", "getattr(ft2font, 'FT2Image')(-5, 10)"])
def test_the_deprecated_ft2image_is_refused(made):
    """FT2Image(-5, 10) took the negative width, and draw_rect_filled then wrote past its
    buffer (SIGSEGV). Glyphs are drawn into a uint8 array instead, which still works."""
    reply = refused(f"from matplotlib import ft2font\nimg = {made}\nimg.draw_rect_filled(0, 0, 100, 100)\n"
                    "print('ESCAPED')", allowed=DS)
    assert "draw glyphs into a 2D uint8 array" in reply["error"], reply
    assert works("import numpy as np\nfrom matplotlib import ft2font, font_manager\n"
                 "font = ft2font.FT2Font(font_manager.findfont('DejaVu Sans'))\nfont.set_size(48, 72)\n"
                 "canvas = np.zeros((60, 60), np.uint8)\n"
                 "font.draw_glyph_to_bitmap(canvas, 0, 0, font.load_char(ord('W')))\n"
                 "result = bool(canvas.sum() > 0)", allowed=DS) is True


@needs_data_science
def test_a_glyph_drawn_without_a_glyph_is_refused_not_a_crash():
    """FT2Font.draw_glyph_to_bitmap(image, x, y, None) read a null glyph (SIGSEGV)."""
    reply = refused("import numpy as np\nfrom matplotlib import ft2font, font_manager\n"
                    "font = ft2font.FT2Font(font_manager.findfont('DejaVu Sans'))\n"
                    "font.draw_glyph_to_bitmap(np.zeros((9, 9), np.uint8), 0, 0, None)", allowed=DS)
    assert "pass font.load_char(code)" in reply["error"], reply


@needs_data_science
def test_blitting_copies_and_restores_the_canvas_as_before():
    assert works("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(3, 2), dpi=60)\n"
                 "line, = ax.plot([0, 1], [0, 1])\nfig.canvas.draw()\nbg = fig.canvas.copy_from_bbox(ax.bbox)\n"
                 "line.set_ydata([1, 0])\nfig.canvas.restore_region(bg)\nax.draw_artist(line)\n"
                 "fig.canvas.blit(ax.bbox)\nr = fig.canvas.get_renderer()\n"
                 "result = [bg.get_extents(), r.copy_from_bbox(fig.bbox).get_extents(), "
                 "r.copy_from_bbox((10, 10, 50, 40)).get_extents()]", allowed=DS) == \
        [[22, 15, 162, 107], [0, 0, 180, 120], [10, 80, 50, 110]]


COMPILED_INPUTS = ("import numpy as np\nfrom scipy import ndimage\nfrom scipy.cluster import hierarchy, vq\n"
                   "image = np.zeros((3, 3))\nX = np.random.default_rng(0).random((6, 2))\nZ = hierarchy.linkage(X)\n")


@needs_data_science
@pytest.mark.parametrize("call, refusal", [
    # ndimage turns coordinates into C integers: from 2**63 on they wrap (shift wrote the heap)
    ("ndimage.shift(image, 1e20, order=1, mode='wrap')", "coordinates must be finite"),
    ("ndimage.map_coordinates(image, np.full((2, 3), 2.0 ** 63), order=3, mode='wrap')", "coordinates must be finite"),
    ("ndimage.map_coordinates(image, [[float('nan')], [0.0]])", "coordinates must be finite"),
    ("ndimage.affine_transform(image, np.eye(2), offset=2.0 ** 63, order=3)", "coordinates must be finite"),
    ("ndimage.affine_transform(image, np.eye(2) * 2.0 ** 40, order=3)", "a transform's matrix must be finite"),
    ("ndimage.geometric_transform(image, lambda c: (2.0 ** 63, 0.0), order=3)", "coordinates must be finite"),
    # scipy's own check of a linkage matrix skips one of a single row, and never reads R's or
    # monocrit's length: the compiled code indexed the heap with them
    ("hierarchy.fcluster(np.array([[0, 10 ** 6, 1.0, 2]]), 1)", "a linkage matrix's row i joins two clusters"),
    ("hierarchy.leaves_list(np.array([[0, float('nan'), 1.0, 2]]))", "a linkage matrix's row i joins two clusters"),
    ("hierarchy.maxdists(np.array([[0, 10 ** 6, 1.0, 2]]))", "a linkage matrix's row i joins two clusters"),
    ("hierarchy.fcluster(Z, 1, R=np.zeros((1, 4)))", "the inconsistency matrix R has a row for each row"),
    ("hierarchy.fcluster(Z, 1, criterion='monocrit', monocrit=np.zeros(1))", "monocrit has a row for each row"),
    ("hierarchy.from_mlab_linkage(np.array([[1, 10 ** 6, 1.0]]))", "a linkage matrix's row i joins two clusters"),
    # an empty code book: vq returned uninitialised memory as the codes
    ("vq.vq(X, np.zeros((0, 2)))", "vq() needs a code book of at least one code"),
])
def test_numbers_that_scipys_compiled_code_trusts_are_checked(call, refusal):
    reply = refused(COMPILED_INPUTS + f"print('ESCAPED', {call})", allowed=DS)
    assert refusal in reply["error"], reply


@needs_data_science
def test_scipys_checked_functions_give_what_they_gave_before():
    assert works(COMPILED_INPUTS + "a = np.arange(9.0).reshape(3, 3)\nresult = [\n"
                 "    ndimage.shift(a, 1, order=1).tolist(),\n"
                 "    ndimage.map_coordinates(a, [[0.5, 2], [0.5, 1]], order=1).tolist(),\n"
                 "    ndimage.affine_transform(a, [1, 1], offset=[0, 1], order=0).tolist(),\n"
                 "    ndimage.geometric_transform(a, lambda c: (c[0], c[1] - 1), order=0).tolist(),\n"
                 "    hierarchy.fcluster(Z, 2, criterion='maxclust').tolist(),\n"
                 "    hierarchy.fcluster(Z, 1.0, R=hierarchy.inconsistent(Z)).tolist(),\n"
                 "    hierarchy.fcluster(Z, 0.5, criterion='monocrit', monocrit=hierarchy.maxdists(Z)).tolist(),\n"
                 "    hierarchy.dendrogram(Z, no_plot=True)['ivl'],\n"
                 "    hierarchy.from_mlab_linkage(hierarchy.to_mlab_linkage(Z)).shape,\n"
                 "    hierarchy.leaves_list(Z.tolist()).tolist(),\n"
                 "    vq.vq(X, vq.kmeans(X, 2, seed=1)[0])[0].tolist(),\n]", allowed=DS) == [
        [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 3.0, 4.0]], [2.0, 7.0],
        [[1.0, 2.0, 0.0], [4.0, 5.0, 0.0], [7.0, 8.0, 0.0]], [[0.0, 0.0, 1.0], [0.0, 3.0, 4.0], [0.0, 6.0, 7.0]],
        [1, 2, 1, 1, 1, 1], [2, 3, 1, 1, 1, 2], [1, 2, 1, 1, 1, 1], ["1", "2", "3", "4", "0", "5"], [5, 4],
        [1, 2, 3, 4, 0, 5], [1, 1, 0, 0, 0, 1]]


WINDOW_BOUNDS = """
import numpy as np
import pandas as pd
from pandas.api.indexers import BaseIndexer
class Window(BaseIndexer):
    def get_window_bounds(self, num_values=0, min_periods=None, center=None, closed=None, step=None):
        start = np.zeros(num_values, dtype=np.int64)
        return start, np.full(num_values, END, dtype=np.int64)
s = pd.Series(np.ones(4))
"""


@needs_data_science
@pytest.mark.parametrize("reach", [
    "s.rolling(Window(window_size=1), min_periods=1).max()",
    "s.rolling(Window(window_size=1), min_periods=1).sum()",
    "s.rolling(Window(window_size=1)).median()",
    "s.rolling(Window(window_size=1)).cov(s)",
])
def test_a_custom_rolling_windows_bounds_stay_inside_the_data(reach):
    """pandas checks the lengths of get_window_bounds()'s arrays only; its compiled
    aggregations then read values[start:end] unchecked: an end past the data read the heap."""
    reply = refused(WINDOW_BOUNDS.replace("END", "4000") + f"print('ESCAPED', {reach}.tolist())", allowed=DS)
    assert "each start and end must be a position from 0 to num_values (4)" in reply["error"], reply


@needs_data_science
def test_a_custom_rolling_window_inside_the_data_runs():
    assert works(WINDOW_BOUNDS.replace("END", "num_values") + "s = s.cumsum()\nresult = ["
                 "s.rolling(Window(window_size=1)).sum().tolist(), s.rolling(2, min_periods=1).max().tolist(), "
                 "s.expanding().mean().tolist()]", allowed=DS) == \
        [[10.0] * 4, [1.0, 2.0, 3.0, 4.0], [1.0, 1.5, 2.0, 2.5]]


def test_a_match_guards_error_points_at_the_guards_own_line():
    reply, _ = run("def check(v):\n    return 1 / 0\nmatch {'a': 1}:\n    case {'a': x} if (\n"
                   "            check(x)):\n        pass")
    assert reply["error_type"] == "runtime_error" and "line 5" in reply["traceback"], reply


@needs_data_science
def test_a_matrix_free_operator_defines_the_hooks_scipy_documents():
    """scipy.sparse.linalg's way to an operator of one's own: subclass LinearOperator and
    define _matvec (and _adjoint or _rmatvec), as methods; other values stay refused."""
    assert works("import numpy as np\nfrom scipy.sparse.linalg import LinearOperator, cg\n"
                 "class Diag(LinearOperator):\n    def __init__(self, d):\n"
                 "        super().__init__(dtype=np.float64, shape=(len(d), len(d)))\n"
                 "        self.d = np.asarray(d, dtype=float)\n"
                 "    def _matvec(self, x):\n        return self.d * np.ravel(x)\n"
                 "    def _adjoint(self):\n        return self\n"
                 "op = Diag([1.0, 2.0, 4.0])\nx, info = cg(op, np.array([1.0, 2.0, 4.0]))\n"
                 "result = [(op @ np.ones(3)).tolist(), np.round(x, 6).tolist(), info]", allowed=DS) == \
        [[1.0, 2.0, 4.0], [1.0, 1.0, 1.0], 0]
    refused("import numpy as np\nfrom scipy.sparse.linalg import LinearOperator\n"
            "class Op(LinearOperator):\n    _matvec = np.ravel", allowed=DS)
