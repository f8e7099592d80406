"""Everyday code that runs as in plain CPython under the guards, and the doors beside
each relaxation that stay closed: modules answer hasattr() and getattr(m, name, default)
for a missing name; a snippet reads its own dunders that hold data; a class decorator
sets special methods; typing.get_type_hints resolves annotations without eval; an
exception's traceback is a summary of the snippet's own lines.

In-process (restricted.execute, no kernel layer): the Python layer must hold alone."""

from __future__ import annotations

import importlib.util
import io
import sys
import types

import pytest

from sandbox import profiles
from sandbox.restricted import run as restricted
from sandbox.restricted.json_value import to_jsonable

BASIC = profiles.allowed_modules(["basic"])
DATA = profiles.allowed_modules(["basic", "data_science"])
HAVE_DATA = all(importlib.util.find_spec(m) for m in ("numpy", "pandas", "scipy", "sympy", "matplotlib"))
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="the data-science extra is not installed")


def run(code, *, allowed=BASIC, rp=True):
    out, err = io.StringIO(), io.StringIO()
    reply = restricted.execute(code, restricted=rp, allowed_modules=allowed, stdout=out, stderr=err)
    return reply, out.getvalue()


def ok(code, **kwargs):
    reply, out = run(code, **kwargs)
    assert reply["success"], reply
    return reply["result"], out


def refused(code, *, error_types=("security_violation",), **kwargs):
    reply, out = run(code, **kwargs)
    assert not reply["success"] and reply["error_type"] in error_types, reply
    assert "ESCAPED" not in out + str(reply["result"])
    return reply


def plain(code):
    """What plain CPython makes of `code` as a script: the value of `result`, as the sandbox reports it."""
    script = types.ModuleType("__main__")
    before = sys.modules["__main__"]
    sys.modules["__main__"] = script   # (typing looks a class's names up in its module)
    try:
        exec(compile(code, "<snippet>", "exec", dont_inherit=True), vars(script))
    finally:
        sys.modules["__main__"] = before
    return to_jsonable(vars(script)["result"])


# ------------------------------------------------------------------ modules: missing names
MISSING_NAMES = """
import {module} as m
result = [hasattr(m, "no_such_name"), getattr(m, "no_such_name", "default")]
try:
    m.no_such_name
except AttributeError as exc:
    result.append(type(exc).__name__ if type(exc) is AttributeError else "AttributeError subclass")
"""


@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
@pytest.mark.parametrize("module", ["os", "sys", "json", "math"])
def test_a_missing_module_attribute_is_an_attribute_error(module, rp):
    code = MISSING_NAMES.format(module=module)
    assert ok(code, rp=rp)[0][:2] == [False, "default"]
    assert ok(code, rp=rp)[0][2] in ("AttributeError", "AttributeError subclass")


@needs_data
@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
@pytest.mark.parametrize("module", ["numpy", "pandas", "scipy", "scipy.stats", "sympy", "matplotlib",
                                    "matplotlib.pyplot"])
def test_a_missing_library_attribute_is_an_attribute_error(module, rp):
    code = MISSING_NAMES.format(module=module)
    assert ok(code, allowed=DATA, rp=rp)[0] == [False, "default", "AttributeError"]


@needs_data
def test_the_version_compatibility_idiom_runs():
    code = """
import numpy as np
trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")
result = [hasattr(np, "trapz"), float(trapezoid([1.0, 2.0, 3.0]))]
"""
    assert ok(code, allowed=DATA)[0] == plain(code)


REFUSED_MODULE_NAMES = [("os", "system"), ("sys", "modules"), ("typing", "ForwardRef")]


