"""Ordinary Python under the RestrictedPython layer alone: programs as people write them run
and give plain CPython's values, results and variables."""

from __future__ import annotations

import pytest

from sandbox.restricted import run as restricted

from rp_calls import run, ok, blocked


# --------------------------------------------------------------------- ordinary Python

ORDINARY = {
    "readme_answer": ('result = 2 + 2\nprint(f"The answer is: {result}")', 4, "The answer is: 4\n"),
    "fibonacci": ("""
def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
result = [fib(i) for i in range(10)]
""", [0, 1, 1, 2, 3, 5, 8, 13, 21, 34], ""),
    "bubble_sort": ("""
def bubble_sort(items):
    items = list(items)
    n = len(items)
    for i in range(n):
        for j in range(0, n - i - 1):
            if items[j] > items[j + 1]:
                items[j], items[j + 1] = items[j + 1], items[j]
    return items
bubble_sort([64, 34, 25, 12, 22, 11, 90])
""", [11, 12, 22, 25, 34, 64, 90], ""),
    "leibniz_pi": ("""
total = 0.0
for k in range(100000):
    total += (-1) ** k / (2 * k + 1)
result = round(4 * total, 4)
""", 3.1416, ""),
    "statistics_on_list": ("""
import statistics
data = [2, 4, 4, 4, 5, 5, 7, 9]
result = {"mean": statistics.mean(data), "median": statistics.median(data),
          "pstdev": statistics.pstdev(data)}
""", {"mean": 5, "median": 4.5, "pstdev": 2.0}, ""),
    "classes_inheritance_super": ("""
class Animal:
    def __init__(self, name):
        self.name = name
    def speak(self):
        return "..."
    def __repr__(self):
        return f"{self.kind()}({self.name})"
    def kind(self):
        return "Animal"
class Dog(Animal):
    def __init__(self, name, tricks):
        super().__init__(name)
        self.tricks = tricks
    def speak(self):
        return "Woof"
    def kind(self):
        return "Dog"
d = Dog("Rex", ["sit"])
result = [d.speak(), repr(d), isinstance(d, Animal), issubclass(Dog, Animal), d.name]
""", ["Woof", "Dog(Rex)", True, True, "Rex"], ""),
    "generators": ("""
def squares(n):
    for i in range(n):
        yield i * i
g = squares(5)
first = next(g)
result = [first] + list(g) + [sum(x * x for x in range(10))]
""", [0, 1, 4, 9, 16, 285], ""),
    "augmented_assignment": ("""
x = 1
x += 2
x *= 5
lst = [1, 2]
lst[0] += 10
lst[1:] += [5]
class Box:
    count = 0
    def __init__(self):
        self.value = 1
        Box.count += 1
b = Box()
b.value += 41
Box()
s = "a"
s += "b"
result = [x, lst, b.value, Box.count, s]
""", [15, [11, 2, 5], 42, 2, "ab"], ""),
    "dict_writes": ("""
d = {}
d["a"] = 1
d["b"] = 2
d.setdefault("c", []).append(3)
del d["a"]
d["b"] += 40
nested = {"x": {"y": 1}}
nested["x"]["y"] += 1
result = [d, nested]
""", [{"b": 42, "c": [3]}, {"x": {"y": 2}}], ""),
    "nested_comprehensions": ("""
grid = [[i * j for j in range(3)] for i in range(3)]
flat = [v for row in grid for v in row if v]
squares = {n: n * n for n in range(4)}
evens = {n for n in range(10) if n % 2 == 0}
pairs = [(a, b) for a, b in zip("ab", [1, 2])]
result = [grid, flat, squares, sorted(evens), pairs]
""", [[[0, 0, 0], [0, 1, 2], [0, 2, 4]], [1, 2, 2, 4], {"0": 0, "1": 1, "2": 4, "3": 9},
      [0, 2, 4, 6, 8], [["a", 1], ["b", 2]]], ""),
    "lambdas_sorted_key": ("""
words = ["banana", "kiwi", "apple", "fig"]
people = [{"n": "b", "a": 30}, {"n": "a", "a": 25}]
add = lambda a, b=10: a + b
result = [sorted(words, key=lambda w: (len(w), w)), sorted(words, reverse=True)[0],
          [p["n"] for p in sorted(people, key=lambda p: p["a"])], add(1), max(words, key=len)]
""", [["fig", "kiwi", "apple", "banana"], "kiwi", ["a", "b"], 11, "banana"], ""),
    "fstring_format_specs": ("""
pi = 3.14159
n = 1234567
result = f"{pi:.2f}|{42:>5}|{255:x}|{n:,}|{0.25:.0%}|{'x':*^5}|{pi!r}"
""", "3.14|   42|ff|1,234,567|25%|**x**|3.14159", ""),
    "exceptions_raised_and_caught": ("""
class MyError(Exception):
    def __init__(self, code):
        super().__init__(f"code {code}")
        self.code = code
caught = []
try:
    raise MyError(7)
except MyError as e:
    caught.append((str(e), e.code))
try:
    int("x")
except ValueError:
    caught.append("value")
try:
    {}["missing"]
except KeyError as e:
    caught.append(repr(e))
try:
    1 / 0
except (TypeError, ZeroDivisionError) as e:
    caught.append(type(e) is ZeroDivisionError)
result = caught
""", [["code 7", 7], "value", "KeyError('missing')", True], ""),
    "try_finally": ("""
log = []
def f():
    try:
        log.append("try")
        return 1
    finally:
        log.append("finally")
def g():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        log.append("except")
    else:
        log.append("else")
    finally:
        log.append("cleanup")
result = [f(), g(), log]
""", [1, None, ["try", "finally", "except", "cleanup"]], ""),
    "with_contextlib_suppress": ("""
import contextlib
with contextlib.suppress(ZeroDivisionError):
    1 / 0
class Managed:
    def __init__(self):
        self.events = []
    def __enter__(self):
        self.events.append("enter")
        return self
    def __exit__(self, kind, value, tb):
        self.events.append("exit")
        return False
with Managed() as m:
    m.events.append("body")
result = m.events
""", ["enter", "body", "exit"], ""),
    "dataclasses": ("""
from dataclasses import dataclass, field, asdict
@dataclass(order=True)
class Point:
    x: int
    y: int = 0
    tags: list = field(default_factory=list)
p = Point(1, 2)
p.tags.append("a")
p.x += 1
result = [asdict(p), Point(1) < Point(2), repr(Point(3))]
""", [{"x": 2, "y": 2, "tags": ["a"]}, True, "Point(x=3, y=0, tags=[])"], ""),
    "enum": ("""
from enum import Enum, auto
class Color(Enum):
    RED = 1
    GREEN = auto()
result = [[c.name for c in Color], Color(2).name, Color.RED.value, Color["GREEN"] is Color.GREEN]
""", [["RED", "GREEN"], "GREEN", 1, True], ""),
    "typing_annotations": ("""
from typing import Dict, List, Optional
def total(xs: List[int], scale: Optional[int] = None) -> int:
    s: int = sum(xs)
    return s * (scale or 1)
counts: Dict[str, int] = {"a": 1}
limit: int
result = [total([1, 2, 3], 2), counts]
""", [12, {"a": 1}], ""),
    "json_roundtrip": ("""
import json
data = {"b": [1, 2.5, None, True], "a": {"nested": "x"}}
text = json.dumps(data, sort_keys=True)
result = [text, json.loads(text) == data]
""", ['{"a": {"nested": "x"}, "b": [1, 2.5, null, true]}', True], ""),
    "decimal": ("""
from decimal import Decimal, localcontext
with localcontext() as ctx:
    ctx.prec = 10
    third = Decimal(1) / Decimal(7)
result = [str(Decimal("0.1") + Decimal("0.2")), str(third)]
""", ["0.3", "0.1428571429"], ""),
    "fractions": ("""
from fractions import Fraction
f = Fraction(1, 3) + Fraction(1, 6)
result = [str(f), f.numerator, f.denominator, float(Fraction(3, 4))]
""", ["1/2", 1, 2, 0.75], ""),
    "collections_counter_defaultdict_deque": ("""
from collections import Counter, defaultdict, deque
c = Counter("abracadabra")
c["z"] += 1
dd = defaultdict(list)
for w in ["apple", "avocado", "banana"]:
    dd[w[0]].append(w)
q = deque([1, 2, 3], maxlen=3)
q.append(4)
q.appendleft(0)
result = [c.most_common(2), c["z"], dict(dd), list(q)]
""", [[["a", 5], ["b", 2]], 1, {"a": ["apple", "avocado"], "b": ["banana"]}, [0, 2, 3]], ""),
    "itertools": ("""
import itertools
result = [list(itertools.permutations("ab")), list(itertools.accumulate([1, 2, 3])),
          list(itertools.chain([1], [2])), [k for k, _ in itertools.groupby("aabbc")],
          list(itertools.product([0, 1], repeat=2))]
""", [[["a", "b"], ["b", "a"]], [1, 3, 6], [1, 2], ["a", "b", "c"],
      [[0, 0], [0, 1], [1, 0], [1, 1]]], ""),
    "functools_reduce_lru_cache": ("""
import functools
@functools.lru_cache(maxsize=None)
def fact(n):
    return 1 if n < 2 else n * fact(n - 1)
result = [functools.reduce(lambda a, b: a + b, [1, 2, 3, 4]), fact(20)]
""", [10, 2432902008176640000], ""),
    "regular_expressions": (r"""
import re
text = "a1b22c333"
m = re.search(r"(?P<letter>[a-z])(?P<digits>\d{2})", text)
result = [re.findall(r"\d+", text), re.sub(r"\d", "#", text), m.group("digits"), m.span()]
""", [["1", "22", "333"], "a#b##c###", "22", [2, 5]], ""),
    "datetime_arithmetic": ("""
from datetime import date, datetime, timedelta
d = date(2024, 2, 28) + timedelta(days=2)
delta = datetime(2024, 1, 1, 12, 30) - datetime(2024, 1, 1)
result = [d.isoformat(), delta.total_seconds(), d.strftime("%A %d %B"), (date(2025, 1, 1) - date(2024, 1, 1)).days]
""", ["2024-03-01", 45000.0, "Friday 01 March", 366], ""),
    "hashlib": ("""
import hashlib
h = hashlib.sha256()
h.update(b"a")
h.update(b"bc")
result = [hashlib.sha256(b"abc").hexdigest() == h.hexdigest(), hashlib.md5(b"").hexdigest()]
""", [True, "d41d8cd98f00b204e9800998ecf8427e"], ""),
    "base64": ("""
import base64
encoded = base64.b64encode(b"hello").decode()
result = [encoded, base64.b64decode(encoded), base64.urlsafe_b64encode(b"\\xff\\xfe").decode()]
""", ["aGVsbG8=", "b'hello'", "__4="], ""),
    "closures_nonlocal_global": ("""
def counter():
    count = 0
    def inc():
        nonlocal count
        count += 1
        return count
    return inc
c = counter()
c()
c()
total = 0
def add(n):
    global total
    total += n
add(5)
add(6)
result = [c(), total]
""", [3, 11], ""),
    "properties_classmethods_staticmethods": ("""
class Temp:
    scale = "C"
    def __init__(self, c):
        self.c = c
    @property
    def f(self):
        return self.c * 9 / 5 + 32
    @classmethod
    def from_f(cls, f):
        return cls((f - 32) * 5 / 9)
    @staticmethod
    def unit():
        return "celsius"
t = Temp.from_f(212)
result = [t.c, t.f, Temp.unit(), Temp.scale]
""", [100.0, 212.0, "celsius", "C"], ""),
    "dunder_methods": ("""
class Vec:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)
    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)
    def __hash__(self):
        return hash((self.x, self.y))
    def __lt__(self, other):
        return (self.x, self.y) < (other.x, other.y)
    def __len__(self):
        return 2
    def __iter__(self):
        yield self.x
        yield self.y
    def __repr__(self):
        return f"Vec({self.x}, {self.y})"
v = Vec(1, 2) + Vec(3, 4)
result = [repr(v), v == Vec(4, 6), len(v), list(v), sorted([Vec(2, 0), Vec(1, 5)]), len({v, Vec(4, 6)})]
""", ["Vec(4, 6)", True, 2, [4, 6], ["Vec(1, 5)", "Vec(2, 0)"], 1], ""),
    "unpacking_and_loops": ("""
a, *rest = [1, 2, 3]
(x, y), z = (1, 2), 3
found = None
for i, ch in enumerate("hello"):
    if ch == "l":
        found = i
        break
else:
    found = -1
n = 0
while True:
    n += 1
    if n < 3:
        continue
    break
result = [a, rest, x + y + z, found, n]
""", [1, [2, 3], 6, 2, 3], ""),
    "builtins_tour": ("""
result = [abs(-3), round(2.675, 2), divmod(17, 5), pow(2, 10), pow(2, 10, 1000), hex(255), oct(8),
          bin(5), chr(65), ord("A"), min(3, 1, 2), max([4, 9]), sum([1, 2, 3]), any([0, 1]),
          all([1, 0]), list(map(str, [1, 2])), list(filter(None, [0, 1, 2])),
          list(reversed([1, 2, 3])), list(range(0, 10, 3)), len("abc"), int("12") + float("0.5"),
          bool(""), str(12), tuple([1, 2]), sorted(set([3, 1, 1])), frozenset([1]) == {1},
          bytes([65, 66]), bytearray(b"x") + b"y", complex(1, 2).imag, callable(len),
          isinstance(3, (int, float)), issubclass(bool, int), type(3) is int, iter([1]) is not None,
          next(iter([7])), [1, 2, 3][slice(1, None)], format(3.5, ".1f"), hash("a") == hash("a"),
          id(None) == id(None), object() is not None, NotImplemented is NotImplemented,
          Ellipsis is ..., repr("x"), ascii("é"), list(zip([1, 2], "ab"))]
""", [3, 2.67, [3, 2], 1024, 24, "0xff", "0o10", "0b101", "A", 65, 1, 9, 6, True, False,
      ["1", "2"], [1, 2], [3, 2, 1], [0, 3, 6, 9], 3, 12.5, False, "12", [1, 2], [1, 3], True,
      "b'AB'", "b'xy'", 2.0, True, True, True, True, True, 7, [2, 3], "3.5", True,
      True, True, True, True, "'x'", "'\\xe9'", [[1, "a"], [2, "b"]]], ""),
    "print_sep_end_and_printed": ("""
print("a", "b", sep="-", end="!")
print()
print("x", 1, None)
def f():
    print("inner")
    return printed
result = f()
""", "inner\n", "a-b!\nx 1 None\ninner\n"),
    "bytearray_and_strings": ("""
ba = bytearray(b"abc")
ba[0] = 65
words = "the quick brown fox".split()
result = [bytes(ba).decode(), " ".join(reversed(words)), "abc".upper().center(7, "*"),
          "a,b,,c".split(","), "Hello"[::-1], "x".join(["1", "2"]), "  pad ".strip()]
""", ["Abc", "fox brown quick the", "**ABC**", ["a", "b", "", "c"], "olleH", "1x2", "pad"], ""),
    "assert_and_sets": ("""
a = {1, 2, 3}
b = {2, 3, 4}
assert a & b == {2, 3}, "intersection"
try:
    assert False, "nope"
except AssertionError as e:
    message = str(e)
result = [sorted(a | b), sorted(a - b), sorted(a ^ b), message]
""", [[1, 2, 3, 4], [1], [1, 4], "nope"], ""),
    "future_annotations_and_functions_attributes": ("""
from __future__ import annotations
def f(x: int) -> int:
    return x * 2
f.calls = 1
f.calls += 1
result = [f(21), f.calls]
""", [42, 2], ""),
}


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_python(name):
    code, expected, expected_out = ORDINARY[name]
    result, out = ok(code)
    assert result == expected
    assert out == expected_out


