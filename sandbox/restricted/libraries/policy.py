"""The policy engine: the doors of the data-science libraries (and a few of the standard
library's), as tables the RestrictedPython layer applies: objects it refuses, keyword
values it refuses, attributes it refuses on the libraries' own types, and the functions it
switches off or checks while a snippet runs.

numpy, pandas, scipy, sympy, matplotlib, scikit-learn, seaborn and statsmodels evaluate strings, unpickle, import
modules by name, hand out raw memory and write onto their own classes. These
tables close the known doors; they cannot prove there is no other. With the
data-science profile on, the kernel layers are the boundary and this layer is
defence in depth (profiles.python_layer_claim says so wherever it is shown).

One table module per library (numpy_table, pandas_table, scipy_table, sympy_table,
matplotlib_table, sklearn_table, seaborn_table, statsmodels_table with formula_terms, stdlib_table,
and compiled_inputs for the numbers compiled code
trusts) says what to do about its doors (table.Table); a door is added to its library's
table only. Every entry names what to do instead. POLICY, the one engine of the process,
merges them and looks the entries up: `resolve()` runs in the fork server after the
profile's libraries are imported (settle()), so children look entries up by id; it runs
again (`refresh()`) whenever a snippet's import brought in new modules, and the functions
that such an import loaded are switched off for the rest of the run (every module binding
of each, re-exports included: switched_off.py); the source lambdify generates is checked
(generated_code.py).
"""

from __future__ import annotations

import functools
import importlib
import sys
import types

from sandbox.restricted.libraries import (class_rules, compiled_inputs, matplotlib_table, numpy_table, pandas_table,
                                          scipy_table, seaborn_table, sklearn_table, statsmodels_table, stdlib_table,
                                          sympy_table)
from sandbox.restricted.libraries.lookup import lookup
from sandbox.restricted.libraries.switched_off import SwitchedOff
from sandbox.restricted.libraries.table import merged

TABLE_MODULES = (numpy_table, pandas_table, scipy_table, sympy_table, matplotlib_table, sklearn_table, seaborn_table,
                 statsmodels_table, stdlib_table, compiled_inputs)
SETTLE_ROUNDS = 5                      # settle(): a lazy import rarely leads to a second


