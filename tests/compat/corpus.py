"""Agent-style snippets that must run unchanged in the sandbox and give the value
plain CPython gives (tests/compat/test_compat.py). Each sets `result`. Written
the way different models write: classes with private state, helpers, f-strings
and .format, dataclasses, match, comprehensions, the standard library.

Grow it when a user reports code that fails: add the snippet here first."""

from __future__ import annotations

import sys

BASIC, DATA, FILES = "basic", "data_science", "filesystem"

S = []


def snippet(family: str, code: str, profile: str = BASIC, since: tuple = (3, 10)) -> None:
    """`since`: the first Python whose plain CPython runs it; on older ones it is not in the corpus."""
    if sys.version_info < since:
        return
    S.append({"id": f"{family}-{sum(1 for s in S if s['family'] == family) + 1:03d}", "family": family,
              "profile": profile, "code": code.strip("\n")})


# ---------------------------------------------------------------- private names
snippet("private", """
class BankAccount:
    def __init__(self, owner, balance=0):
        self._owner = owner
        self._balance = balance
    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("amount must be positive")
        self._balance += amount
        return self._balance
    @property
    def balance(self):
        return self._balance
acct = BankAccount("ada", 100)
acct.deposit(50)
result = acct.balance
""")
snippet("private", """
def _normalize(s):
    return s.strip().lower()
def _dedupe(items):
    seen = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
result = _dedupe([_normalize(w) for w in [" Apple", "apple ", "Banana", "banana", "cherry"]])
""")
snippet("private", """
_cache = {}
def fib(n):
    if n in _cache:
        return _cache[n]
    val = n if n < 2 else fib(n - 1) + fib(n - 2)
    _cache[n] = val
    return val
result = [fib(i) for i in range(15)]
""")
snippet("private", """
grid = [[0] * 3 for _ in range(3)]
for _ in range(2):
    grid[_][_] = 1
result = grid
""")
snippet("private", """
class Stack:
    def __init__(self):
        self.__items = []
    def push(self, x):
        self.__items.append(x)
    def pop(self):
        return self.__items.pop()
    def __len__(self):
        return len(self.__items)
s = Stack()
for i in range(4):
    s.push(i * i)
result = [s.pop(), len(s)]
""")
snippet("private", """
class Counter:
    _instances = 0
    def __init__(self):
        Counter._instances += 1
        self._id = Counter._instances
a, b, c = Counter(), Counter(), Counter()
result = [a._id, c._id, Counter._instances]
""")
snippet("private", """
class Shape:
    def __init__(self, name):
        self._name = name
    def _area(self):
        raise NotImplementedError
    def describe(self):
        return f"{self._name}: {self._area():.2f}"
class Circle(Shape):
    def __init__(self, r):
        super().__init__("circle")
        self._r = r
    def _area(self):
        return 3.14159 * self._r ** 2
result = Circle(2).describe()
""")
snippet("private", """
class Temperature:
    def __init__(self, celsius):
        self._celsius = celsius
    @property
    def fahrenheit(self):
        return self._celsius * 9 / 5 + 32
    @fahrenheit.setter
    def fahrenheit(self, value):
        self._celsius = (value - 32) * 5 / 9
t = Temperature(100)
t.fahrenheit = 32
result = [t._celsius, Temperature(37).fahrenheit]
""")
snippet("private", """
class ValidationError(Exception):
    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self._field = field
def validate(user):
    if not user.get("email"):
        raise ValidationError("email", "required")
try:
    validate({"name": "x"})
except ValidationError as e:
    result = [e._field, str(e)]
""")
snippet("private", """
def make_counter():
    _count = 0
    def inc():
        nonlocal _count
        _count += 1
        return _count
    return inc
c = make_counter()
c(); c()
result = c()
""")
snippet("private", """
import collections
Point = collections.namedtuple("Point", ["x", "y"])
p = Point(3, 4)
result = [p._asdict(), p._replace(x=10), list(Point._fields), Point._make([1, 2])]
""")
snippet("private", """
class LRU:
    def __init__(self, size):
        self._size = size
        self._data = {}
    def get(self, k):
        if k not in self._data:
            return None
        v = self._data.pop(k)
        self._data[k] = v
        return v
    def put(self, k, v):
        self._data.pop(k, None)
        self._data[k] = v
        if len(self._data) > self._size:
            del self._data[next(iter(self._data))]
c = LRU(2)
c.put("a", 1); c.put("b", 2); c.get("a"); c.put("c", 3)
result = sorted(c._data)
""")
snippet("private", """
for _i, _v in enumerate("abc"):
    pass
result = [_i, _v]
""")
snippet("private", """
from collections.abc import MutableMapping
class CaseInsensitiveDict(MutableMapping):
    def __init__(self, data=None):
        self._store = {}
        self.update(data or {})
    def __getitem__(self, key):
        return self._store[key.lower()]
    def __setitem__(self, key, value):
        self._store[key.lower()] = value
    def __delitem__(self, key):
        del self._store[key.lower()]
    def __iter__(self):
        return iter(self._store)
    def __len__(self):
        return len(self._store)
headers = CaseInsensitiveDict({"Content-Type": "json"})
result = [headers["content-type"], len(headers), "CONTENT-TYPE" in headers]
""")
snippet("private", """
from abc import ABC, abstractmethod
class Shape(ABC):
    def __init__(self, name):
        self._name = name
    @abstractmethod
    def area(self) -> float: ...
    def describe(self):
        return f"{self._name}: {self.area():.2f}"
class Circle(Shape):
    def __init__(self, r):
        super().__init__("circle")
        self._r = r
    def area(self):
        return 3.14159 * self._r ** 2
result = Circle(2).describe()
""")
snippet("private", """
from typing import Generic, TypeVar, Optional
T = TypeVar("T")
class Stack(Generic[T]):
    def __init__(self) -> None:
        self._items: list[T] = []
    def push(self, item: T) -> None:
        self._items.append(item)
    def pop(self) -> Optional[T]:
        return self._items.pop() if self._items else None
s: Stack[int] = Stack()
for i in range(3):
    s.push(i)
result = [s.pop(), s.pop(), len(s._items)]
""")
snippet("private", """
import contextlib, io
def noisy():
    print("working...")
    return 42
buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    value = noisy()
result = [value, buffer.getvalue().strip()]
""")

# ---------------------------------------------------------------- dunders a script reads
snippet("dunders", """
def main():
    return "main ran"
result = None
if __name__ == "__main__":
    result = main()
""")
snippet("dunders", """
def describe(x):
    return type(x).__name__
result = [describe(1), describe("s"), describe([]), describe({}), describe(None)]
""")
snippet("dunders", """
import functools
def log_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper
@log_calls
def add(a, b):
    \"\"\"Add two numbers.\"\"\"
    return a + b
result = [add.__name__, add.__doc__, add(2, 3)]
""")
snippet("dunders", """
class Point:
    __slots__ = ("x", "y")
    def __init__(self, x, y):
        self.x, self.y = x, y
p = Point(1, 2)
result = [p.x + p.y, Point.__name__]
""")
snippet("dunders", """
__all__ = ["area"]
def area(w, h):
    return w * h
result = [__all__, area(3, 4)]
""")
snippet("dunders", """
class Vector:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __add__(self, other):
        return Vector(self.x + other.x, self.y + other.y)
    def __repr__(self):
        return f"Vector({self.x}, {self.y})"
    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)
result = [repr(Vector(1, 2) + Vector(3, 4)), Vector(1, 1) == Vector(1, 1)]
""")
snippet("dunders", """
def f():
    \"\"\"Docstring here.\"\"\"
class K:
    \"\"\"A class.\"\"\"
result = [f.__doc__, K.__doc__, f.__qualname__, K.__qualname__]
""")
snippet("dunders", """
import json, math
result = [json.__name__, math.__name__]
""")
snippet("dunders", """
class Registry:
    def __init__(self):
        self.items = {}
    def __getitem__(self, key):
        return self.items[key]
    def __setitem__(self, key, value):
        self.items[key] = value
    def __contains__(self, key):
        return key in self.items
    def __iter__(self):
        return iter(self.items)
r = Registry()
r["a"] = 1
result = ["a" in r, r["a"], list(r)]
""")
snippet("dunders", """
class Money:
    def __init__(self, cents):
        self.cents = cents
    def __lt__(self, other):
        return self.cents < other.cents
    def __str__(self):
        return f"${self.cents / 100:.2f}"
result = [str(m) for m in sorted([Money(500), Money(120), Money(999)])]
""")

# ---------------------------------------------------------------- formatting
snippet("format", "result = '{:,}'.format(1234567)")
snippet("format", "result = '{} + {} = {}'.format(2, 3, 5)")
snippet("format", "result = '{name} is {age}'.format_map({'name': 'Ada', 'age': 36})")
snippet("format", "result = 'Total: {total:>10.2f}|'.format(total=3.14159)")
snippet("format", "result = '{0} {1} {0}'.format('a', 'b')")
snippet("format", """
rows = [("apple", 3, 0.5), ("banana", 12, 0.25)]
lines = ["{:<10}{:>5}{:>8.2f}".format(*r) for r in rows]
result = lines
""")
snippet("format", """
import string
result = string.Formatter().format("{x}-{y}", x=1, y=2)
""")
snippet("format", """
import string
t = string.Template("Hello $name, you owe $amount")
result = t.substitute(name="Bob", amount="$5")
""")
snippet("format", "value = 0.256\nresult = f'{value:.1%} and {value!r} and {1e6:,.0f}'")
snippet("format", "result = '%s has %d items (%.1f%%)' % ('cart', 3, 42.5)")
snippet("format", "p = {'x': 1, 'y': 2}\nresult = '{0[x]}/{0[y]}'.format(p)")
snippet("format", "c = 3 + 4j\nresult = '{0.real}:{0.imag}'.format(c)")
snippet("format", "result = '{:08.3f}|{:^9}|{:#x}|{:b}'.format(3.14159, 'mid', 255, 10)")
snippet("format", "import datetime\nd = datetime.date(2024, 3, 9)\nresult = '{:%Y/%m/%d}'.format(d)")
snippet("format", "width = 6\nresult = '{:>{width}}|'.format('ab', width=width)")

# ---------------------------------------------------------------- introspection
snippet("introspection", """
class Config:
    def __init__(self):
        self.debug = True
        self.level = 3
result = vars(Config())
""")
snippet("introspection", """
class User:
    def __init__(self, name):
        self.name = name
        self.tags = []
u = User("ann")
result = u.__dict__
""")
snippet("introspection", "result = [n for n in dir([]) if n.startswith('app')]")
snippet("introspection", """
class A:
    x = 1
a = A()
result = [hasattr(a, "x"), hasattr(a, "y"), getattr(a, "x"), getattr(a, "y", "default")]
""")
snippet("introspection", """
class Animal: pass
class Dog(Animal): pass
result = [isinstance(Dog(), Animal), issubclass(Dog, Animal), isinstance(3, (int, float)), callable(len)]
""")
snippet("introspection", """
class Settings:
    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
s = Settings(a=1, b="two")
result = [s.a, s.b, sorted(vars(s))]
""")
snippet("introspection", "import math\nresult = [n for n in dir(math) if n.startswith('is')]")
snippet("introspection", """
def f(a, b=2, *args, **kwargs):
    return a
result = [f.__name__, callable(f), f(1)]
""")

snippet("introspection", """
class AttrDict:
    def __init__(self, **kw):
        self._data = dict(kw)
    def __getattr__(self, name):
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(name) from None
cfg = AttrDict(lr=0.1, epochs=5)
result = [cfg.lr, cfg.epochs, getattr(cfg, "batch", 32), hasattr(cfg, "lr")]
""")
snippet("introspection", """
class Proxy:
    def __init__(self, target):
        self._target = target
        self.calls = []
    def __getattr__(self, name):
        self.calls.append(name)
        return getattr(self._target, name)
p = Proxy([3, 1, 2])
p.append(0)
result = [p.count(1), p.calls, sorted(p._target)]
""")

snippet("introspection", """
class Money:
    def __init__(self, amount, currency="EUR"):
        self.amount = amount
        self.currency = currency
    def __repr__(self):
        return f"{type(self).__name__}({self.amount!r}, {self.currency!r})"
result = [repr(Money(5)), type(Money(1)) is Money]
""")
snippet("introspection", """
def describe(value):
    return f"{value!r} is a {type(value).__name__}"
errors = []
for raw in ["12", "x", None]:
    try:
        int(raw)
    except Exception as exc:
        errors.append(type(exc).__name__)
result = [describe(3.5), describe([1]), errors]
""")
snippet("syntax", """
import sys

def main():
    total = sum(range(10))
    print(f"total = {total}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
""")

# ---------------------------------------------------------------- modules agents reach for
snippet("modules", """
import io
buf = io.StringIO()
for i in range(3):
    print(f"line {i}", file=buf)
result = buf.getvalue().splitlines()
""")
snippet("modules", """
import io, csv
data = io.StringIO("name,age\\nann,30\\nbob,25\\n")
rows = list(csv.DictReader(data))
result = [r["name"] for r in rows if int(r["age"]) > 26]
""")
snippet("modules", """
import io, csv
out = io.StringIO()
w = csv.writer(out)
w.writerow(["a", "b"])
w.writerow([1, 2])
result = out.getvalue()
""")
snippet("modules", """
import io
b = io.BytesIO()
b.write(b"hello")
b.seek(0)
result = b.read().decode()
""")
snippet("modules", """
import sys
print("warning: low disk", file=sys.stderr)
result = sys.version_info >= (3, 8)
""")
snippet("modules", """
import sys
result = [sys.maxsize > 2 ** 32, sys.argv, isinstance(sys.platform, str), sys.getrecursionlimit() > 100]
""")
snippet("modules", """
import sys
def log(*parts):
    print("[app]", *parts, file=sys.stderr)
log("starting", 3)
result = "logged"
""")
snippet("modules", """
import array
a = array.array("i", [3, 1, 2])
a.append(5)
result = [sorted(a), a.typecode, len(a)]
""")
snippet("modules", """
import json
doc = json.loads('{"users": [{"name": "a", "age": 3}, {"name": "b", "age": 5}]}')
result = json.dumps({u["name"]: u["age"] for u in doc["users"]}, sort_keys=True)
""")
snippet("modules", """
import re
text = "Contact: ann@example.com, bob@test.org"
result = re.findall(r"[\\w.]+@[\\w.]+", text)
""")
snippet("modules", """
import datetime
d = datetime.date(2024, 1, 31) + datetime.timedelta(days=1)
result = [d.isoformat(), d.weekday(), (datetime.date(2024, 12, 25) - datetime.date(2024, 1, 1)).days]
""")
snippet("modules", """
import statistics
data = [2, 4, 4, 4, 5, 5, 7, 9]
result = [statistics.mean(data), statistics.median(data), round(statistics.pstdev(data), 3)]
""")
snippet("modules", """
import itertools
result = [list(itertools.combinations("abc", 2)), list(itertools.accumulate([1, 2, 3, 4]))]
""")
snippet("modules", """
import collections
words = "the cat and the hat and the bat".split()
result = collections.Counter(words).most_common(2)
""")
snippet("modules", """
from collections import defaultdict, deque
graph = defaultdict(list)
for a, b in [(1, 2), (1, 3), (2, 4), (3, 4), (4, 5)]:
    graph[a].append(b)
seen, order, q = {1}, [], deque([1])
while q:
    n = q.popleft()
    order.append(n)
    for m in graph[n]:
        if m not in seen:
            seen.add(m)
            q.append(m)
result = order
""")
snippet("modules", """
import heapq
tasks = [(3, "low"), (1, "urgent"), (2, "normal")]
heapq.heapify(tasks)
result = [heapq.heappop(tasks)[1] for _ in range(3)]
""")
snippet("modules", """
import bisect
grades = [60, 70, 80, 90]
result = ["FDCBA"[bisect.bisect(grades, s)] for s in [55, 65, 85, 95]]
""")
snippet("modules", """
from decimal import Decimal, ROUND_HALF_UP
price = Decimal("19.995").quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
result = str(price)
""")
snippet("modules", """
from fractions import Fraction
result = str(Fraction(1, 3) + Fraction(1, 6))
""")
snippet("modules", """
import random
random.seed(42)
result = [random.randint(1, 100) for _ in range(5)]
""")
snippet("modules", """
import math
result = [math.gcd(48, 18), math.isclose(0.1 + 0.2, 0.3), math.comb(5, 2), round(math.hypot(3, 4))]
""")
snippet("modules", """
import textwrap
result = textwrap.wrap("The quick brown fox jumps over the lazy dog", width=15)
""")
snippet("modules", """
import hashlib, base64
result = [hashlib.sha256(b"abc").hexdigest()[:16], base64.b64encode(b"hi").decode()]
""")
snippet("modules", """
import uuid
u = uuid.UUID("12345678123456781234567812345678")
result = [str(u), u.version]
""")
snippet("modules", """
import enum
class Color(enum.Enum):
    RED = 1
    GREEN = 2
result = [Color.RED.name, Color(2).name, [c.value for c in Color]]
""")
snippet("modules", """
import operator
from functools import reduce
result = [reduce(operator.mul, range(1, 6)), sorted([(1, "b"), (0, "a")], key=operator.itemgetter(1))]
""")
snippet("modules", """
import functools
@functools.lru_cache(maxsize=None)
def ways(n):
    return 1 if n <= 1 else ways(n - 1) + ways(n - 2)
result = ways(40)
""")
snippet("modules", """
import typing
def total(xs: typing.List[int]) -> int:
    return sum(xs)
Pair = typing.Tuple[str, int]
result = total([1, 2, 3])
""")
snippet("modules", """
import string
result = [string.ascii_lowercase[:5], string.punctuation[:3], "hello world".title()]
""")
snippet("modules", """
import pprint
result = pprint.pformat({"b": [1, 2], "a": {"x": 1}})
""")
snippet("modules", """
import copy
a = {"x": [1, 2]}
b = copy.deepcopy(a)
b["x"].append(3)
result = [a, b]
""")

