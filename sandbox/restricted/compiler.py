"""The RestrictedPython layer, compile time: RestrictingNodeTransformer's policy
with what ordinary Python needs (the transformer subclass), and parsing and
compiling a snippet. Every allow/deny table it consults lives in
private_names.py and the EXTRA_MAGIC_METHODS list below."""

from __future__ import annotations

import ast
import re
import types

from RestrictedPython.transformer import (
    ALLOWED_FUNC_NAMES,
    INSPECT_ATTRIBUTES,
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
    copy_locations,
)

from sandbox.restricted import private_names
from sandbox.restricted.base import SNIPPET_FILENAME, LAST_VALUE


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
     # the way down (rp_guards.ExecutionContext.check_class), where no library code sets
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
# guards give the snippet's own objects only (rp_guards.ExecutionContext.object_method).
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
# The guard every snippet `__getattr__` is decorated with, outermost (rp_guards.public_getattr).
FALLBACK_GETATTR = "_public_getattr_"


class _SnippetPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy plus what ordinary snippets need; every addition keeps the
    guards in place (no name or attribute starting with "_" becomes reachable)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_names: list[str] = []   # the class bodies being visited, innermost last
        self.class_bodies: list[int] = []  # the function_depth of each of them
        self.function_depth = 0            # functions being visited (import * is for module level)
        self.match_classes: list[list] = []  # per match statement being visited: its _match_class_ lines
        self.match_count = 0
        self.refused_lines: set[tuple] = set()  # (line, message) said once (_refuse_once)
        self.left_as_text: dict = {}       # id -> annotation never evaluated (_text_annotations)

    def visit(self, node):
        if self.left_as_text.get(id(node)) is node:
            return node
        return super().visit(node)

    def check_name(self, node, name, allow_magic_methods=False):
        if (allow_magic_methods and name in EXTRA_MAGIC_METHODS
                and getattr(node, "col_offset", 0) != 0):
            return
        if getattr(node, "sandbox_method_alias", False):
            return  # `__radd__ = __add__`, `__hash__ = None` in a class body (visit_Assign)
        if name == "__getattr__" and getattr(node, "sandbox_class_method", False):
            return  # a method of a class body: visit_FunctionDef guards it
        if name in private_names.ENUM_HOOKS and getattr(node, "sandbox_enum_hook", False):
            return  # `def _missing_(cls, value)`, `_ignore_ = [...]` in a class body (visit_ClassDef)
        reserved = name in private_names.RESERVED_NAME_INSTEAD   # (RestrictedPython's `_print` among them)
        if name is not None and private_names.private_name_allowed(name) and not reserved:
            return  # `_cache`, `_helper`, `__secret` (private_names.py)
        if name in private_names.DUNDER_NAMES_STORED:
            return  # `__all__ = [...]`, a class's `__slots__`
        if (name is not None and name.startswith("_") and not reserved
                and not (allow_magic_methods and name in ALLOWED_FUNC_NAMES and node.col_offset != 0)):
            if name.startswith("__") and name.endswith("__") and isinstance(node, ast.Name):
                advice = private_names.RESERVED_NAME_INSTEAD.get(name, "special names are not available here")
                if name in SUPER_METHODS and self._in_class_body():
                    advice = METHOD_ALIAS_ADVICE
                self.error(node, f'"{name}" is a reserved name: {advice}')
            elif name.startswith("__") and name.endswith("__"):
                self.error(node, f'"{name}" is a reserved name: this special name is not available in the '
                                 'sandbox (attribute hooks, __del__ and pickling hooks are not); use '
                                 'an ordinary method or a property instead')
            elif name in private_names.ENUM_HOOKS:
                self.error(node, f'"{name}" is enum\'s hook, a reserved name elsewhere: define it directly in '
                                 'the body of your Enum class, as enum reads it there')
            else:
                self.error(node, f'"{name}" is a reserved name: names that start and end with "_" belong to '
                                 f'the sandbox\'s guards; choose another name (e.g. "{name.strip("_") or "value"}")')
            return
        if name in private_names.RESERVED_NAME_INSTEAD:
            self.error(node, f'"{name}" is a reserved name: {private_names.RESERVED_NAME_INSTEAD[name]}')
            return
        super().check_name(node, name, allow_magic_methods)

    def visit_Name(self, node):
        if (node.id in SUPER_METHODS and isinstance(node.ctx, ast.Load) and self.function_depth
                and not self._in_class_body()):
            # `def __repr__(self): ...` in a class decorator, then `cls.__repr__ = __repr__`: the
            # function's local def (nothing at module level or in the builtins has the name)
            node.sandbox_method_alias = True
        if node.id == "__name__" and isinstance(node.ctx, ast.Load):
            # `if __name__ == "__main__":` runs, as in a script; the real module name stays
            new = ast.Constant("__main__")
            copy_locations(new, node)
            return new
        return super().visit_Name(node)

    def _in_class_body(self) -> bool:
        """Directly in a class body (not in one of its methods)."""
        return bool(self.class_bodies) and self.class_bodies[-1] == self.function_depth

    def visit_Assign(self, node):
        """`__radd__ = __add__`, `__repr__ = lambda self: ...` and `__hash__ = None` in a
        class body: the value is a method the class defined above (a def), a lambda (both
        vet their parameters on entry) or None, never another callable the interpreter
        would call with what the guards vet."""
        if (self._in_class_body() and all(isinstance(t, ast.Name) and t.id in SUPER_METHODS
                                          for t in node.targets)
                and (isinstance(node.value, ast.Name) and node.value.id in SUPER_METHODS
                     or isinstance(node.value, ast.Lambda)
                     or isinstance(node.value, ast.Constant) and node.value.value is None)):
            # (the Name nodes only: check_name() gets a lambda's node for each of its parameters)
            for name in (*node.targets, node.value):
                if isinstance(name, ast.Name):
                    name.sandbox_method_alias = True
        return super().visit_Assign(node)

    def visit_TryStar(self, node):
        self.error(node, "except* is not available in the sandbox (this interpreter's except* has a type "
                         "confusion, CVE-2025-22153): catch the group and split it by type:\n"
                         + EXCEPT_STAR_INSTEAD)

    # Python 3.12's generic syntax: RestrictedPython refuses its nodes ("TypeVar statements are not
    # allowed."); the refusal says how to write the same with typing, once per line
    def visit_TypeVar(self, node):
        self._refuse_once(node, "the generic syntax def f[T](...) / class C[T] is not available in the "
                                "sandbox: declare the type variable with typing, T = TypeVar('T'), then write "
                                "def f(x: T) -> T, or class C(Generic[T])")

    visit_ParamSpec = visit_TypeVarTuple = visit_TypeVar

    def visit_TypeAlias(self, node):
        self._refuse_once(node, "the type statement (type Alias = ...) is not available in the sandbox: write "
                                "Alias = list[int], or Alias: TypeAlias = list[int] with TypeAlias from typing")

    def _refuse_once(self, node, message: str) -> None:
        if (node.lineno, message) not in self.refused_lines:
            self.refused_lines.add((node.lineno, message))
            self.error(node, message)

    def visit_ClassDef(self, node):
        for member in node.body:
            if isinstance(member, ast.FunctionDef) and member.name == "__getattr__":
                member.sandbox_class_method = True
            if isinstance(member, ast.FunctionDef) and member.name in private_names.ENUM_HOOKS:
                member.sandbox_enum_hook = True
            if isinstance(member, ast.Assign):
                for target in member.targets:
                    if isinstance(target, ast.Name) and target.id in private_names.ENUM_HOOKS:
                        target.sandbox_enum_hook = True
        # `metaclass=ABCMeta`: RestrictedPython refuses the keyword; here its value goes through
        # the _metaclass_ guard, which admits abc.ABCMeta only (rp_guards.ExecutionContext.metaclass)
        metaclass = [keyword.value for keyword in node.keywords if keyword.arg == "metaclass"]
        node.keywords = [keyword for keyword in node.keywords if keyword.arg != "metaclass"]
        self.class_names.append(node.name)
        self.class_bodies.append(self.function_depth)
        try:
            new = super().visit_ClassDef(node)
        finally:
            self.class_names.pop()
            self.class_bodies.pop()
        for value in metaclass:  # the plain cases said at once (and by validate_code); the guard decides
            if not (isinstance(value, ast.Name) and value.id in ("ABCMeta", "type")
                    or isinstance(value, ast.Attribute) and value.attr == "ABCMeta"):
                self.error(node, METACLASS_ADVICE)
        metaclass = [self.visit(value) for value in metaclass]  # (evaluated outside the class body)
        if metaclass and isinstance(new, ast.ClassDef):
            for keyword in new.keywords:
                if keyword.arg == "metaclass":
                    keyword.value = ast.Call(func=ast.Name("_metaclass_", ast.Load()), args=metaclass[-1:],
                                             keywords=[])
                    copy_locations(keyword.value, node)
        # RestrictedPython rebuilds the class with metaclass=__metaclass__ and drops its other
        # keywords (class Tri(Shape, sides=3) reached __init_subclass__ without sides=3):
        # they go back, already visited; a name starting with "_" stays the library's own.
        for keyword in node.keywords:
            if keyword.arg is None or keyword.arg.startswith("_"):
                self.error(node, f'The class keyword "{keyword.arg or "**"}" is not allowed: class keywords '
                                 'are written out by name, and names do not start with "_".')
        if isinstance(new, ast.ClassDef):
            new.keywords += [keyword for keyword in node.keywords if keyword.arg != "metaclass"]
        return new

    def visit_FunctionDef(self, node):
        # a method's body mangles with its class's name; a nested function's too
        self.function_depth += 1
        try:
            node = super().visit_FunctionDef(node)
        finally:
            self.function_depth -= 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _vet_parameters_on_entry(node)
            if getattr(node, "sandbox_class_method", False) and node.name == "__getattr__":
                guard = ast.Name(FALLBACK_GETATTR, ast.Load())
                copy_locations(guard, node)
                node.decorator_list.insert(0, guard)  # outermost: applied after the snippet's own
        return node

    def _private_attribute(self, node):
        """`obj._x`, `self.__x` (mangled here, so that reads and writes agree): read
        through `_getattr_` and written through `_write_private_`, which allow it on
        the snippet's own objects only."""
        attr = private_names.mangle(node.attr, self.class_names[-1] if self.class_names else None)
        value = self.visit(node.value)
        if isinstance(node.ctx, ast.Load):
            new = ast.Call(func=ast.Name("_getattr_", ast.Load()), args=[value, ast.Constant(attr)], keywords=[])
        else:
            guarded = ast.Call(func=ast.Name("_write_private_", ast.Load()), args=[value], keywords=[])
            copy_locations(guarded, node.value)
            new = ast.Attribute(value=guarded, attr=attr, ctx=node.ctx)
        copy_locations(new, node)
        return new

    def _safe_dunder_read(self, node):
        value = self.visit(node.value)
        new = ast.Call(func=ast.Name("_getattr_", ast.Load()), args=[value, ast.Constant(node.attr)], keywords=[])
        copy_locations(new, node)
        return new

    def visit_Attribute(self, node):
        if node.attr == "__class__":
            # `self.__class__.__name__`: read as type(x) is, through the same guard (never a
            # metaclass, never a class the policy denies); writing it would change a class
            if not isinstance(node.ctx, ast.Load):
                self.error(node, "x.__class__ cannot be assigned or deleted in the sandbox: make an "
                                 "object of the other class instead (OtherClass(...))")
                return node
            if isinstance(node.value, LITERALS):
                # `().__class__`: only ever the first step of an escape, refused where
                # validate_code sees it; ordinary code names the class
                self.error(node, "the class of a literal is not read in the sandbox: write the class's "
                                 "name (tuple, str, int, list, dict)")
                return node
            new = ast.Call(func=ast.Name("_class_of_", ast.Load()), args=[self.visit(node.value)], keywords=[])
            copy_locations(new, node)
            return new
        if node.attr.startswith("_") and private_names.private_name_allowed(node.attr):
            return self._private_attribute(node)
        if node.attr in private_names.SAFE_DUNDERS and isinstance(node.ctx, ast.Load):
            return self._safe_dunder_read(node)
        if (node.attr in OBJECT_METHODS and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                and node.value.id == "object"):
            return self._safe_dunder_read(node)
        # `super().__init__(...)`: the dunder is allowed only on a super() call and is looked
        # up at run time by _super_attr_, which checks the super object.
        if (isinstance(node.ctx, ast.Load) and node.attr in SUPER_METHODS
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "super"):
            new = ast.Call(func=ast.Name("_super_attr_", ast.Load()),
                           args=[self.visit(node.value), ast.Constant(node.attr)], keywords=[])
            copy_locations(new, node)
            return new
        # Base.__init__(self, x), self.__add__(other): the methods a snippet class may define,
        # read through the guard, which gives them on the snippet's own objects only
        if isinstance(node.ctx, ast.Load) and node.attr in SUPER_METHODS:
            return self._safe_dunder_read(node)
        # `cls.__repr__ = fn` (a class decorator): set through `_write_special_`, which takes the
        # snippet's own classes and the values a class body may give (sandbox/restricted/special_methods.py)
        if isinstance(node.ctx, ast.Store) and node.attr in SUPER_METHODS:
            guarded = ast.Call(func=ast.Name("_write_special_", ast.Load()), args=[self.visit(node.value)],
                               keywords=[])
            copy_locations(guarded, node.value)
            new = ast.Attribute(value=guarded, attr=node.attr, ctx=node.ctx)
            copy_locations(new, node)
            return new
        if node.attr == "tb_next" and isinstance(node.ctx, ast.Load):
            # walking the summary exc.__traceback__ gives (rp_guards: a real traceback's stays refused)
            return self._safe_dunder_read(node)
        if node.attr in INSPECT_ATTRIBUTES:
            # RestrictedPython refuses these too; this says what to write instead
            self.error(node, f'"{node.attr}" is not available in the sandbox: {private_names.instead(node.attr)}')
            node.value = self.visit(node.value)
            return node
        if node.attr.startswith("_") and node.attr != "_":
            # RestrictedPython's refusal, with what to write instead (the value is still checked)
            if not isinstance(node.ctx, ast.Load) and node.attr.startswith("__") and node.attr.endswith("__"):
                instead = (f"define it in the class body (def {node.attr}(self, ...): ...), or in a subclass; "
                           "this special name is not assigned after the class is made")
            else:
                instead = private_names.instead(node.attr)
            self.error(node, f'"{node.attr}" is an invalid attribute name because it starts with "_": {instead}')
            node.value = self.visit(node.value)
            return node
        return super().visit_Attribute(node)

    def visit_AugAssign(self, node):
        """`obj.attr += v` / `obj[k] += v` (RestrictedPython refuses both) become
        t0 = obj; [t1 = k;] _write_(t0).attr = _inplacevar_('+=', _getattr_(t0, 'attr'), v)
        which keeps Python's evaluation order and the read and write guards."""
        target = node.target
        if isinstance(target, ast.Name):
            return super().visit_AugAssign(node)
        if isinstance(target, ast.Attribute):
            load = ast.Attribute(value=target.value, attr=target.attr, ctx=ast.Load())
        else:
            load = ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
        copy_locations(load, target)
        getter = self.visit(load)  # _getattr_(obj, 'attr') or _getitem_(obj, key); names checked
        if not (isinstance(getter, ast.Call) and isinstance(getter.func, ast.Name)
                and getter.func.id in ("_getattr_", "_getitem_")):
            self.error(node, "Augmented assignment of this target is not allowed.")
            return node
        n_temps = 1 if isinstance(target, ast.Attribute) else 2
        # the name as read (mangled by _private_attribute): a dunder may be read, never written
        attr = getter.args[1].value if isinstance(target, ast.Attribute) else None
        if attr is not None and attr.startswith("_") and not private_names.private_name_allowed(attr):
            self.error(node, f'"{attr}" cannot be assigned: the interpreter\'s special names and the '
                             "sandbox's guard names are read-only here; use an ordinary attribute name")
            return node
        temps = [self.gen_tmp_name() for _ in range(n_temps)]
        body = [ast.Assign(targets=[ast.Name(t, ast.Store())], value=expr)
                for t, expr in zip(temps, getter.args)]
        read = ast.Call(func=getter.func, args=[ast.Name(t, ast.Load()) for t in temps]
                        + getter.args[n_temps:], keywords=[])
        # a private name only on the snippet's own objects, as for `obj._x = v`
        write_guard = "_write_private_" if attr is not None and attr.startswith("_") else "_write_"
        written = ast.Call(func=ast.Name(write_guard, ast.Load()),
                           args=[ast.Name(temps[0], ast.Load())], keywords=[])
        if isinstance(target, ast.Attribute):
            store = ast.Attribute(value=written, attr=attr, ctx=ast.Store())
        else:
            store = ast.Subscript(value=written, slice=ast.Name(temps[1], ast.Load()),
                                  ctx=ast.Store())
        value = ast.Call(func=ast.Name("_inplacevar_", ast.Load()),
                         args=[ast.Constant(IOPERATOR_TO_STR[type(node.op)]), read,
                               self.visit(node.value)], keywords=[])
        body.append(ast.Assign(targets=[store], value=value))
        body.append(ast.Delete(targets=[ast.Name(t, ast.Del()) for t in temps]))
        for stmt in body:
            copy_locations(stmt, node)
        return body

    def visit_AnnAssign(self, node):
        """`x: int = 1` (dataclasses, typed code). Target, annotation and value are visited
        like any other store and expressions, so the usual guards apply."""
        return self.node_contents_visit(node)

    def visit_Nonlocal(self, node):
        """Closures with `nonlocal` counters; the names get the usual name check."""
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_ImportFrom(self, node):
        """`from math import *` becomes `_import_star_('math')`, which binds the
        module's public names that pass the module policy (Python allows it only
        at module level, so the globals are the place)."""
        if [alias.name for alias in node.names] == ["*"] and (self.function_depth or self.class_names):
            self.error(node, "import * is only allowed at module level")
            return node
        if [alias.name for alias in node.names] == ["*"] and node.level == 0 and node.module:
            new = ast.Expr(ast.Call(func=ast.Name("_import_star_", ast.Load()),
                                    args=[ast.Constant(node.module)], keywords=[]))
            copy_locations(new, node)
            copy_locations(new.value, node)
            copy_locations(new.value.func, node)
            return new
        return super().visit_ImportFrom(node)

    # -- match statements. A class pattern with sub-patterns (`case P(x=0)`, `case P(a, b)`)
    # has the interpreter read attributes itself: it matches through a class the _match_class_
    # guard makes, whose isinstance() reads each of them through the guards first
    # (rp_guards.match_class); the class is made before the statement (`case` takes a name,
    # not a call). The rest of a pattern binds names that get the name check.
    def visit_Match(self, node):
        self.match_classes.append([])
        try:
            node = self.node_contents_visit(node)
        finally:
            made = self.match_classes.pop()
        return [*made, node] if made else node

    def visit_match_case(self, node):
        """The names a pattern captures are values the interpreter took out of the subject
        unguarded (a dict's items: library code's eval() puts the real builtins' dict into
        the snippet's own as "__builtins__"): they are vetted before the guard and the body
        run, `case {...} if _vet_matched_(a, b) and <guard>`."""
        node = self.node_contents_visit(node)
        captured = [name for sub in ast.walk(node.pattern)
                    for name in (getattr(sub, "name", None), getattr(sub, "rest", None)) if isinstance(name, str)]
        if captured:
            check = _vet_call("_vet_matched_", *(ast.Name(name, ast.Load()) for name in dict.fromkeys(captured)))
            _locate(check, node.pattern)
            if node.guard is None:
                node.guard = check
            else:  # (the snippet's own guard keeps its positions)
                node.guard = ast.BoolOp(op=ast.And(), values=[check, node.guard])
                copy_locations(node.guard, node.pattern)
        return node

    def visit_MatchValue(self, node):
        """`case Color.RED:` compares with a dotted name's value, which the interpreter would
        read itself; a pattern takes a dotted name, never a call. So the value is read
        through the guards before the statement, into a holder of the sandbox's, and the
        pattern reads it back from there (`case _sandbox_match_0.value:`)."""
        if not isinstance(node.value, ast.Attribute):
            return self.node_contents_visit(node)   # a literal: 1, -1, 'a', 1 + 2j
        held = self._before_the_match(_vet_call("_match_value_", self.visit(node.value)), node)
        value = ast.Attribute(value=ast.Name(held, ast.Load()), attr="value", ctx=ast.Load())
        copy_locations(value, node.value)
        node.value = ast.fix_missing_locations(value)
        return node

    def visit_MatchSingleton(self, node):
        return node

    def visit_MatchSequence(self, node):
        return self.node_contents_visit(node)

    def visit_MatchMapping(self, node):
        self.check_name(node, node.rest)
        return self.node_contents_visit(node)

    def visit_MatchStar(self, node):
        self.check_name(node, node.name)
        return node

    def visit_MatchAs(self, node):
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchOr(self, node):
        return self.node_contents_visit(node)

    def visit_MatchClass(self, node):
        if isinstance(node.cls, ast.Name):
            self.check_name(node, node.cls.id)
        else:
            # `case ast.Name(...)`: the interpreter would read the dotted name itself; it is
            # read through the guards before the statement instead, into a name of the
            # sandbox's (early, not when the case is tried: the same value unless a lookup
            # has effects of its own, a property of the snippet's)
            cls = ast.Name(self._before_the_match(self.visit(node.cls), node), ast.Load())
            copy_locations(cls, node.cls)
            node.cls = cls
        node.patterns = [self.visit(p) for p in node.patterns]
        for name in node.kwd_attrs:
            if name.startswith("_") or name in INSPECT_ATTRIBUTES:
                self.error(node, f'"{name}" cannot be matched in a class pattern: only public attributes are '
                                 "(case Point(x=0)); test others in a guard (case P() if ...)")
        node.kwd_patterns = [self.visit(p) for p in node.kwd_patterns]
        if node.patterns or node.kwd_patterns:
            call = ast.Call(func=ast.Name("_match_class_", ast.Load()),
                            args=[ast.Name(node.cls.id, ast.Load()),
                                  ast.Tuple([ast.Constant(name) for name in node.kwd_attrs], ast.Load()),
                                  ast.Constant(len(node.patterns))], keywords=[])
            cls = ast.Name(self._before_the_match(call, node), ast.Load())
            copy_locations(cls, node.cls)
            node.cls = cls
        return node

    def _before_the_match(self, value: ast.expr, node: ast.AST) -> str:
        """A name of the sandbox's, assigned `value` before the match statement (visit_Match)."""
        name = f"_sandbox_match_{self.match_count}"
        self.match_count += 1
        assign = ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)
        copy_locations(assign, node)
        self.match_classes[-1].append(ast.fix_missing_locations(assign))
        return name

    # -- async def, await, async for, async with: asyncio's subset (module_subsets.py) runs
    # them; what an await or an async for hands over is vetted like a call's result.
    visit_AsyncFunctionDef = visit_FunctionDef  # RestrictedPython's checks read only the shared fields

    def visit_Await(self, node):
        node = self.node_contents_visit(node)
        new = ast.Call(func=ast.Name("_vet_one_", ast.Load()), args=[node], keywords=[])
        copy_locations(new, node)
        copy_locations(new.func, node)
        return new

    def visit_With(self, node):
        """`with X as name`: what X's __enter__ hands over is vetted like a call's
        result (`as (a, b)` already unpacks through the guarded iterator)."""
        node = super().visit_With(node)
        for item in reversed(node.items):
            if isinstance(item.optional_vars, ast.Name):
                name = item.optional_vars.id
                vet = ast.Assign(targets=[ast.Name(name, ast.Store())],
                                 value=_vet_call("_vet_entered_", ast.Name(name, ast.Load())))
                _locate(vet, item.optional_vars)
                node.body.insert(0, vet)
        return node

    def visit_AsyncWith(self, node):
        return self.visit_With(node)  # the same vetting, and the same unpacking guard on `as (a, b)`

    def visit_AsyncFor(self, node):
        """`async for T in X`: X's items come through `_getaiter_`, which vets each; a
        tuple target unpacks through the usual guard, as in `with ... as (a, b)`."""
        node = self.node_contents_visit(node)
        if isinstance(node.target, ast.Tuple):
            node.target, unpack = self.gen_unpack_wrapper(node, node.target)
            node.body.insert(0, unpack)
        node.iter = self._async_items(node.iter)
        return node

    def _async_items(self, iterable, unpack_spec=None):
        args = [iterable]
        if unpack_spec is not None:
            _locate(unpack_spec, iterable)
            args.append(unpack_spec)
        new = ast.Call(func=ast.Name("_getaiter_", ast.Load()), args=args, keywords=[])
        copy_locations(new, iterable)
        copy_locations(new.func, iterable)
        return new

    def visit_comprehension(self, node):
        """`async for T in X` in a comprehension: X's items come through `_getaiter_`,
        which vets each; a tuple target is unpacked there by the usual guard (a
        comprehension has no body to put the unpacking in)."""
        if not node.is_async:
            return super().visit_comprehension(node)
        node = self.node_contents_visit(node)
        spec = self.gen_unpack_spec(node.target) if isinstance(node.target, ast.Tuple) else None
        node.iter = self._async_items(node.iter, spec)
        return node

    def visit_Lambda(self, node):
        node = super().visit_Lambda(node)
        if isinstance(node, ast.Lambda):
            _vet_lambda_parameters(node)
        return node

    def visit_Call(self, node):
        """Every call's result is vetted like an attribute read: `f(...)` becomes
        `_call_(f, ...)` (RestrictedPython's own `_apply_` form for *args/**kwargs is
        vetted the same way). Zero-argument super() must stay a direct call."""
        if isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec"):
            self.error(node, f"{node.func.id}() is not available in the sandbox: write the code directly; to "
                             "read values from a string, use json.loads, int() or float()")
            return node
        node = super().visit_Call(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("super", "_apply_"):
            return node
        new = ast.Call(func=ast.Name("_call_", ast.Load()), args=[func, *node.args], keywords=node.keywords)
        copy_locations(new, node)
        copy_locations(new.func, node)
        return new

    def visit_Module(self, node):
        node = super().visit_Module(node)
        _capture_last_value(node)
        return node


def _parameter_names(args: ast.arguments) -> tuple[list[str], str | None, list[str], str | None]:
    return ([a.arg for a in args.posonlyargs + args.args], args.vararg.arg if args.vararg else None,
            [a.arg for a in args.kwonlyargs], args.kwarg.arg if args.kwarg else None)


def _locate(tree: ast.AST, like: ast.AST) -> None:
    """Give every node of a generated tree the position of `like` (for tracebacks)."""
    for child in ast.walk(tree):
        if "lineno" in child._attributes:
            copy_locations(child, like)


def _vet_call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(func, ast.Load()), args=list(args), keywords=[])


