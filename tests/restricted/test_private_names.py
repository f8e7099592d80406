"""Names that start with "_" (sandbox/restricted/private_names.py), in the Python layer
alone: what ordinary code does with them runs, and every way to turn the
relaxation into a door stays refused (the guard family, RestrictedPython's
temporaries, private state of library objects and of module proxies, writes
outside the snippet's own classes, dunders beyond the table)."""

from __future__ import annotations

import io

import pytest

from sandbox import profiles
from sandbox.restricted import run as restricted

ALLOWED = frozenset(profiles.allowed_modules(["basic"]))


def run(code):
    out = io.StringIO()
    return restricted.execute(code, restricted=True, allowed_modules=ALLOWED, stdout=out, stderr=out)


@pytest.mark.parametrize("code, expected", [
    ("class Account:\n    def __init__(self, balance):\n        self._balance = balance\n"
     "    def deposit(self, n):\n        self._balance += n\n        return self._balance\n"
     "a = Account(5)\na.deposit(3)\nresult = a._balance", 8),
    ("def _helper(x):\n    return x * 2\nresult = _helper(21)", 42),
    ("_cache = {}\ndef fib(n):\n    if n in _cache:\n        return _cache[n]\n"
     "    _cache[n] = n if n < 2 else fib(n - 1) + fib(n - 2)\n    return _cache[n]\nresult = fib(30)", 832040),
    ("total = 0\nfor _ in range(3):\n    total += 1\nresult = total", 3),
    ("class Vault:\n    def __init__(self):\n        self.__secret = 'k'\n    def peek(self):\n        return self.__secret\n"
     "result = [Vault().peek(), Vault()._Vault__secret]", ["k", "k"]),
    ("class Base:\n    def __init__(self):\n        self._x = 1\nclass Child(Base):\n    def get(self):\n"
     "        return self._x + 1\nresult = Child().get()", 2),
    ("class Oops(Exception):\n    def __init__(self, code):\n        super().__init__(code)\n        self._code = code\n"
     "try:\n    raise Oops(7)\nexcept Oops as e:\n    result = e._code", 7),
    ("def f():\n    '''Doc.'''\nresult = [f.__name__, f.__qualname__, f.__doc__, type(1.5).__name__]",
     ["f", "f", "Doc.", "float"]),
    ("import collections\nPoint = collections.namedtuple('Point', 'x y')\np = Point(1, 2)\n"
     "result = [p._asdict(), p._replace(y=5), list(Point._fields), Point._make([3, 4])]",
     [{"x": 1, "y": 2}, [1, 5], ["x", "y"], [3, 4]]),
    ("import json\nresult = json.__name__", "json"),
    ("def deco(fn):\n    def wrapper(*a):\n        return fn.__name__ + ':' + str(fn(*a))\n    return wrapper\n"
     "@deco\ndef double(x):\n    return 2 * x\nresult = double(4)", "double:8"),
])
def test_ordinary_private_names_run(code, expected):
    reply = run(code)
    assert reply["success"] and reply["result"] == expected, reply


GUARD_NAMES = ["_getattr_", "_write_", "_write_private_", "_print_", "_call_", "_getiter_", "_getitem_",
               "_apply_", "_inplacevar_", "_vet_one_", "_super_attr_", "_class_of_", "_sandbox_last_value_", "_tmp0",
               "_iter_unpack_sequence_", "__builtins__", "__metaclass__", "__import__", "__class__", "__dict__"]


@pytest.mark.parametrize("name", GUARD_NAMES)
@pytest.mark.parametrize("form", [
    "{n} = 1", "def {n}():\n    pass", "def f({n}):\n    pass", "def f({n}, /):\n    pass",
    "lambda {n}: 1", "class {n}:\n    pass", "for {n} in []:\n    pass", "import math as {n}",
    "try:\n    pass\nexcept Exception as {n}:\n    pass", "[{n} for {n} in []]", "({n} := 1)",
    "def f():\n    global {n}\n    {n} = 1", "x = {n}", "def f(*{n}):\n    pass", "def f(**{n}):\n    pass",
])
def test_no_snippet_name_can_be_a_guard_or_a_temporary(name, form):
    reply = run(form.format(n=name))
    assert not reply["success"] and reply["error_type"] in ("security_violation", "syntax_error"), reply


