"""The red-team corpus and its variants against the RestrictedPython layer alone: every
Python-level attack is stopped by this layer by itself."""

from __future__ import annotations

import json
import pathlib
import sys
import time

import pytest

from sandbox import profiles

import redteam_lib
from rp_calls import BASIC, run, _visible, ok, blocked
from slowness import scaled

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "redteam" / "corpus.json"  # carried with the project


# --------------------------------------------------------------------- attacks: corpus

def _corpus_cases():
    cases = json.loads(CORPUS.read_text())
    return [c for c in cases if c.get("layer") in ("python", "chained") and c.get("danger") == "safe"]


ACCEPTED = {
    "compile_error": {"syntax_error", "security_violation"},
    "runtime_error": {"runtime_error", "security_violation", "memory_limit"},
    "contained": {None, "syntax_error", "security_violation", "runtime_error", "memory_limit"},
    "truncated": {None, "syntax_error", "security_violation", "runtime_error", "memory_limit"},
    "limit_kill": {"memory_limit", "runtime_error"},
}

# PJ-008 lists operator and types as forbidden; the profile spec puts both in BASIC, where they
# are importable only as sanitized proxies (attrgetter/methodcaller replaced, the types toolbox
# cut down). The sweep runs without them so that it still checks the 36 other modules;
# test_operator_and_types_are_sanitized covers the two.
ALLOWED_OVERRIDE = {"PJ-008": BASIC - {"operator", "types"}}


@pytest.mark.parametrize("case", _corpus_cases(), ids=lambda c: c["id"])
def test_corpus_attack(case):
    code = case["code"]
    if "code_generator" in case:
        code = eval(case["code_generator"], {"__builtins__": {}})  # a trusted corpus expression
    extra = case.get("call_args", {}).get("allowed_imports", [])
    allowed = ALLOWED_OVERRIDE.get(case["id"], profiles.allowed_modules(["basic"], extra))
    started = time.monotonic()
    code = redteam_lib.without_import_probes(code, redteam_lib.SUBSET_MODULES)
    reply, out, err = run(code, allowed=allowed)
    expect = case["expect"]
    accepted = set().union(*(ACCEPTED[o] for o in [expect["outcome"], *expect.get("also_acceptable", [])]))
    assert reply["error_type"] in accepted, reply
    if case["canary"]["kind"] == "stdout":
        assert "ESCAPED" not in _visible(reply, out, err), (out, reply)
    else:  # harness checks: the text may appear in the captured stdout, never elsewhere
        assert "ESCAPED" not in json.dumps(reply["result"]) + str(reply["error"])
        assert time.monotonic() - started < scaled(30)
    if expect["outcome"] == "compile_error":
        assert reply["error_type"] in ("syntax_error", "security_violation")


def test_corpus_cases_were_found():
    assert len(_corpus_cases()) >= 30


# --------------------------------------------------------------------- attacks: variants