# ---------------------------------------------------------------- syntax
snippet("syntax", """
def http_status(code):
    match code:
        case 200:
            return "ok"
        case 404:
            return "not found"
        case 500 | 502 | 503:
            return "server error"
        case _:
            return "unknown"
result = [http_status(c) for c in (200, 404, 502, 418)]
""")
snippet("syntax", """
def handle(cmd):
    match cmd.split():
        case ["go", direction]:
            return f"going {direction}"
        case ["take", *items]:
            return f"taking {', '.join(items)}"
        case []:
            return "nothing"
        case _:
            return "?"
result = [handle("go north"), handle("take a b"), handle(""), handle("jump")]
""")
snippet("syntax", """
def area(shape):
    match shape:
        case {"type": "circle", "r": r}:
            return round(3.14159 * r * r, 2)
        case {"type": "rect", "w": w, "h": h}:
            return w * h
    return None
result = [area({"type": "circle", "r": 1}), area({"type": "rect", "w": 2, "h": 3}), area({})]
""")
snippet("syntax", """
from dataclasses import dataclass
@dataclass
class Point:
    x: int
    y: int
def where(p):
    match p:
        case Point(0, 0):
            return "origin"
        case Point(x, 0):
            return f"x-axis at {x}"
        case Point():
            return "elsewhere"
result = [where(Point(0, 0)), where(Point(5, 0)), where(Point(1, 1))]
""")
snippet("syntax", """
from dataclasses import dataclass, field
@dataclass(order=True)
class Task:
    priority: int
    name: str = field(compare=False)
    tags: list = field(default_factory=list, compare=False)
tasks = sorted([Task(3, "c"), Task(1, "a"), Task(2, "b")])
result = [t.name for t in tasks]
""")
snippet("syntax", """
from dataclasses import dataclass, asdict
@dataclass(frozen=True)
class Item:
    sku: str
    qty: int = 1
result = [asdict(Item("x", 3)), Item("y") == Item("y")]
""")
snippet("syntax", """
squares = {n: n * n for n in range(6) if n % 2 == 0}
evens = [x for x in range(20) if x % 2 == 0 if x % 3 == 0]
pairs = [(a, b) for a in range(3) for b in range(a)]
result = [squares, evens, pairs]
""")
snippet("syntax", """
def gen(n):
    for i in range(n):
        yield i * i
def chained():
    yield from gen(3)
    yield from "ab"
result = [list(gen(4)), list(chained()), sum(x for x in range(10))]
""")
snippet("syntax", """
from contextlib import contextmanager
log = []
@contextmanager
def section(name):
    log.append(f"enter {name}")
    try:
        yield name.upper()
    finally:
        log.append(f"exit {name}")
with section("a") as s:
    log.append(s)
result = log
""")
snippet("syntax", """
class Timer:
    def __enter__(self):
        self.events = ["start"]
        return self
    def __exit__(self, *exc):
        self.events.append("stop")
        return False
with Timer() as t:
    t.events.append("work")
result = t.events
""")
snippet("syntax", """
def parse(s):
    try:
        return int(s)
    except ValueError:
        return None
    finally:
        pass
result = [parse("3"), parse("x")]
""")
snippet("syntax", """
class AppError(Exception):
    pass
class NotFound(AppError):
    def __init__(self, what):
        super().__init__(f"{what} not found")
        self.what = what
try:
    try:
        raise NotFound("user")
    except AppError as e:
        raise RuntimeError("lookup failed") from e
except RuntimeError as e:
    result = [str(e), str(e.__cause__), type(e.__cause__).__name__]
""")
snippet("syntax", """
def parse(row, n):
    try:
        return int(row)
    except ValueError as e:
        e.add_note(f"while parsing row {n}")
        raise
try:
    parse("x", 3)
except ValueError as e:
    result = [str(e), e.__notes__]
""", since=(3, 11))
snippet("syntax", """
x = 5
y = "big" if x > 3 else "small"
z = (n := len("hello")) * 2
a, *rest = [1, 2, 3, 4]
(b, c), d = (5, 6), 7
result = [y, z, n, a, rest, b + c + d]
""")
snippet("syntax", """
def apply(fn, *args, **kwargs):
    return fn(*args, **kwargs)
def greet(name, greeting="hi", *, punct="!"):
    return f"{greeting} {name}{punct}"
result = [apply(greet, "ann"), apply(greet, "bob", greeting="yo", punct="?"), apply(max, 3, 9, 4)]
""")
snippet("syntax", """
ops = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}
result = {k: f(3, 4) for k, f in ops.items()}
""")
snippet("syntax", """
def decorator_with_args(prefix):
    def deco(fn):
        def wrapped(*a):
            return prefix + str(fn(*a))
        return wrapped
    return deco
@decorator_with_args(">> ")
def double(x):
    return 2 * x
result = double(21)
""")
snippet("syntax", """
class Meta:
    registry = []
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        Meta.registry.append(cls.__name__)
class A(Meta): pass
class B(Meta): pass
result = Meta.registry
""")
snippet("syntax", """
class Node:
    def __init__(self, val, children=()):
        self.val = val
        self.children = list(children)
def depth(n):
    return 1 + max((depth(c) for c in n.children), default=0)
tree = Node(1, [Node(2, [Node(4)]), Node(3)])
result = depth(tree)
""")
snippet("syntax", """
from abc import ABC, abstractmethod
class Repo(ABC):
    @abstractmethod
    def get(self, k): ...
class MemRepo(Repo):
    def __init__(self):
        self.d = {"a": 1}
    def get(self, k):
        return self.d.get(k)
try:
    Repo()
    ok = False
except TypeError:
    ok = True
result = [ok, MemRepo().get("a")]
""")
snippet("syntax", """
class Celsius:
    def __set_name__(self, owner, name):
        self.name = "_" + name
    def __get__(self, obj, objtype=None):
        return getattr(obj, self.name, 0)
    def __set__(self, obj, value):
        setattr(obj, self.name, max(value, -273))
class Reading:
    temp = Celsius()
r = Reading()
r.temp = -500
result = r.temp
""")
snippet("syntax", """
import enum
class Status(enum.IntEnum):
    OK = 0
    FAIL = 1
result = [Status.FAIL > Status.OK, Status(0).name, int(Status.FAIL)]
""")
snippet("syntax", """
from typing import NamedTuple
class Employee(NamedTuple):
    name: str
    dept: str = "eng"
e = Employee("ann")
result = [e.name, e.dept, e._replace(dept="ops").dept]
""")
snippet("syntax", """
while True:
    break
else:
    pass
for i in range(3):
    if i == 5:
        break
else:
    found = "not found"
result = found
""")
snippet("syntax", """
def outer():
    total = 0
    def add(n):
        nonlocal total
        total += n
    for i in range(5):
        add(i)
    return total
result = outer()
""")
snippet("syntax", """
numbers = [5, 3, 8, 1]
numbers.sort(key=lambda n: -n)
words = sorted(["Banana", "apple", "cherry"], key=str.lower)
result = [numbers, words, sorted({"b": 2, "a": 1}.items())]
""")
snippet("syntax", """
s = "Hello, World"
result = [s[::-1], s[7:], s.replace("World", "You"), s.split(", "), "-".join(["a", "b"]), s.count("l")]
""")
snippet("syntax", """
matrix = [[1, 2, 3], [4, 5, 6]]
result = [list(zip(*matrix)), [sum(r) for r in matrix], list(map(list, zip(*matrix)))]
""")
snippet("syntax", """
inventory = {"apples": 3}
inventory.setdefault("pears", 0)
inventory.update(plums=2)
merged = inventory | {"kiwis": 1}
result = [sorted(merged.items()), inventory.get("grapes", "none")]
""")
snippet("syntax", """
a = {1, 2, 3}
b = {2, 3, 4}
result = [sorted(a & b), sorted(a | b), sorted(a - b), sorted(a ^ b), {1, 2} <= a]
""")
snippet("syntax", """
class Money(int):
    def __str__(self):
        return f"${int(self):,}"
result = [str(Money(1234567)), Money(5) + 3]
""")
snippet("syntax", """
import itertools
def chunks(seq, n):
    it = iter(seq)
    while batch := list(itertools.islice(it, n)):
        yield batch
result = list(chunks(range(7), 3))
""")
snippet("syntax", """
def safe_div(a, b):
    assert b != 0, "b must not be zero"
    return a / b
try:
    safe_div(1, 0)
except AssertionError as e:
    result = str(e)
""")

snippet("syntax", """
from math import *
from statistics import *
result = [floor(sqrt(17)), mean([1, 2, 3]), round(pi, 2)]
""")

snippet("syntax", """
import time
class Timer:
    def __init__(self, label):
        self.label = label
    def __enter__(self):
        self.start = time.perf_counter()
        return self
    def __exit__(self, exc_type, exc, tb):
        self.elapsed = time.perf_counter() - self.start
        self.failed = exc_type is not None
        return False
def parse(text):
    with Timer("parse") as t:
        try:
            return int(text), t
        finally:
            pass
try:
    with Timer("bad") as timer:
        parse("x")
except ValueError as e:
    result = [type(e).__name__, timer.failed, timer.elapsed >= 0]
""")


snippet("syntax", """
from dataclasses import dataclass, field
@dataclass(frozen=True)
class Email:
    address: str
    domain: str = field(init=False)
    def __post_init__(self):
        normalized = self.address.strip().lower()
        object.__setattr__(self, "address", normalized)
        object.__setattr__(self, "domain", normalized.split("@")[1])
e = Email("  Ada@Example.COM ")
try:
    e.address = "x"
except Exception as err:
    frozen = type(err).__name__
result = [e.address, e.domain, frozen, e == Email("ada@example.com")]
""")


snippet("syntax", """
from functools import singledispatch
from datetime import date
@singledispatch
def to_json(value):
    raise TypeError(f"cannot serialise {type(value).__name__}")
@to_json.register
def _(value: date):
    return value.isoformat()
@to_json.register(set)
@to_json.register(frozenset)
def _(value):
    return sorted(value)
@to_json.register
def _(value: int | float):
    return value
result = [to_json(date(2024, 5, 1)), to_json({3, 1}), to_json(2.5)]
""", since=(3, 11))   # register() takes a union annotation from 3.11 on


snippet("syntax", """
from dataclasses import dataclass, field
@dataclass(slots=True)
class Inventory:
    items: dict = field(default_factory=dict)
    def add(self, name, qty=1):
        self.items[name] = self._current(name) + qty
        return self
    def _current(self, name):
        return self.items.get(name, 0)
@dataclass(slots=True, frozen=True)
class Sku:
    code: str
    def __post_init__(self):
        object.__setattr__(self, "code", self.code.upper())
inv = Inventory().add("bolt").add("bolt", 2)
result = [inv.items, Sku("ab-1").code]
""")


snippet("syntax", """
class Plugin:
    registry = {}
    def __init_subclass__(cls, /, name=None, **kwargs):
        super().__init_subclass__(**kwargs)
        Plugin.registry[name or cls.__name__.lower()] = cls
class Csv(Plugin, name="csv"):
    pass
class Json(Plugin):
    pass
result = sorted(Plugin.registry)
""")
snippet("syntax", """
class Shape:
    def __init__(self, name):
        self.name = name
class Rect(Shape):
    def __init__(self, w, h):
        Shape.__init__(self, "rect")
        self.w, self.h = w, h
    def __eq__(self, other):
        return isinstance(other, Rect) and (self.w, self.h) == (other.w, other.h)
    def __ne__(self, other):
        return not self.__eq__(other)
result = [Rect(1, 2).name, Rect(1, 2) != Rect(2, 1), Rect(1, 2).__eq__(Rect(1, 2))]
""")


# ---------------------------------------------------------------- everyday algorithms
snippet("algorithms", """
def is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True
result = [n for n in range(50) if is_prime(n)]
""")
snippet("algorithms", """
def binary_search(arr, target):
    lo, hi = 0, len(arr) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if arr[mid] == target:
            return mid
        if arr[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
result = [binary_search(list(range(0, 100, 3)), t) for t in (0, 27, 28, 99)]
""")
snippet("algorithms", """
def merge_sort(a):
    if len(a) <= 1:
        return a
    m = len(a) // 2
    left, right = merge_sort(a[:m]), merge_sort(a[m:])
    out = []
    while left and right:
        out.append(left.pop(0) if left[0] <= right[0] else right.pop(0))
    return out + left + right
result = merge_sort([5, 2, 9, 1, 5, 6, 0])
""")
snippet("algorithms", """
def word_freq(text):
    freq = {}
    for w in text.lower().split():
        w = w.strip(".,!?")
        freq[w] = freq.get(w, 0) + 1
    return sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
result = word_freq("The sun. The moon! The stars, the sun?")
""")
snippet("algorithms", """
def flatten(x):
    out = []
    for item in x:
        if isinstance(item, list):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out
result = flatten([1, [2, [3, [4]], 5], [[6]]])
""")
snippet("algorithms", """
def roman(n):
    table = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
             (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for value, sym in table:
        while n >= value:
            out += sym
            n -= value
    return out
result = [roman(n) for n in (4, 9, 14, 1994, 2024)]
""")
snippet("algorithms", """
def is_palindrome(s):
    cleaned = [c.lower() for c in s if c.isalnum()]
    return cleaned == cleaned[::-1]
result = [is_palindrome(s) for s in ("A man, a plan, a canal: Panama", "race a car")]
""")
snippet("algorithms", """
def two_sum(nums, target):
    seen = {}
    for i, n in enumerate(nums):
        if target - n in seen:
            return [seen[target - n], i]
        seen[n] = i
result = two_sum([2, 7, 11, 15], 9)
""")
snippet("algorithms", """
def lcs(a, b):
    dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            dp[i][j] = dp[i-1][j-1] + 1 if a[i-1] == b[j-1] else max(dp[i-1][j], dp[i][j-1])
    return dp[-1][-1]
result = lcs("ABCBDAB", "BDCABA")
""")
snippet("algorithms", """
def dijkstra(graph, start):
    import heapq
    dist = {start: 0}
    pq = [(0, start)]
    while pq:
        d, u = heapq.heappop(pq)
        if d > dist.get(u, float("inf")):
            continue
        for v, w in graph.get(u, []):
            nd = d + w
            if nd < dist.get(v, float("inf")):
                dist[v] = nd
                heapq.heappush(pq, (nd, v))
    return dist
g = {"a": [("b", 1), ("c", 4)], "b": [("c", 2), ("d", 5)], "c": [("d", 1)]}
result = dijkstra(g, "a")
""")
snippet("algorithms", """
def transpose_csv(text):
    rows = [line.split(",") for line in text.strip().splitlines()]
    return [",".join(col) for col in zip(*rows)]
result = transpose_csv("a,b,c\\n1,2,3")
""")
snippet("algorithms", """
def group_by(items, key):
    groups = {}
    for it in items:
        groups.setdefault(key(it), []).append(it)
    return groups
people = [{"n": "a", "d": "x"}, {"n": "b", "d": "y"}, {"n": "c", "d": "x"}]
result = {k: [p["n"] for p in v] for k, v in group_by(people, lambda p: p["d"]).items()}
""")
snippet("algorithms", """
def running_avg(xs):
    total = 0
    out = []
    for i, x in enumerate(xs, 1):
        total += x
        out.append(round(total / i, 2))
    return out
result = running_avg([10, 20, 30, 40])
""")
snippet("algorithms", """
def caesar(s, k):
    out = []
    for ch in s:
        if ch.isalpha():
            base = ord("A") if ch.isupper() else ord("a")
            out.append(chr((ord(ch) - base + k) % 26 + base))
        else:
            out.append(ch)
    return "".join(out)
result = [caesar("Hello, World!", 3), caesar(caesar("abc", 5), -5)]
""")
snippet("algorithms", """
def permutations(s):
    if len(s) <= 1:
        return [s]
    return [c + p for i, c in enumerate(s) for p in permutations(s[:i] + s[i+1:])]
result = sorted(permutations("abc"))
""")
snippet("algorithms", """
def matmul(a, b):
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]
result = matmul([[1, 2], [3, 4]], [[5, 6], [7, 8]])
""")
snippet("algorithms", """
def parse_kv(s):
    return dict(part.split("=", 1) for part in s.split(";") if part)
result = parse_kv("a=1;b=two;c=3=4;")
""")
snippet("algorithms", """
def histogram(values, bins):
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        i = min(int((v - lo) / width), bins - 1)
        counts[i] += 1
    return counts
result = histogram([1, 2, 2, 3, 3, 3, 4, 4, 4, 4], 4)
""")
snippet("algorithms", """
def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps
result = max(range(1, 30), key=collatz)
""")
snippet("algorithms", """
def valid_parens(s):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in s:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack
result = [valid_parens(s) for s in ("([]{})", "([)]", "((")]
""")
snippet("algorithms", """
import json
records = [{"id": i, "score": s} for i, s in enumerate([88, 92, 75, 92])]
top = max(r["score"] for r in records)
result = json.dumps({"top": top, "ids": [r["id"] for r in records if r["score"] == top]})
""")
snippet("algorithms", """
from datetime import datetime, timedelta
start = datetime(2024, 5, 1, 9, 0)
slots = [(start + timedelta(minutes=30 * i)).strftime("%H:%M") for i in range(4)]
result = slots
""")
snippet("algorithms", """
def to_snake(name):
    out = ""
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out += "_"
        out += ch.lower()
    return out
result = [to_snake(n) for n in ("CamelCase", "HTTPServer", "simple")]
""")
snippet("algorithms", """
class Matrix:
    def __init__(self, rows):
        self.rows = rows
    def __mul__(self, k):
        return Matrix([[k * v for v in r] for r in self.rows])
    def __iter__(self):
        return iter(self.rows)
result = list(Matrix([[1, 2], [3, 4]]) * 3)
""")
snippet("algorithms", """
def compress(s):
    if not s:
        return ""
    out, count = [], 1
    for a, b in zip(s, s[1:]):
        if a == b:
            count += 1
        else:
            out.append(f"{a}{count}")
            count = 1
    out.append(f"{s[-1]}{count}")
    return "".join(out)
result = compress("aaabccdddd")
""")
snippet("algorithms", """
from collections import OrderedDict
d = OrderedDict()
for k in "bca":
    d[k] = ord(k)
d.move_to_end("b")
result = list(d.items())
""")
snippet("algorithms", """
def knapsack(items, cap):
    best = [0] * (cap + 1)
    for w, v in items:
        for c in range(cap, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[cap]
result = knapsack([(1, 1), (3, 4), (4, 5), (5, 7)], 7)
""")
snippet("algorithms", """
def summarize(orders):
    totals = {}
    for o in orders:
        totals[o["customer"]] = totals.get(o["customer"], 0) + o["qty"] * o["price"]
    return {k: round(v, 2) for k, v in sorted(totals.items())}
orders = [{"customer": "x", "qty": 2, "price": 9.99}, {"customer": "y", "qty": 1, "price": 5.5},
          {"customer": "x", "qty": 1, "price": 0.02}]
result = summarize(orders)
""")