@pytest.mark.parametrize("module, name", REFUSED_MODULE_NAMES)
def test_a_refused_module_attribute_stays_refused_and_answers_as_a_missing_one(module, name):
    """The value never comes; hasattr and getattr with a default answer as for a name the
    module lacks (no probe tells "refused" from "missing"); the plain read says why."""
    answers = ok(f"import {module} as m\nresult = [hasattr(m, {name!r}), getattr(m, {name!r}, 'default')]")[0]
    missing = ok(f"import {module} as m\nresult = [hasattr(m, 'no_such_name'), getattr(m, 'no_such_name', 'default')]")[0]
    assert answers == missing == [False, "default"]
    reply = refused(f"import {module} as m\nm.{name}")
    assert "not available" in reply["error"]


@needs_data
def test_a_refused_library_attribute_stays_refused():
    assert ok("import numpy as np\nresult = [hasattr(np, 'ctypeslib'), getattr(np, 'ctypeslib', 'default')]",
              allowed=DATA)[0] == [False, "default"]
    refused("import numpy as np\nnp.ctypeslib", allowed=DATA)


# ------------------------------------------------------------------ exception groups
GROUPS = """
group = ExceptionGroup("batch", [ValueError("bad value"), TypeError("bad type")])
matched, rest = group.split(ValueError)
result = [str(group), [str(e) for e in group.exceptions], isinstance(group, BaseExceptionGroup),
          issubclass(ExceptionGroup, Exception), [str(e) for e in matched.exceptions], repr(rest.exceptions)]
try:
    raise group
except ExceptionGroup as caught:
    result.append(len(caught.exceptions))
"""


@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
def test_exception_groups_are_classes_the_snippet_uses(rp):
    assert ok(GROUPS, rp=rp)[0] == plain(GROUPS)


def test_the_refusal_of_except_star_shows_code_that_runs():
    reply = refused("try:\n    raise ExceptionGroup('g', [ValueError(1)])\nexcept* ValueError as group:\n    pass")
    suggestion = reply["error"].split("split it by type:\n", 1)[1]
    code = ("try:\n    raise ExceptionGroup('g', [ValueError(1), KeyError(2)])\n" + suggestion
            + "\nresult = 'not reached'")
    reply, out = run(code)
    assert out == "handled: 1\n"
    # what is not matched goes on, as with except*
    assert not reply["success"] and reply["error"] == "ExceptionGroup: g (1 sub-exception)", reply


def test_a_subclass_of_exception_group_does_not_reopen_except_star():
    """The type confusion needs except*: it stays refused whatever the group's class."""
    refused("class G(ExceptionGroup):\n    def derive(self, excs):\n        return 1\n"
            "try:\n    raise G('g', [ValueError(1)])\nexcept* ValueError:\n    pass")


def test_sys_getdefaultencoding():
    assert ok("import sys\nresult = sys.getdefaultencoding()")[0] == "utf-8"


# ------------------------------------------------------------------ the snippet's own dunders that hold data
OWN_DUNDERS = """
from dataclasses import dataclass
from enum import Enum
from typing import Annotated
class Point:
    "A point in the plane."
    __slots__ = ("x", "y")
    def __init__(self, x=0, y=0):
        self.x, self.y = x, y
    def moved(self, dx=1, *, dy=2):
        return Point(self.x + dx, self.y + dy)
def connect(host, port=8080, *, timeout=5.0, retries=3):
    return host
class Color(Enum):
    RED = 1
    GREEN = 2
    CRIMSON = 1
Meters = Annotated[float, "unit: m", (0, 100)]
def describe(cls):
    return f"{cls.__name__}/{cls.__qualname__}: {cls.__doc__}"
@dataclass
class Reading:
    "One reading."
    value: float = 0.0
result = [Point.__slots__, Point(1, 2).__slots__, connect.__defaults__, connect.__kwdefaults__,
          Point().moved.__defaults__, Point.moved.__kwdefaults__, list(Color.__members__),
          Color.__members__["CRIMSON"].name, Meters.__metadata__, describe(Point), describe(Reading),
          Point.moved.__qualname__, Color.RED.__class__.__name__]
"""


@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
def test_the_snippets_own_dunders_that_hold_data_are_read(rp):
    assert ok(OWN_DUNDERS, rp=rp)[0] == plain(OWN_DUNDERS)