def _vet_parameters_on_entry(node: ast.FunctionDef) -> None:
    """`def f(a, b, *c, d, **e)` starts with `a, b, d = _vet_params_(a, b, d)`,
    `c = _vet_params_(*c)` and `e = _vet_kwargs_(e)` (after a docstring)."""
    positional, vararg, kwonly, kwarg = _parameter_names(node.args)
    names = positional + kwonly
    body = []
    if names:
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        body.append(ast.Assign([target], _vet_call("_vet_params_", *[ast.Name(n, ast.Load()) for n in names])))
    if vararg:
        body.append(ast.Assign([ast.Name(vararg, ast.Store())],
                               _vet_call("_vet_params_", ast.Starred(ast.Name(vararg, ast.Load()), ast.Load()))))
    if kwarg:
        body.append(ast.Assign([ast.Name(kwarg, ast.Store())], _vet_call("_vet_kwargs_", ast.Name(kwarg, ast.Load()))))
    if not body or not node.body:  # (a body the transformer emptied has already failed the compile)
        return
    first = node.body[0]
    at = 1 if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
        first.value.value, str) else 0
    for stmt in body:
        _locate(stmt, first)
    node.body[at:at] = body


def _vet_lambda_parameters(node: ast.Lambda) -> None:
    """`lambda a, *b, c, **d: body` becomes
    `lambda a, *b, c, **d: (lambda a, *b, c, **d: body)(*_vet_params_(a, *b), c=_vet_one_(c), **_vet_kwargs_(d))`."""
    positional, vararg, kwonly, kwarg = _parameter_names(node.args)
    if not (positional or vararg or kwonly or kwarg):
        return
    inner_args = ast.arguments(
        posonlyargs=[], args=[ast.arg(n) for n in positional],
        vararg=ast.arg(vararg) if vararg else None, kwonlyargs=[ast.arg(n) for n in kwonly],
        kw_defaults=[None] * len(kwonly), kwarg=ast.arg(kwarg) if kwarg else None, defaults=[])
    passed = [ast.Name(n, ast.Load()) for n in positional]
    if vararg:
        passed.append(ast.Starred(ast.Name(vararg, ast.Load()), ast.Load()))
    keywords = [ast.keyword(arg=n, value=_vet_call("_vet_one_", ast.Name(n, ast.Load()))) for n in kwonly]
    if kwarg:
        keywords.append(ast.keyword(arg=None, value=_vet_call("_vet_kwargs_", ast.Name(kwarg, ast.Load()))))
    call = ast.Call(func=ast.Lambda(args=inner_args, body=node.body),
                    args=[ast.Starred(_vet_call("_vet_params_", *passed), ast.Load())], keywords=keywords)
    _locate(call, node.body)
    node.body = call


