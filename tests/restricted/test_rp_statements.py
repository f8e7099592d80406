"""Statements under the RestrictedPython layer alone: with ... as, globals(), match
patterns, generators finished after the run, and annotations left as text."""

from __future__ import annotations

import io
import json
import sys

import pytest

from sandbox.restricted import run as restricted

from rp_calls import BASIC, run, ok, blocked


# --------------------------------------------------------------------- with ... as
class _Entered:
    """A library context manager stand-in whose __enter__ hands over `value`."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("code", [
    "with leaky as t:\n    pass",
    "with leaky as (a, b):\n    pass",
    "with io.StringIO() as s, leaky as t:\n    pass",
    "import asyncio\nasync def m():\n    async with aleaky as t:\n        return 1\nasyncio.run(m())",
])
def test_what_a_context_manager_hands_over_is_vetted(code):
    """`with X as name` binds X.__enter__()'s result without a call the guards see: it is
    vetted like one (here a library hands over a class the policy denies)."""
    import types

    class _AsyncEntered(_Entered):
        async def __aenter__(self):
            return self.value

        async def __aexit__(self, *exc):
            return False

    denied = types.FunctionType
    value = (denied, 1) if "(a, b)" in code else denied
    out = io.StringIO()
    reply = restricted.execute("import io\n" + code, restricted=True, allowed_modules=BASIC, stdout=out, stderr=out,
                               names={"leaky": _Entered(value), "aleaky": _AsyncEntered(value)})
    assert not reply["success"] and reply["error_type"] == "security_violation", reply
    assert "FunctionType" in reply["error"] or "LambdaType" in reply["error"], reply


def test_ordinary_with_statements_run_unchanged():
    result, _ = ok("import io, contextlib\nwith io.StringIO('text') as f:\n    a = f.read()\n"
                   "with contextlib.suppress(KeyError), io.StringIO('x') as g:\n    b = g.read()\n"
                   "with contextlib.nullcontext((1, 2)) as (c, d):\n    pass\nresult = [a, b, c + d]")
    assert result == ["text", "x", 3]


# --------------------------------------------------------------------- globals()
def test_globals_is_a_copy_of_the_snippets_names_that_assigns_what_is_written():
    result, _ = ok("config = {'debug': True}\nglobals().update(config)\nif 'cache' not in globals():\n"
                   "    cache = {}\ng = globals()\ng['level'] = 2\ndel g['config']\n"
                   "def inner():\n    return sorted(globals())\n"
                   "result = [debug, level, 'config' in globals(), inner()]")
    assert result == [True, 2, False, ["cache", "debug", "g", "inner", "level"]], result


@pytest.mark.parametrize("code", [
    "globals()['_getattr_'] = getattr",                       # the guards
    "globals()['__builtins__'] = {'getattr': getattr}",
    "globals().update({'_write_': lambda ob: ob})",
    "globals().setdefault('_getitem_', None)",
    "del globals()['_getattr_']",
    "globals()['not a name'] = 1",
    "globals()[1] = 1",
    "globals()['printed'] = 'forged output'",                # RestrictedPython's reserved names
    "globals()['print'] = len",
    "globals()['_tmp0'] = 1",                                 # RestrictedPython's temporaries
    "globals()['_sandbox_method_alias'] = len",               # the sandbox's own helpers
    "globals()['__name__'] = 'os'",
    "globals()['_print'] = None",                            # RestrictedPython's print collector
])
def test_globals_never_writes_a_name_the_snippet_could_not_assign(code):
    assert blocked(code)["error_type"] == "security_violation"


@pytest.mark.parametrize("unrestricted", [False, True], ids=["rp", "norp"])
def test_a_snippet_that_prints_sees_only_its_own_names_in_globals(unrestricted):
    """RestrictedPython collects print() output in a variable of its own (`_print`), in
    the module and in each function that prints: globals() never shows it. Without
    RestrictedPython the namespace is a plain module's (its dunders, nothing of ours)."""
    result, out = ok("print('hi')\nx = 1\ndef f():\n    print('in f')\n    return sorted(globals())\n"
                     "result = [sorted(globals()), f()]", unrestricted=unrestricted)
    assert out == "hi\nin f\n"
    own = [[name for name in names if not (name.startswith("__") and name.endswith("__"))] for names in result]
    assert own == [["f", "x"], ["f", "x"]], result
    if not unrestricted:
        assert result == own, result