def test_a_librarys_enum_lists_its_members():
    code = "import http\nresult = list(http.HTTPStatus.__members__)[:3]"
    assert ok(code)[0] == plain(code)


@pytest.mark.parametrize("code", [
    "import json\njson.dumps.__defaults__",                      # a library's function
    "import json\njson.JSONEncoder.__slots__",                   # a library's class
    "import json\njson.JSONEncoder().default.__defaults__",      # a library's bound method
    "class D(dict):\n    pass\nD.__members__",                   # not an Enum
    "def f(x=1):\n    pass\nf.__defaults__.__class__.__bases__",  # (a tuple's hierarchy)
    "def f(x=1):\n    pass\nf.__globals__",
    "def f(x=1):\n    pass\nf.__code__",
    "def f(x=1):\n    pass\nf.__closure__",
    "def f(x=1):\n    pass\nf.__defaults__ = (2,)",             # writes keep their rules
    "def f(x=1):\n    pass\nsetattr(f, '__defaults__', (2,))",
    "def f(*, x=1):\n    pass\nsetattr(f, '__kwdefaults__', {})",
    "class C:\n    __slots__ = ('a',)\nC.__slots__ = ('b',)",
    "from enum import Enum\nclass E(Enum):\n    A = 1\nE.__members__ = {}",
    "from typing import Annotated\nA = Annotated[int, 1]\nA.__metadata__ = ()",
])
def test_reading_data_dunders_opens_no_door(code):
    refused(code)


def test_data_dunders_are_searched_like_any_container():
    """What a data dunder holds goes through the guards' search: a refused object inside
    is refused (the snippet can only put there what it had, but a library's alias or a
    function made with a library's help can hold more)."""
    import builtins
    import typing

    from sandbox.restricted import guards as rp_guards
    from sandbox.restricted.imports import Events

    ctx = rp_guards.ExecutionContext(frozenset(BASIC), Events())
    glb = rp_guards.restricted_globals(ctx, io.StringIO())
    exec("def f(x=None):\n    pass", glb)
    function = glb["f"]
    function.__defaults__ = (builtins.eval,)
    with pytest.raises(AttributeError):
        ctx.getattr(function, "__defaults__")
    with pytest.raises(AttributeError):
        ctx.getattr(typing.Annotated[int, builtins.exec], "__metadata__")
    assert ctx.getattr(typing.Annotated[int, "m"], "__metadata__") == ("m",)


# ------------------------------------------------------------------ special methods set by a class decorator
DECORATED = """
def auto_repr(cls):
    cls.__repr__ = lambda self: f"{type(self).__name__}({self.value!r})"
    cls.__eq__ = lambda self, other: type(other) is type(self) and other.value == self.value
    cls.__hash__ = lambda self: hash(self.value)
    return cls
def ordered(cls):
    for name in ("__lt__", "__le__"):
        setattr(cls, name, lambda self, other, name=name: (self.value < other.value) if name == "__lt__"
                else (self.value <= other.value))
    return cls
@ordered
@auto_repr
class Box:
    def __init__(self, value):
        self.value = value
class Plain:
    pass
Plain.__hash__ = None
result = [repr(Box(2)), Box(1) == Box(1), len({Box(1), Box(1)}), sorted([Box(3), Box(1)]), Box(1) <= Box(1)]
try:
    hash(Plain())
except TypeError:
    result.append("unhashable")
"""


@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
def test_a_class_decorator_sets_special_methods(rp):
    assert ok(DECORATED, rp=rp)[0] == plain(DECORATED)


def test_a_special_method_set_later_vets_what_the_interpreter_passes_it():
    """As a class body's: an __exit__ gets no traceback object (None), whatever raised."""
    code = """
class Guarded:
    def __enter__(self):
        return self
Guarded.__exit__ = lambda self, kind, exc, tb: print("traceback:", tb) or True
with Guarded():
    raise ValueError("x")
"""
    assert ok(code)[1] == "traceback: None\n"