# ---------------------------------------------------------------- data science
# A filled contour over scattered points: matplotlib triangulates them with qhull, which
# opens /dev/null for its messages
snippet("data", """
import numpy as np
import matplotlib.pyplot as plt
rng = np.random.default_rng(0)
x, y = rng.random(40), rng.random(40)
fig, ax = plt.subplots()
contours = ax.tricontourf(x, y, x * y, levels=5)
result = len(contours.levels)
""", DATA)
snippet("data", """
import pandas as pd
df = pd.DataFrame({"city": ["a", "b", "a", "c"], "sales": [10, 20, 30, 40]})
result = df.groupby("city")["sales"].sum().to_dict()
""", DATA)
snippet("data", """
import numpy as np
a = np.arange(12).reshape(3, 4)
result = [a.sum(axis=0).tolist(), float(a.mean()), a.T.shape]
""", DATA)
snippet("data", """
import pandas as pd
df = pd.DataFrame({"x": [1, 2, 3, 4], "y": [2, 4, 6, 8]})
df["z"] = df.x * df.y
result = [df[df.z > 5].x.tolist(), round(df.x.corr(df.y), 3)]
""", DATA)
snippet("data", """
import pandas as pd
pd.set_option("display.width", 120)
pd.options.display.max_columns = 20
df = pd.DataFrame({"a": range(3)})
result = [pd.get_option("display.width"), len(df)]
""", DATA)
snippet("data", """
import numpy as np
rng = np.random.default_rng(0)
x = rng.normal(size=100)
result = [x.shape[0], bool(abs(x.mean()) < 0.5)]
""", DATA)
snippet("data", """
import pandas as pd
s = pd.Series([3, 1, 2], index=["c", "a", "b"])
result = [s.sort_index().tolist(), s.idxmax(), s.describe()["max"]]
""", DATA)
snippet("data", """
import pandas as pd
left = pd.DataFrame({"k": [1, 2], "a": ["x", "y"]})
right = pd.DataFrame({"k": [1, 2], "b": ["p", "q"]})
m = left.merge(right, on="k")
result = m.to_dict(orient="records")
""", DATA)
snippet("data", """
import numpy as np
m = np.array([[2.0, 1.0], [1.0, 3.0]])
result = [round(float(np.linalg.det(m)), 3), np.linalg.solve(m, np.array([3.0, 5.0])).round(3).tolist()]
""", DATA)
snippet("data", """
import pandas as pd
df = pd.DataFrame({"d": pd.date_range("2024-01-01", periods=4, freq="D"), "v": [1, 2, 3, 4]})
result = df.set_index("d").resample("2D").sum()["v"].tolist()
""", DATA)
snippet("data", """
import pandas as pd
import io
csv = io.StringIO("name,score\\nann,3\\nbob,5\\n")
df = pd.read_csv(csv)
result = [df.score.max(), list(df.columns)]
""", DATA)
snippet("data", """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3], [1, 4, 9])
ax.set_title("squares")
result = ax.get_title()
""", DATA)
snippet("data", """
import numpy as np
a = np.array([1, 2, 3, 4, 5, 6])
result = [a[a % 2 == 0].tolist(), np.where(a > 3, "hi", "lo").tolist(), int(np.cumsum(a)[-1])]
""", DATA)

# sympy as agents use it: through the library's own parsing and code generation
snippet("sympy", """
import sympy as sp
x, y = sp.symbols("x y")
result = [str(sp.simplify(sp.sin(x) ** 2 + sp.cos(x) ** 2)), str(sp.integrate(sp.exp(-x), (x, 0, sp.oo))),
          str(sp.solve(x ** 2 - 4, x)), str(sp.series(sp.exp(x), x, 0, 4)), sp.latex(sp.sqrt(x) / 2),
          str(sp.factor(x ** 2 - y ** 2)), str(sp.limit(sp.sin(x) / x, x, 0))]
""", DATA)
snippet("sympy", """
import sympy as sp
x = sp.Symbol("x")
n = sp.Symbol("n", integer=True)
M = sp.Matrix([[1, 2], [3, 4]])
result = [str(M.inv()), str(M.eigenvals()), str(sp.nsimplify(0.5)), str(sp.nsimplify(4.71238898038469, [sp.pi])),
          str(sp.summation(1 / n ** 2, (n, 1, sp.oo))), str(sp.nsolve(sp.cos(x) - x, x, 1))[:8],
          str(sp.dsolve(sp.Function("f")(x).diff(x) - 2, sp.Function("f")(x)))]
""", DATA)

# scikit-learn, seaborn and statsmodels as agents use them (imported on demand, not warmed)
snippet("analysis", """
import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.datasets import load_iris
X = np.arange(20.0).reshape(-1, 1)
lr = LinearRegression().fit(X, 3 * X[:, 0] - 2)
Xi, yi = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(Xi, yi, test_size=0.3, random_state=0)
rf = RandomForestClassifier(n_estimators=20, random_state=0, n_jobs=-1).fit(X_train, y_train)
scores = cross_val_score(RandomForestClassifier(n_estimators=10, random_state=0), Xi, yi, cv=3, n_jobs=-1)
result = [round(float(lr.coef_[0]), 6), round(float(lr.intercept_), 6), len(scores), bool(rf.score(X_test, y_test) > 0.8)]
""", DATA)
snippet("analysis", """
import pandas as pd
import seaborn as sns
import matplotlib.pyplot as plt
df = pd.DataFrame({"day": ["mon", "tue", "wed", "mon", "tue", "wed"], "sales": [3, 5, 2, 4, 6, 1],
                   "shop": ["a", "a", "a", "b", "b", "b"]})
sns.set_theme(style="whitegrid")
ax = sns.barplot(data=df, x="day", y="sales", hue="shop")
ax.set_title("sales by day")
plt.show()
result = [ax.get_title(), len(ax.patches) >= 6]
""", DATA)
snippet("analysis", """
import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
df = pd.DataFrame({"x": [1.0, 2, 3, 4, 5, 6, 7, 8], "y": [2.1, 3.9, 6.2, 8.1, 9.8, 12.2, 13.9, 16.1],
                   "g": list("abababab")})
res = smf.ols("y ~ x + C(g) + np.log(x)", data=df).fit()
print(res.summary())
direct = sm.OLS(df["y"], sm.add_constant(df[["x"]])).fit()
result = [sorted(res.params.index), round(float(direct.params["x"]), 4), int(res.nobs)]
""", DATA)


# ---------------------------------------------------------------- filesystem profile
snippet("files", """
with open("notes.txt", "w") as f:
    f.write("line one\\nline two\\n")
with open("notes.txt") as f:
    result = [line.strip() for line in f]
""", FILES)
snippet("files", """
import csv
with open("out/report.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["a", "b"])
    w.writerow([1, 2])
with open("out/report.csv") as f:
    result = f.read().splitlines()
""", FILES)
snippet("files", """
import pathlib
p = pathlib.Path("data")
p.mkdir(exist_ok=True)
(p / "x.txt").write_text("hello")
result = [(p / "x.txt").read_text(), sorted(q.name for q in p.iterdir())]
""", FILES)
snippet("files", """
import json
with open("config.json", "w") as f:
    json.dump({"debug": True, "n": 3}, f)
with open("config.json") as f:
    result = json.load(f)
""", FILES)
snippet("files", """
import os.path
result = [os.path.join("a", "b.txt"), os.path.splitext("x.tar.gz"), os.path.basename("/a/b/c.py")]
""", FILES)
snippet("files", """
import pathlib
result = [pathlib.Path("out").is_dir(), pathlib.PurePosixPath("a/b/c.txt").suffix]
""", FILES)
snippet("files", """
import shutil, pathlib
pathlib.Path("src.txt").write_text("copy me")
shutil.copy("src.txt", "dst.txt")
result = pathlib.Path("dst.txt").read_text()
""", FILES)
snippet("files", """
import io
with open("bin.dat", "wb") as f:
    f.write(bytes(range(5)))
with open("bin.dat", "rb") as f:
    result = list(f.read())
""", FILES)

# ---------------------------------------------------------------- more everyday code (a probe of this session)
snippet("syntax", """
from contextlib import contextmanager
import time
@contextmanager
def timer(label):
    t = time.perf_counter()
    yield
    print(label, round(time.perf_counter() - t) >= 0)
with timer("x"):
    total = sum(i * i for i in range(1000))
from enum import Enum, auto
class Color(Enum):
    RED = auto()
    GREEN = auto()
result = [total, Color.GREEN.value, Color["RED"].name, [c.name for c in Color]]
""")
snippet("modules", """
import itertools, functools, collections
@functools.cache
def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
d = collections.deque([1, 2, 3], maxlen=3); d.append(4)
x = 5
result = [f(40), list(itertools.pairwise([1, 2, 3])), list(d), f"{x=}", {"a": 1} | {"b": 2}, (y := 3) + 1]
""")
snippet("private", """
class Temperature:
    def __init__(self, c): self._c = c
    @property
    def f(self): return self._c * 9 / 5 + 32
    @f.setter
    def f(self, value): self._c = (value - 32) * 5 / 9
    @classmethod
    def from_f(cls, f):
        t = cls(0); t.f = f; return t
    @staticmethod
    def valid(c): return c > -273.15
t = Temperature.from_f(212)
result = [round(t._c), Temperature.valid(-300), t.f]
""")
snippet("syntax", """
from typing import NamedTuple, Protocol, TypedDict, Generic, TypeVar
T = TypeVar("T")
class Stack(Generic[T]):
    def __init__(self): self.items: list[T] = []
    def push(self, x: T) -> None: self.items.append(x)
    def pop(self) -> T: return self.items.pop()
class P(NamedTuple):
    x: int
    y: int = 0
class Movie(TypedDict):
    title: str
s = Stack[int](); s.push(1); s.push(2)
m: Movie = {"title": "x"}
result = [s.pop(), P(1)._replace(y=5), m["title"]]
""")
snippet("dunders", """
class Node:
    def __init__(self, val, children=None):
        self.val = val
        self.children = children or []
    def __iter__(self):
        yield self.val
        for c in self.children:
            yield from c
    def __eq__(self, other):
        return isinstance(other, Node) and self.val == other.val
    def __hash__(self):
        return hash(self.val)
tree = Node(1, [Node(2, [Node(4)]), Node(3)])
result = [list(tree), Node(1) == Node(1), len({Node(1), Node(1)})]
""")
snippet("modules", """
import string, textwrap, html, urllib.parse
t = string.Template("Hello $name")
result = [t.substitute(name="x"), textwrap.shorten("a b c d e f g", width=9), html.escape("<a>"), urllib.parse.urlencode({"q": "a b"}), "abc".translate(str.maketrans("abc", "xyz"))]
""")
snippet("algorithms", """
import copy
class Config:
    def __init__(self): self.opts = {"a": [1]}
    def __repr__(self): return f"Config({self.opts})"
c = copy.deepcopy(Config())
c.opts["a"].append(2)
nums = list(map(lambda x: x ** 2, filter(lambda x: x % 2, range(10))))
result = [repr(c), nums, sorted({"b": 2, "a": 1}.items(), key=lambda kv: kv[1], reverse=True), any(x > 50 for x in nums), divmod(17, 5)]
""")
snippet("more", """
import copy, math
class Money:
    def __init__(self, cents):
        self.cents = cents
    def __float__(self):
        return self.cents / 100
    def __floor__(self):
        return self.cents // 100
    def __ceil__(self):
        return -(-self.cents // 100)
    def __trunc__(self):
        return int(self.cents / 100)
    def __bytes__(self):
        return str(self.cents).encode()
m = Money(1250)
result = [math.floor(m), math.ceil(m), math.trunc(m), bytes(m)]
""")
snippet("more", """
import copy
class Graph:
    def __init__(self):
        self.edges = {}
        self.copies = 0
    def add(self, a, b):
        self.edges.setdefault(a, []).append(b)
    def __copy__(self):
        g = Graph()
        g.edges = self.edges
        return g
    def __deepcopy__(self, memo):
        g = Graph()
        g.edges = copy.deepcopy(self.edges, memo)
        g.copies = self.copies + 1
        return g
g = Graph()
g.add("a", "b")
shallow, deep = copy.copy(g), copy.deepcopy(g)
deep.add("a", "c")
result = [shallow.edges is g.edges, g.edges, deep.edges, deep.copies]
""")
snippet("modules", """
from queue import Queue
graph = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}
def bfs(start):
    seen, order, q = {start}, [], Queue()
    q.put(start)
    while not q.empty():
        node = q.get()
        order.append(node)
        for nxt in graph[node]:
            if nxt not in seen:
                seen.add(nxt)
                q.put(nxt)
    return order
result = bfs("a")
""")
snippet("modules", """
from graphlib import TopologicalSorter
deps = {"deploy": {"build", "test"}, "test": {"build"}, "build": set()}
result = list(TopologicalSorter(deps).static_order())
""")
snippet("modules", """
import struct
header = struct.pack(">HHI", 1, 2, 300)
version, kind, length = struct.unpack(">HHI", header)
result = [len(header), version, kind, length, struct.calcsize("<dq")]
""")
snippet("modules", """
from datetime import datetime
from zoneinfo import ZoneInfo
meeting = datetime(2024, 3, 10, 15, 30, tzinfo=ZoneInfo("America/New_York"))
result = {tz: meeting.astimezone(ZoneInfo(tz)).strftime("%H:%M") for tz in ["UTC", "Europe/Berlin", "Asia/Tokyo"]}
""")
snippet("modules", """
import ipaddress
net = ipaddress.ip_network("192.168.1.0/29")
result = [str(net.netmask), net.num_addresses, ipaddress.ip_address("192.168.1.5") in net,
          ipaddress.ip_address("10.0.0.1").is_private]
""")
snippet("modules", """
import gzip, json
payload = json.dumps({"rows": list(range(50))}).encode()
packed = gzip.compress(payload)
result = [len(packed) < len(payload), json.loads(gzip.decompress(packed))["rows"][-1]]
""")
snippet("modules", """
import colorsys, fnmatch, keyword
h, l, s = colorsys.rgb_to_hls(0.2, 0.4, 0.6)
result = [round(h, 3), fnmatch.filter(["a.py", "b.txt", "c.py"], "*.py"), keyword.iskeyword("lambda")]
""")
snippet("modules", """
import tomllib
config = tomllib.loads(\"\"\"
title = "demo"
[server]
port = 8080
hosts = ["a", "b"]
\"\"\")
result = [config["title"], config["server"]["port"], config["server"]["hosts"]]
""", since=(3, 11))
snippet("more", """
class Settings:
    _instance = None
    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance.values = {}
        return cls._instance
a = Settings()
a.values["debug"] = True
b = Settings()
result = [a is b, b.values]
""")
snippet("more", """
class Money(float):
    def __new__(cls, amount, currency="EUR"):
        obj = super().__new__(cls, round(amount, 2))
        obj.currency = currency
        return obj
    def __repr__(self):
        return f"{float(self):.2f} {self.currency}"
m = Money(10.456, "USD")
result = [repr(m), m + 1, isinstance(m, float)]
""")
snippet("more", """
from abc import ABCMeta, abstractmethod
class Repository(metaclass=ABCMeta):
    @abstractmethod
    def get(self, key): ...
    def get_or(self, key, default):
        value = self.get(key)
        return default if value is None else value
class MemoryRepository(Repository):
    def __init__(self):
        self._items = {"a": 1}
    def get(self, key):
        return self._items.get(key)
repo = MemoryRepository()
result = [repo.get_or("a", 0), repo.get_or("b", 0), isinstance(repo, Repository)]
""")

