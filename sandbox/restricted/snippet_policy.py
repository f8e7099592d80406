"""The RestrictedPython layer's compile-time policy: RestrictingNodeTransformer plus what
ordinary Python needs. Every addition keeps the guards in place; the allow and deny tables
it consults live in private_names.py and compiled_names.py."""

from __future__ import annotations

import ast

from RestrictedPython.transformer import (
    ALLOWED_FUNC_NAMES,
    INSPECT_ATTRIBUTES,
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
    copy_locations,
)

from sandbox.restricted import private_names
from sandbox.restricted.compiled_names import (
    EXCEPT_STAR_INSTEAD,
    EXTRA_MAGIC_METHODS,
    FALLBACK_GETATTR,
    LITERALS,
    METACLASS_ADVICE,
    METHOD_ALIAS_ADVICE,
    OBJECT_METHODS,
    SUPER_METHODS,
)
from sandbox.restricted.tree_rewrites import capture_last_value, locate, vet_call, vet_lambda_parameters, \
    vet_parameters_on_entry


class SnippetPolicy(RestrictingNodeTransformer):
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
        # the _metaclass_ guard, which admits abc.ABCMeta only (guards/classes.py metaclass)
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
            vet_parameters_on_entry(node)
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
            # walking the summary exc.__traceback__ gives (the guards: a real traceback's stays refused)
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
    # (guards/classes.py match_class); the class is made before the statement (`case` takes a name,
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
            check = vet_call("_vet_matched_", *(ast.Name(name, ast.Load()) for name in dict.fromkeys(captured)))
            locate(check, node.pattern)
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
        held = self._before_the_match(vet_call("_match_value_", self.visit(node.value)), node)
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

    # -- async def, await, async for, async with: asyncio's subset (subsets/) runs
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
                                 value=vet_call("_vet_entered_", ast.Name(name, ast.Load())))
                locate(vet, item.optional_vars)
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
            locate(unpack_spec, iterable)
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
            vet_lambda_parameters(node)
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
        capture_last_value(node)
        return node