def _capture_last_value(tree: ast.Module) -> None:
    """The value of a final expression statement goes to an internal name (the result)."""
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        assign = ast.Assign(targets=[ast.Name(LAST_VALUE, ast.Store())], value=last.value)
        copy_locations(assign, last)
        tree.body[-1] = assign


class CompileError(Exception):
    def __init__(self, error_type: str, message: str, line: int | None, rejected=()):
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.line = line
        self.rejected = list(rejected)


# (the parser raises MemoryError for deep nesting too, with no message: the two cannot be told apart)
_TOO_COMPLEX = ("SyntaxError: the source is too deeply nested or too large to compile: flatten the nesting, "
                "send less code, or pass a larger memory_limit")
LINE_PREFIX = re.compile(r"^Line (\d+):")
MAX_SHOWN_LINE = 200  # a longer line is not repeated in a syntax error
_UNPARSABLE = re.compile("[\x00\ud800-\udfff]")


def _line_at(code: str, index: int) -> int:
    return code.count("\n", 0, max(index, 0)) + 1


def _syntax_error(exc: SyntaxError) -> CompileError:
    """The parser's message with the line it points at, marked as Python marks it (the
    snippet's own text: the model sees where, not just which line)."""
    message = f"{type(exc).__name__}: {exc.msg}"
    text = (exc.text or "").split("\n", 1)[0].rstrip()
    if text and len(text) <= MAX_SHOWN_LINE:
        shown = text.lstrip()
        start = (exc.offset or 0) - 1 - (len(text) - len(shown))
        end = (exc.end_offset or 0) - 1 - (len(text) - len(shown)) if exc.end_lineno == exc.lineno else start + 1
        message += f"\n    {shown}"
        if 0 <= start <= len(shown):
            message += "\n    " + " " * start + "^" * max(1, min(end, len(shown)) - start)
    return CompileError("syntax_error", message, exc.lineno)