def test_the_print_collectors_name_is_not_the_snippets_and_says_so():
    reply = blocked("print('a')\n_print = None\nprint('b')", error_types=("syntax_error", "security_violation"))
    assert "the sandbox collects print() output under this name: choose another name" in reply["error"], reply
    # an attribute of that name on the snippet's own object is its own
    result, out = ok("class Log:\n    def __init__(self):\n        self._print = []\n"
                     "log = Log()\nlog._print.append(1)\nprint('still printing')\nresult = log._print")
    assert result == [1] and out == "still printing\n"


def test_globals_has_the_snippets_private_names_too():
    result, _ = ok("_cache = {}\ndef _helper():\n    return 1\nglobals()['_count'] = 3\n"
                   "result = [sorted(globals()), _count]")
    assert result == [["_cache", "_count", "_helper"], 3], result


def test_globals_hands_out_no_guard_and_is_not_the_namespace():
    result, _ = ok("x = 1\ng = globals()\nresult = [sorted(g), '__builtins__' in g, '_getattr_' in g, "
                   "type(g) is dict]")
    assert result == [["x"], False, False, False], result   # a copy: taken before g was assigned
    blocked("g = globals()\ntype(g)({'x': 1})", error_types=("runtime_error", "security_violation"))


def test_class_patterns_with_keywords_match_as_in_python():
    result, _ = ok("from dataclasses import dataclass\n@dataclass\nclass Point:\n    x: int\n    y: int\n"
                   "class Box:\n    def __init__(self, item):\n        self.item = item\n"
                   "def where(p):\n    match p:\n        case Point(x=0, y=0):\n            return 'origin'\n"
                   "        case Point(1, y=y):\n            return f'x=1, y={y}'\n"
                   "        case Box(item=Point(x=x)) | Box(item=[x, *_]):\n            return f'boxed {x}'\n"
                   "        case Box(missing=m):\n            return 'never'\n        case _:\n            return 'other'\n"
                   "result = [where(Point(0, 0)), where(Point(1, 4)), where(Box(Point(5, 0))), where(Box([6, 7])),\n"
                   "          where(Box(None)), where(3)]")
    assert result == ["origin", "x=1, y=4", "boxed 5", "boxed 6", "other", "other"], result


def test_positional_class_patterns_match_as_in_python():
    """A class of the snippet's names the attributes its positional patterns read
    (__match_args__); the built-in classes match the subject itself (case int(n))."""
    result, _ = ok("from collections import namedtuple\nfrom dataclasses import dataclass\n"
                   "class Point:\n    __match_args__ = ('x', 'y')\n"
                   "    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
                   "@dataclass\nclass Pair:\n    a: int\n    b: int\n"
                   "Span = namedtuple('Span', 'lo hi')\nclass Count(int):\n    pass\n"
                   "def what(v):\n    match v:\n        case Point(0, y):\n            return f'on the axis at {y}'\n"
                   "        case Point(x, y=2):\n            return f'x={x} on y=2'\n"
                   "        case Pair(a, b) | Span(a, b):\n            return a + b\n"
                   "        case bool(flag):\n            return f'flag {flag}'\n"
                   "        case Count(n):\n            return f'count {n}'\n"
                   "        case int(n, real=r):\n            return n * 10 + r\n"
                   "        case str(s) | bytes(s):\n            return len(s)\n"
                   "        case list([first, *_]) | tuple((first, *_)):\n            return first\n"
                   "        case dict(d):\n            return sorted(d)\n"
                   "        case Point():\n            return 'some point'\n"
                   "        case _:\n            return 'other'\n"
                   "result = [what(Point(0, 5)), what(Point(7, 2)), what(Point(7, 3)), what(Pair(1, 2)),\n"
                   "          what(Span(3, 4)), what(True), what(Count(4)), what(3), what('abc'), what(b'ab'),\n"
                   "          what([9, 8]), what((6,)), what({'k': 1}), what(2.5)]")
    assert result == ["on the axis at 5", "x=7 on y=2", "some point", 3, 7, "flag True", "count 4", 33, 3, 2,
                      9, 6, ["k"], "other"], result