VARIANTS = {
    "from_typing_import_sys": "from typing import sys",
    "elementtree_sys": "import xml.etree.ElementTree as ET\nET.sys",
    "xml_package_not_allowed": "import xml",
    "xml_package_only_leads_to_etree": "import xml.etree.ElementTree\nxml.etree.ElementTree.fromstring('<a/>')\nxml.etree.ElementPath",
    "format_reaches_builtins": "def f():\n    pass\n'{0.__globals__[__builtins__]}'.format(f)",
    "format_map_reaches_os": "import uuid\n'{f.__globals__[os]}'.format_map({'f': uuid.uuid4})",
    "getattr_json_decoder_scanner": "import json\ngetattr(json, 'decoder').scanner",
    "operator_attrgetter_dunder": "import operator\noperator.attrgetter('__class__')(1)",
    "operator_attrgetter_dotted": "import operator\noperator.attrgetter('real.__class__')(1)",
    "operator_methodcaller_format": "import operator\noperator.methodcaller('format', 1)('{0.__class__}')",
    "from_operator_import_attrgetter": "from operator import attrgetter\nattrgetter('__class__')(1)",
    "submodule_proxy_write": "import xml.etree.ElementTree as ET\nET.fromstring = None",
    "collections_abc_write": "import collections.abc\ncollections.abc.Mapping = None",
    "os_subset_system": "import os\nos.system('id')",
    "os_path_subset_reaches_os": "import os.path\nos.path.os.system('id')",
    "from_os_import_fork": "from os import fork",
    "os_subset_walk_out": "import os\nlist(os.walk('/'))",
    "collections_abc_sys": "from collections import abc\nabc.sys.modules",
    "str_subclass_attribute_name": "class S(str):\n    def startswith(self, prefix):\n        return False\ngetattr((), S('__class__'))",
    "str_subclass_hasattr": "class S(str):\n    pass\nif hasattr(1, S('__class__')):\n    print('ESCAPED')\nraise ValueError",
    "name_that_hashes_and_compares_like_one": "class N:\n    def __eq__(self, other):\n        return True\n"
                                              "    def __hash__(self):\n        return hash('__class__')\ngetattr((), N())",
    "stringformatter_get_field_direct": "import string\nstring.Formatter().get_field('0.__class__', [()], {})",
    "generator_gi_frame_getattr": "def g():\n    yield 1\ngetattr(g(), 'gi_frame')",
    "generator_gi_code_getattr": "def g():\n    yield 1\ngetattr(g(), 'gi_code')",
    "vars_of_module": "import json\nvars(json)",
    "dir_globals_locals": "dir()",
    "open_builtin": "open('/etc/hostname').read()",
    "compile_builtin": "compile('1', 'x', 'eval')",
    "super_dunder_augassign": "class A:\n    def f(self):\n        super().__init__ += 1\nA().f()",
    "super_getattribute": "class A:\n    def f(self):\n        return super().__getattribute__('x')\nA().f()",
    "super_format_leak": "class S(str):\n    def f(self):\n        return super().format(1)\nprint('ESCAPED' + S('{0.__class__.__mro__}').f())",
    "super_on_foreign_object": "import json\nclass A:\n    pass\nsuper(object, json).__init__()",
    "userstring_format_leak": "import collections\nprint('ESCAPED' + collections.UserString('{0.__class__.__mro__}').format(1))",
    "dataclasses_functiontype": "import dataclasses\ndataclasses.FunctionType",
    "dataclasses_fields_internals": "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\nf = dataclasses.fields(P)[0]\ngetattr(f, '_field_type')",
    "dataclasses_inspect": "import dataclasses\ndataclasses.inspect.os",
    "singledispatchmethod_string_annotation": "import functools\nclass A:\n    @functools.singledispatchmethod\n"
                                              "    def f(self, x):\n        pass\n    @f.register\n"
                                              "    def _(self, x: \"().__class__.__base__.__subclasses__() and int\"):\n"
                                              "        pass",
    "singledispatchmethod_register_string": "import functools\nclass A:\n    @functools.singledispatchmethod\n"
                                            "    def f(self, x):\n        pass\n"
                                            "    f.register(\"__import__('os')\", lambda self, x: x)",
    "wrapped_of_a_library_function": "import functools\nfunctools.lru_cache(len).__wrapped__",
    "wrapped_of_a_library_function_getattr": "import functools\ngetattr(functools.lru_cache(len), '__wrapped__')",
    "class_keyword_private": "import enum\nclass E(enum.Enum, _simple=True):\n    A = 1",
    "class_keyword_expanded": "opts = {'_simple': True}\nclass C(**opts):\n    pass",
    "singledispatch_string_annotation": "import functools\n@functools.singledispatch\ndef f(x):\n    pass\n"
                                        "@f.register\ndef _(x: \"().__class__.__base__.__subclasses__() and int\"):\n    pass",
    # (a name's text is looked up as the snippet's code would: a call in it is never run)
    "singledispatch_future_annotations": "from __future__ import annotations\nimport functools\n"
                                         "@functools.singledispatch\ndef f(x):\n    pass\n@f.register\n"
                                         "def _(x: (print('ran') or int)):\n    pass",
    "singledispatch_annotation_text_private": "from __future__ import annotations\nimport functools, json\n"
                                              "@functools.singledispatch\ndef f(x):\n    pass\n@f.register\n"
                                              "def _(x: json._default_decoder):\n    pass",
    "singledispatch_annotation_text_builtins": "import functools\n@functools.singledispatch\ndef f(x):\n    pass\n"
                                               "@f.register\ndef _(x: '__builtins__'):\n    pass",
    "singledispatch_register_string": "import functools\n@functools.singledispatch\ndef f(x):\n    pass\n"
                                      "f.register(\"__import__('os')\", lambda x: x)",
    "types_functiontype": "import types\ntypes.FunctionType",
    "types_codetype": "from types import CodeType",
    "types_new_class": "import types\ntypes.new_class('X', (), {})",
    "json_tool_import": "import json.tool",
    "from_json_import_decoder": "from json import decoder",
    "contextlib_chdir": "import contextlib\ncontextlib.chdir('/')",
    "contextlib_os": "import contextlib\ncontextlib.os",
    "setattr_module": "import json\nsetattr(json, 'dumps', 1)",
    "delattr_module": "import json\ndelattr(json, 'dumps')",
    "del_module_attribute": "import json\ndel json.dumps",
    "library_class_write": "import json\njson.JSONEncoder.default = 1",
    "library_function_write": "import json\njson.dumps.x = 1",
    "builtin_type_write": "int.x = 1",
    "map_getattr_module": "import typing\nlist(map(getattr, [typing], ['sys']))",
    "partial_getattr_module": "import functools, typing\nfunctools.partial(getattr, typing)('sys')",
    "relative_import": "from . import json",
    "socket_without_network": "import socket",
    "io_without_filesystem": "import io\nio.open('/etc/passwd')",   # io here is the StringIO/BytesIO subset
    "io_subset_fileio": "from io import FileIO",
    "sys_subset_modules": "import sys\nsys.modules['os']",
    "sys_subset_getframe": "from sys import _getframe",
    "pickle": "import pickle",
    "importlib": "import importlib",
    "builtins_via_re_enum": "import re\nre.enum.bltns",
    # string.Formatter is the guarded one: a subclass reaches neither its unguarded
    # lookups (super().get_field is the guarded one) nor the base's private _vformat
    "stringformatter_subclass": "import string\nclass F(string.Formatter):\n    def get_field(self, n, a, k):\n"
                                "        return super().get_field(n, a, k)\nF().format('{0.__class__}', 1)",
    "stringformatter_private": "import string\nclass F(string.Formatter):\n    def go(self):\n"
                               "        return self._vformat('{0.__class__}', (1,), {}, set(), 2)\nF().go()",
    "stringformatter_own_lookup": "import string\nclass F(string.Formatter):\n    _getattr = staticmethod(lambda o, n: 1)\n"
                                  "    _getitem = _getattr\nF().format('{0.__class__}', 1)",
    "format_exception_globals": "try:\n    1/0\nexcept Exception as e:\n    '{0.__traceback__.tb_frame.f_globals}'.format(e)",
    "format_spec_nested_lookup": "'{0:{1.__class__.__mro__}}'.format(1, 2)",
    "str_format_unbound": "str.format('{0.__class__}', 1)",
    "typing_get_type_hints": "import typing\ndef f(x: \"__import__('os')\"):\n    pass\ntyping.get_type_hints(f)",
    "typing_forwardref": "import typing\ntyping.ForwardRef('1')",
    "random_os": "import random\ngetattr(random, '_os')",
    "fractions_operator_attrgetter": "import fractions\nfractions.operator.attrgetter('limit_denominator.__globals__')(fractions.Fraction)",
    "private_name_import": "from hashlib import _hashlib",
    "dunder_dotted_import": "import json.__init__",
    "attribute_error_obj": "import json\ntry:\n    json.nope\nexcept AttributeError as e:\n    leaked = e.obj\nleaked.codecs",
    "match_class_pattern": "match (x for x in [1]):\n    case object(gi_frame=f):\n        pass",
    "match_class_pattern_dunder": "match 1:\n    case int(__class__=c):\n        pass",
    "match_class_pattern_wrapped": "match 'a':\n    case str(format=f):\n        pass",
    "except_star": "try:\n    pass\nexcept* ValueError:\n    pass",
    "async_generator_frame": "async def g():\n    yield 1\ngetattr(g(), 'ag_frame')",
    "metaclass_keyword": "class M(type):\n    pass\nclass X(metaclass=M):\n    pass",
    "forbidden_magic_method": "class P:\n    def __getattribute__(self, name):\n        return 1",
    "decorator_exec": "@exec\ndef f():\n    pass",
    "print_to_module": "import json\nprint('x', file=json)",
    "make_dataclass_injection": "import dataclasses\ndataclasses.make_dataclass('X', [('a; import os', int)])",
    "namedtuple_injection": "import collections\ncollections.namedtuple('P', ['x=__import__(\"os\")'])",
    # Moving a proxy's insides somewhere readable: every read still goes through the guards.
    "update_wrapper_copies_proxy_dict": "import functools, json\ndef f():\n    pass\nfunctools.update_wrapper(f, json)\nf.dumps",
    "copy_reduce_rebuilds_proxy": "import copy, json\nX = type('X', (), {'__reduce_ex__': lambda self, p: (type(json), ())})\ncopy.copy(X())",
    "dataclass_fields_named_like_slots": "import dataclasses, json\nD = dataclasses.make_dataclass('D', [('_ModuleProxy__module', object)])\ndataclasses.asdict(json)",
    "proxy_class_instantiation": "import json\ntype(json)()",
}