@pytest.mark.parametrize("code", [
    "import json\njson.JSONEncoder.__repr__ = lambda self: 'ESCAPED'",        # a library's class
    "import json\nsetattr(json.JSONEncoder, '__eq__', lambda a, b: True)",
    "class Z:\n    pass\nZ().__repr__ = lambda self: 'z'",                      # an instance
    "class Z:\n    pass\nZ.__repr__ = print",                                   # not the snippet's function
    "import json\nclass Z:\n    pass\nZ.__eq__ = json.dumps",
    "import functools\nclass Z:\n    pass\nZ.__call__ = functools.partial(print, 'ESCAPED')",
    "class Z:\n    pass\nZ.__call__ = staticmethod(print)",
    "def f():\n    __init__ = print\n    class C:\n        pass\n    C.__init__ = __init__\nf()",  # a local name
    "class Z:\n    pass\nZ.__getattr__ = lambda self, n: 1",                     # not a class body's either
    "class Z:\n    pass\nsetattr(Z, '__getattribute__', lambda self, n: 1)",
    "class Z:\n    pass\nsetattr(Z, '__class__', int)",
    "class Z:\n    pass\nsetattr(Z, '__reduce_ex__', lambda self, p: (print, ('ESCAPED',)))",
    "class Z:\n    pass\ndel Z.__repr__",
    # attribute hooks: only on classes of the snippet's all the way down, now and later
    "import json\nclass E(json.JSONEncoder):\n    pass\nE.__setattr__ = lambda self, n, v: None",
    "import json\nclass A:\n    pass\nclass B(A, json.JSONEncoder):\n    pass\nA.__setattr__ = lambda s, n, v: None",
    "import json\nclass A:\n    pass\nA.__delattr__ = lambda s, n: None\nclass B(A, json.JSONEncoder):\n    pass",
])
def test_setting_a_special_method_opens_no_door(code):
    refused(code)


def test_a_deepcopy_hook_set_later_gets_a_handle_not_copys_memo():
    code = """
import copy
class Node:
    pass
Node.__deepcopy__ = lambda self, memo: memo
result = type(copy.deepcopy(Node())).__name__
"""
    assert ok(code)[0] != "dict"


# ------------------------------------------------------------------ a traceback of the snippet's own lines
TRACEBACK = """
import traceback
def parse(text):
    return int(text)
def total(items):
    return sum(parse(x) for x in items)
try:
    total(["1", "two"])
except ValueError as exc:
    frames = traceback.extract_tb(exc.__traceback__)
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    result = [[(f.filename, f.lineno, f.name) for f in frames if f.filename == "<snippet>"],
              [(filename, lineno) for filename, lineno, name, line in frames][:1], tb.tb_lineno,
              len(traceback.format_tb(exc.__traceback__)) == len(frames), frames[-1].lineno]
"""


@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
def test_an_exceptions_traceback_is_a_summary_of_the_snippets_lines(rp):
    assert ok(TRACEBACK, rp=rp)[0] == plain(TRACEBACK)


def test_the_summary_shows_the_snippets_own_lines_as_a_script_does():
    code = """
import traceback
def fail():
    raise KeyError("k")
try:
    fail()
except KeyError as exc:
    result = [f.line for f in traceback.extract_tb(exc.__traceback__)]
    print("".join(traceback.format_tb(exc.__traceback__)), end="")
    traceback.print_tb(exc.__traceback__)
"""
    result, out = ok(code)
    assert result == ["fail()", 'raise KeyError("k")']
    assert out == ('  File "<snippet>", line 6, in <module>\n    fail()\n'
                   '  File "<snippet>", line 4, in fail\n    raise KeyError("k")\n')


def test_a_librarys_frames_are_not_in_the_summary():
    code = """
import json, traceback
try:
    json.loads("{")
except ValueError as exc:
    frames = traceback.extract_tb(exc.__traceback__)
    result = [[(f.filename, f.lineno, f.name) for f in frames], traceback.format_tb(exc.__traceback__)]
"""
    frames, text = ok(code)[0]
    assert frames == [["<snippet>", 4, "<module>"]]
    assert "/" not in "".join(text)