def test_a_class_pattern_may_name_its_class_by_a_dotted_name():
    """`case ast.Name(id=x)`, `case json.JSONDecodeError()`: the dotted name is read through
    the guards before the statement (the interpreter would read it itself), nested matches
    and functions included."""
    result, _ = ok("import collections, json\nclass Shapes:\n    class Circle:\n        __match_args__ = ('r',)\n"
                   "        def __init__(self, r):\n            self.r = r\n"
                   "def what(v):\n    match v:\n        case Shapes.Circle(0):\n            return 'dot'\n"
                   "        case Shapes.Circle(r=r):\n            return f'circle {r}'\n"
                   "        case json.JSONDecodeError(msg=m):\n            return m\n"
                   "        case collections.OrderedDict():\n            return 'ordered'\n"
                   "        case list([first, *_]):\n            match first:\n"
                   "                case Shapes.Circle(r):\n                    return f'first circle {r}'\n"
                   "                case _:\n                    return 'list'\n        case _:\n            return 'other'\n"
                   "result = [what(Shapes.Circle(0)), what(Shapes.Circle(2)), what(json.JSONDecodeError('bad', 'x', 0)),\n"
                   "          what(collections.OrderedDict()), what([Shapes.Circle(3)]), what([1]), what(5)]")
    assert result == ["dot", "circle 2", "bad", "ordered", "first circle 3", "list", "other"], result


def test_a_value_pattern_may_compare_with_a_dotted_name():
    """`case Color.RED:`, alone and inside sequence, mapping and or-patterns, in a function
    and at the top: the value is read through the guards before the statement."""
    result, _ = ok("import enum, math\nclass Color(enum.Enum):\n    RED = 1\n    BLUE = 2\n"
                   "class Limits:\n    TOP = 10\n"
                   "def name(c):\n    match c:\n        case Color.RED:\n            return 'red'\n"
                   "        case [Color.BLUE, x] | (Color.RED, x):\n            return f'pair {x}'\n"
                   "        case {'k': Color.BLUE}:\n            return 'map'\n"
                   "        case Limits.TOP | math.pi:\n            return 'constant'\n        case _:\n            return 'other'\n"
                   "match Color.BLUE:\n    case Color.RED:\n        top = 'red'\n    case Color.BLUE:\n        top = 'blue'\n"
                   "result = [name(Color.RED), name([Color.BLUE, 3]), name((Color.RED, 4)), name({'k': Color.BLUE}),\n"
                   "          name(10), name(math.pi), name(Color.BLUE), top]")
    assert result == ["red", "pair 3", "pair 4", "map", "constant", "constant", "other", "blue"], result


@pytest.mark.parametrize("code", [
    # a dotted value is read as the guards read attributes
    "import json\nmatch 1:\n    case json._default_decoder:\n        pass",
    "import json\nmatch 1:\n    case json.__loader__:\n        pass",
    "class A:\n    pass\nmatch 1:\n    case A.__class__:\n        pass",
    "import os\nmatch 1:\n    case os.system:\n        pass", "match 1:\n    case print.__self__:\n        pass",
    # a dotted class name is read as the guards read attributes
    "import json\nmatch 1:\n    case json.__loader__():\n        pass",
    "import json\nmatch 1:\n    case json._default_decoder():\n        pass",
    "import os\nmatch 1:\n    case os.system():\n        pass",
    "match 1:\n    case int.__class__():\n        pass",
    "class A:\n    pass\nmatch 1:\n    case A.__class__.__base__():\n        pass",
])
def test_a_dotted_name_in_a_pattern_reads_nothing_the_guards_would_not_hand_out(code):
    blocked(code, error_types=("security_violation",))


@pytest.mark.parametrize("code", [
    # __match_args__ names what the guards refuse, or is not a tuple of names
    "class P:\n    __match_args__ = ('__class__',)\nmatch P():\n    case P(c):\n        pass",
    "class P:\n    __match_args__ = ('_hidden',)\n    def __init__(self):\n        self._hidden = 1\n"
    "match P():\n    case P(h):\n        pass",
    "class P:\n    __match_args__ = ['__dict__']\nmatch P():\n    case P(d):\n        pass",
    "class P:\n    pass\nP.__match_args__ = ('__dict__',)\nmatch P():\n    case P(d):\n        pass",
    "class P:\n    __match_args__ = ('__match_args__',)\nmatch P():\n    case P(m):\n        pass",
    # a fresh object on each read cannot be told from a swapped one
    "class P:\n    __match_args__ = ('items',)\n    def items(self):\n        pass\n"
    "match P():\n    case P(i):\n        pass",
])
def test_a_positional_class_pattern_reads_nothing_the_guards_would_not_hand_out(code):
    blocked(code, error_types=("security_violation", "runtime_error"))