class LibraryPolicy:
    """The merged tables, and what resolve() found of them among the loaded modules.
    `table_modules`: each has table(policy) -> table.Table (the policy passed in, for
    the checks that ask what it refuses)."""

    lookup = staticmethod(lookup)
    c_attribute_owner = staticmethod(class_rules.c_attribute_owner)

    def __init__(self, table_modules):
        self.tables = merged([module.table(self) for module in table_modules])
        # what the guards test names against before they look anything up
        self.refused_attributes = self.tables.refused_attributes
        self.copied_attributes = self.tables.copied_attributes
        self.guarded_methods = self.tables.guarded_methods
        # resolved: by id (objects of loaded modules) or by type
        self.refused_ids: dict[int, str] = {}          # id(object) -> advice
        self.replaced_ids: dict[int, object] = {}      # id(object) -> a factory of what the snippet gets instead
        self.named_file_writers: dict[int, tuple] = {}  # id(function) -> writes_named_file's (position, keyword)
        self.keyword_guards: dict[int, tuple] = {}     # id(function) -> (qualified name, refused keywords, advice)
        self.by_path_ids: set[int] = set()             # ids of the by_path_only replacements in place: open()
        self.attribute_types: dict[str, tuple] = {}    # refused attribute name -> the loaded types it is refused on
        self.writable_types: frozenset = frozenset()
        self.writable_families: tuple = ()
        self.open_bases: dict[type, frozenset] = {}    # -> the package's private names
        self.writable_attributes: dict[type, frozenset] = {}
        self.override_hooks: dict[type, frozenset] = {}
        self.final_classes: dict[type, str] = {}
        # entry of the tables SwitchedOff applies (but by_path_only: io.open is open, and library
        # code opens descriptors with it) -> its original function; and where else a module binds
        # it (sympy.parse_expr is sympy_parser.parse_expr): every binding is replaced, so no
        # re-export or module-level import keeps the original
        self.originals: dict[str, object] = {}
        self.other_bindings: dict[str, tuple] = {}
        self.resolved_with = -1                        # len(sys.modules) at the last resolve()

    def switched_off(self, refuse) -> SwitchedOff:
        """The tables' changes to the libraries, while a snippet runs (a context manager)."""
        return SwitchedOff(self, refuse)

    def state_names(self, library_bases) -> frozenset:
        return class_rules.state_names(library_bases, self.writable_attributes)

    def writable_attribute(self, obj, name) -> bool:
        """May the snippet set `name` on this library object (writable_attributes)?"""
        return type(name) is str and any(name in self.writable_attributes.get(klass, ())
                                         for klass in type(obj).__mro__)

    # ---- resolving the tables against the loaded modules

    def resolve(self) -> None:
        """Look every entry up among the imported modules."""
        tables = self.tables
        loaded = len(sys.modules)
        for qualified, advice in tables.refused_objects.items():
            value = lookup(qualified)
            if value is not None:
                self.refused_ids[id(value)] = f"{qualified} is refused: {advice}"
        for qualified, replacement in tables.replaced_objects.items():
            value = lookup(qualified)
            if value is not None:
                self.replaced_ids[id(value)] = replacement
        for qualified, factory in tables.stand_ins.items():
            value = lookup(qualified)
            if callable(value):
                self.replaced_ids[id(value)] = functools.partial(factory, value)
        for qualified, where in tables.writes_named_file.items():
            value = lookup(qualified)
            if callable(value):
                self.named_file_writers[id(value)] = where
        for qualified, (keywords, advice) in tables.refused_keywords.items():
            value = lookup(qualified)
            if value is not None:
                self.keyword_guards[id(value)] = (qualified, keywords, advice)
        for name, (type_names, *_advice_and_condition) in tables.refused_attributes.items():
            found = tuple(t for t in map(lookup, type_names) if isinstance(t, type))
            if found:
                self.attribute_types[name] = found
        self.writable_types = frozenset(self._types(tables.writable_types))
        self.writable_families = tuple(self._types(tables.writable_families))
        self.open_bases = {t: self.open_bases.get(t) or class_rules.package_private_names(t, package)
                           for t, package in self._types(tables.open_bases).items()}
        self.final_classes = self._types(tables.final_classes)
        self.override_hooks = self._types(tables.override_hooks)
        self.writable_attributes = {t: frozenset(names)
                                    for t, (names, _why) in self._types(tables.writable_attributes).items()}
        self._find_other_bindings()
        self.resolved_with = loaded   # only now: a resolve() that failed part way is done again

    @staticmethod
    def _types(entries: dict) -> dict:
        """The loaded types among `entries`' keys, each with its entry."""
        return {t: entry for t, entry in ((lookup(qualified), entry) for qualified, entry in entries.items())
                if isinstance(t, type)}

    def _find_other_bindings(self) -> None:
        """Once per resolve() (the fork server, then after a snippet's imports): one
        pass over the loaded modules' names."""
        tables = self.tables
        for qualified in (*tables.switched_off, *tables.no_programs, *tables.neutral_while_running,
                          *tables.checked_source, *tables.checked_calls, *tables.forced_keywords,
                          *tables.wrapped_while_running):
            if qualified not in self.originals and qualified.rpartition(".")[0] in sys.modules:  # a module's function
                value = lookup(qualified)
                if callable(value):       # (first seen outside a run: the original)
                    self.originals[qualified] = value
        if not self.originals:
            return
        wanted = {id(value): qualified for qualified, value in self.originals.items()}
        found: dict[str, list] = {}
        for module in list(sys.modules.values()):
            names = getattr(module, "__dict__", None)
            if not isinstance(names, dict):
                continue
            for attr, value in list(names.items()):
                qualified = wanted.get(id(value))
                if qualified is not None and f"{names.get('__name__')}.{attr}" != qualified:
                    found.setdefault(qualified, []).append((module, attr))
        # Added to, never replaced: during a run the bindings found before hold the replacement,
        # not the original, and a pass then must not forget them.
        for qualified, sites in found.items():
            known = self.other_bindings.get(qualified, ())
            self.other_bindings[qualified] = known + tuple(site for site in sites if site not in known)

    def settle(self) -> None:
        """In the fork server, once its modules are imported: resolve() and apply the tables
        once, until neither imports anything more. Looking an entry up can import a library's
        lazy submodule (scipy.cluster, at the first look at scipy.cluster.hierarchy), and so
        can resolve() itself: done here, once, and not in the first run of every child; and
        refresh() then compares with the final count, so a child's first import does not
        resolve everything again (about 30 ms in the data-science profile, bench/README.md)."""
        for _round in range(SETTLE_ROUNDS):
            loaded = len(sys.modules)
            self.import_companions()
            self.resolve()
            with self.switched_off(PermissionError):  # (nothing runs: refuse is never called)
                pass
            if len(sys.modules) == loaded == self.resolved_with:
                return

    def refresh(self) -> None:
        """resolve() again if modules were imported since (cheap when none were)."""
        if len(sys.modules) != self.resolved_with:
            self.import_companions()
            self.resolve()

    def import_companions(self) -> None:
        """The imported_with modules of the libraries loaded: in the fork server, or in a
        run right after the snippet's import brought the library in (before the run's
        switch-offs reach it)."""
        for library, companions in self.tables.imported_with.items():
            if library in sys.modules:
                for name in companions:
                    if name not in sys.modules:
                        try:
                            importlib.import_module(name)
                        except Exception:  # noqa: BLE001 - the library works without it, less well
                            pass

    # ---- what the guards ask

    def attribute_refusal(self, obj, name: str) -> str | None:
        """Why `obj.name` is refused, or None."""
        types_ = self.attribute_types.get(name)
        if type(obj) is super and obj.__self__ is not None:
            obj = obj.__self__  # super().query in a subclass: the same method
        if not types_:
            return None
        _types, advice, *condition = self.refused_attributes[name]
        if isinstance(obj, types_) and (not condition or condition[0](obj)):
            return f"{type(obj).__name__}.{name} is refused: {advice}"
        if isinstance(obj, type) and issubclass(obj, types_):
            # unbound (DataFrame.query(df, ...)), and whatever the condition: the descriptor read
            # from the class applies to any instance later, under any name a class of the
            # snippet's gives it (class S(np.ndarray): d = np.ndarray.data, then a.view(S).d)
            return f"{obj.__name__}.{name} is refused: {advice}"
        return None

    def keyword_guard(self, function, refuse):
        """A stand-in for `function` that refuses the keywords of refused_keywords;
        `refuse(message)` returns the exception to raise."""
        qualified, keywords, advice = self.keyword_guards[id(function)]

        @functools.wraps(function)
        def guarded(*args, **kwargs):
            for keyword, position in keywords.items():
                if keyword in kwargs:
                    value, kwargs[keyword] = kwargs[keyword], False
                elif len(args) > position:
                    value, args = args[position], (*args[:position], False, *args[position + 1:])
                else:
                    continue
                # asked once; the function gets False, not the snippet's object (its truth could change)
                if value:
                    raise refuse(f"{qualified}({keyword}=True) is refused: {advice}")
            return function(*args, **kwargs)
        return guarded

    def guarded_method(self, obj, name: str, method, refuse):
        """`method` (obj.name, already looked up) wrapped in its guarded_methods check, when
        obj is one of the entry's types (or a subclass, or an instance of one)."""
        type_names, check, *after = self.guarded_methods[name]
        if getattr(method, "sandbox_guarded", False):
            return method  # (a module's function, guarded where the module handed it out)
        if type(obj) is super and obj.__self__ is not None:
            obj = obj.__self__  # super().resize: the method as that object (or class) has it
        if isinstance(obj, types.ModuleType) and not isinstance(getattr(method, "__self__", obj), types.ModuleType):
            obj = method.__self__  # np.random.set_state: the module's global RandomState's method
        if type_names is not None:
            kinds = tuple(t for t in map(lookup, type_names) if isinstance(t, type))
            cls = obj if isinstance(obj, type) else type(obj)
            if not (kinds and issubclass(cls, kinds)) or not callable(method):
                return method
        elif not callable(method):
            return method

        @functools.wraps(method)
        def checked(*args, **kwargs):
            why = check(args, kwargs) if check is not None else None
            if why is not None:
                raise refuse(f"{name}(): {why}")
            if not after:  # (no other reference to the object is held here: numpy's resize counts them)
                return method(*args, **kwargs)
            # the object: the method's, or read from the class, the first argument
            bound = getattr(method, "__self__", None)
            target = bound if bound is not None and not isinstance(bound, type) else (args[0] if args else None)
            if target is None:
                return method(*args, **kwargs)
            results = []
            why = after[0](target, lambda: results.append(method(*args, **kwargs)))
            if why is not None:
                raise refuse(f"{name}(): {why}")
            return results[0]
        checked.sandbox_guarded = True
        return checked

    def copied_attribute(self, obj, name: str, value, refuse):
        """`value` (obj.name, already looked up), as a read-only copy when obj is one of
        the types copied_attributes names for it: writes into it cannot reach obj. Read
        from the class, it is refused: a property's fget would give the live array
        (coo_matrix.row.fget(m)), which the matrix's compiled routines trust."""
        kinds = tuple(t for t in map(lookup, self.copied_attributes[name]) if isinstance(t, type))
        if type(obj) is super and obj.__self__ is not None:
            obj = obj.__self__  # super(coo_matrix, m).row: the same property, for the same matrix
        if kinds and isinstance(obj, type) and issubclass(obj, kinds):
            raise refuse(f"{obj.__name__}.{name} is read on the object (m.{name}, tree.{name}), which gives a "
                         "read-only copy")
        if not kinds or not isinstance(obj, kinds):
            return value

        def copied(array):
            if not hasattr(array, "copy") or not hasattr(array, "setflags"):
                return array
            array = array.copy()
            array.setflags(write=False)
            return array
        return tuple(map(copied, value)) if type(value) is tuple else copied(value)


POLICY = LibraryPolicy(TABLE_MODULES)