VARIANT_ERROR_TYPES = {  # where the failure is plain Python rather than a refusal
    "vars_of_module": ("runtime_error", "security_violation"),
    "dir_globals_locals": ("runtime_error", "security_violation"),
    "open_builtin": ("runtime_error",), "compile_builtin": ("security_violation",),
    "decorator_exec": ("runtime_error",), "print_to_module": ("runtime_error",),
    "make_dataclass_injection": ("runtime_error", "security_violation"), "namedtuple_injection": ("runtime_error",),
    "update_wrapper_copies_proxy_dict": ("runtime_error",), "copy_reduce_rebuilds_proxy": ("runtime_error", "security_violation"),
    "dataclass_fields_named_like_slots": ("runtime_error", "security_violation"),
    "proxy_class_instantiation": ("runtime_error",),
    "str_subclass_hasattr": ("runtime_error", "security_violation"),
    "except_star": ("security_violation", "syntax_error"),  # a syntax error before 3.11
    # Gadgets that exist only in some versions: where absent, a plain AttributeError.
    "dataclasses_functiontype": ("security_violation", "runtime_error"),  # gone in 3.13
    "builtins_via_re_enum": ("security_violation", "runtime_error"),  # enum.bltns: 3.11+
    "contextlib_chdir": ("security_violation", "runtime_error"),  # 3.11+
    "contextlib_os": ("security_violation", "runtime_error"),  # 3.11+
    "xml_package_only_leads_to_etree": ("runtime_error", "security_violation"),
    "collections_abc_sys": ("runtime_error", "security_violation"),
    "singledispatch_register_string": ("runtime_error",),  # the real register's TypeError: nothing evaluated
    "singledispatchmethod_register_string": ("runtime_error",),
}