@pytest.mark.parametrize("code", [
    "import json\njson._ModuleProxy__module",                        # the proxy's real module
    "import json\ngetattr(json, '_ModuleProxy__module')",
    "import json\njson._ModuleProxy__ctx",
    "class ModuleProxy:\n    def peek(self):\n        return self.__module\nimport json\nModuleProxy.peek(json)",
    "import json\njson._make",
    "import collections\nd = collections.OrderedDict(a=1)\nd._OrderedDict__map",
    "import collections\nclass Mine(collections.OrderedDict):\n    def peek(self):\n        return self._OrderedDict__root\n"
    "Mine().peek()",                                                   # a library base's private state
    "import string\nclass T(string.Template):\n    def peek(self):\n        return self._invalid\nT('x').peek()",
    "import string\nstring.Template('$a')._invalid",
    "import random\nrandom._os",
    "import random\nrandom.Random()._randbelow",
    "import decimal\ndecimal.getcontext()._raise_error",
    "[].__class__.__subclasses__()", "(1).__class__.__bases__", "f = lambda: 1\nf.__globals__", "f = lambda: 1\nf.__code__",
    "import json\njson.__dict__", "import collections\ncollections.OrderedDict().__dict__", "import json\njson.__loader__",
    "import json\njson.__spec__", "type.__subclasses__(object)", "object.__subclasses__()",
    "def g():\n    yield 1\ng().gi_frame", "import json\njson.__builtins__",
])
def test_private_state_that_is_not_the_snippets_stays_out_of_reach(code):
    reply = run(code)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply
    assert "AttributeError" in (reply["error"] or "") or reply["error_type"] == "security_violation", reply


@pytest.mark.parametrize("code", [
    "import json\njson._x = 1",
    "import collections\nd = collections.OrderedDict()\nd._x = 1",
    "import collections\nclass Mine(collections.OrderedDict):\n    pass\nMine()._OrderedDict__root = None",
    "x = []\nx._y = 1",
    "def f():\n    pass\nf.__name__ = 'g'",
    "class C:\n    pass\nC.__name__ = 'D'",
    "import json\njson.__name__ = 'x'",
    "import collections\nsetattr(collections.OrderedDict(), '_x', 1)",
    "class C:\n    pass\nsetattr(C(), '__class__', int)",
    "class C:\n    pass\nsetattr(C(), '_getattr_', 1)",
])
def test_private_and_dunder_writes_outside_the_snippets_own_objects_are_refused(code):
    reply = run(code)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


def test_dunder_names_a_script_uses():
    reply = run("def main():\n    return 'ran'\nclass C:\n    __slots__ = ('x',)\n__all__ = ['main']\n"
                "if __name__ == '__main__':\n    result = [main(), C.__module__, __all__]")
    assert reply["success"] and reply["result"] == ["ran", "__sandbox__", ["main"]], reply
    for code in ("__name__ = 'x'", "def f(__class__):\n    pass", "__slots__ = 1\nx = __builtins__"):
        reply = run(code)
        assert not reply["success"] and "reserved name" in reply["error"], (code, reply)


def test_setattr_and_getattr_follow_the_same_rules():
    reply = run("class C:\n    pass\nc = C()\nsetattr(c, '_x', 1)\nresult = [getattr(c, '_x'), hasattr(c, '_y')]")
    assert reply["success"] and reply["result"] == [1, False], reply


def test_the_mangled_name_is_per_class():
    reply = run("class A:\n    def __init__(self):\n        self.__v = 'a'\nclass B(A):\n    def get(self):\n"
                "        return self.__v\ntry:\n    B().get()\n    result = 'leaked'\nexcept AttributeError:\n"
                "    result = 'separate'")
    assert reply["success"] and reply["result"] == "separate", reply


def test_star_imports_bind_what_the_module_policy_hands_out():
    reply = run("from math import *\nfrom typing import *\nfrom sys import *\n"
                "result = [floor(sqrt(17)), 'get_type_hints' in globals_seen, maxsize > 0]"
                .replace("globals_seen", "['List', 'Any']"))
    assert reply["success"] and reply["result"] == [4, False, True], reply
    for code in ("from os import *\nsystem", "def f():\n    from math import *", "class C:\n    from math import *",
                 "from typing import *\nForwardRef", "from random import *\n_os"):
        reply = run(code)
        assert not reply["success"], (code, reply)


