"""Attribute access under the RestrictedPython layer alone: x.__class__ reads as type(x),
what vars() and help() show, and which attributes of library objects a snippet may
write."""

from __future__ import annotations

import pytest

from sandbox import profiles

from rp_calls import run, ok, blocked


# --------------------------------------------------------------------- x.__class__ is type(x), through the same guard
def test_class_reads_as_type_of_the_value():
    reply, _, _ = run("class A:\n    def __repr__(self):\n        return f'{self.__class__.__name__}()'\n"
                      "class B(A):\n    pass\n"
                      "one, items = 1, []\n"
                      "result = [repr(B()), B().__class__ is B, one.__class__ is int, items.__class__.__name__,\n"
                      "          isinstance(A(), B().__class__), A().__class__.__mro__[0] is A]")
    assert reply["success"] and reply["result"] == ["B()", True, True, "list", False, True], reply


@pytest.mark.parametrize("code", [
    "class A:\n    pass\nA.__class__",                        # a class's class: a metaclass, as type(A) refuses
    "int.__class__", "type.__class__.__class__",
    "def f():\n    pass\nf.__class__",                        # types.FunctionType, denied by the module policy
    "(lambda: 1).__class__(compile('1', 'x', 'eval'), {})",
    "().__class__", "''.__class__", "[].__class__", "{}.__class__", "(1).__class__", "f'{1}'.__class__",
    "[x for x in ()].__class__",                                # a literal's class: an escape's first step
    "t = ()\nt.__class__.__base__.__subclasses__()",              # the next read is refused
    "t = ()\nt.__class__.__bases__[0]",
    "print(f'{1:{().__class__}}')",
    "class A:\n    pass\na = A()\na.__class__ = int",          # writing it changes a class
    "class A:\n    pass\na = A()\ndel a.__class__",
    "class A:\n    pass\na = A()\na.__class__ += 1",
    "getattr((), '__class__')", "getattr(1, chr(95) * 2 + 'class' + chr(95) * 2)",
])
def test_class_read_opens_nothing_type_would_not(code):
    blocked(code, error_types=("syntax_error", "security_violation"))


@pytest.mark.parametrize("code", [
    "import sqlite3\nview = sqlite3.Binary(bytearray(b'ab'))\nprint('ESCAPED', view.cast('B'))",
    "import io\nmemory = type(io.BytesIO(b'ab').getbuffer())\nprint('ESCAPED', memory(b'ab'))",
])
def test_memoryview_is_withheld_wherever_it_surfaces(code):
    reply = blocked(code)
    assert "memoryview" in reply["error"] and "not available" in reply["error"], reply


def test_bytes_serve_where_a_memoryview_is_withheld():
    result, _ = ok("import sqlite3, io\nc = sqlite3.connect(':memory:')\nc.execute('create table t (b blob)')\n"
                   "c.execute('insert into t values (?)', (b'ab',))\n"
                   "result = [c.execute('select b from t').fetchone()[0] == b'ab', io.BytesIO(b'ab').getbuffer().tolist()]")
    assert result == [True, [97, 98]]