def test_match_args_a_pattern_may_not_read_says_to_match_keywords():
    reply = blocked("class P:\n    __match_args__ = ('_hidden',)\nmatch P():\n    case P(h):\n        pass")
    assert "P.__match_args__ names '_hidden', which a pattern may not read" in reply["error"], reply
    assert "case P(name=...)" in reply["error"], reply


@pytest.mark.parametrize("code", [
    # the guards hand out a wrapper, not the attribute itself: the interpreter's own read is refused
    "match 'a':\n    case str(format=f):\n        f('{0.__class__}', 1)",
    "import xml.etree.ElementTree as ET\nTree = ET.ElementTree\nmatch Tree(ET.Element('a')):\n"
    "    case Tree(parse=p):\n        p('/etc/passwd')",
    # a fresh object on each read (a bound method) cannot be told from a swapped one
    "match {'a': 1}:\n    case dict(items=i):\n        pass",
    # names that never reach a pattern
    "match (x for x in [1]):\n    case object(gi_frame=f):\n        pass",
    "match ():\n    case tuple(__class__=c):\n        pass",
    "class P:\n    pass\nmatch P():\n    case P(_hidden=h):\n        pass",
])
def test_a_class_pattern_reads_nothing_the_guards_would_not_hand_out(code):
    blocked(code, error_types=("security_violation",))


# --------------------------------------------------------------------- the snippet's code runs under its policy only
GENERATOR_WITH_A_FINALLY = (
    "import enum\ndef gen():\n    try:\n        yield 1\n    finally:\n        try:\n"
    "            enum.Enum('E', [('__init_subclass__', 1)])\n            print('ESCAPED:enum_check_off')\n"
    "        except Exception as e:\n            print('blocked:', type(e).__name__)\n"
    "def started():\n    g = gen()\n    next(g)\n    return g\n")


@pytest.mark.parametrize("ending", [
    "started()",                                   # the last expression's value: reported, then dropped
    "result = started()\nresult = 1\nstarted()",
    "[started() for _ in range(3)][0]",
    "x = started()\ndel x",                        # dropped while running, as before
    "raise ValueError(started())",                 # held by the failure's arguments
])
def test_a_started_generator_dropped_after_the_run_still_finishes_under_its_policy(ending, capsys):
    """The last expression's value was held by a local of the run's reporting, released
    after the policy ended: a started generator's finally then ran with the policy's checks
    off (the enum functional API took a dunder name) and printed past the run's streams."""
    reply, out, err = run(GENERATOR_WITH_A_FINALLY + ending)
    printed = capsys.readouterr()
    assert "ESCAPED" not in out + err + printed.out + printed.err, (out, printed)
    assert "blocked:" in out and "blocked:" not in printed.out, (reply, out, printed)


def test_a_sessions_earlier_cycles_are_collected_under_the_next_calls_policy():
    """The collector ran for the whole of a call, compilation included: a cycle an earlier
    call of the session left was collected while the next call compiled, before its policy
    began, and a generator's finally ran there. Thresholds fixed so that the first call
    collects nothing and the second collects at its first chance."""
    import gc

    from forked import run_in_child

    def two_calls():
        session, out = restricted.SessionState(), io.StringIO()
        gc.disable()                     # as in the sandbox child between runs
        gc.set_threshold(10 ** 9)        # the first call leaves its cycles
        cycles = (GENERATOR_WITH_A_FINALLY.replace("def gen():\n", "def gen():\n    box = []\n")
                  .replace("yield 1", "yield box")
                  + "def make():\n    g = gen()\n    next(g).append(g)\nfor i in range(3):\n    make()\n")
        first = restricted.execute(cycles, restricted=True, allowed_modules=BASIC, stdout=out, stderr=out,
                                   session=session)
        gc.set_threshold(1)              # collect at the first chance from here on
        second = restricted.execute("\n".join(f"v{i} = [{i}]" for i in range(200)), restricted=True,
                                    allowed_modules=BASIC, stdout=out, stderr=out, session=session)
        return first["success"], second["success"], out.getvalue()

    payload, _ = run_in_child(two_calls)
    first, second, printed = payload["value"]
    assert first and second and "ESCAPED" not in printed and printed.count("blocked:") == 3, payload