def test_object_setattr_sets_a_frozen_dataclass_field():
    """object.__setattr__ is how a frozen dataclass's __post_init__ sets a field."""
    reply = run("from dataclasses import dataclass, asdict\n@dataclass(frozen=True)\nclass Money:\n"
                "    amount: float\n    currency: str = 'usd'\n    def __post_init__(self):\n"
                "        object.__setattr__(self, 'amount', round(self.amount, 2))\n"
                "        object.__setattr__(self, 'currency', self.currency.upper())\n"
                "class A:\n    pass\na = A()\nobject.__setattr__(a, '_x', 1)\nobject.__delattr__(a, '_x')\n"
                "result = [asdict(Money(3.14159)), vars(a)]")
    assert reply["success"] and reply["result"] == [{"amount": 3.14, "currency": "USD"}, {}], reply


@pytest.mark.parametrize("code", [
    "import string\nt = string.Template('x')\nobject.__setattr__(t, 'template', 'y')",  # not the snippet's
    "import string\nobject.__setattr__(string.Template, 'delimiter', '%')",
    "import types\nobject.__setattr__(types.SimpleNamespace(a=1), '__reduce_ex__', print)",
    "class A:\n    pass\nobject.__setattr__(A(), '__class__', int)",                    # never a dunder
    "class A:\n    pass\nobject.__setattr__(A(), '__reduce_ex__', print)",
    "class A:\n    pass\nobject.__setattr__(A(), '_getattr_', print)",                  # never a guard name
    "import collections\nclass D(collections.OrderedDict):\n    pass\n"
    "object.__setattr__(D(), '_OrderedDict__root', None)",                              # a library base's state
    "object.__getattribute__(1, 'real')", "object.__subclasses__()", "object.__dict__",
    "x = 1\nx.__setattr__('a', 1)",
])
def test_object_setattr_is_setattr_on_the_snippets_own_objects(code):
    reply = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply


def test_a_snippet_class_s_dunder_methods_are_read_on_its_own_objects():
    reply = run("class Base:\n    def __init__(self, x):\n        self.x = x\nclass Child(Base):\n"
                "    def __init__(self, x, y):\n        Base.__init__(self, x)\n        self.y = y\n"
                "class Money:\n    def __init__(self, v):\n        self.v = v\n    def __add__(self, o):\n"
                "        return Money(self.v + o.v)\n    def __radd__(self, o):\n"
                "        return self if o == 0 else self.__add__(o)\nc = Child(1, 2)\n"
                "result = [c.x, c.y, sum([Money(1), Money(2)]).v]")
    assert reply["success"] and reply["result"] == [1, 2, 3], reply


@pytest.mark.parametrize("code", [
    "(1).__add__(2)", "import json\njson.dumps.__call__", "import string\nstring.Template.__init__",
    "import json\njson.JSONEncoder().__init__()", "class A:\n    pass\nA.__init__.__globals__",
    "class A:\n    pass\nA.__init_subclass__.__self__",
    # a library method inherited by the snippet's class, called on a foreign object
    "import string\nclass T(string.Template):\n    pass\nT.__init__(string.Template('a'), 'b')",
    "import functools, string\nclass P(functools.cached_property):\n    pass\np = P(lambda s: 'X')\n"
    "p.__set_name__(None, 'delimiter')\np.__get__(string.Template('x'))",
    "import collections\nclass D(collections.OrderedDict):\n    pass\nD.__setitem__(collections.OrderedDict(), 'a', 1)",
])
def test_dunder_methods_of_other_objects_stay_refused(code):
    reply = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply


@pytest.mark.parametrize("code, advice", [
    ("x = [1, 2]\nx.__len__()", "use len(x) instead"),
    ("x = getattr([1], '__iter__')", "use iter(x) instead"),
    ("x = getattr(1, '__class__')", "use type(x) instead"),
    ("import json\njson.__file__", "module files are not readable in the sandbox"),
    ("import math\nmath.__dict__", "use dir(obj) and getattr(obj, name)"),
    ("def f():\n    pass\nf.__code__", "special names reach the interpreter's internals here"),
    ("import json\njson.JSONEncoder()._x", "private attributes of objects the snippet did not make"),
    ("import json\njson.JSONEncoder.__repr__ = lambda self: 'z'", "define it in the class body (def __repr__(self"),
    ("import string\nclass T(string.Template):\n    pass\nT.__new__(T)", "cls.__new__(cls) works on the snippet's own"),
    ("t = ()\nt.__class__ = list", "make an object of the other class instead"),
    ("x = ().__class__", "write the class's name (tuple"),
])
def test_a_refused_underscore_name_says_what_to_write_instead(code, advice):
    """Compile-time and run-time refusals of "_" names name the builtin or operator to use."""
    reply = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply
    assert advice in reply["error"], reply["error"]