# ---------------------------------------------------------------- scratch directory (no filesystem profile)
snippet("scratch", """
from pathlib import Path
notes = Path("scratch_path_notes.txt")
notes.write_text("hello\\nworld\\n")
result = [notes.read_text().splitlines(), notes.exists(), notes.suffix, notes.stem, notes.stat().st_size]
notes.unlink()
""")
snippet("scratch", """
from pathlib import Path
base = Path("scratch_proj")
(base / "src" / "pkg").mkdir(parents=True, exist_ok=True)
for name in ("a.py", "pkg/b.py", "notes.md"):
    (base / "src" / name).write_text("# " + name)
result = [sorted(p.relative_to(base).as_posix() for p in base.rglob("*.py")),
          sorted(p.name for p in (base / "src").iterdir()), [p.name for p in base.glob("src/*.md")]]
""")
snippet("scratch", """
import glob, os
os.makedirs("scratch_glob/sub", exist_ok=True)
for name in ("a.csv", "b.csv", "notes.txt", "sub/c.csv"):
    with open(os.path.join("scratch_glob", name), "w") as f:
        f.write(name)
result = [sorted(glob.glob("scratch_glob/*.csv")), sorted(glob.glob("scratch_glob/**/*.csv", recursive=True))]
""")
snippet("scratch", """
import os, shutil, tempfile
with tempfile.TemporaryDirectory() as workdir:
    source = os.path.join(workdir, "report.txt")
    with open(source, "w") as f:
        f.write("total: 42")
    shutil.copytree(workdir, "scratch_backup", dirs_exist_ok=True)
    kept = os.path.exists(workdir)
with tempfile.NamedTemporaryFile("w+", suffix=".csv") as tmp:
    tmp.write("a,b\\n1,2\\n")
    tmp.seek(0)
    rows = tmp.read().splitlines()
result = [kept, os.path.exists(workdir), open("scratch_backup/report.txt").read(), rows]
shutil.rmtree("scratch_backup")
""")
snippet("scratch", """
with open("scratch_notes.txt", "w") as f:
    f.write("first\\nsecond\\n")
with open("scratch_notes.txt") as f:
    result = f.read().splitlines()
""")
snippet("scratch", """
import json
data = {"users": [{"name": "ann", "age": 31}, {"name": "bob", "age": 27}]}
with open("scratch_data.json", "w") as fh:
    json.dump(data, fh, indent=2)
with open("scratch_data.json") as fh:
    loaded = json.load(fh)
result = sorted(u["name"] for u in loaded["users"])
""")
snippet("scratch", """
import csv
rows = [("id", "total"), (1, 9.5), (2, 3.25)]
with open("scratch_totals.csv", "w", newline="") as f:
    csv.writer(f).writerows(rows)
with open("scratch_totals.csv", newline="") as f:
    result = [row for row in csv.reader(f)][1:]
""")
snippet("scratch", """
import os
os.makedirs("scratch_out/plots", exist_ok=True)
path = os.path.join("scratch_out", "summary.txt")
with open(path, "w") as f:
    print("done", file=f)
result = [sorted(os.listdir("scratch_out")), os.path.exists(path), os.path.getsize(path)]
""")
snippet("scratch", """
import os
base = os.getcwd()
result = [os.path.isabs(base), os.path.relpath(os.path.join(base, "a", "b.txt"), base)]
""")
snippet("scratch", """
with open("scratch_log.txt", "a") as log:
    for step in range(3):
        log.write(f"step {step}\\n")
with open("scratch_log.txt", "rb") as log:
    raw = log.read()
result = [len(raw), raw.count(b"\\n")]
""")
snippet("scratch", """
import os
name = "scratch_tmp.txt"
open(name, "w").write("temporary")
os.remove(name)
result = os.path.exists(name)
""")
snippet("scratch", """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.figure(figsize=(3, 2))
plt.bar(["a", "b"], [3, 5])
plt.savefig("scratch_plot.png", dpi=50)
with open("scratch_plot.png", "rb") as f:
    result = f.read(8) == b"\\x89PNG\\r\\n\\x1a\\n"
""", DATA)
snippet("scratch", """
import pandas as pd
df = pd.DataFrame({"name": ["ann", "bob"], "score": [3, 5]})
df.to_csv("scratch_scores.csv", index=False)
back = pd.read_csv("scratch_scores.csv")
result = back.to_dict(orient="list")
""", DATA)

# ---------------------------------------------------------------- logging, warnings, traceback
snippet("diagnostics", """
import logging
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
logger = logging.getLogger(__name__)
def load(n):
    logger.info("loading %d items", n)
    return list(range(n))
result = len(load(4))
""")
snippet("diagnostics", """
import logging
log = logging.getLogger("pipeline")
log.setLevel(logging.DEBUG)
handler = logging.StreamHandler()
handler.setFormatter(logging.Formatter("%(name)s - %(levelname)s - %(message)s"))
log.addHandler(handler)
log.debug("step one")
log.warning("careful: %s", "low disk")
result = [log.level, log.isEnabledFor(logging.INFO)]
""")
snippet("diagnostics", """
import logging, io
stream = io.StringIO()
logger = logging.getLogger("captured")
logger.propagate = False
logger.addHandler(logging.StreamHandler(stream))
logger.error("bad value: %r", 3.5)
result = stream.getvalue()
""")
snippet("diagnostics", """
import warnings
def old_api(x):
    warnings.warn("old_api is deprecated; use new_api", DeprecationWarning, stacklevel=2)
    return x * 2
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    value = old_api(21)
result = [value, len(caught), caught[0].category.__name__]
""")
snippet("diagnostics", """
import warnings
warnings.filterwarnings("ignore")
warnings.warn("this is silenced")
result = "ok"
""")
snippet("diagnostics", """
import traceback
def risky():
    return {}["missing"]
try:
    risky()
except KeyError:
    tb = traceback.format_exc()
result = [tb.splitlines()[0], tb.strip().splitlines()[-1]]
""")
snippet("diagnostics", """
import traceback, sys
errors = []
for value in ["1", "x", "3"]:
    try:
        int(value)
    except ValueError as exc:
        errors.append("".join(traceback.format_exception_only(type(exc), exc)).strip())
        traceback.print_exc(file=sys.stderr)
result = errors
""")
snippet("diagnostics", """
import logging
logging.basicConfig(format="%(levelname)s:%(message)s")
try:
    1 / 0
except ZeroDivisionError:
    logging.exception("division failed")
result = "logged"
""")

# ---------------------------------------------------------------- async
snippet("async", """
import asyncio
async def fetch(i):
    await asyncio.sleep(0)
    return i * 2
async def main():
    return await asyncio.gather(*(fetch(i) for i in range(3)))
result = asyncio.run(main())
""")
snippet("async", """
import asyncio

async def worker(name, queue, results):
    while True:
        item = await queue.get()
        results.append((name, item * item))
        queue.task_done()

async def main():
    queue = asyncio.Queue()
    results = []
    for n in range(6):
        queue.put_nowait(n)
    workers = [asyncio.create_task(worker(f"w{i}", queue, results)) for i in range(2)]
    await queue.join()
    for w in workers:
        w.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    return sorted(v for _, v in results)

result = asyncio.run(main())
""")
snippet("async", """
import asyncio
async def rows():
    for i, name in enumerate(["ada", "grace", "linus"]):
        await asyncio.sleep(0)
        yield i, name
async def main():
    return {name: i async for i, name in rows()}
result = asyncio.run(main())
""")
snippet("async", """
import asyncio
async def slow():
    await asyncio.sleep(10)
async def main():
    try:
        await asyncio.wait_for(slow(), timeout=0.01)
    except asyncio.TimeoutError:
        return "timed out"
result = asyncio.run(main())
""")
snippet("async", """
import asyncio
async def ticker(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i
async def main():
    total = 0
    async for t in ticker(5):
        total += t
    evens = [t async for t in ticker(6) if t % 2 == 0]
    return [total, evens]
result = asyncio.run(main())
""")
snippet("async", """
import asyncio
limit = asyncio.Semaphore(2)
active, peak = 0, 0
async def job(i):
    global active, peak
    async with limit:
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.001)
        active -= 1
        return i
async def main():
    return await asyncio.gather(*[job(i) for i in range(5)])
result = [asyncio.run(main()), peak]
""")
snippet("async", """
import asyncio
async def might_fail(x):
    if x == 2:
        raise ValueError("bad input")
    return x
async def main():
    outcomes = await asyncio.gather(*(might_fail(i) for i in range(4)), return_exceptions=True)
    return [type(o).__name__ if isinstance(o, Exception) else o for o in outcomes]
result = asyncio.run(main())
""")
snippet("async", """
import asyncio
async def produce(n):
    await asyncio.sleep(0.001 * (3 - n))
    return n
async def main():
    order = []
    for fut in asyncio.as_completed([produce(i) for i in range(3)]):
        order.append(await fut)
    return sorted(order)
result = asyncio.run(main())
""")
snippet("async", """
import asyncio
class Connection:
    def __init__(self, name):
        self.name = name
        self.log = []
    async def __aenter__(self):
        await asyncio.sleep(0)
        self.log.append("open")
        return self
    async def __aexit__(self, exc_type, exc, tb):
        self.log.append("closed" if exc_type is None else f"closed after {exc_type.__name__}")
        return False
async def main():
    async with Connection("db") as conn:
        conn.log.append("query")
    try:
        async with Connection("db2") as other:
            raise KeyError("x")
    except KeyError:
        pass
    return [conn.log, other.log]
result = asyncio.run(main())
""")
snippet("async", """
import asyncio
class Countdown:
    def __init__(self, start):
        self.current = start
    def __aiter__(self):
        return self
    async def __anext__(self):
        if self.current <= 0:
            raise StopAsyncIteration
        await asyncio.sleep(0)
        self.current -= 1
        return self.current + 1
async def main():
    return [n async for n in Countdown(4)]
result = asyncio.run(main())
""")

# x.__class__: read as type(x), through the same guard.
snippet("dunders", """
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __repr__(self):
        return f"{self.__class__.__name__}({self.x}, {self.y})"
result = repr(Point(1, 2))
""")

# ---------------------------------------------------------------- agents
# Everyday snippets written as an agent would: x.__class__, private dataclass fields,
# cls.__new__, sys.exc_info, platform.