def test_a_librarys_re_export_of_what_a_subset_stands_in_for_is_the_subsets():
    """matplotlib.Path is pathlib.Path, matplotlib.texmanager.TemporaryDirectory is tempfile's,
    pandas and sympy import warnings' functions: each is the subset's object, as `import` gives it."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    result, _ = ok("import pathlib, tempfile, warnings, matplotlib, matplotlib.texmanager, pandas.io.parquet\n"
                   "import sympy.multipledispatch.dispatcher as dispatcher\n"
                   "result = [matplotlib.Path is pathlib.Path, "
                   "matplotlib.texmanager.TemporaryDirectory is tempfile.TemporaryDirectory, "
                   "pandas.io.parquet.filterwarnings is warnings.filterwarnings, dispatcher.warn is warnings.warn]",
                   allowed=profiles.allowed_modules(["basic", "data_science"]))
    assert result == [True, True, True, True]


def test_vars_of_a_simple_namespace_is_a_copy_of_its_public_attributes():
    """vars(ns) of a SimpleNamespace is allowed: it holds only public names the snippet gave it, and a library's (sys.implementation)
    shows only what getattr() would."""
    reply, _, _ = run("from types import SimpleNamespace\nimport sys\nns = SimpleNamespace(a=1, b=[2])\n"
                      "copy = vars(ns)\ncopy['a'] = 5\n"
                      "result = [copy, ns.a, sorted(vars(sys.implementation))]")
    assert reply["success"], reply
    assert reply["result"][:2] == [{"a": 5, "b": [2]}, 1], reply
    assert "name" in reply["result"][2] and not [k for k in reply["result"][2] if k.startswith("_")], reply


def test_an_xml_tree_is_built_by_setting_its_elements_text():
    """`ET.SubElement(root, 'c').text = 'hi'` runs, though the snippet did not create the
    Element: it is how ElementTree builds a document."""
    result, _ = ok("import xml.etree.ElementTree as ET\nroot = ET.Element('r')\nc = ET.SubElement(root, 'c')\n"
                   "c.text = 'hi'\nc.tail = '\\n'\nc.attrib = {'k': 'v'}\nc.tag = 'd'\n"
                   "result = ET.tostring(root, encoding='unicode')")
    assert result == '<r><d k="v">hi</d>\n</r>'


@pytest.mark.parametrize("code, error_types", [
    ("import xml.etree.ElementTree as ET\nET.Element('r').__class__ = int", ("security_violation",)),
    ("import xml.etree.ElementTree as ET\nsetattr(ET.Element('r'), '_children', [])", ("security_violation",)),
    ("import xml.etree.ElementTree as ET\nET.Element('r').find = print", ("runtime_error",)),   # no such slot
    ("import xml.etree.ElementTree as ET\nET.Element('r').attrib = 5", ("runtime_error",)),
    ("import xml.etree.ElementTree as ET\ne = ET.Element('r')\ne.text = object()\nET.tostring(e)", ("runtime_error",)),
])
def test_an_elements_writable_attributes_are_its_four_and_hold_what_the_serializer_checks(code, error_types):
    reply = blocked(code, error_types=error_types)
    assert "ESCAPED" not in str(reply), reply


def test_a_library_object_refuses_attributes_and_says_how_to_configure_one():
    """reprlib.Repr is configured by attributes; its shared instance (reprlib.aRepr) is what
    asyncio formats with, so the library's own stay unwritable, and the refusal names the
    way that works: an instance of a class of the snippet's own."""
    reply = blocked("import reprlib\nreprlib.Repr().maxlist = 2")
    assert "class Mine(TheirClass)" in reply["error"], reply
    result, _ = ok("import reprlib\nclass Short(reprlib.Repr):\n    pass\nr = Short()\nr.maxlist = 2\n"
                   "result = r.repr(list(range(10)))")
    assert result == "[0, 1, ...]"


def test_a_dataclass_with_a_kw_only_marker():
    """`_: KW_ONLY` is the documented way to make the fields after it keyword-only; its
    name is a marker dataclasses never pastes into code, so it is no refused field name."""
    result, _ = ok("from dataclasses import dataclass, KW_ONLY\n@dataclass\nclass A:\n    x: int\n    _: KW_ONLY\n"
                   "    y: int = 0\nresult = repr(A(1, y=2))")
    assert result == "A(x=1, y=2)"
    reply = blocked("from dataclasses import dataclass\n@dataclass\nclass A:\n    _dflt_x: int = 0")
    assert "field name '_dflt_x' is not allowed" in reply["error"], reply


def test_a_refused_name_of_types_says_what_to_use():
    reply = blocked("import types\ndef f():\n    pass\nresult = isinstance(f, types.FunctionType)")
    assert "use callable(x); types here has" in reply["error"] and "SimpleNamespace" in reply["error"], reply


@pytest.mark.parametrize("code", [
    "g = (x for x in [1])\nf = g.gi_frame",                       # in the source: refused at compile time
    "g = (x for x in [1])\nf = getattr(g, 'gi_frame')",            # by name: refused by the guard
    "g = (x for x in [1])\nf = '{0.gi_code}'.format(g)",             # in a format field: the same guard
])
def test_a_frame_or_code_attribute_says_what_to_use(code):
    reply = blocked(code, error_types=("security_violation", "runtime_error"))
    assert "traceback.format_exc()" in reply["error"] and "next(g)" in reply["error"], reply


def test_help_prints_a_docstring_and_reads_nothing_more():
    result, out = ok("import json\ndef mine():\n    '''Double it.'''\nclass Plain:\n    pass\n"
                     "help(json.dumps)\nhelp(mine)\nhelp(Plain())\nhelp('json')\nresult = 1")
    assert result == 1
    assert out.startswith("Help on dumps:\n\nSerialize ``obj``") and "Help on mine:\n\nDouble it." in out, out
    assert "Help on an object of type Plain:\n\n(no docstring)" in out and "not looked up by name" in out, out
