"""The names the compiler and the guards agree on: the special methods a snippet class may
define (and super() may reach), the names of the guards the compiled code calls that are
not RestrictedPython's, and the advice a refusal of them gives."""

from __future__ import annotations

import ast

from RestrictedPython.transformer import ALLOWED_FUNC_NAMES


# Dunder methods a snippet class may define on top of RestrictedPython's ALLOWED_FUNC_NAMES.
# They only run snippet code that is itself restricted, and every parameter the interpreter
# passes them is vetted on entry like any other (_vet_parameters_on_entry). Left out on
# purpose: __getattribute__ (library code asks it for names the snippet may not see),
# __del__ (runs at unknown times, in any frame), __reduce__*
# (pickle and copy gadgets). `__getattr__` is the exception, as a method of a class
# body only: it is wrapped (FALLBACK_GETATTR) so that it is never asked for a name that
# starts with "_" (numpy's __array_interface__, copy's __deepcopy__, pandas' _typ...).
EXTRA_MAGIC_METHODS = frozenset(
    ["__repr__", "__str__", "__len__", "__iter__", "__next__", "__reversed__", "__getitem__",
     "__setitem__", "__delitem__", "__missing__", "__hash__", "__bool__", "__call__",
     "__enter__", "__exit__", "__post_init__", "__neg__", "__pos__", "__abs__", "__invert__",
     "__round__", "__int__", "__float__", "__complex__",
     # class machinery that calls only the snippet's own code: a descriptor is no more than a
     # property; __set_name__ and __init_subclass__ see the snippet's classes
     "__init_subclass__", "__set_name__", "__get__", "__set__", "__delete__", "__class_getitem__",
     "__format__", "__index__", "__contains__", "__length_hint__",
     # the async protocols (`async with` binds through _vet_entered_, `async for` iterates
     # through _getaiter_; not __await__, which would hand asyncio's task loop objects the
     # snippet made up); math's rounding hooks, bytes(); copy's __copy__ and __deepcopy__
     # return the copy themselves (unlike __reduce__, nothing is rebuilt from their answer)
     "__aenter__", "__aexit__", "__aiter__", "__anext__", "__floor__", "__ceil__", "__trunc__",
     "__bytes__", "__copy__", "__deepcopy__",
     # a singleton's or an immutable type's constructor; every __new__ the snippet reaches
     # (its own, super()'s, object's) makes instances of its own classes only (checked_new)
     "__new__",
     # validation and immutability on assignment: only in a class that is the snippet's all
     # the way down (guards/classes.py check_class), where no library code sets
     # its private attributes through them
     "__setattr__", "__delattr__"]
    + [f"__{prefix}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv",
                                      "mod", "divmod", "pow", "lshift", "rshift", "and", "xor",
                                      "or")
       for prefix in ("", "r", "i")]
)
# `super().<name>` may reach these (the methods a snippet class may define or inherit); a class
# body may also alias one of them (`__radd__ = __add__`) or set one to None (visit_Assign).
SUPER_METHODS = ALLOWED_FUNC_NAMES | EXTRA_MAGIC_METHODS
# Expressions that are literals (`()`, `""`, `[]`, `{}`, `1`, f-strings, comprehensions).
LITERALS = (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.JoinedStr, ast.ListComp, ast.SetComp,
            ast.DictComp, ast.GeneratorExp)
METHOD_ALIAS_ADVICE = ("define a special method with def (def __add__(self, other): ...) or a lambda "
                       "(__repr__ = lambda self: ...); a class body may also alias one it defined above "
                       "(__radd__ = __add__) or set one to None (__hash__ = None)")
# `object.<name>(obj, ...)`: a frozen dataclass's __post_init__ sets its fields this way; the
# guards give the snippet's own objects only (guards/methods.py object_method).
OBJECT_METHODS = frozenset({"__setattr__", "__delattr__"})
METACLASS_ADVICE = ("metaclass= takes abc.ABCMeta here (class C(metaclass=ABCMeta), or class C(ABC)); for a "
                    "singleton define __new__, for a registry of subclasses __init_subclass__")
# What a refusal of `except* ValueError as group:` shows instead (it runs: tests/restricted/test_everyday_code.py).
EXCEPT_STAR_INSTEAD = """\
except ExceptionGroup as group:
    matched, rest = group.split(ValueError)
    for exc in (matched.exceptions if matched else ()):
        print("handled:", exc)
    if rest:
        raise rest"""
# The guard every snippet `__getattr__` is decorated with, outermost (guards/snippet_builtins.py public_getattr).
FALLBACK_GETATTR = "_public_getattr_"