@pytest.mark.parametrize("code, advice", [
    ("__import__('json')", "use an import statement"),
    ("breakpoint()", "there is no debugger in the sandbox"),
    ("x = __builtins__", "the builtins are simply there"),
    ("print(__file__)", "the snippet runs from memory"),
    ("print = 1", "choose another name"),
])
def test_a_reserved_name_says_what_to_write_instead(code, advice):
    reply = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply
    assert advice in reply["error"], reply["error"]


def test_annotations_of_the_snippets_own_functions_and_classes_are_read_as_copies():
    """`f.__annotations__` is read on the snippet's own functions and classes, as a copy: dataclasses and NamedTuple make fields
    (and code) from these names, which the class statement checked, so a name added to the
    copy reaches nothing."""
    reply = run("from dataclasses import dataclass, fields\n"
                "def f(x: int, y: 'str' = 'a') -> bool:\n    return True\n"
                "class C:\n    a: int\n    b: str = 'x'\n"
                "C.__annotations__['x=1):\\n    pass\\n'] = int\ngetattr(C, '__annotations__')['__class__'] = int\n"
                "result = [sorted(f.__annotations__), [fl.name for fl in fields(dataclass(C))], sorted(C.__annotations__)]")
    assert reply["success"], reply
    assert reply["result"] == [["return", "x", "y"], ["a", "b"], ["a", "b"]], reply


@pytest.mark.parametrize("code", [
    "import json\njson.dumps.__annotations__",
    "import dataclasses\ndataclasses.field.__annotations__",
    "import collections\ncollections.OrderedDict.__annotations__",
    "import typing\ngetattr(typing.NamedTuple('P', [('x', int)]), '__annotations__')",
    "import collections\nclass Mine(collections.OrderedDict):\n    x: int\nMine.__annotations__",
])
def test_annotations_of_library_objects_stay_refused_and_say_where_they_can_be_read(code):
    reply = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply
    assert "readable on the snippet's own functions and classes only" in reply["error"], reply


def test_the_hierarchy_of_the_snippets_own_classes_is_readable():
    """`B.__mro__` and `B.__bases__` were refused as invalid attribute names. On a class
    that is the snippet's all the way down (object, built-in exceptions and marker bases
    aside) they list only the snippet's classes and those."""
    reply = run("from abc import ABC\nclass Plugin(ABC):\n    pass\nclass Csv(Plugin):\n    pass\n"
                "class Bad(ValueError):\n    pass\n"
                "result = [[c.__name__ for c in Csv.__mro__], [c.__name__ for c in Csv.__bases__], "
                "Csv.__base__.__name__, [c.__name__ for c in Bad.__mro__]]")
    assert reply["success"], reply
    assert reply["result"] == [["Csv", "Plugin", "ABC", "object"], ["Plugin"], "Plugin",
                               ["Bad", "ValueError", "Exception", "BaseException", "object"]], reply


@pytest.mark.parametrize("code", [
    "int.__mro__", "object.__subclasses__()", "type.__subclasses__(object)", "().__class__.__bases__",
    "class A:\n    pass\ntype(A()).__mro__[1].__subclasses__()",          # object, reached through a snippet class
    "class A:\n    pass\nA.__subclasses__()",                                # refused in the source, as validate sees
    "import collections\nclass M(collections.OrderedDict):\n    pass\nM.__mro__",   # a library base
    "import collections\nclass M(collections.OrderedDict):\n    pass\nM.__bases__",
    "class A:\n    pass\nA().__mro__",                                       # an instance, not a class
    "def f():\n    pass\nf.__bases__",
    "class A:\n    pass\nsetattr(A, '__bases__', (object,))",
])
def test_no_other_hierarchy_is_readable_and_none_is_writable(code):
    reply = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply
