"""The import policy and the vetting of values, as one object the guards hold
(ModulePolicy): what a snippet's import statement gets, what a module proxy hands out
for module.attr, and vet(), which refuses or replaces a value that must not reach the
snippet, whoever hands it out. The tables it reads are imports.py's."""

from __future__ import annotations

import abc
import contextlib
import importlib
import sys
import types

from sandbox import profiles
from sandbox.restricted import imports
from sandbox.restricted import snippet_files
from sandbox.restricted import stand_ins
from sandbox.restricted.base import SandboxAttributeError, SandboxImportError, SandboxRefused
from sandbox.restricted.imports import (
    CONTAINER_TYPES,
    CONTEXT_TYPES,
    DENIED_OBJECTS,
    OPEN_BY_NAME,
    READ_ONLY_VIEWS,
    REAL_BUILTINS,
    REAL_OPEN,
    SCALAR_TYPES,
    STDLIB_STAND_INS,
    TYPES_ALLOWED,
    MetaclassName,
    ModuleProxy,
    deny_types_of,
    describe_value,
    hidden_danger,
    is_metaclass,
    needs_vet,
)
from sandbox.restricted.libraries.policy import POLICY as library_policy
from sandbox.restricted.subsets import registry


class ModulePolicy:
    """The import hook, module attributes and the vetting of values, for one execution's
    guards (`ctx`, a guards.ExecutionContext): what it refuses is recorded and raised
    through ctx.refuse; the proxies it makes read through ctx; the snippet's subsets and
    the values that stand in for others (ctx.replacements) are the execution's."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.proxies: dict[tuple[str, int], ModuleProxy] = {}

    # -- the import policy
    def permits(self, name: str) -> bool:
        return name == "__future__" or profiles.permits(name, self.ctx.allowed)

    def is_package_of_allowed(self, name: str) -> bool:
        return profiles.leads_to_allowed(name, self.ctx.allowed)

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        """__import__: the import policy, then the library tables for what it loaded."""
        # pending from the start: an interrupt at any bytecode until the tables are applied
        # (as complete_policy is entered, say) leaves them for the next attribute read
        self.ctx.policy_pending = True
        try:
            return self._import(name, fromlist, level)
        finally:
            self.complete_policy()

    def complete_policy(self) -> None:
        """The library tables for the modules loaded so far, applied in full. Run at the
        end of an import; should it fail part way (a RecursionError when the snippet
        imports near the recursion limit, a MemoryError), every attribute read
        completes it before it hands anything out."""
        self.ctx.policy_pending = True
        library_policy.refresh()
        if self.ctx.switched_off is not None:
            self.ctx.switched_off.apply()
        self.ctx.policy_pending = False

    def _import(self, name, fromlist, level):
        if type(fromlist) is list and level == 0 and type(name) is str:
            # C code importing its own helpers (datetime.strptime -> _strptime) goes through
            # PyImport_Import, which calls this hook with a list and discards the result;
            # snippet import statements always pass None or a tuple.
            importlib.import_module(name)
            return None
        if level != 0:
            dots = "." * level if isinstance(level, int) and 0 < level < 10 else "."
            raise self.ctx.refuse("import_blocked", f"relative import from {dots}{name!s:.80} is not allowed: the "
                                                "snippet is not in a package; import modules by their full name",
                              SandboxImportError)
        if type(name) is not str or not name or (
                name != "__future__" and any(not p.isidentifier() or p.startswith("_")
                                             for p in name.split("."))):
            raise self.ctx.refuse("import_blocked", f"import of {name!r:.80} is not allowed: modules are imported "
                                                "by their public dotted name (import json, import os.path)",
                              SandboxImportError)
        if name in registry.SUBSETS and not self.permits(name):
            subset = self._subset_import(name, fromlist)
            # `import os.path` binds os
            return subset if fromlist or "." not in name else self._subset_import(name.split(".")[0], ())
        if not fromlist:
            if not self.permits(name):
                raise self._import_refusal(name)
            load_module(name)
            top = name.split(".")[0]
            return self.proxy(top, sys.modules[top])
        # from NAME import a, b: NAME may be a package that only leads to allowed modules.
        if not (self.permits(name) or self.is_package_of_allowed(name)):
            raise self._import_refusal(name)
        module = load_module(name)
        self.complete_policy()  # (the tables for what the import loaded decide about the names below)
        package_only = not self.permits(name)
        for item in fromlist:
            if type(item) is not str or item == "*" or item.startswith("_"):
                # (a private name may be the snippet's own, never a module's)
                raise self.ctx.refuse("import_blocked", f"from {name} import {item!r:.80} is not allowed: "
                                                    "import the module's public names",
                                  SandboxImportError)
            sub = f"{name}.{item}"
            if self.permits(sub) or self.is_package_of_allowed(sub):
                with contextlib.suppress(ImportError):  # may also be a plain attribute
                    importlib.import_module(sub)
                if sub in sys.modules:
                    continue
            # (an attribute: its refusal is said here, as an ImportError the snippet can read;
            # IMPORT_FROM would turn the guard's AttributeError into "cannot import name")
            self._check_from_item(name, module, item, package_only)
        return self.proxy(name, module)

    def import_star(self, name: str) -> None:
        """`from name import *`: every public name of the module (its __all__, else
        the names without "_") that the module policy hands out, into the snippet's
        globals; the names it refuses are left out, as if the module had none."""
        self.import_(name)  # the import policy decides, as for `import name`
        module = self.ctx.subsets.get(name) or self.proxy(name, sys.modules[name])
        real = (object.__getattribute__(module, "_ModuleProxy__module") if type(module) is ModuleProxy
                else None)
        if type(module) is registry.ModuleSubset:
            names = registry.names(module)
        else:
            exported = getattr(real, "__all__", None)
            names = list(exported) if isinstance(exported, (list, tuple)) else [n for n in dir(real)
                                                                                 if not n.startswith("_")]
        for attr in names:
            if type(attr) is not str or attr.startswith("_"):
                continue
            try:
                self.ctx.globals[attr] = self.ctx.getattr(module, attr)
            except (AttributeError, SandboxRefused):
                continue

    def _subset_import(self, name, fromlist):
        """`import sys` / `from io import StringIO` without the module's profile: the
        subset of subsets/registry.py, or a refusal that lists it."""
        subset = self.ctx.subsets.get(name)
        if subset is None:
            subset = self.ctx.subsets[name] = registry.make(name, self.ctx.files, self.ctx.refuse_call,
                                                                   self.ctx.Formatter, self.ctx.open, lambda: self.ctx.globals)
            deny_types_of(name)
            for value in registry.values(subset):   # a real class behind one of the subset's: the subset's
                real = stand_ins.real_behind(value)
                if real is not None:
                    self.ctx.replacements[id(real)] = value
        names = registry.names(subset)
        for item in fromlist or ():
            if item not in names:
                raise self.ctx.refuse("import_blocked", f"from {name} import {item!s:.80} is not available "
                                                    f"({registry.WHY[name]}); {name} here has: "
                                                    + ", ".join(sorted(names)), SandboxImportError)
        return subset

    def _check_from_item(self, name, module, item, package_only):
        """`from name import item` where item is not an allowed submodule: it must be an
        attribute that passes the module policy (which records the event if it does not)."""
        refused = None
        try:
            self.module_attribute(name, module, item, package_only, kind="import_blocked")
            return
        except SandboxAttributeError as exc:
            refused = str(exc)
        except AttributeError:
            pass
        if refused is not None:
            exc = SandboxImportError(f"from {name} import {item}: {refused}", name=name)
            exc._sandbox_refused = True
            raise exc
        if profiles.importable(f"{name}.{item}"):
            why = profiles.danger(f"{name}.{item}")
            raise self.ctx.refuse("import_blocked", f"from {name} import {item}: module {name}.{item} is not allowed"
                                                + (f" ({why})" if why else ""), SandboxImportError, name=name)
        raise ImportError(f"cannot import name {item!r} from {name!r}", name=name)

    def _import_refusal(self, name: str) -> SandboxImportError:
        detail = f"import of module {name!r} is not allowed: {profiles.import_advice(name, self.ctx.allowed)}"
        return self.ctx.refuse("import_blocked", detail, SandboxImportError, name=name)

    def proxy(self, name: str, module) -> ModuleProxy:
        key = (name, id(module))
        if key not in self.proxies:
            self.proxies[key] = ModuleProxy._make(name, module, self.ctx, not self.permits(name))
        return self.proxies[key]

    def module_attribute(self, modname, module, attr, package_only, kind="attribute_blocked"):
        """The policy for `module.attr` (attribute access and `from module import attr`)."""
        if type(attr) is not str or attr.startswith("_"):
            # Only the interpreter gets here (the guards refuse "_" names first): silent.
            raise AttributeError(attr)
        qual = f"{modname}.{attr}"
        if modname == "types" and attr not in TYPES_ALLOWED:
            raise self.ctx.refuse(kind, f"{qual} is not available in the sandbox (functions, code and classes are "
                                    "made with def, lambda and class statements): to ask whether x is a function, "
                                    f"use callable(x); types here has {', '.join(sorted(TYPES_ALLOWED))}")
        missing = False
        try:
            value = getattr(module, attr)
        except AttributeError:  # never re-raised: its .obj is the real module
            missing = True
        if missing:
            if not (self.permits(qual) or self.is_package_of_allowed(qual)):
                raise AttributeError(f"module {modname!r} has no attribute {attr!r}")
            try:
                value = importlib.import_module(qual)
            except ModuleNotFoundError as exc:
                if exc.name != qual:
                    raise  # (a submodule that is there, missing one of its own imports)
                # neither an attribute nor a submodule: missing, as hasattr() and getattr(m, name, default) expect
                raise AttributeError(f"module {modname!r} has no attribute {attr!r}") from None
        if isinstance(value, types.ModuleType):
            return self.module_value(value, qual, kind)
        if package_only:
            raise self.ctx.refuse(kind, f"{qual} is not available: only the allowed submodules of "
                                    f"{modname} are")
        view = READ_ONLY_VIEWS.get(type(value))
        if view is not None:
            self.check_container(dict(value) if isinstance(value, dict) else list(value), qual, kind)
            return view(value)
        value = self.checked(value, qual, kind)
        if attr in library_policy.guarded_methods:
            # (here too: `from struct import pack_into` reaches the module without the guards' getattr)
            value = library_policy.guarded_method(module, attr, value, self.ctx.refuse_call)
        return value

    def module_value(self, module, qual, kind="attribute_blocked"):
        """A module reached as an attribute: a proxy if allowed, else refused."""
        real = getattr(module, "__name__", None)
        real = real if isinstance(real, str) else "?"
        if sys.modules.get(qual) is module and (self.permits(qual) or self.is_package_of_allowed(qual)):
            return self.proxy(qual, module)
        # Reached through another module (uuid.os): only a module allowed itself. A mere
        # parent package of an allowed module (os for os.path) is for import statements
        # and for walking down from that package, never a gadget's catch.
        if self.permits(real):
            return self.proxy(real, module)
        raise self.ctx.refuse(kind, f"{qual} is the module {real!r}, which is not allowed: use the names the "
                                "module itself offers (get_sandbox_info lists the modules that are on)")

    def checked(self, value, where, kind="attribute_blocked"):
        """vet() for a single value, a search for a plain container."""
        if type(value) in CONTAINER_TYPES:
            return self.check_container(value, where, kind)
        if type(value) in SCALAR_TYPES or not needs_vet(value):
            return value
        return self.vet(value, where, kind)

    def check_container(self, container, where, kind="attribute_blocked"):
        found = hidden_danger(container, lambda item: self._handed_out_as_is(item, where, kind))
        if found is not None:
            self.vet(found, f"a value inside {where}", kind)  # raises, or...
            raise self.ctx.refuse(kind, f"{where} holds {describe_value(found)}, which is not available "
                                    "in the sandbox")  # ...a proxy is no excuse to hand out the container
        return container

    def _handed_out_as_is(self, value, where, kind) -> bool:
        """An object a subset hands out as it is (sys.version_info), found in a container."""
        if imports.subset_original(value) is None:
            return False
        try:
            return self.vet(value, where, kind) is value
        except SandboxAttributeError:
            return False   # (the refusal is said again, with the container: check_container)

    def abc_meta_name(self) -> MetaclassName:
        """The execution's one name for abc.ABCMeta."""
        key = id(abc.ABCMeta)
        if key not in self.ctx.replacements:
            self.ctx.replacements[key] = MetaclassName(abc.ABCMeta, self.ctx.refuse_call)
        return self.ctx.replacements[key]

    def vet(self, value, where, kind="attribute_blocked"):
        """Refuse or replace values that must not reach the snippet, whoever hands them out."""
        if value is abc.ABCMeta:
            return self.abc_meta_name()
        if is_metaclass(value):
            raise self.ctx.refuse(kind, f"{where} is a metaclass ({value.__name__}), which is not available: "
                                    "classes are made with class statements")
        if value is REAL_BUILTINS:
            raise self.ctx.refuse(kind, f"{where} is the interpreter's own builtins dictionary (library code that "
                                    "evaluates strings puts it into the dict it is given as __builtins__), which "
                                    "is not available: use the builtins by name, and skip that key")
        if isinstance(value, imports.INTERNAL_TYPES):
            if isinstance(value, types.ModuleType):
                return self.module_value(value, where, kind)
            if isinstance(value, CONTEXT_TYPES):
                raise self.ctx.refuse(kind, f"{where} is a {type(value).__name__} of contextvars, which is not "
                                        "available: the interpreter's context variables (decimal's current "
                                        "context is one) stay out of reach; keep state in a variable, or pass it "
                                        "as an argument")
            raise self.ctx.refuse(kind, f"{where} is a {type(value).__name__}, which is not available: frames, code "
                                    "objects, tracebacks and the import system's loaders stay out of reach (for "
                                    "an error's text: str(e) or traceback.format_exc(); for a module: import it)")
        key = id(value)
        if key in self.ctx.replacements:
            return self.ctx.replacements[key]
        is_open = value is REAL_OPEN or key in library_policy.by_path_ids
        if is_open and self.permits("io"):
            return self.ctx.open  # io.open is open(): the profile's, by path only
        # made once per execution: the stand-in for a class keeps its identity
        if key in library_policy.replaced_ids:
            made = self.ctx.replacements[key] = library_policy.replaced_ids[key](self.ctx.refuse_call)
            return made
        if key in STDLIB_STAND_INS:
            made = self.ctx.replacements[key] = STDLIB_STAND_INS[key](self.ctx)
            return made
        if type(value) is types.GenericAlias:
            return types.GenericAlias(self.vet(value.__origin__, where, kind), value.__args__)
        if key in library_policy.refused_ids:
            raise self.ctx.refuse(kind, f"{where}: {library_policy.refused_ids[key]}")
        if key in library_policy.keyword_guards:
            return library_policy.keyword_guard(value, self.ctx.refuse_call)
        if key in library_policy.named_file_writers:
            return snippet_files.writing_through_open(value, *library_policy.named_file_writers[key], self.ctx.open)
        if key in stand_ins.HIDDEN:   # (the execution's stand-in for it is in self.ctx.replacements, when it made one)
            raise self.ctx.refuse(kind, f"{where} is the library class behind the sandbox's {value.__name__}, which is "
                                    "not available (its methods would run without the sandbox's checks): use "
                                    f"{value.__name__} as the module hands it out")
        if key in DENIED_OBJECTS or (is_open and not self.permits("io")):
            denied = DENIED_OBJECTS.get(key, OPEN_BY_NAME)
            name, instead = denied.split(": ", 1)
            label = where if where == name else f"{where} ({name})"
            raise self.ctx.refuse(kind, f"{label} is not available in the sandbox: {instead}")
        original = imports.subset_original(value)
        if original is not None and not self.permits(original[0]):
            # the subset's object instead, as `import` gives it where the module's profile is off
            module, attr = original
            return getattr(self._subset_import(module, ()), attr)
        return value


def load_module(name: str):
    """importlib.import_module for a name the policy allows; when that very module is
    missing, a ModuleNotFoundError (so `except ImportError:` fallbacks still work) that
    says so, rather than one that reads like a typo."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (name == exc.name or name.startswith(exc.name + ".")):
            raise  # a dependency of the module, missing: the library's own message says which
        raise ModuleNotFoundError(f"No module named {exc.name!r}: it is allowed here but not installed on this "
                                  "server, and the sandbox cannot install packages; use the modules that are "
                                  "(get_sandbox_info lists them)", name=exc.name) from None