snippet("agents", """
from typing import Protocol, TypedDict, Generic, TypeVar, Optional
T = TypeVar("T")
class HasArea(Protocol):
    def area(self) -> float: ...
class Movie(TypedDict):
    title: str
    year: int
class Box(Generic[T]):
    def __init__(self, item: T) -> None:
        self.item = item
    def get(self) -> T:
        return self.item
class Sq:
    def __init__(self, s): self.s = s
    def area(self): return self.s ** 2
def total(shapes: list[HasArea]) -> float:
    return sum(x.area() for x in shapes)
m: Movie = {"title": "x", "year": 1999}
result = [total([Sq(2), Sq(3)]), Box[int](5).get(), m["year"]]
""")
snippet("agents", """
from functools import lru_cache, singledispatch, total_ordering, cached_property, partial, reduce
@lru_cache(maxsize=None)
def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)
@singledispatch
def describe(x): return "thing"
@describe.register
def _(x: int): return "int"
@describe.register(list)
def _(x): return "list"
@total_ordering
class V:
    def __init__(self, n): self.n = n
    def __eq__(self, o): return self.n == o.n
    def __lt__(self, o): return self.n < o.n
class C:
    @cached_property
    def heavy(self): return sum(range(100))
c = C()
result = [fib(50), describe(1), describe([1]), describe("a"), V(1) <= V(2), c.heavy, c.heavy, fib.cache_info().hits > 0,
          reduce(lambda a, b: a * b, range(1, 6)), partial(int, base=2)("101")]
""")
snippet("agents", """
from enum import Enum, auto, Flag, IntEnum
class Color(Enum):
    RED = auto()
    GREEN = auto()
    def label(self): return self.name.lower()
class Perm(Flag):
    R = auto(); W = auto(); X = auto()
class Pri(IntEnum):
    LOW = 1; HIGH = 2
result = [Color.RED.label(), [c.name for c in Color], str(Perm.R | Perm.W), Pri.HIGH > Pri.LOW, Color["GREEN"].value, Color(1).name, repr(Color.RED)]
""")
snippet("agents", """
from dataclasses import dataclass, field, asdict, replace, fields
from typing import List
@dataclass(frozen=True, order=True)
class Item:
    price: float
    name: str = field(compare=False)
@dataclass
class Cart:
    items: List[Item] = field(default_factory=list)
    discount: float = 0.0
    def __post_init__(self):
        if self.discount < 0: raise ValueError("negative")
    @property
    def total(self): return sum(i.price for i in self.items) * (1 - self.discount)
c = Cart([Item(2.0, "a"), Item(1.0, "b")], 0.5)
try:
    c.items[0].price = 3
except Exception as e:
    err = type(e).__name__
result = [c.total, asdict(c), sorted(c.items)[0].name, replace(c, discount=0).total, [f.name for f in fields(Cart)], err]
""")
snippet("agents", """
class Temperature:
    def __init__(self, c): self._c = c
    @property
    def celsius(self): return self._c
    @celsius.setter
    def celsius(self, v):
        if v < -273.15: raise ValueError("too cold")
        self._c = v
    @property
    def fahrenheit(self): return self._c * 9 / 5 + 32
t = Temperature(10); t.celsius = 20
try:
    t.celsius = -300
except ValueError as e:
    msg = str(e)
result = [t.fahrenheit, msg]
""")
snippet("agents", """
class Config:
    def __init__(self, **kw): self._data = dict(kw)
    def __getattr__(self, name):
        try: return self._data[name]
        except KeyError: raise AttributeError(name) from None
    def __setattr__(self, name, value):
        if name.startswith("_"): super().__setattr__(name, value)
        else: self._data[name] = value
c = Config(a=1); c.b = 2
result = [c.a, c.b, hasattr(c, "zz"), getattr(c, "zz", 9)]
""")
snippet("agents", """
class Countdown:
    def __init__(self, n): self.n = n
    def __iter__(self): return self
    def __next__(self):
        if self.n <= 0: raise StopIteration
        self.n -= 1
        return self.n + 1
def echo():
    got = None
    while True:
        got = yield got if got is None else got * 2
g = echo(); next(g)
result = [list(Countdown(3)), g.send(5), g.send(7)]
""")
snippet("agents", """
class Positive:
    def __set_name__(self, owner, name): self.name = "_" + name
    def __get__(self, obj, objtype=None): return getattr(obj, self.name)
    def __set__(self, obj, value):
        if value <= 0: raise ValueError(f"{self.name[1:]} must be positive")
        setattr(obj, self.name, value)
class Order:
    qty = Positive()
    def __init__(self, q): self.qty = q
o = Order(3)
try: Order(0)
except ValueError as e: m = str(e)
result = [o.qty, m]
""")
snippet("agents", """
class Vector:
    def __init__(self, *xs): self.xs = list(xs)
    def __add__(self, o): return Vector(*[a + b for a, b in zip(self.xs, o.xs)])
    def __mul__(self, k): return Vector(*[a * k for a in self.xs])
    __rmul__ = __mul__
    def __eq__(self, o): return isinstance(o, Vector) and self.xs == o.xs
    def __hash__(self): return hash(tuple(self.xs))
    def __len__(self): return len(self.xs)
    def __getitem__(self, i): return self.xs[i]
    def __contains__(self, x): return x in self.xs
    def __repr__(self): return f"{type(self).__name__}({', '.join(map(str, self.xs))})"
    def __bool__(self): return any(self.xs)
    def __abs__(self): return sum(x*x for x in self.xs) ** 0.5
    def __format__(self, spec): return "<" + ",".join(format(x, spec) for x in self.xs) + ">"
v = Vector(3, 4)
result = [repr(v + v), repr(2 * v), len(v), v[1], 4 in v, bool(Vector(0)), abs(v), f"{v:.1f}", {v: 1}[Vector(3, 4)], v[::-1]]
""")
snippet("agents", """
import time
from contextlib import contextmanager, suppress, ExitStack, redirect_stdout
import io
class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter(); return self
    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.t0
        return False
@contextmanager
def tag(name):
    out.append(f"<{name}>")
    yield
    out.append(f"</{name}>")
out = []
with Timer() as t:
    with tag("b"): out.append("x")
with suppress(KeyError): {}["a"]
buf = io.StringIO()
with redirect_stdout(buf): print("hidden")
with ExitStack() as st:
    st.callback(out.append, "cb")
result = [out, t.elapsed >= 0, buf.getvalue()]
""")
snippet("agents", """
class InsufficientFunds(Exception):
    def __init__(self, needed, available):
        super().__init__(f"need {needed}, have {available}")
        self.needed = needed; self.available = available
def withdraw(b, a):
    if a > b: raise InsufficientFunds(a, b)
    return b - a
try:
    withdraw(5, 10)
except InsufficientFunds as e:
    r = (e.needed, e.available, str(e), e.args)
try:
    try: 1/0
    except ZeroDivisionError as e: raise RuntimeError("wrapped") from e
except RuntimeError as e:
    cause = type(e.__cause__).__name__
result = [r, cause]
""")
snippet("agents", """
import traceback, sys
def f(): return 1/0
try: f()
except Exception:
    tb = traceback.format_exc()
    et, ev, _ = sys.exc_info()
result = ["ZeroDivisionError" in tb, et.__name__, str(ev)]
""")
snippet("agents", """
import logging
logging.basicConfig(level=logging.INFO, format="%(levelname)s:%(name)s:%(message)s")
log = logging.getLogger("app")
log.info("starting %s", "job")
log.debug("hidden")
log.warning("careful")
try: 1/0
except ZeroDivisionError: log.exception("boom")
result = log.getEffectiveLevel()
""")
snippet("agents", """
import json
from datetime import datetime, date, timedelta
from decimal import Decimal
class Enc(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, (datetime, date)): return o.isoformat()
        if isinstance(o, Decimal): return str(o)
        return super().default(o)
d = {"when": date(2024, 1, 2), "amt": Decimal("1.10"), "n": [1, 2]}
s = json.dumps(d, cls=Enc, indent=2, sort_keys=True)
s2 = json.dumps(d, default=str)
back = json.loads(s, object_hook=lambda o: o)
result = [s, s2, back["amt"], (date(2024,3,1) - date(2024,2,1)).days, (datetime(2024,1,1) + timedelta(hours=36)).isoformat(),
          datetime.strptime("2024-05-06 07:08", "%Y-%m-%d %H:%M").strftime("%A %d %B")]
""")
snippet("agents", """
from collections import Counter, defaultdict, deque, OrderedDict, ChainMap, namedtuple
import heapq, bisect
words = "the cat and the hat and the bat".split()
c = Counter(words)
dd = defaultdict(list)
for w in words: dd[len(w)].append(w)
dq = deque(maxlen=3)
for i in range(5): dq.append(i)
od = OrderedDict(a=1, b=2); od.move_to_end("a")
cm = ChainMap({"x": 1}, {"x": 2, "y": 3})
P = namedtuple("P", "x y", defaults=[0])
h = [5, 1, 4]; heapq.heapify(h); heapq.heappush(h, 0)
a = [1, 3, 5]; bisect.insort(a, 4)
result = [c.most_common(2), dict(dd), list(dq), list(od), cm["x"], cm["y"], P(1)._asdict(), heapq.nsmallest(2, h), a, c["the"] + c["zzz"], (c + Counter("tt"))["t"]]
""")
snippet("agents", """
import re
text = "Contact: alice@example.com, bob@test.org; phone 555-1234"
emails = re.findall(r"[\\w.]+@[\\w.]+", text)
pat = re.compile(r"(?P<user>\\w+)@(?P<dom>[\\w.]+)")
m = pat.search(text)
result = [emails, m.group("user"), m.groupdict(), re.sub(r"\\d", "#", text)[-8:], re.split(r"[,;]\\s*", text), [x.span() for x in pat.finditer(text)],
          re.fullmatch(r"\\d{3}-\\d{4}", "555-1234") is not None, pat.sub(lambda m: m["user"].upper(), text)[:20]]
""")
snippet("agents", """
import textwrap, string, pprint, difflib, calendar
t = string.Template("Hello $name, you owe $$${amt}")
pp = pprint.pformat({"b": [1]*3, "a": {"z": 1, "y": 2}}, width=30)
d = list(difflib.unified_diff(["a\\n", "b\\n"], ["a\\n", "c\\n"], "x", "y"))
result = [textwrap.fill("word " * 20, width=30), textwrap.dedent("  a\\n  b"), t.substitute(name="Bo", amt=5), pp, d,
          calendar.monthrange(2024, 2), difflib.SequenceMatcher(None, "abcd", "abed").ratio(), textwrap.shorten("hello world foo", 12)]
""")
snippet("agents", """
import csv, io
data = "name,age\\nalice,30\\nbob,25\\n"
rows = list(csv.DictReader(io.StringIO(data)))
out = io.StringIO()
w = csv.DictWriter(out, fieldnames=["name", "age"])
w.writeheader(); w.writerows(sorted(rows, key=lambda r: int(r["age"])))
w2 = io.StringIO(); csv.writer(w2).writerow(["a,b", 'q"'])
result = [rows, out.getvalue(), w2.getvalue()]
""")
snippet("agents", """
import random, hashlib, base64, struct, uuid, secrets, zlib, binascii
random.seed(42)
r = [random.randint(1, 100) for _ in range(3)] + [random.choice("abc")]
rng = random.Random(1); sample = rng.sample(range(10), 3)
h = hashlib.sha256(b"hello").hexdigest()[:16]
b = base64.b64encode(b"hi there").decode()
p = struct.pack("<IH", 1, 2)
u = uuid.uuid5(uuid.NAMESPACE_DNS, "example.com")
result = [r, sample, h, b, base64.b64decode(b), p.hex(), struct.unpack("<IH", p), str(u), len(secrets.token_hex(8)), zlib.crc32(b"abc"),
          hashlib.md5(b"x").hexdigest(), binascii.hexlify(b"\\x01")]
""")
snippet("agents", """
import math, statistics, fractions, cmath, itertools, operator
data = [2, 4, 4, 4, 5, 5, 7, 9]
result = [statistics.mean(data), statistics.median(data), statistics.stdev(data), statistics.mode(data), statistics.quantiles(data, n=4),
          str(fractions.Fraction(3, 4) + fractions.Fraction(1, 6)), math.isclose(0.1 + 0.2, 0.3), math.comb(10, 3), math.gcd(12, 18),
          abs(cmath.sqrt(-4)), list(itertools.accumulate([1, 2, 3], operator.mul)), [(k, len(list(g))) for k, g in itertools.groupby("aabbbc")],
          list(itertools.combinations("abc", 2)), list(itertools.pairwise([1, 2, 3])), list(itertools.islice(itertools.cycle("ab"), 5)),
          math.prod([1, 2, 3, 4]), math.dist((0, 0), (3, 4)), list(itertools.zip_longest("ab", "c", fillvalue="-"))]
""")
snippet("agents", """
from operator import attrgetter, itemgetter, methodcaller
class Emp:
    def __init__(self, n, a): self.name, self.age = n, a
    def __repr__(self): return f"Emp({self.name!r})"
es = [Emp("b", 3), Emp("a", 3), Emp("c", 1)]
rows = [{"k": 2}, {"k": 1}]
result = [repr(sorted(es, key=attrgetter("age", "name"))), sorted(rows, key=itemgetter("k")), list(map(methodcaller("upper"), ["a"])),
          max(es, key=lambda e: e.age).name, sorted(es, key=lambda e: (-e.age, e.name))[0].name]
""")
snippet("agents", """
import functools, time
def retry(times=3, exceptions=(Exception,)):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*a, **kw):
            for attempt in range(times):
                try: return fn(*a, **kw)
                except exceptions:
                    if attempt == times - 1: raise
        return wrapper
    return deco
def timed(fn):
    @functools.wraps(fn)
    def w(*a, **kw):
        t = time.time(); r = fn(*a, **kw); w.last = time.time() - t; return r
    return w
calls = []
@retry(times=3)
def flaky():
    calls.append(1)
    if len(calls) < 3: raise IOError("x")
    return "ok"
@timed
def work(n):
    '''Do work.'''
    return n * 2
result = [flaky(), len(calls), work(2), work.__name__, work.__doc__, work.last >= 0, flaky.__wrapped__.__name__]
""")
snippet("agents", """
x = 5; name = "Ann"; items = [1, 2, 3]
result = [f"{x=}", f"{name!r:>8}", f"{3.14159:.2f}", f"{1234567:,}", f"{0.25:.0%}", f"{255:#x}", f"{255:08b}", f"{'hi':*^8}",
          f"{items[-1]}", f"{ {'a': 1}['a'] }", "%s is %d years" % ("Bo", 3), "%(a)s" % {"a": 1}, "{:>6}|{:<4}|".format("r", "l"),
          "{0[0]} {1[k]}".format([9], {"k": 8}), format(1e6, ".2e"), str(1/3)[:6], f"{x!s:>{x}}"]
""")
snippet("agents", """
def make_counter():
    count = 0
    def inc():
        nonlocal count
        count += 1
        return count
    return inc
total = 0
def add(n):
    global total
    total += n
c = make_counter(); c(); c()
add(5); add(6)
if (n := len("hello")) > 3: big = n
sq = {k: v**2 for k, v in zip("abc", range(3))}
merged = {"a": 1} | {"b": 2}
first, *rest = [1, 2, 3]
result = [c(), total, big, sq, merged, rest, [i for i in range(10) if i % 3 == 0], sum(x for x in range(5)), list(zip([1,2], [3,4], strict=True))]
""")
snippet("agents", """
def handle(cmd):
    match cmd.split():
        case ["go", direction]: return f"going {direction}"
        case ["pick", "up", *items]: return f"picking {items}"
        case [("quit" | "exit")]: return "bye"
        case {"x": x}: return x
        case _: return "?"
def shape(v):
    match v:
        case {"type": "circle", "r": r}: return 3 * r * r
        case (a, b): return a * b
        case int() | float() as n if n > 0: return n
        case _: return None
result = [handle("go north"), handle("pick up a b"), handle("exit"), handle("dance"), shape({"type": "circle", "r": 2}), shape((2, 3)), shape(4.5), shape(-1)]
""")
snippet("agents", """
import sys, platform, os
result = [sys.version_info >= (3, 8), isinstance(sys.maxsize, int), sys.getsizeof([]) > 0, sys.getrecursionlimit() > 100, type(os.getcwd()).__name__, os.path.join("a", "b"),
          os.path.splitext("x.tar.gz"), os.path.basename("/a/b.txt"), os.sep, type(platform.python_version()).__name__, os.environ.get("NOPE", "dflt")]
""")
snippet("agents", """
print("to stdout")
import sys
print("to stderr", file=sys.stderr)
print("a", "b", sep="-", end="!\\n")
sys.stdout.write("raw\\n")
print(*range(3))
result = None
""")
snippet("agents", """
from abc import ABC, abstractmethod
class Shape(ABC):
    @abstractmethod
    def area(self): ...
    def describe(self): return f"{self.__class__.__name__} with area {self.area():.2f}"
class Circle(Shape):
    def __init__(self, r): self.r = r
    def area(self): return 3.14159 * self.r ** 2
try:
    Shape()
except TypeError as e:
    err = "abstract" in str(e)
result = [Circle(1).describe(), err, isinstance(Circle(1), Shape), issubclass(Circle, Shape)]
""")
snippet("agents", """
class Node:
    __slots__ = ("val", "next")
    def __init__(self, v, n=None): self.val, self.next = v, n
class LinkedList:
    def __init__(self): self.head = None; self._size = 0
    def push(self, v): self.head = Node(v, self.head); self._size += 1
    def __iter__(self):
        n = self.head
        while n: yield n.val; n = n.next
    def __len__(self): return self._size
    def reverse(self):
        prev, cur = None, self.head
        while cur: cur.next, prev, cur = prev, cur, cur.next
        self.head = prev
ll = LinkedList()
for i in range(4): ll.push(i)
ll.reverse()
result = [list(ll), len(ll)]
""")
snippet("agents", """
class Stack(list):
    def push(self, x): self.append(x)
    def peek(self): return self[-1]
class CaseDict(dict):
    def __setitem__(self, k, v): super().__setitem__(k.lower(), v)
    def __getitem__(self, k): return super().__getitem__(k.lower())
    def __missing__(self, k): return None
s_ = Stack(); s_.push(1); s_.push(2)
d = CaseDict(); d["A"] = 1
class MyErr(ValueError): pass
result = [s_.peek(), len(s_), d["a"], d["zz"] if False else d.get("b"), issubclass(MyErr, Exception), str(MyErr("m"))]
""")
snippet("agents", """
import copy
class Tree:
    def __init__(self, v, kids=()): self.v = v; self.kids = list(kids)
t = Tree(1, [Tree(2), Tree(3)])
t2 = copy.deepcopy(t); t2.kids[0].v = 99
t3 = copy.copy(t)
result = [t.kids[0].v, t2.kids[0].v, t3.kids is t.kids]
""")
snippet("agents", """
from typing import NamedTuple, Optional, Union, Any, Callable, Iterable, Dict
class Point(NamedTuple):
    x: float
    y: float = 0.0
    def norm(self) -> float: return (self.x ** 2 + self.y ** 2) ** 0.5
def apply(f: Callable[[int], int], xs: Iterable[int]) -> list[int]:
    return [f(x) for x in xs]
def maybe(x: Optional[int] = None) -> Union[int, str]:
    return x if x is not None else "none"
p = Point(3, 4)
result = [p.norm(), p._replace(x=0), Point._fields, apply(lambda v: v + 1, [1, 2]), maybe(), maybe(2), p.x, list(p)]
""")
snippet("agents", """
import array, itertools
a = array.array("i", [1, 2, 3]); a.append(4)
grid = [[0] * 3 for _ in range(3)]
grid[1][1] = 5
transposed = list(map(list, zip(*grid)))
flat = list(itertools.chain.from_iterable(grid))
result = [a.tolist(), a.itemsize, transposed, flat, sum(map(sum, grid)), [row[:] for row in grid][1]]
""")
snippet("agents", """
import time, datetime
start = time.time()
time.sleep(0.01)
now = datetime.datetime.now()
utc = datetime.datetime.now(datetime.timezone.utc)
result = [time.time() - start >= 0.01, now.year > 2000, utc.tzinfo is not None, datetime.date.today().isoformat()[:2], time.strftime("%Y", time.gmtime(0)), time.monotonic() > 0]
""")
snippet("agents", """
import sys
sys.setrecursionlimit(3000)
def depth(n): return 0 if n == 0 else 1 + depth(n - 1)
result = depth(2000)
""")
snippet("agents", """
class Matrix:
    def __init__(self, rows): self.rows = rows
    def __matmul__(self, o):
        return Matrix([[sum(a * b for a, b in zip(r, c)) for c in zip(*o.rows)] for r in self.rows])
    def __eq__(self, o): return self.rows == o.rows
    def __iter__(self): return iter(self.rows)
    def __str__(self): return "\\n".join(" ".join(map(str, r)) for r in self.rows)
I = Matrix([[1, 0], [0, 1]]); A = Matrix([[1, 2], [3, 4]])
result = [(A @ I) == A, str(A @ A), [list(r) for r in A]]
""")
snippet("agents", """
import itertools
def primes():
    yield 2
    found = [2]
    for n in itertools.count(3, 2):
        if all(n % p for p in found if p * p <= n):
            found.append(n); yield n
def chunks(xs, n):
    it = iter(xs)
    while (batch := list(itertools.islice(it, n))):
        yield batch
gen = (x * x for x in range(4))
result = [list(itertools.islice(primes(), 10)), list(chunks(range(7), 3)), list(gen), list(gen), next(iter([]), "empty"), list(reversed(range(3))), list(enumerate("ab", start=1))]
""")
snippet("agents", """
class Money:
    def __init__(self, cents): self.cents = cents
    @classmethod
    def from_str(cls, s): d, c = s.split("."); return cls(int(d) * 100 + int(c))
    @staticmethod
    def fmt(c): return f"${c // 100}.{c % 100:02d}"
    def __str__(self): return self.fmt(self.cents)
    def __repr__(self): return f"Money({self.cents})"
    def __lt__(self, o): return self.cents < o.cents
    def __radd__(self, o): return Money(o + self.cents) if isinstance(o, int) else NotImplemented
    def __add__(self, o): return Money(self.cents + (o.cents if isinstance(o, Money) else o))
result = [str(Money.from_str("3.05")), str(sum([Money(1), Money(2)])), repr(min(Money(5), Money(3))), Money.fmt(1234)]
""")
snippet("agents", """
class A:
    def hello(self): return ["A"]
class B(A):
    def hello(self): return ["B"] + super().hello()
class C(A):
    def hello(self): return ["C"] + super().hello()
class D(B, C):
    def hello(self): return ["D"] + super().hello()
result = [D().hello(), [k.__name__ for k in D.__mro__], D.mro()[1].__name__, type(D()).__name__, D.__name__, D().__class__.__name__]
""")
snippet("agents", """
import string
class Cipher:
    def __init__(self, shift): self.shift = shift
    def __call__(self, text):
        table = str.maketrans(string.ascii_lowercase, string.ascii_lowercase[self.shift:] + string.ascii_lowercase[:self.shift])
        return text.translate(table)
c = Cipher(3)
result = [c("hello"), callable(c), "Hello World".swapcase(), "a-b-c".rsplit("-", 1), "  x ".strip(), "abc".center(7, "."), "title case".title(),
          "x".zfill(3), "a\\tb".expandtabs(4), "ß".casefold(), "abc".removeprefix("a"), ",".join(map(str, [1, 2])), "AbC".isupper(), "12".isdigit(), "a b".partition(" ")]
""")
snippet("agents", """
vars_seen = {}
class Rec:
    def __init__(self): self.a = 1; self.b = [2]
r = Rec()
r.__dict__["c"] = 3
vars(r)["d"] = 4
result = [vars(r), sorted(k for k in dir(r) if not k.startswith("__")), r.__dict__ == vars(r), getattr(r, "a"), hasattr(r, "__init__"), type(r).__name__,
          isinstance(r, object), Rec.__name__, Rec.__qualname__, r.__class__ is Rec]
""")
snippet("agents", """
import io
buf = io.StringIO()
buf.write("line1\\nline2\\n")
buf.seek(0)
lines = [l.rstrip() for l in buf]
bb = io.BytesIO(b"abc"); bb.seek(1)
result = [lines, bb.read(), buf.getvalue().count("\\n")]
""")
snippet("agents", """
def fizzbuzz(n):
    return ["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i) for i in range(1, n + 1)]
def is_palindrome(s):
    s = "".join(ch.lower() for ch in s if ch.isalnum())
    return s == s[::-1]
def binary_search(xs, t):
    lo, hi = 0, len(xs) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if xs[mid] == t: return mid
        lo, hi = (mid + 1, hi) if xs[mid] < t else (lo, mid - 1)
    return -1
from functools import cmp_to_key
result = [fizzbuzz(15)[-1], is_palindrome("A man, a plan, a canal: Panama"), binary_search([1, 3, 5, 7], 5),
          sorted([3, 1, 2], key=cmp_to_key(lambda a, b: b - a)), divmod(17, 5), round(2.675, 2), pow(2, 10, 1000), int("ff", 16), bin(10), chr(65), ord("a")]
""")
snippet("agents", """
import json
class Serializable:
    def to_json(self): return json.dumps(self.__dict__, sort_keys=True)
    @classmethod
    def from_json(cls, s):
        obj = cls.__new__(cls); obj.__dict__.update(json.loads(s)); return obj
class User(Serializable):
    def __init__(self, name, age): self.name = name; self.age = age
u = User("a", 1)
u2 = User.from_json(u.to_json())
result = [u.to_json(), u2.name, type(u2).__name__]
""")
snippet("agents", """
from dataclasses import dataclass
from typing import ClassVar
import dataclasses
@dataclass
class Account:
    owner: str
    _balance: float = 0.0
    count: ClassVar[int] = 0
    def deposit(self, amt):
        self._balance += amt
        Account.count += 1
        return self
    @property
    def balance(self): return self._balance
@dataclass(slots=True)
class P:
    x: int
    y: int = 0
@dataclass(kw_only=True)
class K:
    a: int
    b: int = 2
a = Account("x").deposit(5).deposit(2)
result = [a.balance, Account.count, repr(a), dataclasses.astuple(P(1)), K(a=1).b, dataclasses.is_dataclass(a)]
""")
snippet("agents", """
class Seq:
    def __class_getitem__(cls, item): return f"Seq[{item.__name__}]"
class Ctx:
    def __init__(self): self.log = []
    def __getitem__(self, key):
        if isinstance(key, slice): return ("slice", key.start, key.stop, key.step)
        return ("idx", key)
    def __setitem__(self, k, v): self.log.append((k, v))
    def __delitem__(self, k): self.log.append(("del", k))
c = Ctx(); c[1] = 2; del c["x"]
result = [Seq[int], c[1:5:2], c[3], c.log, c[1, 2]]
""")
snippet("agents", """
import pandas as pd, numpy as np
df = pd.DataFrame({"city": ["a", "b", "a", "c", "b"], "sales": [10, 20, 30, 40, 50], "units": [1, 2, 3, 4, 5]})
g = df.groupby("city").agg(total=("sales", "sum"), avg_units=("units", "mean")).reset_index()
p = df.pivot_table(index="city", values="sales", aggfunc="sum")
df["share"] = df["sales"] / df["sales"].sum()
df["rank"] = df["sales"].rank(ascending=False).astype(int)
top = df.nlargest(2, "sales")
result = [g.to_dict("records"), p["sales"].to_dict(), round(df["share"].iloc[0], 3), top["city"].tolist(), df.describe().loc["mean", "sales"], df.shape]
""", DATA)
snippet("agents", """
import pandas as pd
a = pd.DataFrame({"id": [1, 2, 3], "name": ["x", "y", "z"]})
b = pd.DataFrame({"id": [1, 3, 4], "score": [9, 8, 7]})
m = a.merge(b, on="id", how="left")
c = pd.concat([a, a], ignore_index=True)
m["score"] = m["score"].fillna(0)
m["grade"] = m["score"].apply(lambda v: "A" if v > 8 else "B")
m["upper"] = m["name"].str.upper()
result = [m.to_dict("list"), len(c), m.isna().sum().sum(), m.dtypes.astype(str).to_dict()]
""", DATA)
snippet("agents", """
import pandas as pd, numpy as np
idx = pd.date_range("2024-01-01", periods=10, freq="D")
ts = pd.Series(np.arange(10.0), index=idx)
w = ts.resample("W").sum()
r = ts.rolling(3).mean()
df = pd.DataFrame({"date": ["2024-01-05", "2024-02-10"], "v": [1, 2]})
df["date"] = pd.to_datetime(df["date"])
df["month"] = df["date"].dt.month
result = [w.tolist(), r.dropna().round(2).tolist()[:3], df["month"].tolist(), str(ts.index[0].date()), ts.diff().iloc[1], ts.pct_change().iloc[2]]
""", DATA)
snippet("agents", """
import pandas as pd, io
csv = "a,b,c\\n1,2,x\\n3,,y\\n5,6,z\\n"
df = pd.read_csv(io.StringIO(csv))
df = df.dropna()
out = df.to_csv(index=False)
js = df.to_json(orient="records")
md = df.head().to_string()
result = [out, js, df.columns.tolist(), len(md) > 0, df.iloc[0].to_dict(), df.loc[df["a"] > 2, "c"].tolist()]
""", DATA)
snippet("agents", """
import numpy as np
rng = np.random.default_rng(0)
a = rng.normal(size=(3, 3))
A = np.array([[3.0, 1.0], [1.0, 2.0]]); b = np.array([9.0, 8.0])
x = np.linalg.solve(A, b)
vals, vecs = np.linalg.eig(A)
m = np.arange(12).reshape(3, 4)
result = [x.tolist(), sorted(np.round(vals, 4).tolist()), m.sum(axis=0).tolist(), m[:, 1].tolist(), (m > 5).sum().item(), np.where(m % 2 == 0, m, -1)[0].tolist(),
          a.shape, float(np.linalg.det(A)), np.linalg.inv(A).round(3).tolist(), np.mean(m), np.std([1, 2, 3]).round(4), np.percentile(m, 50), np.unique([1, 1, 2]).tolist(),
          np.cumsum([1, 2, 3]).tolist(), np.dot([1, 2], [3, 4]).item(), (np.ones(3) @ np.ones(3)).item(), np.linspace(0, 1, 5).tolist(), np.histogram([1, 2, 2, 3], bins=3)[0].tolist()]
""", DATA)
snippet("agents", """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
x = np.linspace(0, 2 * np.pi, 50)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3))
ax1.plot(x, np.sin(x), label="sin"); ax1.legend(); ax1.set_title("Sine")
ax2.bar(["a", "b"], [3, 5], color=["red", "blue"])
ax2.set_xlabel("k"); fig.tight_layout()
plt.savefig("plot.png", dpi=80)
plt.show()
result = len(fig.axes)
""", DATA)
snippet("agents", """
import matplotlib.pyplot as plt
import pandas as pd
df = pd.DataFrame({"x": range(5), "y": [1, 4, 9, 16, 25]})
ax = df.plot(x="x", y="y", kind="line", title="squares")
df.plot.scatter(x="x", y="y")
df["y"].hist(bins=3)
plt.close("all")
result = ax.get_title()
""", DATA)
snippet("agents", """
from scipy import stats, optimize, integrate, interpolate
import numpy as np
t, p = stats.ttest_ind([1, 2, 3, 4, 5], [2, 3, 4, 5, 9])
res = optimize.minimize(lambda v: (v[0] - 3) ** 2 + (v[1] + 1) ** 2, x0=[0, 0])
def model(x, a, b): return a * x + b
xs = np.array([0, 1, 2, 3.0]); ys = 2 * xs + 1
popt, _ = optimize.curve_fit(model, xs, ys)
val, err = integrate.quad(lambda x: x ** 2, 0, 1)
f = interpolate.interp1d([0, 1, 2], [0, 10, 20])
root = optimize.brentq(lambda x: x ** 2 - 2, 0, 2)
result = [round(float(t), 4), np.round(res.x, 3).tolist(), np.round(popt, 3).tolist(), round(val, 6), float(f(1.5)), round(root, 6), round(stats.norm.cdf(1.96), 4),
          stats.pearsonr([1, 2, 3], [2, 4, 7])[0].round(4)]
""", DATA)
snippet("agents", """
import sympy as sp
x, y = sp.symbols("x y")
expr = sp.expand((x + 1) ** 3)
sol = sp.solve(x ** 2 - 4, x)
d = sp.diff(sp.sin(x) * x, x)
i = sp.integrate(x ** 2, (x, 0, 3))
lim = sp.limit(sp.sin(x) / x, x, 0)
result = [str(expr), [int(v) for v in sol], str(d), int(i), int(lim), str(sp.simplify(sp.sin(x)**2 + sp.cos(x)**2)), sp.latex(x**2), str(sp.factor(x**2 - 1))]
""", DATA)
snippet("agents", """
import numpy as np
import pandas as pd
df = pd.DataFrame(np.arange(6).reshape(2, 3), columns=list("abc"))
df.loc[len(df)] = [7, 8, 9]
df.at[0, "a"] = 100
corr = df.corr().round(2)
melted = df.melt(value_vars=["a", "b"])
stacked = df.stack().sum()
result = [df.values.tolist(), corr.shape, len(melted), int(stacked), df.T.shape, df.apply(np.sum, axis=1).tolist(), df.to_dict(orient="index")[0]]
""", DATA)
snippet("agents", """
import pandas as pd
s = pd.Series(["apple pie", "Banana split", None, "cherry"])
result = [s.str.contains("an", na=False).tolist(), s.str.split().str[0].tolist(), s.str.len().fillna(-1).tolist(), s.dropna().str.title().tolist(),
          s.str.replace("a", "A", regex=False).fillna("").tolist(), s.isnull().sum().item()]
""", DATA)
snippet("agents", """
import json, statistics
from collections import defaultdict
records = [{"user": "a", "amount": 10.5, "tags": ["x"]}, {"user": "b", "amount": 3.0, "tags": []}, {"user": "a", "amount": 1.5, "tags": ["y", "x"]}]
by_user = defaultdict(float)
tag_count = defaultdict(int)
for r in records:
    by_user[r["user"]] += r["amount"]
    for t in r["tags"]:
        tag_count[t] += 1
summary = {"total": sum(r["amount"] for r in records), "mean": statistics.mean(r["amount"] for r in records), "by_user": dict(by_user), "tags": dict(sorted(tag_count.items()))}
print(json.dumps(summary, indent=2))
result = summary
""")
snippet("agents", """
from itertools import product, permutations
import math
def is_prime(n):
    if n < 2: return False
    for i in range(2, int(math.isqrt(n)) + 1):
        if n % i == 0: return False
    return True
def sieve(n):
    flags = [True] * (n + 1); flags[0] = flags[1] = False
    for i in range(2, int(n ** 0.5) + 1):
        if flags[i]:
            flags[i*i::i] = [False] * len(flags[i*i::i])
    return [i for i, f in enumerate(flags) if f]
def knapsack(items, cap):
    dp = [0] * (cap + 1)
    for w, v in items:
        for c in range(cap, w - 1, -1):
            dp[c] = max(dp[c], dp[c - w] + v)
    return dp[cap]
def lcs(a, b):
    dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            dp[i+1][j+1] = dp[i][j] + 1 if x == y else max(dp[i][j+1], dp[i+1][j])
    return dp[-1][-1]
result = [sum(1 for n in range(100) if is_prime(n)), sieve(30), knapsack([(1, 1), (3, 4), (4, 5), (5, 7)], 7), lcs("ABCBDAB", "BDCABA"), len(list(product("ab", repeat=3))), len(list(permutations(range(4))))]
""")
snippet("agents", """
from collections import deque
graph = {"A": ["B", "C"], "B": ["D"], "C": ["D", "E"], "D": ["F"], "E": ["F"], "F": []}
def bfs(start, goal):
    q = deque([[start]]); seen = {start}
    while q:
        path = q.popleft()
        if path[-1] == goal: return path
        for n in graph[path[-1]]:
            if n not in seen:
                seen.add(n); q.append(path + [n])
def dfs(node, seen=None):
    seen = seen if seen is not None else []
    seen.append(node)
    for n in graph[node]:
        if n not in seen: dfs(n, seen)
    return seen
import heapq
def dijkstra(edges, src):
    dist = {src: 0}; pq = [(0, src)]
    while pq:
        d, u = heapq.heappop(pq)
        if d > dist.get(u, float("inf")): continue
        for v, w in edges.get(u, []):
            if d + w < dist.get(v, float("inf")):
                dist[v] = d + w; heapq.heappush(pq, (d + w, v))
    return dist
result = [bfs("A", "F"), dfs("A"), dijkstra({"a": [("b", 1), ("c", 4)], "b": [("c", 2)]}, "a")]
""")
snippet("agents", """
class BankAccount:
    interest_rate = 0.02
    _next_id = 1
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.__balance = balance
        self.id = BankAccount._next_id
        BankAccount._next_id += 1
        self._history = []
    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("Deposit must be positive")
        self.__balance += amount
        self._history.append(("deposit", amount))
    @property
    def balance(self):
        return self.__balance
    def __str__(self):
        return f"Account({self.owner}, ${self.__balance:.2f})"
class Savings(BankAccount):
    def add_interest(self):
        self.deposit(self.balance * self.interest_rate)
a = Savings("Ann", 100); a.add_interest()
result = [str(a), a.id, a._history, a.balance]
""")
snippet("agents", """
import re
from collections import Counter
text = '''The quick brown fox. The lazy dog! Is the fox quick?'''
sentences = [s.strip() for s in re.split(r"[.!?]", text) if s.strip()]
words = re.findall(r"\\b[a-z]+\\b", text.lower())
freq = Counter(words)
longest = max(words, key=len)
caps = {w: w.capitalize() for w in set(words) if len(w) > 3}
result = [len(sentences), freq.most_common(3), longest, dict(sorted(caps.items())), " ".join(reversed(sentences[0].split()))]
""")
snippet("agents", """
import datetime as dt
from zoneinfo import ZoneInfo
now = dt.datetime(2024, 3, 10, 12, 0, tzinfo=ZoneInfo("America/New_York"))
utc = now.astimezone(dt.timezone.utc)
d = dt.date(2024, 2, 28) + dt.timedelta(days=2)
weeks = [(dt.date(2024, 1, 1) + dt.timedelta(weeks=i)).isocalendar()[1] for i in range(3)]
result = [utc.isoformat(), d.isoformat(), weeks, dt.datetime.fromisoformat("2024-05-01T10:00:00").weekday(), (dt.datetime(2024,1,2) - dt.datetime(2024,1,1)).total_seconds(),
          dt.datetime.fromtimestamp(0, dt.timezone.utc).year, now.strftime("%Y-%m-%d %H:%M %Z")]
""")
snippet("agents", """
from decimal import Decimal, ROUND_HALF_UP, getcontext
getcontext().prec = 10
prices = [Decimal("19.99"), Decimal("5.01"), Decimal("0.10")]
total = sum(prices, Decimal("0"))
tax = (total * Decimal("0.0825")).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
result = [str(total), str(tax), str(Decimal(1) / Decimal(3)), float(total), Decimal("1.10") == Decimal("1.1")]
""")
snippet("agents", """
import string, random
random.seed(7)
def password(n=12):
    chars = string.ascii_letters + string.digits + "!@#"
    return "".join(random.choice(chars) for _ in range(n))
def caesar(s, k):
    out = []
    for ch in s:
        if ch.isalpha():
            base = ord("A") if ch.isupper() else ord("a")
            out.append(chr((ord(ch) - base + k) % 26 + base))
        else:
            out.append(ch)
    return "".join(out)
deck = [r + s for r in "A23456789TJQK" for s in "SHDC"]
random.shuffle(deck)
result = [len(password()), caesar("Hello, World", 3), caesar(caesar("abc", 5), -5), len(deck), random.uniform(1, 2) < 2, random.choices([1, 2], weights=[1, 0], k=3)]
""")
snippet("agents", """
import asyncio
async def fetch(i):
    await asyncio.sleep(0.01)
    return i * 2
async def main():
    results = await asyncio.gather(*(fetch(i) for i in range(5)))
    q = asyncio.Queue()
    for i in range(3): await q.put(i)
    got = [await q.get() for _ in range(3)]
    try:
        await asyncio.wait_for(asyncio.sleep(1), timeout=0.01)
    except asyncio.TimeoutError:
        got.append("timeout")
    return results, got
result = asyncio.run(main())
""")
snippet("agents", """
from typing import Iterator, Generator
import itertools
def read_chunks(data: str, size: int) -> Iterator[str]:
    for i in range(0, len(data), size):
        yield data[i:i + size]
def running_avg() -> Generator[float, float, None]:
    total = n = 0; avg = 0.0
    while True:
        x = yield avg
        total += x; n += 1; avg = total / n
g = running_avg(); next(g)
avgs = [g.send(v) for v in [10, 20, 30]]
def flatten(xs):
    for x in xs:
        if isinstance(x, (list, tuple)): yield from flatten(x)
        else: yield x
result = [list(read_chunks("abcdefg", 3)), avgs, list(flatten([1, [2, [3, (4,)]]])), list(itertools.takewhile(lambda v: v < 3, [1, 2, 3, 1])), list(itertools.starmap(pow, [(2, 3)]))]
""")
snippet("agents", """
def test_add():
    assert 1 + 1 == 2
def test_str():
    assert "a".upper() == "A", "upper failed"
tests = [v for k, v in list(globals().items()) if k.startswith("test_") and callable(v)]
passed = 0
for t in tests:
    try:
        t(); passed += 1
    except AssertionError as e:
        print("FAIL", t.__name__, e)
result = [passed, len(tests)]
""")
snippet("agents", """
from html import escape, unescape
from urllib.parse import urlparse, urlencode, parse_qs, quote, urljoin
import xml.etree.ElementTree as ET
u = urlparse("https://example.com:8080/a/b?x=1&y=2#frag")
root = ET.fromstring("<root><item id='1'>A</item><item id='2'>B</item></root>")
items = [(i.get("id"), i.text) for i in root.findall("item")]
new = ET.Element("data"); ET.SubElement(new, "v").text = "3"
result = [u.hostname, u.port, parse_qs(u.query), urlencode({"q": "a b", "n": 1}), quote("a/b c"), urljoin("https://x.com/a/", "b"), escape("<a&b>"), unescape("&lt;"), items,
          ET.tostring(new, encoding="unicode")]
""")
snippet("agents", """
import hashlib, hmac, json, base64, time
def sign(payload, key):
    body = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).rstrip(b"=")
    sig = base64.urlsafe_b64encode(hmac.new(key, body, hashlib.sha256).digest()).rstrip(b"=")
    return (body + b"." + sig).decode()
tok = sign({"sub": 1}, b"k")
body, sig = tok.split(".")
result = [len(tok.split(".")), hmac.compare_digest(sig, sign({"sub": 1}, b"k").split(".")[1]), json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))]
""")
snippet("agents", """
class Matrix:
    def __init__(self, data):
        self.data = [list(r) for r in data]
        self.rows, self.cols = len(data), len(data[0])
    @classmethod
    def identity(cls, n):
        return cls([[1 if i == j else 0 for j in range(n)] for i in range(n)])
    def __mul__(self, other):
        if isinstance(other, (int, float)):
            return Matrix([[v * other for v in r] for r in self.data])
        return Matrix([[sum(a * b for a, b in zip(r, c)) for c in zip(*other.data)] for r in self.data])
    def __eq__(self, other):
        return self.data == other.data
    def __repr__(self):
        return f"{self.__class__.__name__}({self.data})"
    def transpose(self):
        return Matrix(list(zip(*self.data)))
m = Matrix([[1, 2], [3, 4]])
result = [repr(m * Matrix.identity(2)), repr(m * 2), repr(m.transpose()), m == Matrix([[1, 2], [3, 4]])]
""")
snippet("agents", """
import logging, sys
logger = logging.getLogger(__name__)
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
logger.addHandler(handler)
logger.setLevel(logging.DEBUG)
logger.debug("debug %d", 1)
logger.info("info")
result = logger.name
""")
snippet("agents", """
import warnings
def old():
    warnings.warn("old is deprecated", DeprecationWarning, stacklevel=2)
    return 1
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    old()
result = [len(w), str(w[0].message), w[0].category.__name__]
""")
snippet("agents", """
import sys
data = "3\\n1 2 3"
lines = data.splitlines()
n = int(lines[0]); nums = list(map(int, lines[1].split()))
def main():
    print(sum(nums))
    return 0
if __name__ == "__main__":
    main()
result = n
""")
snippet("agents", """
import os
os.makedirs("out", exist_ok=True)
with open("out/data.txt", "w") as f:
    f.write("hello\\nworld\\n")
with open("out/data.txt") as f:
    lines = f.readlines()
import json
with open("out/cfg.json", "w") as f:
    json.dump({"a": 1}, f)
with open("out/cfg.json") as f:
    cfg = json.load(f)
result = [lines, cfg, sorted(n for n in os.listdir("out") if n in ("data.txt", "cfg.json")), os.path.exists("out/data.txt"), os.path.getsize("out/data.txt")]
""", FILES)
snippet("agents", """
import csv
rows = [["name", "score"], ["a", 1], ["b", 2]]
with open("scores.csv", "w", newline="") as f:
    csv.writer(f).writerows(rows)
with open("scores.csv") as f:
    back = list(csv.DictReader(f))
result = back
""", FILES)
snippet("agents", """
import pandas as pd
df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
df.to_csv("out.csv", index=False)
back = pd.read_csv("out.csv")
df.to_json("out.json")
result = [back.to_dict("list"), pd.read_json("out.json").shape]
""", DATA)