def parse_snippet(code) -> ast.Module:
    if not isinstance(code, str):
        raise CompileError("syntax_error", "SyntaxError: the source must be text", None)
    bad = _UNPARSABLE.search(code)
    if bad is not None:  # the parser's own errors for these differ between versions
        what = "a NUL byte" if bad.group() == "\x00" else "a lone surrogate"
        raise CompileError("syntax_error", f"SyntaxError: the source contains {what}",
                            _line_at(code, bad.start()))
    try:
        return ast.parse(code, SNIPPET_FILENAME, "exec")  # a str: any coding cookie is ignored
    except SyntaxError as exc:
        raise _syntax_error(exc) from None
    except (MemoryError, RecursionError):
        raise CompileError("syntax_error", _TOO_COMPLEX, None) from None
    except (ValueError, UnicodeError) as exc:
        raise CompileError("syntax_error", f"SyntaxError: {exc}", None) from None


def _text_annotations(tree: ast.Module) -> list:
    """Under `from __future__ import annotations` no annotation is evaluated: Python keeps
    each as the text of its expression. The policy would rewrite that expression first
    (typing.ClassVar[int] became "_getitem_(_getattr_(typing, 'ClassVar'), int)", and
    dataclasses no longer saw the ClassVar), so these are left as the snippet wrote them:
    text, as a string annotation it could have written itself."""
    futures = (node for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "__future__")
    if not any(alias.name == "annotations" for node in futures for alias in node.names):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            found.append(node.returns)
        elif isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            found.append(node.annotation)
    return found


def compile_snippet(code, restricted: bool) -> types.CodeType:
    tree = parse_snippet(code)
    try:
        if restricted:
            errors: list[str] = []
            policy = _SnippetPolicy(errors, [], {})
            policy.left_as_text = {id(annotation): annotation for annotation in _text_annotations(tree)}
            tree = policy.visit(tree)
            if errors:
                match = LINE_PREFIX.match(errors[0])
                raise CompileError("security_violation", "\n".join(errors),
                                    int(match.group(1)) if match else None, rejected=errors)
        else:
            _capture_last_value(tree)
        # dont_inherit: this module's `from __future__ import annotations` is not the snippet's.
        # A top-level `await` (as in a notebook) makes the code a coroutine (restricted._run).
        return compile(tree, SNIPPET_FILENAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:
        raise _syntax_error(exc) from None
    except (MemoryError, RecursionError):
        raise CompileError("syntax_error", _TOO_COMPLEX, None) from None
    except (ValueError, TypeError) as exc:
        raise CompileError("syntax_error", f"SyntaxError: {exc}", None) from None