# ---------------------------------------------------------------- from __future__ import annotations
FUTURE_DATACLASSES = '''from __future__ import annotations
import dataclasses
import typing
from typing import ClassVar
from dataclasses import dataclass, field, InitVar, KW_ONLY

@dataclass
class Node:
    value: int
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None
    count: ClassVar[int] = 0
    total: typing.ClassVar[int] = 0
    seed: InitVar[int] = 0
    _: KW_ONLY
    label: str = ""
    def __post_init__(self, seed):
        self.value += seed

def area(width: float, height: float = 1.0) -> float:
    return width * height

n = Node(1, seed=2, label="root")
result = [[f.name for f in dataclasses.fields(Node)], n.value, n.label, Node.count,
          [f.type for f in dataclasses.fields(Node)], area(2.0)]
'''


def test_future_annotations_keep_the_text_the_snippet_wrote():
    """Under `from __future__ import annotations` every annotation is text; the policy used
    to rewrite the expression before Python stored it (typing.ClassVar[int] became
    "_getitem_(_getattr_(typing, 'ClassVar'), int)"), and dataclasses failed on the
    snippet's classes (AttributeError: 'NoneType' object has no attribute '__dict__')."""
    before = sys.modules.get("__sandbox__")
    reply, _, _ = run(FUTURE_DATACLASSES)
    assert sys.modules.get("__sandbox__") is before   # (dataclasses' view of the snippet's names is gone)
    import types
    module = types.ModuleType("future_dataclasses")   # (dataclasses looks the class's module up by name)
    sys.modules[module.__name__] = module
    try:
        exec(FUTURE_DATACLASSES, vars(module))
    finally:
        del sys.modules[module.__name__]
    plain = vars(module)
    assert reply["success"], reply["error"]
    assert reply["result"] == json.loads(json.dumps(plain["result"])), (reply["result"], plain["result"])
    reply, _, _ = run(FUTURE_DATACLASSES, unrestricted=True)
    assert reply["success"] and reply["result"] == json.loads(json.dumps(plain["result"])), reply


@pytest.mark.parametrize("annotation", ["().__class__.__bases__[0].__subclasses__()", "__import__('os').getcwd()",
                                        "open('/etc/passwd').read()", "print('EVALUATED') or int"])
def test_annotations_left_as_text_are_never_evaluated(annotation):
    """Left as the snippet wrote them, unchecked: text Python never evaluates (a module or
    class annotation is stored as a string; a complex target's and a local's are dropped),
    as a string annotation the snippet could always write; what reads such text back
    reads names only (typing.get_type_hints) or not at all (inspect)."""
    code = (f"from __future__ import annotations\nimport dataclasses\nclass O:\n    pass\no = O()\nd = {{}}\n"
            f"x: {annotation} = 1\no.a: {annotation} = 2\nd['k']: {annotation} = 3\n"
            f"def f(p: {annotation}, *a: {annotation}, k: {annotation} = 0, **kw: {annotation}) -> {annotation}:\n"
            f"    q: {annotation} = 4\n    return q\n"
            f"@dataclasses.dataclass\nclass C:\n    y: {annotation} = 0\n"
            f"result = [f(0), o.a, d, dataclasses.fields(C)[0].type]")
    reply, out, _ = run(code)
    assert reply["success"], reply["error"]
    assert reply["result"] == [4, 2, {"k": 3}, annotation], reply["result"]
    assert "EVALUATED" not in out
    # without the future import the annotations are code, evaluated under the guards
    reply, out, _ = run(code.replace("from __future__ import annotations\n", ""))
    if annotation.startswith("print"):
        assert reply["success"] and "EVALUATED" in out, reply
    else:
        assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply
    reply, _, _ = run(code + "\nimport typing\ntyping.get_type_hints(f)")
    assert not reply["success"] and reply["error_type"] == "security_violation", reply