def test_ordinary_corpus_is_large_enough():
    assert len(ORDINARY) >= 30


def test_last_expression_value_and_result_precedence():
    assert ok("x = 5\nx * 2")[0] == 10
    assert ok("result = 1\n2")[0] == 1
    assert ok("result = None\n2")[0] is None  # set explicitly: it wins
    assert ok("x = 3")[0] is None
    assert ok("print('hi')")[0] is None  # output is not the result
    assert ok("def f():\n    return 3\nf()")[0] == 3
    assert ok("'docstring-like'")[0] == "docstring-like"


def test_variables_list():
    reply, _, _ = run("import json\nimport xml.etree.ElementTree as ET\nx = 1\n"
                      "def f():\n    pass\nclass C:\n    pass\nresult = f()\nfor i in range(2):\n    pass\nx")
    assert reply["variables"] == ["C", "f", "i", "result", "x"]  # no modules, guards or internals
    many = "\n".join(f"v{i} = {i}" for i in range(150))
    reply, _, _ = run(many)
    assert len(reply["variables"]) == restricted.MAX_VARIABLES


def test_variables_are_listed_on_failure_too():
    reply, _, _ = run("a = 1\nb = 2\n1 / 0")
    assert reply["variables"] == ["a", "b"]
    assert reply["result"] is None


def test_internal_names_cannot_be_read_or_forged():
    blocked(f"{restricted.LAST_VALUE} = 5")
    blocked(f"x = {restricted.LAST_VALUE}")
    blocked("_write_ = None")
    blocked("def f(_getattr_, /):\n    return 1")
    blocked("_super_attr_(1, '__init__')")


def test_keywords_named_like_the_guards_own_parameters_reach_the_callee():
    """The guards wrap every call; a keyword the snippet passes (ast's ctx=, func=, self=)
    is the callee's, never taken for one of the wrapper's own parameters."""
    result, _ = ok("import ast\ndef f(**kw):\n    return sorted(kw)\n"
                   "node = ast.Name(id='x', ctx=ast.Load())\n"
                   "result = [ast.unparse(node), f(ctx=1, func=2, self=3, obj=4, name=5), f(**{'ctx': 1, 'func': 2})]")
    assert result == ["x", ["ctx", "func", "name", "obj", "self"], ["ctx", "func"]]
