"""Classes under the RestrictedPython layer alone: classes made at run time, metaclasses,
a class's __getattr__, special method aliases, properties and enums, each opening no
library object."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from sandbox import profiles
from sandbox.restricted import run as restricted

from rp_calls import run, _visible, ok, blocked


# ---- classes made at run time, metaclasses, functools copiers, enum.global_enum

def test_type_builtin_keeps_ordinary_uses():
    assert ok("result = [type(1) is int, isinstance(int, type), issubclass(bool, int), type('a').upper('x')]")[0] \
        == [True, True, True, "X"]
    assert ok("P = type('P', (), {'x': 1, 'double': lambda self: self.x * 2})\np = P()\np.x = 4\n"
              "result = p.double()")[0] == 8


@pytest.mark.parametrize("code", [
    "type(int)('X', (), {'__getattribute__': lambda s, n: 1})",        # the metaclass itself
    "import abc\nabc.ABCMeta('X', (), {})",                            # a metaclass from a module
    "import enum\nclass E(enum.Enum):\n    A = 1\nM = type(E)",          # type() of an enum class
    "X = type('X', (), {'__getattribute__': lambda s, n: 'ESCAPED'})",  # forbidden dunder, 3-arg type
    "X = type('X', (), {'__annotations__': {'x if 1 else 0': int}})",  # dataclass field injection
    "import dataclasses\ndataclasses.make_dataclass('X', [], namespace={'__del__': lambda s: 0})",
    "import functools, json\nfunctools.update_wrapper(lambda: 0, json.dumps, updated=('__globals__',))",
    "import functools, json\nfunctools.wraps(json.dumps, assigned=('__globals__',))",
    # onto a library function or object (its name, doc, __wrapped__ and __dict__ written)
    "import functools, json\ndef mine():\n    pass\nfunctools.update_wrapper(json.dumps, mine)",
    "import functools, string\ndef mine():\n    pass\nfunctools.wraps(mine)(string.Template.substitute)",
    "import functools, string\ndef mine():\n    pass\nfunctools.update_wrapper(string.Template('x'), mine)",
    "import dataclasses, string\ndataclasses.dataclass(string.Template)",   # writes __eq__, __repr__ onto it
    "import dataclasses, json\ndataclasses.dataclass(eq=True)(json.JSONEncoder)",
    "import functools, numbers\nfunctools.total_ordering(numbers.Real)",  # writes __gt__, __ge__ onto it
    pytest.param("import enum\nE = enum.Enum('E', {'dumps': 1}, module='json')\nenum.global_enum(E)",
                 marks=pytest.mark.skipif(sys.version_info < (3, 11), reason="enum.global_enum is new in 3.11")),
])
def test_run_time_class_and_copier_gadgets_are_refused(code):
    blocked(code)


def test_functools_wraps_with_defaults_still_works():
    code = ("import functools\ndef deco(f):\n    @functools.wraps(f)\n    def inner(*a):\n"
            "        return f(*a) + 1\n    return inner\n@deco\ndef g(x):\n    return x\nresult = g(1)")
    assert ok(code)[0] == 2


def test_functools_wraps_copies_no_private_state_of_a_library_function():
    """The snippet's wrapper gets a library function's name and doc, not its __dict__."""
    code = ("import functools\ncached = functools.lru_cache(maxsize=2)(len)\n"
            "w = functools.wraps(len)(lambda x: len(x))\nv = functools.wraps(cached)(lambda x: 0)\n"
            "result = [w.__name__, v.__name__, sorted(vars(v))]")
    assert ok(code)[0] == ["len", "len", []]


@pytest.mark.parametrize("code", [
    "import functools, types\nclass Mine:\n    pass\nfunctools.update_wrapper(Mine, types.SimpleNamespace())",
    "import dataclasses, types\nX = types.SimpleNamespace()\n"
    "class Y:\n    pass\nY2 = type('Y2', (), {'a': 1})\ndataclasses.dataclass(Y2)\n"
    "import functools\nfunctools.wraps(X)(Y)",
])
def test_class_annotations_cannot_be_forged_for_dataclass(code):
    blocked(code)


def test_dataclass_decorator_forms_still_work():
    code = ("from dataclasses import dataclass, field\n@dataclass\nclass P:\n    x: int\n    y: int = 2\n"
            "@dataclass(frozen=True)\nclass Q:\n    tags: list = field(default_factory=list)\n"
            "result = [P(1).y, Q().tags, repr(P(3, 4))]")
    assert ok(code)[0] == [2, [], "P(x=3, y=4)"]


# --------------------------------------------------------------------- a class's __getattr__
def test_a_class_getattr_answers_public_names():
    code = ("class Config:\n    def __init__(self, d):\n        self._d = d\n"
            "    def __getattr__(self, key):\n        try:\n            return self._d[key]\n"
            "        except KeyError:\n            raise AttributeError(key)\n"
            "c = Config({'depth': 3})\nresult = [c.depth, getattr(c, 'width', 0), hasattr(c, 'depth')]")
    assert ok(code)[0] == [3, 0, True]


@pytest.mark.parametrize("name", ["__array_interface__", "__deepcopy__", "__reduce_ex__", "_typ", "__class__",
                                  "_Lazy__x", "__fspath__", "__index__"])
def test_a_class_getattr_is_never_asked_for_private_names(name):
    code = ("asked = []\nclass Lazy:\n    def __getattr__(self, n):\n        asked.append(n)\n"
            "        return 'ESCAPED'\n"
            f"result = [getattr(Lazy(), {name!r}, 'absent'), asked]")
    reply, out, err = run(code)
    assert "ESCAPED" not in _visible(reply, out, err), reply
    # the guard refuses the read (a security event) or the fallback says absent; never the snippet's answer
    assert not reply["success"] or reply["result"] == ["absent", []], reply


def test_trusted_code_gets_no_answer_from_a_class_getattr():
    """copy and the format machinery look protocols up by dunder name on the instance."""
    code = ("asked = []\nclass Lazy:\n    def __getattr__(self, n):\n        asked.append(n)\n"
            "        return lambda *a: 'ESCAPED'\n"
            "import copy\nc = copy.deepcopy(Lazy())\nd = copy.copy(Lazy())\n"
            "result = [type(c).__name__, type(d).__name__, sorted(set(asked))]")
    reply, out, err = run(code)
    assert reply["success"] and reply["result"] == ["Lazy", "Lazy", []], reply
    assert "ESCAPED" not in _visible(reply, out, err)


@pytest.mark.skipif(importlib.util.find_spec("numpy") is None, reason="numpy is not installed")
def test_numpy_gets_no_array_interface_from_a_class_getattr():
    allowed = profiles.allowed_modules(["basic", "data_science"])
    code = ("class Fake:\n    def __getattr__(self, n):\n"
            "        return {'shape': (64,), 'typestr': '|u1', 'data': (4096, False), 'version': 3}\n"
            "import numpy as np\na = np.asarray(Fake())\nresult = [a.dtype.kind, a.shape]")
    assert ok(code, allowed=allowed)[0] == ["O", []]


@pytest.mark.parametrize("code", [
    "def __getattr__(name):\n    return 1",                                  # a module's __getattr__ (PEP 562)
    "class C:\n    __getattr__ = lambda self, n: 1",                          # assigned, not defined
    "def g(self, n):\n    return 1\nclass C:\n    __getattr__ = g",
    "class C:\n    def __getattribute__(self, n):\n        return 1",
    "class C:\n    def m(self):\n        def __getattr__(self, n):\n            return 1\n        return __getattr__",
    "class C:\n    def __getattr__(self, n):\n        return 1\nC.__getattr__",
    "class C:\n    def __getattr__(self, n):\n        return 1\nvars(C)['__getattr__'].__closure__",
    "class C:\n    def __getattr__(self, n):\n        return 1\nsetattr(C, '__getattr__', lambda s, n: 2)",
    # __setattr__ / __delattr__ only where no library base sets its private attributes through them
    "import textwrap\nclass C(textwrap.TextWrapper):\n    def __setattr__(self, n, v):\n        pass",
    "class Mine:\n    def __delattr__(self, n):\n        pass\nimport textwrap\nclass C(Mine, textwrap.TextWrapper):\n    pass",
    "import textwrap\nC = type('C', (textwrap.TextWrapper,), {'__setattr__': lambda s, n, v: None})",
])
def test_other_attribute_hooks_stay_refused(code):
    blocked(code, error_types=("security_violation", "syntax_error"))


def test_a_class_of_its_own_may_hook_attribute_writes():
    result, _ = ok("class Frozen:\n    def __init__(self, x):\n        object.__setattr__(self, 'x', x)\n"
                   "    def __setattr__(self, name, value):\n        raise AttributeError(f'{name} is read-only')\n"
                   "class Tracked:\n    def __init__(self):\n        self.changes = []\n        self.a = 1\n"
                   "    def __setattr__(self, name, value):\n        if name != 'changes':\n"
                   "            self.changes.append(name)\n        super().__setattr__(name, value)\n"
                   "    def __delattr__(self, name):\n        self.changes.append('-' + name)\n"
                   "        super().__delattr__(name)\n"
                   "f = Frozen(1)\ntry:\n    f.x = 2\nexcept AttributeError as e:\n    refused = str(e)\n"
                   "t = Tracked()\nt.b = 2\ndel t.a\nresult = [f.x, refused, t.changes]")
    assert result == [1, "x is read-only", ["a", "b", "-a"]], result


# --------------------------------------------------------------------- special method aliases
def test_a_class_body_aliases_its_special_methods_or_sets_them_to_none():
    """`__radd__ = __add__`, `__str__ = __repr__` and `__hash__ = None` were refused as
    reserved names ("special names are not available here")."""
    reply, _, _ = run("class V:\n    def __init__(self, x):\n        self.x = x\n"
                      "    def __add__(self, o):\n        return V(self.x + (o.x if isinstance(o, V) else o))\n"
                      "    __radd__ = __add__\n    def __repr__(self):\n        return f'V({self.x})'\n"
                      "    __str__ = __repr__\n    __hash__ = None\n"
                      "try:\n    hash(V(1))\n    hashable = True\nexcept TypeError:\n    hashable = False\n"
                      "result = [repr(sum([V(1), V(2)])), str(V(3)), hashable]")
    assert reply["success"], reply
    assert reply["result"] == ["V(3)", "V(3)", False], reply


def test_a_class_body_defines_a_special_method_with_a_lambda():
    """`__repr__ = lambda self: ...` defines a special method: a lambda vets its
    parameters on entry as a def does."""
    reply, _, _ = run("class M:\n    def __init__(self, c):\n        self.c = c\n"
                      "    def __add__(self, o):\n        return M(self.c + o.c)\n"
                      "    __radd__ = lambda self, o: self if o == 0 else self + o\n"
                      "    __repr__ = lambda self: f'M({self.c})'\n"
                      "result = repr(sum([M(1), M(2)]))")
    assert reply["success"] and reply["result"] == "M(3)", reply


def test_an_enum_class_defines_enums_hooks_in_its_body():
    """`_missing_` (a lookup by another spelling), `_generate_next_value_` (auto()'s values),
    `_ignore_` and `_order_` were refused as names of the guards' kind."""
    reply, _, _ = run("from enum import Enum, auto\nclass Color(Enum):\n    RED = 'red'\n    GREEN = 'green'\n"
                      "    @classmethod\n    def _missing_(cls, value):\n"
                      "        return next((m for m in cls if m.value == str(value).lower()), None)\n"
                      "class Dir(Enum):\n    def _generate_next_value_(name, start, count, last_values):\n"
                      "        return name.lower()\n    NORTH = auto()\n"
                      "class E(Enum):\n    _ignore_ = ['tmp']\n    _order_ = 'A B'\n    A = 1\n    B = 2\n    tmp = 3\n"
                      "result = [Color('RED').name, Dir.NORTH.value, [m.name for m in E]]")
    assert reply["success"] and reply["result"] == ["RED", "north", ["A", "B"]], reply


@pytest.mark.parametrize("code", [
    "def _missing_(x):\n    return 1",                                     # not in a class body
    "_ignore_ = 1", "class C:\n    def m(self):\n        _missing_ = 1",
    "class C:\n    def _missing_(self, _getattr_):\n        return 1",     # a guard's name beside it
    "class C:\n    _getattr_ = 1", "class C:\n    def _write_(self):\n        pass",
    "import enum\nE = enum.Enum('E', 'A B')\nE._missing_",                 # read: still private
    "class C:\n    _missing_ = 1\n    x = _getiter_",
])
def test_enums_hooks_open_no_other_reserved_name(code):
    blocked(code, error_types=("syntax_error", "security_violation"))


@pytest.mark.parametrize("code", [
    "class C:\n    __repr__ = lambda _getattr_: 1",                     # a guard's name as a parameter
    "class C:\n    __repr__ = lambda self, _write_=None: 1",
    "class C:\n    __add__ = lambda self, *_getiter_: 1",
    "class C:\n    __getattr__ = lambda self, name: 1",                # the hook a def gets guarded
    "class C:\n    __getattribute__ = lambda self, name: 1",
    "class C:\n    __reduce_ex__ = lambda self, p: (print, ('x',))",
    "class C:\n    __eq__ = lambda self, o: type(o).__subclasses__",
    "import fractions\nclass F(fractions.Fraction):\n    __setattr__ = lambda self, n, v: None",
])
def test_a_special_method_lambda_is_held_to_what_a_def_is(code):
    blocked(code, error_types=("syntax_error", "security_violation"))


@pytest.mark.parametrize("code", [
    "class C:\n    __radd__ = print",                                    # not a method of the class
    "import functools\nclass C:\n    __exit__ = staticmethod(functools.partial(min, key=print))",
    "class C:\n    def __add__(self, o):\n        return 1\n    __getattribute__ = __add__",   # an attribute hook
    "class C:\n    def __add__(self, o):\n        return 1\n    __reduce__ = __add__",
    "class C:\n    def __getattr__(self, name):\n        return 1\n    __add__ = __getattr__",
    "__add__ = None",                                                    # not in a class body
    "class C:\n    def m(self):\n        __add__ = None",                # in a method
    "class C:\n    def __add__(self, o):\n        return 1\n    __radd__, __rsub__ = __add__, __add__",
    "class C:\n    for __add__ in [print]:\n        pass",
    "class C:\n    __add__: object = print",
    "class C:\n    (__add__ := print)",
    "class C:\n    def __add__(self, o):\n        return 1\n    x = __add__",  # read for anything else
])
def test_special_method_aliases_admit_nothing_but_the_class_own_methods_and_none(code):
    """An alias binds what the class body defined with def (parameters vetted on entry) or
    None: never a library callable the interpreter would call with unvetted values (an
    __exit__ gets the traceback), nor an attribute hook, nor a name outside a class body."""
    reply = blocked(code)
    assert "reserved name" in reply["error"] or "not allowed" in reply["error"], reply


@pytest.mark.parametrize("code", [
    "C = type('C', (), {'__enter__': lambda s: s, '__exit__': staticmethod(functools.partial(min, key=print))})",
    "C = type('C', (), {'__exit__': print})",
    "C = type('C', (), {'__aexit__': classmethod(functools.partial(max))})",
    "C = type('C', (), {'__deepcopy__': staticmethod(copy.copy)})",
    "import dataclasses\nC = dataclasses.make_dataclass('C', [], namespace={'__exit__': print})",
])
def test_a_namespace_gives_special_methods_as_the_snippets_functions_only(code):
    """type() and make_dataclass() apply the class body's rule: a special method the
    interpreter calls with unvetted values is the snippet's own function or None."""
    reply = blocked("import copy, functools\n" + code)
    assert "function of the snippet's" in reply["error"], reply


def test_a_namespace_may_give_its_own_functions_and_none():
    result, _ = ok("def enter(self):\n    return self\n"
                   "C = type('C', (), {'__enter__': enter, '__exit__': lambda s, *e: False, '__hash__': None,\n"
                   "                   '__len__': lambda s: 3, '__call__': staticmethod(lambda: 'called')})\n"
                   "with C() as c:\n    pass\ntry:\n    hash(c)\n    hashable = True\nexcept TypeError:\n"
                   "    hashable = False\nresult = [len(c), hashable, c()]")
    assert result == [3, False, "called"], result


def test_classes_made_by_a_call_belong_to_the_snippets_module():
    """type(), namedtuple(), NamedTuple() and TypedDict() name their caller's module: the
    snippet's, as a class statement's, never the sandbox's own."""
    result, _ = ok("import collections, enum, typing\nclass A:\n    pass\n"
                   "made = [type('X', (), {}), collections.namedtuple('P', 'x'), typing.NamedTuple('N', [('a', int)]),\n"
                   "        typing.TypedDict('T', {'a': int}), enum.Enum('E', 'a')]\n"
                   "result = sorted({c.__module__ for c in made} | {A.__module__})")
    assert result == ["__sandbox__"], result


def test_a_class_statement_takes_metaclass_abcmeta():
    result, _ = ok("from abc import ABCMeta, abstractmethod\nclass Shape(metaclass=ABCMeta):\n"
                   "    @abstractmethod\n    def area(self):\n        ...\nclass Square(Shape):\n"
                   "    def __init__(self, side):\n        self.side = side\n    def area(self):\n        return self.side ** 2\n"
                   "try:\n    Shape()\n    abstract = False\nexcept TypeError:\n    abstract = True\n"
                   "class Plain(metaclass=type):\n    pass\n"
                   "result = [Square(3).area(), abstract, isinstance(Square, ABCMeta), isinstance(Plain, ABCMeta)]")
    assert result == [9, True, True, False], result


def test_abcmeta_register_unbound_says_to_call_it_on_the_abstract_class():
    reply, _, _ = run("import abc, collections.abc\nclass C:\n    pass\nabc.ABCMeta.register(collections.abc.Sequence, C)")
    assert reply["error_type"] == "runtime_error", reply
    assert "AttributeError" in reply["error"] and "Sequence.register(C)" in reply["error"], reply
    result, _ = ok("import abc, collections.abc\nclass C:\n    pass\ncollections.abc.Sequence.register(C)\n"
                   "result = [issubclass(C, collections.abc.Sequence), hasattr(abc.ABCMeta, 'register'),\n"
                   "          getattr(abc.ABCMeta, 'mro', 'absent')]")
    assert result == [True, False, "absent"], result


@pytest.mark.parametrize("code", [
    "class C(metaclass=print):\n    pass",
    "class M(type):\n    pass\nclass C(metaclass=M):\n    pass",
    "import abc\nclass C(metaclass=abc.ABC):\n    pass",
    "import abc\nabc.ABCMeta('X', (), {'__getattribute__': lambda s, n: 1})",
    "import abc\nM = abc.ABCMeta\ntype(M)(M, print)('X', (), {})",
    "import abc, enum\nclass C(metaclass=type(enum.Enum)):\n    pass",
    # names that pass the compile-time look, refused by the guard when the class is made
    "ABCMeta = print\nclass C(metaclass=ABCMeta):\n    pass",
    "class type(type):\n    pass\nclass C(metaclass=type):\n    pass",
    "import types\nns = types.SimpleNamespace(ABCMeta=print)\nclass C(metaclass=ns.ABCMeta):\n    pass",
])
def test_no_other_metaclass_and_no_class_from_a_namespace(code):
    blocked(code, error_types=("security_violation", "runtime_error"))


def test_a_metaclass_refused_when_the_class_is_made_says_what_to_use():
    reply = blocked("ABCMeta = print\nclass C(metaclass=ABCMeta):\n    pass")
    assert "metaclass= takes abc.ABCMeta here" in reply["error"] and "__new__" in reply["error"], reply


def test_a_snippet_propertys_setter_is_its_own():
    """(A library property's fset and fdel are refused: tests/restricted/test_datascience.py.)"""
    result, _ = ok("class C:\n    def __init__(self):\n        self._v = 0\n    @property\n    def v(self):\n"
                   "        return self._v\n    @v.setter\n    def v(self, x):\n        self._v = x\n"
                   "c = C()\nC.v.fset(c, 5)\nresult = c.v")
    assert result == 5


def test_an_enum_members_init_sets_attributes_while_the_class_is_made():
    """Enum's metaclass makes the members, and runs their __init__, before the class
    statement is done: the Python docs' Planet example runs (its members count as objects
    the snippet created)."""
    reply, _, _ = run("import enum\nclass Planet(enum.Enum):\n    MERCURY = (3.303e+23, 2.4397e6)\n"
                      "    EARTH = (5.976e+24, 6.37814e6)\n    def __init__(self, mass, radius):\n"
                      "        self.mass = mass\n        self.radius = radius\n    @property\n"
                      "    def gravity(self):\n        return 6.673e-11 * self.mass / (self.radius * self.radius)\n"
                      "result = [round(Planet.EARTH.gravity, 2), Planet.MERCURY.mass]")
    assert reply["success"] and reply["result"] == [9.8, 3.303e+23], reply


@pytest.mark.parametrize("code", [
    # a class statement named like a library class does not make that class's objects the snippet's
    "import random\nclass Random:\n    r = random.Random(1)\n    r.seed_value = 1",
    "import enum\nclass Enum:\n    enum.Enum.extra = 1",
    "import fractions\nclass Fraction:\n    fractions.Fraction(1, 2).extra = 1",
    "import enum\nclass Color(enum.Enum):\n    RED = 1\n    def __init__(self, value):\n"
    "        import random\n        random.Random(1).extra = 1",
])
def test_a_class_being_made_opens_no_library_object(code):
    reply, _, _ = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply


def test_a_refusal_raised_anew_by_library_code_is_still_a_refusal():
    """3.12's enum raises an error of a member's __init__ again as type(e)(str(e)), which
    drops the refusal's mark: it is known by its type and its text among the run's events."""
    from sandbox.restricted.base import SandboxAttributeError
    raised_anew = SandboxAttributeError("cannot set attribute extra of a Random object")
    events = [{"kind": "attribute_blocked", "detail": "cannot set attribute extra of a Random object"}]
    assert restricted._describe_failure(raised_anew, "", events)["error_type"] == "security_violation"
    assert restricted._describe_failure(raised_anew, "", [])["error_type"] == "runtime_error"
    assert restricted._describe_failure(ValueError(events[0]["detail"]), "", events)["error_type"] == "runtime_error"