# ---------------------------------------------------------------- small modules agents reach for
snippet("modules", """
import ast
raw = "{'name': 'widget', 'sizes': [1, 2, 3], 'dims': (4.5, -2), 'tags': {'a'}, 'ok': True, 'note': None}"
config = ast.literal_eval(raw)
rows = [ast.literal_eval(line) for line in ["[1, 2]", "(3, 'x')", "-7", "b'raw'"]]
try:
    ast.literal_eval("__import__('os').getcwd()")
    unsafe = "evaluated"
except ValueError:
    unsafe = "refused"
result = [config["sizes"], sorted(config), rows, unsafe]
""")

snippet("modules", """
import shlex
command = 'grep -n "hello world" --include=*.py src/'
parts = shlex.split(command)
quoted = [shlex.quote(p) for p in ["plain", "two words", "it's"]]
result = [parts, quoted, shlex.join(["echo", "a b", "$HOME"]), shlex.split("a # comment", comments=True)]
""")

snippet("modules", """
import codecs
secret = codecs.encode("Hello, World!", "rot13")
hexed = codecs.encode(b"\\x00\\xffsandbox", "hex")
packed = codecs.encode(b"abc" * 50, "zlib")
result = [secret, codecs.decode(secret, "rot_13"), hexed, codecs.decode(hexed, "hex"),
          len(codecs.decode(packed, "zlib")), codecs.decode(codecs.encode(b"hi", "base64"), "base64"),
          codecs.BOM_UTF8 + "x".encode(), codecs.decode(b"caf\\xc3\\xa9", "utf-8")]
""")