def test_singledispatchmethod_dispatches_on_the_annotation_or_the_class_given():
    result, _ = ok("import functools\nclass Fmt:\n    @functools.singledispatchmethod\n    def show(self, x):\n"
                   "        return 'other'\n    @show.register\n    def _(self, x: int):\n        return 'int'\n"
                   "    @show.register(list)\n    def _(self, x):\n        return f'list of {len(x)}'\n"
                   "result = [Fmt().show(1), Fmt().show([1, 2]), Fmt().show('a')]")
    assert result == ["int", "list of 2", "other"], result


def test_singledispatch_reads_a_class_from_the_text_of_its_name():
    """`from __future__ import annotations` makes `def _(x: int)` the text 'int': a name, a
    dotted name or a union of them is looked up as the snippet's code would look it up."""
    text = "str | bytes" if sys.version_info >= (3, 11) else "str"   # (register takes a union from 3.11)
    result, _ = ok("from __future__ import annotations\nimport functools, decimal\nclass Circle:\n    pass\n"
                   "@functools.singledispatch\ndef kind(x):\n    return 'other'\n@kind.register\ndef _(x: int):\n"
                   f"    return 'int'\n@kind.register\ndef _(x: {text}):\n    return 'text'\n"
                   "@kind.register\ndef _(x: decimal.Decimal):\n    return 'decimal'\n@kind.register\n"
                   "def _(x: 'Circle'):\n    return 'circle'\nclass Fmt:\n    @functools.singledispatchmethod\n"
                   "    def show(self, x):\n        return 'any'\n    @show.register\n    def _(self, x: float):\n"
                   "        return 'float'\n"
                   "result = [kind(1), kind('a'), kind(b'b'), kind(decimal.Decimal(1)), kind(Circle()), kind(2.5),\n"
                   "          Fmt().show(1.5), Fmt().show(1)]")
    assert result == ["int", "text", "text" if "|" in text else "other", "decimal", "circle", "other", "float",
                      "any"], result


def test_wrapped_reads_what_the_snippets_own_functools_wraps_stored():
    result, _ = ok("import functools\ndef deco(fn):\n    @functools.wraps(fn)\n    def wrapper(*a):\n"
                   "        return fn(*a) + 1\n    return wrapper\n@deco\ndef f(x):\n    return x\n"
                   "result = [f(1), f.__wrapped__(1), f.__wrapped__.__name__, getattr(f, '__wrapped__') is f.__wrapped__]")
    assert result == [2, 1, "f", True], result


def test_wrapped_of_a_library_function_says_where_it_is_readable():
    reply = blocked("import functools\nfunctools.lru_cache(len).__wrapped__")
    assert "readable on the snippet's own functions only" in reply["error"], reply


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_attack_variant_is_stopped(name):
    blocked(VARIANTS[name], error_types=VARIANT_ERROR_TYPES.get(name, ("security_violation",)))