def test_the_summary_holds_no_frame_code_or_globals():
    """By construction: nothing the summary refers to, at any depth, is a frame, a code
    object, a traceback, a function or a module (it is made of ints and strings)."""
    import gc
    import types

    from sandbox.restricted.subsets import snippet_traceback
    from sandbox.restricted.base import SNIPPET_FILENAME

    scope = {}
    exec(compile("def fail():\n    raise ValueError('x')\n", SNIPPET_FILENAME, "exec"), scope)
    try:
        scope["fail"]()
    except ValueError as exc:
        made = snippet_traceback.summary(exc.__traceback__)
    assert made is not None and made.tb_lineno == 2 and made.tb_next is None
    seen, stack = set(), [made]
    while stack:
        current = stack.pop()
        if id(current) in seen or type(current) is type:   # (its class's methods are the sandbox's code)
            continue
        seen.add(id(current))
        assert not isinstance(current, (types.FrameType, types.CodeType, types.TracebackType, types.FunctionType,
                                        types.ModuleType, dict)), current
        stack.extend(gc.get_referents(current))


@pytest.mark.parametrize("code", [
    "try:\n    1/0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame",
    "try:\n    1/0\nexcept ZeroDivisionError as e:\n    e.__traceback__._name",
    "try:\n    1/0\nexcept ZeroDivisionError as e:\n    vars(e.__traceback__)",
    "try:\n    1/0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__\nt.tb_lineno = 3",
    "try:\n    1/0\nexcept ZeroDivisionError as e:\n    e.__traceback__ = None",
    "try:\n    1/0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__\nt.tb_next.tb_frame",
    "def g():\n    yield 1\ng().gi_frame",
    "def g():\n    yield 1\nx = g()\nx.tb_next",
])
def test_the_summary_opens_no_door(code):
    refused(code)


def test_the_summary_classes_read_no_file():
    """What the snippet may build itself from the summary's classes is data: a line is
    never looked up in a file by name (as the real FrameSummary does with linecache)."""
    code = """
import traceback
try:
    1/0
except ZeroDivisionError as e:
    frame = traceback.extract_tb(e.__traceback__)[0]
made = type(frame)("/etc/passwd", 1, "x")
again = traceback.FrameSummary("/etc/passwd", 1, "x")
result = [made.line, again.line, traceback.format_list([made, ("/etc/passwd", 1, "x", None)])]
"""
    result = ok(code)[0]
    assert result[:2] == [None, None] and "root:" not in str(result)


def test_a_real_tracebacks_next_stays_refused_at_run_time():
    from sandbox.restricted import guards as rp_guards
    from sandbox.restricted.imports import Events

    ctx = rp_guards.ExecutionContext(frozenset(BASIC), Events())
    try:
        1 / 0
    except ZeroDivisionError as exc:
        real = exc.__traceback__
    with pytest.raises(AttributeError):
        ctx.getattr(real, "tb_next")
    with pytest.raises(AttributeError):
        ctx.getattr(real, "tb_frame")


# ------------------------------------------------------------------ typing.get_type_hints without eval
HINTS = """
import typing
from typing import Optional, Literal, Annotated, Callable
class Node:
    value: int
    children: "list[Node]"
    parent: "Optional[Node]"
class Leaf(Node):
    kind: "Literal['leaf', 'stub']"
    weight: Annotated[float, "kg"]
    visit: "Callable[[int], str]"
def link(a: "Node", b: Node, label: "str | None" = None) -> "dict[str, int]":
    return {}
def names(hints):
    return {k: repr(v) for k, v in hints.items()}
result = [names(typing.get_type_hints(Node)), names(typing.get_type_hints(Leaf)),
          names(typing.get_type_hints(link)), repr(typing.get_type_hints(Leaf, include_extras=True)["weight"]),
          typing.get_type_hints(int), typing.get_type_hints(len), typing.get_type_hints(link)["b"] is Node]
"""