snippet("modules", """
import mimetypes
names = ["report.pdf", "photo.JPG", "data.csv", "archive.tar.gz", "page.html", "unknown.zzz"]
result = [(n, mimetypes.guess_type(n)) for n in names] + [mimetypes.guess_extension("application/json")]
""")

snippet("modules", """
import errno
from http import HTTPStatus
def describe(code):
    status = HTTPStatus(code)
    return f"{status.value} {status.phrase}" + (" (retry)" if status in (HTTPStatus.TOO_MANY_REQUESTS,
                                                                        HTTPStatus.SERVICE_UNAVAILABLE) else "")
result = [describe(c) for c in (200, 404, 429, 503)] + [errno.ENOENT, errno.errorcode[errno.EACCES]]
""")


snippet("modules", """
import gc
class Node:
    def __init__(self):
        self.other = None
a, b = Node(), Node()
a.other, b.other = b, a
del a, b
freed = gc.collect()
result = freed >= 2
""")


# ---------------------------------------------------------------- from __future__ import annotations
snippet("future_annotations", """
from __future__ import annotations
from dataclasses import dataclass, field
from typing import ClassVar, Optional

@dataclass
class Task:
    title: str
    priority: int = 3
    tags: list[str] = field(default_factory=list)
    parent: Optional[Task] = None
    created: ClassVar[int] = 0

    def add_tag(self, tag: str) -> Task:
        self.tags.append(tag)
        return self

root = Task("plan")
child = Task("write", priority=1, parent=root).add_tag("urgent")
result = [child.parent.title, child.tags, Task.created, sorted([child, root], key=lambda t: t.priority)[0].title]
""")

snippet("future_annotations", """
from __future__ import annotations
import dataclasses
from typing import NamedTuple, Protocol

class Shape(Protocol):
    def area(self) -> float: ...

class Rect(NamedTuple):
    w: float
    h: float
    def area(self) -> float:
        return self.w * self.h

@dataclasses.dataclass(frozen=True, slots=True)
class Circle:
    r: float
    def area(self) -> float:
        return 3.14159 * self.r ** 2

def total_area(shapes: list[Shape]) -> dict[str, float]:
    return {type(s).__name__: round(s.area(), 2) for s in shapes}

result = [total_area([Rect(2, 3), Circle(1.0)]), [f.type for f in dataclasses.fields(Circle)]]
""")


snippet("modules", """
import functools
import inspect

def validate_types(fn):
    sig = inspect.signature(fn)
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            expected = sig.parameters[name].annotation
            if expected is not inspect.Parameter.empty and not isinstance(value, expected):
                raise TypeError(f"{name} must be {expected.__name__}, got {type(value).__name__}")
        return fn(*args, **kwargs)
    return wrapper

@validate_types
def scale(values: list, factor: float = 2.0) -> list:
    \"\"\"Multiply every value.\"\"\"
    return [v * factor for v in values]

errors = []
try:
    scale("abc")
except TypeError as e:
    errors.append(str(e))
result = [scale([1, 2]), errors, str(inspect.signature(scale)), inspect.getdoc(scale),
          inspect.iscoroutinefunction(scale)]
""")


snippet("modules", """
import enum

class Planet(enum.Enum):
    MERCURY = (3.303e23, 2.4397e6)
    EARTH = (5.976e24, 6.37814e6)

    def __init__(self, mass, radius):
        self.mass = mass
        self.radius = radius

    @property
    def surface_gravity(self):
        return 6.673e-11 * self.mass / (self.radius * self.radius)

    def __str__(self):
        return self.name.title()

result = {str(p): round(p.surface_gravity, 2) for p in Planet}
""")


# ---------------------------------------------------------------- pandas expression strings
snippet("pandas_query", """
import pandas as pd
orders = pd.DataFrame({
    "customer": ["ann", "bob", "cid", "dee", "eve"],
    "region": ["north", "south", "north", "east", "south"],
    "amount": [120.0, 75.5, 310.0, 42.0, 199.9],
})
min_amount = 100
regions = ["north", "south"]
big = orders.query("amount >= @min_amount and region in @regions")
result = big.sort_values("amount", ascending=False)["customer"].tolist()
""", DATA)

snippet("pandas_query", """
import pandas as pd
df = pd.DataFrame({"unit price": [2.5, 4.0, 10.0], "qty": [4, 0, 3]})
df = df.eval("revenue = `unit price` * qty")
in_stock = df.query("qty > 0 & revenue > 5")
result = {"rows": len(in_stock), "total": float(in_stock["revenue"].sum())}
""", DATA)

snippet("pandas_query", """
import pandas as pd
import numpy as np
def summarize(frame, threshold):
    hot = frame.query("temp > @threshold")
    return {"days": int(len(hot)), "mean": round(float(hot["temp"].mean()), 2)}
temps = pd.DataFrame({"day": pd.date_range("2024-07-01", periods=6), "temp": [28.0, 31.5, 33.0, 29.9, 35.2, 30.1]})
spread = pd.eval("35.2 - 28.0")
result = [summarize(temps, 30), round(float(spread), 1), temps.eval("temp * 9 / 5 + 32").round(1).tolist()[:2]]
""", DATA)


snippet("sympy_lambdify", """
import numpy as np
import sympy as sp
t = sp.symbols("t")
position = 5 * t**2 - 3 * t + 2
velocity = sp.diff(position, t)
v = sp.lambdify(t, velocity, "numpy")
times = np.linspace(0, 2, 5)
result = {"velocity": str(velocity), "samples": v(times).round(2).tolist(),
          "stops_at": [float(s) for s in sp.solve(velocity, t)]}
""", DATA)


snippet("sympy_text", """
import sympy as sp
formulas = {"area": "pi*r**2", "growth": "P*exp(k*t)", "ratio": "(a + b)/(a - b)"}
parsed = {name: sp.sympify(text) for name, text in formulas.items()}
r, k, t = sp.symbols("r k t")
result = {"dA/dr": str(sp.diff(parsed["area"], r)), "dP/dt": str(sp.diff(parsed["growth"], t)),
          "ratio at a=3, b=1": str(parsed["ratio"].subs({"a": 3, "b": 1})),
          "roots": [str(s) for s in sp.solve(sp.sympify("x**2 - 5*x + 6"), sp.Symbol("x"))]}
""", DATA)


# ---------------------------------------------------------------- known gaps
# Snippets agents write that the sandbox does not run yet.
# Not asserted by the test; bench/run.py counts them, so the pass rate it reports is honest.
GAPS: list[dict] = []


def gap(code: str) -> None:
    GAPS.append({"id": f"gap-{len(GAPS) + 1:03d}", "family": "gap", "profile": BASIC, "code": code.strip("\n")})


# Class patterns with keywords: the interpreter reads the attributes itself; the pattern
# matches through a class whose isinstance() reads them through the guards first.
snippet("syntax", """
from dataclasses import dataclass
@dataclass
class Point:
    x: int
    y: int
def where(p):
    match p:
        case Point(x=0, y=0):
            return "origin"
        case Point(x=0):
            return "on the y axis"
        case _:
            return "elsewhere"
result = [where(Point(0, 0)), where(Point(0, 5)), where(Point(1, 1))]
""")
# Positional class patterns: a class of the snippet's with __match_args__, the built-ins' own.
snippet("syntax", """
class Vec:
    __match_args__ = ("x", "y")
    def __init__(self, x, y):
        self.x, self.y = x, y
def describe(v):
    match v:
        case Vec(0, 0):
            return "zero"
        case Vec(x, 0):
            return f"on the x axis at {x}"
        case int(n) | float(n):
            return f"scalar {n}"
        case str(name):
            return name.upper()
        case _:
            return "vector"
result = [describe(Vec(0, 0)), describe(Vec(3, 0)), describe(Vec(1, 1)), describe(2), describe("ab")]
""")
# functools.singledispatchmethod (its register reads annotations as singledispatch's does)
snippet("modules", """
from functools import singledispatchmethod
class Formatter:
    @singledispatchmethod
    def render(self, value):
        return str(value)
    @render.register
    def _(self, value: float):
        return f"{value:.2f}"
    @render.register(list)
    def _(self, value):
        return ", ".join(self.render(v) for v in value)
result = Formatter().render([1, 2.5, "x"])
""")
# A decorator's wrapper and the function it wraps (__wrapped__, on the snippet's own functions)
snippet("dunders", """
import functools
def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return ("logged", fn(*args))
    return wrapper
@logged
def add(a, b):
    return a + b
result = [add(1, 2), add.__wrapped__(1, 2), add.__name__]
""")
# sys.setrecursionlimit: in the snippet's frames, up to module_subsets.MAX_SNIPPET_RECURSION
snippet("recursion", """
import sys
sys.setrecursionlimit(10000)
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
result = depth(3000)
""")
# globals(): a copy of the snippet's names that assigns what is written into it
snippet("introspection", """
config = {"debug": True, "level": 3}
globals().update(config)
if "cache" not in globals():
    cache = {}
cache["k"] = globals()["level"] * 2
result = [debug, level, cache, "config" in globals()]
""")
# __annotations__ of the snippet's own function and class (a copy)
snippet("introspection", """
from typing import Optional
def greet(name: str, times: Optional[int] = None) -> str:
    return name * (times or 1)
class Config:
    host: str = "localhost"
    port: int = 8080
result = [sorted(greet.__annotations__), {k: v.__name__ for k, v in Config.__annotations__.items()}]
""")


# timing a function with timeit
snippet("modules", """
import timeit
def build():
    return [i * i for i in range(1000)]
elapsed = timeit.timeit(build, number=20)
runs = timeit.repeat(lambda: sorted(range(100), reverse=True), repeat=3, number=10)
result = [elapsed > 0, len(runs), all(r > 0 for r in runs)]
""")


# enum's hooks in an Enum class body
snippet("private", """
from enum import Enum, auto
class Status(Enum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str):
            for member in cls:
                if member.value == value.strip().lower():
                    return member
        return None
class Level(Enum):
    def _generate_next_value_(name, start, count, last_values):
        return name.lower()
    LOW = auto()
    HIGH = auto()
result = [Status(" Active ").name, Status("INACTIVE").value, [level.value for level in Level]]
""")


# a special method given as a lambda in the class body
snippet("dunders", """
class Money:
    def __init__(self, cents):
        self.cents = int(cents)
    def __add__(self, other):
        return Money(self.cents + other.cents)
    __radd__ = lambda self, other: self if other == 0 else self + other
    __repr__ = lambda self: f"Money({self.cents})"
    __eq__ = lambda self, other: isinstance(other, Money) and other.cents == self.cents
    __hash__ = lambda self: hash(self.cents)
total = sum([Money(150), Money(225)])
result = [repr(total), len({Money(1), Money(1)}), total == Money(375)]
""")


# sqlite3 (a subset): a table in memory, rows by name, an aggregate
snippet("modules", """
import sqlite3
conn = sqlite3.connect(":memory:")
cur = conn.cursor()
cur.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, amount REAL)")
cur.executemany("INSERT INTO orders (customer, amount) VALUES (?, ?)",
                [("alice", 30.0), ("bob", 12.5), ("alice", 7.5), ("carol", 99.0)])
conn.commit()
conn.row_factory = sqlite3.Row
rows = conn.execute(
    "SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer ORDER BY total DESC"
).fetchall()
result = [dict(row) for row in rows] + [cur.lastrowid, [d[0] for d in cur.description or []]]
conn.close()
""")
# sqlite3 with a file in the current directory, a context manager and a Python function in SQL
snippet("files", """
import sqlite3
def init_db(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS notes (title TEXT UNIQUE, body TEXT)")
    return conn
with init_db("notes.db") as db:
    db.execute("INSERT OR REPLACE INTO notes VALUES (?, ?)", ("todo", "buy milk"))
    db.execute("INSERT OR REPLACE INTO notes VALUES (:title, :body)", {"title": "idea", "body": "a sandbox"})
db.create_function("shout", 1, lambda text: text.upper() + "!")
try:
    db.execute("INSERT INTO notes VALUES ('todo', 'again')")
    error = None
except sqlite3.IntegrityError as exc:
    error = str(exc)
result = [db.execute("SELECT title, shout(body) FROM notes ORDER BY title").fetchall(), error,
          db.execute("PRAGMA table_info(notes)").fetchall()[0][1]]
db.close()
""")
# pandas to and from SQL
snippet("pandas", """
import sqlite3
import pandas as pd
conn = sqlite3.connect(":memory:")
sales = pd.DataFrame({"region": ["north", "south", "north", "east"], "units": [10, 4, 6, 8]})
sales.to_sql("sales", conn, index=False)
summary = pd.read_sql_query("SELECT region, SUM(units) AS units FROM sales GROUP BY region ORDER BY units DESC", conn)
result = summary.to_dict("records")
""", DATA)


# ---------------------------------------------------------------- code as data
snippet("ast", '''
import ast
source = """
import json, os.path as osp
from collections import Counter
def load(path, *, strict=False):
    'Read a JSON file.'
    with open(path) as f:
        return json.load(f)
class Store:
    def get(self, key):
        return load(key)
"""
tree = ast.parse(source)
functions = [(n.name, [a.arg for a in n.args.args + n.args.kwonlyargs]) for n in ast.walk(tree)
             if isinstance(n, ast.FunctionDef)]
modules = sorted({a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} |
                 {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)})
class Calls(ast.NodeVisitor):
    def __init__(self):
        self.names = []
    def visit_Call(self, node):
        match node.func:
            case ast.Name(id=name) | ast.Attribute(attr=name):
                self.names.append(name)
        self.generic_visit(node)
calls = Calls()
calls.visit(tree)
result = [functions, modules, calls.names, ast.get_docstring(tree.body[2])]
''')
snippet("ast", """
import ast
class Doubler(ast.NodeTransformer):
    def visit_Constant(self, node):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Constant(value=node.value * 2), node)
        return node
    def visit_Name(self, node):
        node.id = node.id.upper()
        return node
tree = ast.fix_missing_locations(Doubler().visit(ast.parse("rate = base * 1.5 + 3")))
result = [ast.unparse(tree), ast.dump(ast.parse("x", mode="eval"))]
""")
snippet("match", """
from enum import Enum
class Status(Enum):
    ACTIVE = "active"
    PAUSED = "paused"
    DONE = "done"
def describe(task):
    match task:
        case {"status": Status.DONE, "name": name}:
            return f"{name} is finished"
        case {"status": Status.ACTIVE | Status.PAUSED as s, "name": name}:
            return f"{name} is {s.value}"
        case _:
            return "unknown"
result = [describe({"status": Status.DONE, "name": "a"}), describe({"status": Status.PAUSED, "name": "b"}),
          describe({})]
""")
snippet("functools", """
from __future__ import annotations
import functools
from dataclasses import dataclass
@dataclass
class Circle:
    r: float
@dataclass
class Rect:
    w: float
    h: float
@functools.singledispatch
def area(shape) -> float:
    raise TypeError(f"unsupported shape: {type(shape).__name__}")
@area.register
def _(shape: Circle) -> float:
    return round(3.14159 * shape.r ** 2, 2)
@area.register
def _(shape: Rect) -> float:
    return shape.w * shape.h
result = [area(Circle(1)), area(Rect(2, 3))]
""")
snippet("unittest", """
import io
import unittest
def slugify(text):
    return "-".join(text.lower().split())
class TestSlugify(unittest.TestCase):
    def setUp(self):
        self._cases = {"Hello World": "hello-world", "  a  b ": "a-b"}
    def test_cases(self):
        for text, expected in self._cases.items():
            with self.subTest(text=text):
                self.assertEqual(slugify(text), expected)
    def test_type(self):
        with self.assertRaises(AttributeError):
            slugify(None)
stream = io.StringIO()
outcome = unittest.TextTestRunner(stream=stream, verbosity=2).run(
    unittest.TestLoader().loadTestsFromTestCase(TestSlugify))
result = [outcome.testsRun, outcome.wasSuccessful(), stream.getvalue().count(" ... ok")]
""")
snippet("unittest", """
import unittest
class Stack:
    def __init__(self):
        self._items = []
    def push(self, x):
        self._items.append(x)
    def pop(self):
        if not self._items:
            raise IndexError("pop from empty stack")
        return self._items.pop()
class TestStack(unittest.TestCase):
    def setUp(self):
        self.stack = Stack()
    def test_push_pop(self):
        self.stack.push(1)
        self.assertEqual(self.stack.pop(), 1)
    def test_empty(self):
        self.assertRaises(IndexError, self.stack.pop)
    def test_broken(self):
        self.assertEqual(Stack().pop(), None)
outcome = unittest.TestResult()
unittest.TestLoader().loadTestsFromTestCase(TestStack).run(outcome)
result = [outcome.testsRun, len(outcome.errors), outcome.errors[0][0].id().split(".")[-1],
          outcome.errors[0][1].splitlines()[-1]]
""")
snippet("typing", """
from typing import TypedDict, NotRequired
class Movie(TypedDict):
    title: str
    year: NotRequired[int]
def missing_keys(d, kind):
    return sorted(k for k in kind.__required_keys__ if k not in d)
result = [missing_keys({}, Movie), missing_keys({"title": "Up"}, Movie), sorted(Movie.__optional_keys__),
          Movie.__total__]
""", since=(3, 11))

# ---------------------------------------------------------------- version checks, own dunders, hints, tracebacks
snippet("everyday", """
import os, json
result = [hasattr(os, "no_such_function"), getattr(os, "no_such_function", "fallback"),
          getattr(json, "no_such_name", None), hasattr(json, "dumps")]
""")
snippet("everyday", """
import numpy as np, pandas as pd
trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")
result = [float(trapezoid([1.0, 2.0, 3.0])), hasattr(np, "trapz"), hasattr(pd, "no_such_name"),
          getattr(pd, "no_such_name", 0)]
""", DATA)
snippet("everyday", """
import scipy
result = [hasattr(scipy, "no_such_name"), getattr(scipy, "no_such_name", 0)]
""", DATA)
snippet("everyday", """
import matplotlib
result = [hasattr(matplotlib, "no_such_name"), getattr(matplotlib, "no_such_name", 0)]
""", DATA)


snippet("everyday", """
import sys
def validate(rows):
    problems = [ValueError(f"row {i}: negative") for i, r in enumerate(rows) if r < 0]
    if problems:
        raise ExceptionGroup("validation failed", problems)
try:
    validate([1, -2, 3, -4])
except ExceptionGroup as group:
    negative, rest = group.split(ValueError)
    result = [str(group), [str(e) for e in negative.exceptions], rest, sys.getdefaultencoding()]
""", since=(3, 11))


snippet("everyday", """
from enum import Enum
from typing import Annotated
class Vector:
    "A 2-D vector."
    __slots__ = ("x", "y")
    def __init__(self, x=0.0, y=0.0):
        self.x, self.y = x, y
def fetch(url, retries=3, *, timeout=10.0):
    return url
class Status(Enum):
    OK = "ok"
    FAILED = "failed"
Percent = Annotated[float, "0..100"]
def describe(cls):
    return {"name": cls.__name__, "qualname": cls.__qualname__, "doc": cls.__doc__}
result = [Vector.__slots__, fetch.__defaults__, fetch.__kwdefaults__, list(Status.__members__),
          Percent.__metadata__, describe(Vector)]
""")


snippet("everyday", """
import functools
def auto_repr(cls):
    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"
    cls.__repr__ = __repr__
    cls.__eq__ = lambda self, other: type(other) is type(self) and vars(other) == vars(self)
    cls.__hash__ = lambda self: hash(tuple(sorted(vars(self).items())))
    return cls
def comparable_by(key):
    def decorate(cls):
        for name, op in (("__lt__", lambda a, b: a < b), ("__gt__", lambda a, b: a > b)):
            setattr(cls, name, lambda self, other, op=op: op(getattr(self, key), getattr(other, key)))
        return cls
    return decorate
@comparable_by("age")
@auto_repr
class Person:
    def __init__(self, name, age):
        self.name, self.age = name, age
people = [Person("ada", 36), Person("alan", 41), Person("ada", 36)]
result = [repr(people[0]), people[0] == people[2], len(set(people)), sorted(people)[0].name,
          people[1] > people[0]]
""")


snippet("everyday", """
import traceback
def load(record):
    return record["id"]
def load_all(records):
    return [load(r) for r in records]
try:
    load_all([{"id": 1}, {}])
except KeyError as exc:
    frames = traceback.extract_tb(exc.__traceback__)
    tb = exc.__traceback__
    depth = 1
    while tb.tb_next is not None:
        tb, depth = tb.tb_next, depth + 1
    result = [[(f.name, f.lineno) for f in frames], [name for _, _, name, _ in frames], tb.tb_lineno, depth,
              len(traceback.format_tb(exc.__traceback__))]
""")


snippet("everyday", """
from __future__ import annotations
import typing
from dataclasses import dataclass, fields
from typing import Optional
@dataclass
class Address:
    city: str
    zip_code: Optional[str] = None
@dataclass
class User:
    name: str
    age: int
    address: Address | None = None
    tags: list[str] | None = None
def validate(obj):
    hints = typing.get_type_hints(type(obj))
    problems = []
    for f in fields(obj):
        expected = typing.get_origin(hints[f.name]) or hints[f.name]
        value = getattr(obj, f.name)
        if expected is not typing.Union and expected is not type(None) and isinstance(expected, type) \\
                and not isinstance(value, expected):
            problems.append(f"{f.name}: expected {expected.__name__}, got {type(value).__name__}")
    return problems
result = [validate(User("ada", "36")), sorted(typing.get_type_hints(User)), typing.get_type_hints(Address)["city"] is str]
""")
snippet("everyday", """
import typing
def route(path: str, handler: "typing.Callable[[dict], str]", methods: "list[str]" = None) -> "dict":
    return {}
result = {name: repr(hint) for name, hint in typing.get_type_hints(route).items()}
""")


snippet("everyday", """
import configparser, gzip, io, logging, sys
config = configparser.ConfigParser()
config.read_string("[server]\\nhost = localhost\\nport = 8080\\n")
config.read_file(io.StringIO("[client]\\nretries = 3\\n"))
config["client"]["timeout"] = "2.5"
written = io.StringIO()
config.write(written)
packed = io.BytesIO()
with gzip.GzipFile(fileobj=packed, mode="wb") as stream:
    stream.write(written.getvalue().encode())
with gzip.GzipFile(fileobj=io.BytesIO(packed.getvalue())) as stream:
    lines = [line.decode().strip() for line in stream]
service = logging.getLogger("inventory_service")
child = logging.getLogger("inventory_service.db")
result = [config.sections(), config.getint("server", "port"), config.getfloat("client", "timeout"), lines[:3],
          child.parent.name, logging.getLogger("inventory_report.db").parent.name,
          repr(child).split(" (")[0], sys.getdefaultencoding()]
""")
snippet("everyday", """
import os
os.makedirs("scan_me/raw", exist_ok=True)
for name in ("a.csv", "b.csv", "notes.txt"):
    with open(os.path.join("scan_me", name), "w") as f:
        f.write(name)
with os.scandir("scan_me") as entries:
    listing = sorted((e.name, e.is_file(), e.is_dir(), e.path) for e in entries)
csv_sizes = {e.name: e.stat().st_size for e in os.scandir("scan_me") if e.name.endswith(".csv")}
try:
    open("scan_me/missing.csv")
except FileNotFoundError as exc:
    missing = [exc.filename, str(exc), exc.errno]
result = [listing, csv_sizes, missing]
""")
snippet("everyday", """
import logging
logging.basicConfig(filename="run.log", level=logging.INFO, format="%(levelname)s:%(name)s:%(message)s", force=True)
logging.info("started")
audit = logging.getLogger("audit")
handler = logging.FileHandler("audit.log", mode="w", encoding="utf-8")
handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
audit.addHandler(handler)
audit.warning("user %s logged in", "ada")
handler.close()
audit.removeHandler(handler)
with open("run.log") as f:
    run_log = f.read().splitlines()
with open("audit.log") as f:
    audit_log = f.read().splitlines()
result = [run_log, audit_log]
""", FILES)


snippet("everyday", """
def load(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError as exc:
        return f"missing: {exc.filename} ({exc.strerror})"
result = [load("config/settings.json"), load("nothing.txt")]
""")


# ---------------------------------------------------------------- refused by policy
# What agents also write that the sandbox refuses on purpose: execute_code and
# validate_code must both refuse each one (tests/compat/test_agreement.py), and the
# refusal must say what to do instead.
REFUSED = [s.strip("\n") for s in (
    "import subprocess\nsubprocess.run(['ls', '-l'])",
    "import os\nos.system('ls')",
    "import os\npid = os.fork()",
    "import sys\nsys.settrace(None)",
    "total = eval('1 + 2')",
    "exec('y = 2')",
    "print(sorted(locals()))",
    "code = compile('1 + 1', '<x>', 'eval')",
    "class P:\n    pass\nP().__class__ = int",
    "import ctypes\nctypes.CDLL(None)",
    "import socket\ns = socket.socket()",
    "import pickle\ndata = pickle.dumps([1])",
    "import threading\nthreading.Thread(target=print).start()",
    "import importlib\nos = importlib.import_module('os')",
    "mod = __import__('os')",
    "def f():\n    pass\nresult = f.__globals__",
    "import inspect\nframes = inspect.stack()",
    "import typing\nref = typing.ForwardRef('int')",
    "import asyncio\nloop = asyncio.get_event_loop()",
    "import logging.handlers\nlogging.handlers.RotatingFileHandler('app.log')",
    "import multiprocessing\npool = multiprocessing.Pool(2)",
    "import shutil\nprint(shutil.which('git'))",
    "x = [].__class__.__bases__",
    "class Registry(type):\n    pass\nclass Base(metaclass=Registry):\n    pass",
    "b = bytearray(b'abc')\nview = memoryview(b)",
    "import weakref\nclass A:\n    pass\nr = weakref.ref(A())",
    "from unittest import mock\nm = mock.MagicMock()",
    "class Z:\n    pass\nZ.__getattr__ = lambda self, name: 'z'",
    "result = type(1).__subclasses__()",
)]