@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
@pytest.mark.parametrize("future", ["", "from __future__ import annotations\n"], ids=["objects", "text"])
def test_get_type_hints_resolves_objects_and_text(future, rp):
    code = future + HINTS
    got = ok(code, rp=rp)[0]
    expected = plain(code)
    # (the snippet's classes are __sandbox__'s in the sandbox, __main__'s in a script)
    assert str(got).replace("__sandbox__.", "") == str(expected).replace("__main__.", "")


def test_get_type_hints_never_evaluates(monkeypatch):
    """By construction: the sandbox's get_type_hints never reaches typing's evaluation."""
    import typing

    def evaluated(*args, **kwargs):
        raise AssertionError("typing evaluated annotation text")
    monkeypatch.setattr(typing, "_eval_type", evaluated)
    monkeypatch.setattr(typing.ForwardRef, "_evaluate", evaluated)
    ok("from __future__ import annotations\n" + HINTS)


@pytest.mark.parametrize("annotation", [
    "__import__('os')", "print('ESCAPED') or int", "().__class__.__bases__[0].__subclasses__()",
    "__builtins__", "_getattr_", "int.__class__", "(lambda: int)()", "[c for c in ()]", "int if 1 else str",
    "open('/etc/passwd')",
])
def test_get_type_hints_refuses_text_that_would_need_evaluating(annotation):
    code = f"import typing\ndef f(x: {annotation!r}):\n    pass\nhints = typing.get_type_hints(f)\nprint(hints)"
    reply, out = run(code)
    assert not reply["success"] and reply["error_type"] in ("security_violation",), reply
    assert "ESCAPED" not in out and "root:" not in out


def test_get_type_hints_reads_guarded_attributes_only():
    refused("import typing, os\ndef f(x: 'os.system'):\n    pass\ntyping.get_type_hints(f)")
    reply, _ = run("import typing\ndef f(x: 'Missing'):\n    pass\ntyping.get_type_hints(f)")
    assert reply["error"] == "NameError: name 'Missing' is not defined", reply


def test_get_type_hints_leaves_a_librarys_text_unresolved():
    """A library function's text names its module's globals, not the snippet's: refused
    with what to use instead; a library's annotations that are objects come back vetted."""
    import builtins

    from sandbox.restricted import guards as rp_guards
    from sandbox.restricted import type_hints
    from sandbox.restricted.imports import Events

    ctx = rp_guards.ExecutionContext(frozenset(BASIC), Events())
    rp_guards.restricted_globals(ctx, io.StringIO())
    hints = type_hints.get_type_hints(ctx)

    library = {"eval": builtins.eval}
    exec(compile("def text(x: 'int') -> None: pass\ndef objects(x: int) -> None: pass\n"
                 "def holds_eval(x: eval): pass", "library.py", "exec", dont_inherit=True), library)
    with pytest.raises(Exception, match="inspect.signature"):
        hints(library["text"])
    assert hints(library["objects"]) == {"x": int, "return": type(None)}
    with pytest.raises(AttributeError):
        hints(library["holds_eval"])


# ------------------------------------------------------------------ small modules: configparser, gzip, logging
@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
def test_configparser_reads_text_and_file_objects_and_writes(rp):
    code = """
import configparser, io
config = configparser.ConfigParser()
config.read_string("[db]\\nhost = localhost\\nport = 5432\\n")
config.read_file(io.StringIO("[cache]\\nttl = 60\\n"))
out = io.StringIO()
config.write(out)
result = [config.sections(), config.getint("db", "port"), out.getvalue()]
"""
    assert ok(code, rp=rp)[0] == plain(code)


@pytest.mark.parametrize("code", [
    "import configparser\nconfigparser.ConfigParser().read('/etc/passwd')",
    "import configparser\nconfigparser.RawConfigParser.read(configparser.ConfigParser(), '/etc/passwd')",
    "import configparser\nclass P(configparser.ConfigParser):\n    def go(self):\n"
    "        return super().read('/etc/passwd')\nP().go()",
    "import configparser\ngetattr(configparser.ConfigParser(), 'read')(['/etc/passwd'])",
    "import configparser, operator\noperator.methodcaller('read', '/etc/passwd')(configparser.ConfigParser())",
])
def test_configparser_opens_no_file_by_name(code):
    reply = refused(code)
    assert "parser.read_file(f)" in reply["error"], reply


@pytest.mark.parametrize("rp", [True, False], ids=["rp", "no-rp"])
def test_gzip_over_a_file_object(rp):
    code = """
import gzip, io
buffer = io.BytesIO()
with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as stream:
    stream.write(b"line one\\nline two\\n")
with gzip.GzipFile(fileobj=io.BytesIO(buffer.getvalue())) as stream:
    lines = list(stream)
result = [lines, gzip.decompress(buffer.getvalue()), buffer.getvalue() == gzip.compress(b"line one\\nline two\\n", mtime=0)]
"""
    assert ok(code, rp=rp)[0] == plain(code)


@pytest.mark.parametrize("code", [
    "import gzip\ngzip.GzipFile('/etc/passwd').read()",                        # a file by name
    "import gzip\ngzip.GzipFile(filename='/etc/passwd').read()",
    "import gzip, io\ntype(gzip.GzipFile(fileobj=io.BytesIO()))('/etc/passwd').read()",
    "import gzip, io\ng = gzip.GzipFile(fileobj=io.BytesIO())\ng._real()",      # the real file inside
    "import gzip, io\ng = gzip.GzipFile(fileobj=io.BytesIO())\ng._GzipFile__real",
    "import gzip, io\ng = gzip.GzipFile(fileobj=io.BytesIO())\nvars(g)",
    "import gzip, io\ng = gzip.GzipFile(fileobj=io.BytesIO(b''))\ntype(iter(g))('/etc/passwd')",
    "import gzip\nclass G(gzip.GzipFile):\n    pass",
    "import gzip, io\ng = gzip.GzipFile(fileobj=io.BytesIO())\ng.fileobj",
])
def test_gzip_reaches_no_file_and_no_real_gzipfile(code):
    reply, out = run(code)
    assert not reply["success"] and "root:" not in out + str(reply["error"]), reply
    assert reply["error_type"] in ("security_violation", "runtime_error"), reply


def test_the_real_gzipfile_is_not_among_what_the_wrapper_reaches():
    """By construction: the class the snippet gets derives from no gzip class."""
    import gzip

    from sandbox.restricted.subsets import snippet_gzip
    assert not any(issubclass(base, gzip.GzipFile) or base.__module__.startswith("_compression")
                   for base in snippet_gzip.GzipFile.__mro__[1:])


def test_a_file_handler_without_files_says_what_to_do():
    reply, _ = run("import logging\nlogging.FileHandler('app.log')")
    assert not reply["success"] and "io.StringIO" in reply["error"], reply
    reply, _ = run("import logging\nlogging.basicConfig(filename='app.log', force=True)")
    assert not reply["success"] and "io.StringIO" in reply["error"], reply


def test_a_loggers_parent():
    code = """
import logging
logging.getLogger("parent_check")
result = [logging.getLogger("parent_check.child").parent.name, logging.getLogger("parent_check").parent.name,
          logging.getLogger().parent, repr(logging.getLogger("parent_check.child")).split(" (")[0]]
"""
    assert ok(code)[0] == plain(code)


def test_with_traceback_takes_the_summary():
    code = """
class ConfigError(Exception):
    pass
def parse():
    try:
        int("x")
    except ValueError as exc:
        raise ConfigError("bad value").with_traceback(exc.__traceback__)
try:
    parse()
except ConfigError as exc:
    result = [str(exc), type(exc.__cause__).__name__, exc.__context__ is not None]
"""
    assert ok(code)[0] == plain(code)
