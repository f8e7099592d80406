"""The RestrictedPython layer at run time: the guards' context (ExecutionContext: every
_getattr_, _write_, _call_... of one execution), and the builtins and globals a
snippet runs with."""

from __future__ import annotations

import abc
import ast
import builtins
import collections
import contextlib
import dataclasses
import dis
import enum
import functools
import operator
import string
import sys
import types
import typing

from RestrictedPython.Eval import default_guarded_getitem
from RestrictedPython.Guards import (
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    raise_,
    safe_builtins,
    safer_getattr,
)
from RestrictedPython.Utilities import utility_builtins
from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from sandbox.restricted import copy_memo
from sandbox.restricted.libraries.policy import POLICY as library_policy
from sandbox.restricted.subsets import registry
from sandbox.restricted.libraries import pandas_expressions
from sandbox.restricted.libraries.switched_off import SwitchedOff
from sandbox.restricted import private_names
from sandbox.restricted import safe_format
from sandbox.restricted import snippet_files
from sandbox.restricted import snippet_globals
from sandbox.restricted.subsets import snippet_traceback
from sandbox.restricted import special_methods
from sandbox.restricted import stand_ins
from sandbox.restricted.own_attributes import own_attributes
from sandbox.restricted.base import SNIPPET_MODULE, SandboxAttributeError, SandboxRefused
from sandbox.restricted.compiler import FALLBACK_GETATTR, METACLASS_ADVICE, OBJECT_METHODS, SUPER_METHODS
from sandbox.restricted.imports import (
    DENIED_OBJECTS,
    ModulePolicy,
    ModuleProxy,
    CONTAINER_TYPES,
    Events,
    FORMAT_NAMES,
    ClassWrite,
    ForeignWrite,
    StateWrite,
    state_refusal,
    PLAIN_ITERABLES,
    PLAIN_TYPES,
    Printer,
    REAL_BUILTINS,
    SCALAR_TYPES,
    ALWAYS_WRITABLE_TYPES,
    callable_name,
    describe_value,
    inplacevar,
    is_plain_name,
    needs_vet,
    policy_only,
    unproxied,
)


class ExecutionContext(ModulePolicy):
    """Everything one execution's guards share: the allow-list, the proxies, the classes the
    snippet created, and the security events."""

    def __init__(self, allowed: frozenset[str], events: Events, files: str | None = None):
        self.allowed = allowed
        self.events = events
        self.files = files  # where open() reaches: snippet_files.WORKSPACE_FILES, SCRATCH_FILES or None
        self.proxies: dict[tuple[str, int], ModuleProxy] = {}
        self.subsets: dict[str, registry.ModuleSubset] = {}
        self.classes: set[type] = set()
        self.building: list = []   # the bodies of the snippet's class statements being run, innermost last
        self.open_names: dict = {}   # a snippet class -> its open library bases' private names (or False)
        self.defined: dict[type, set] = {}  # a snippet class -> the names the snippet gave it (check_class)
        self.match_classes: dict[tuple, type] = {}  # (class, keywords, positional) -> match_class's class
        self.globals: dict = {}
        self.replacements = {
            id(operator.attrgetter): self.attrgetter,
            id(operator.methodcaller): self.methodcaller,
            id(operator.setitem): self.setitem,
            id(operator.delitem): self.delitem,
            id(functools.update_wrapper): self.update_wrapper,
            id(functools.wraps): self.wraps,
            id(dataclasses.make_dataclass): self.make_dataclass,
            id(dataclasses.dataclass): self.dataclass,
            id(functools.total_ordering): self.total_ordering,
        }
        # string.Formatter, str.format and format_map look fields up through our guards
        self.Formatter = safe_format.bind(self.getattr, self.getitem)
        self.replacements[id(string.Formatter)] = self.Formatter
        self.type = self._make_type()
        self.switched_off: SwitchedOff | None = None  # set while the snippet runs
        self.policy_pending = False   # an import's policy did not finish applying (import_)
        self.library_methods: dict[int, tuple] = {}  # id(function or property) -> (it, its checked form)
        self.state_names: dict[type, frozenset] = {}  # a snippet class -> library_policy.state_names of its bases
        self.overridden_around: dict[type, frozenset] = {}  # a class -> stand_ins.overridden_around(it)

    # -- events and refusals
    def refuse(self, kind: str, detail: str, exc_type=SandboxAttributeError, **kwargs):
        """Record a security event and return the exception to raise."""
        self.events.add(kind, detail)
        exc = exc_type(detail, **kwargs)
        exc._sandbox_refused = True  # a snippet cannot write "_" attributes: unforgeable
        return exc

    def refuse_call(self, detail: str) -> SandboxRefused:
        return self.refuse("call_blocked", detail, SandboxRefused)

    def open(self, *args, **kwargs):
        """The open builtin, by profile (snippet_files)."""
        if self.files == snippet_files.WORKSPACE_FILES:
            return snippet_files.path_open(*args, **kwargs)
        if self.files == snippet_files.SCRATCH_FILES:
            return snippet_files.scratch_open(self.refuse_call, *args, **kwargs)
        return snippet_files.no_open()

    # -- attribute guards
    def getattr(self, obj, name, default=raise_):
        """_getattr_ and the getattr builtin: safer_getattr, plus value vetting."""
        if self.policy_pending:
            self.complete_policy()
        if name == "mro" and isinstance(obj, type):
            return self.mro_method(obj)
        if type(obj) is super and not self.snippet_class(obj.__thisclass__):
            raise self.refuse("attribute_blocked", "super() is available inside the snippet's own classes "
                                                   "(super().method() in a method, or super(MyClass, self)), not "
                                                   f"from {getattr(obj.__thisclass__, '__name__', '?')!s:.80}: call "
                                                   "the method on the object itself (obj.method())")
        if obj is object and type(name) is str and name in OBJECT_METHODS:
            return self.object_method(name)
        if obj is object and name == "__new__":
            return self.checked_new(object.__new__)
        if type(name) is str and name in FORMAT_NAMES and (
                isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str))):
            return safe_format.format_method(self.Formatter, obj, name)
        if type(obj) is registry.ModuleSubset and type(name) is str and not name.startswith("_"):
            try:
                value = getattr(obj, name)
            except AttributeError as exc:  # a part of sys/io the subset leaves out: a refusal
                if default is not raise_:
                    return default  # (what hasattr() answers, and a module proxy's getattr does)
                raise self.refuse("attribute_blocked", str(exc)) from None
            # (vetted as any value: sys's were read from the real sys, which library code could change)
            if type(value) in CONTAINER_TYPES:
                return self.check_container(value, f"{describe_value(obj)}.{name}")
            return self.vet(value, f"{describe_value(obj)}.{name}") if needs_vet(value) else value
        if type(obj) is snippet_traceback.TracebackSummary and name in ("tb_next", "tb_lineno"):
            return getattr(obj, name)  # (data: the real traceback's tb_next stays refused)
        if isinstance(obj, safe_format.GuardedFormatter) and type(name) is str and not name.startswith("_"):
            return getattr(obj, name)  # its lookups are guarded: format, vformat, get_field... are safe
        if type(name) is str and name.startswith("_"):
            allowed = self._underscore_read(obj, name)
            if allowed is not None and type(obj) is ModuleProxy:
                # the module's own name, version, doc: strings only, from the real module
                value = getattr(object.__getattribute__(obj, "_ModuleProxy__module"), name, None)
                if isinstance(value, str) or (value is None and default is not raise_):
                    return value if value is not None else default
                raise SandboxAttributeError(f"module {name} is not available here as a string")
            if allowed is not None:
                try:
                    value = getattr(obj, name)
                except AttributeError:
                    if default is raise_:
                        raise
                    return default
                if name == "__dict__" and type(value) is dict:
                    return own_attributes(obj, self.setattr, self.delattr)
                if name == "__new__":
                    return self.checked_new(value)
                if name == "__traceback__":
                    return snippet_traceback.summary(value)
                if name == "__annotations__" and type(value) is dict:
                    # a copy: dataclasses, NamedTuple and TypedDict make fields (and code)
                    # from these names, which the class statement checked; and searched:
                    # functools.wraps puts the wrapped library function's dict here
                    return self.check_container(dict(value), f"{describe_value(obj)}.{name}")
                if type(value) in CONTAINER_TYPES:  # (defaults, slots, metadata: searched as any container)
                    return self.check_container(value, f"{describe_value(obj)}.{name}")
                return self.vet(value, f"{describe_value(obj)}.{name}") if needs_vet(value) else value
        around = self.overridden_around.get(type(obj))
        if around is None:
            around = self.overridden_around[type(obj)] = stand_ins.overridden_around(type(obj))
        if around and name in around:
            raise self.refuse("attribute_blocked", f"{describe_value(obj)}.{name!s:.80} is the library's own, without "
                                                   "the sandbox's checks: call it on an object of the class the "
                                                   f"module hands out (for a test case: self.{name}(...) in a test "
                                                   "method of your own unittest.TestCase class)")
        refusal = None
        if type(name) is str and name in FORMAT_NAMES:
            refusal = self._extra_refusal(obj)
        if type(name) is str and name in library_policy.refused_attributes:
            why = library_policy.attribute_refusal(obj, name)
            if why is not None:
                raise self.refuse("attribute_blocked", why)
        if isinstance(obj, property) and name in ("fset", "fdel") and not self.owns(getattr(obj, name)):
            # a library property's setter, called on a library object, is the attribute write
            # the write guard refuses (ForeignWrite), by another way
            raise self.refuse("attribute_blocked", f"a library property's {name} is not available: set the "
                                                   "attribute on the object itself (obj.name = value), where the "
                                                   "sandbox allows that write")
        if refusal is None:
            try:
                value = safer_getattr(obj, name, default)
            except (AttributeError, NotImplementedError, TypeError) as exc:
                if self._policy_refusal(obj, name) is None:
                    raise
                refusal = (type(exc), str(exc))
            else:
                if type(name) is str and name in library_policy.copied_attributes:
                    value = library_policy.copied_attribute(obj, name, value, self.refuse_call)
                if type(value) in CONTAINER_TYPES:
                    if type(obj) is ModuleProxy or self.owns(obj):
                        return value  # a module's: checked by module_attribute; the snippet's own: clean
                    return self.check_container(value, f"{describe_value(obj)}.{name}")
                if needs_vet(value):
                    value = self.vet(value, f"{describe_value(obj)}.{name}")
                if isinstance(obj, type) and (isinstance(value, (types.FunctionType, property)) or (
                        hasattr(type(value), "__get__") and type(value).__module__ != "builtins")):
                    value = self.library_method(obj, name, value)
                if type(name) is str and name in library_policy.guarded_methods:
                    value = library_policy.guarded_method(obj, name, value, self.refuse_call)
                if type(name) is str and name in pandas_expressions.METHODS:
                    value = pandas_expressions.evaluating_method(obj, name, value, self.refuse_call)
                if type(name) is str and name in snippet_files.OPENING_METHODS:
                    value = snippet_files.opening_method(obj, name, value, self.open)
                if name == "with_traceback" and isinstance(obj, BaseException):
                    value = snippet_traceback.with_traceback(value)
                return value
        exc_type, message = refusal
        if issubclass(exc_type, AttributeError):
            exc_type = SandboxAttributeError
        if type(name) is str and (name.startswith("_") or name in INSPECT_ATTRIBUTES):
            message = f"{message.rstrip('.')}: {private_names.instead(name)}"
        raise self.refuse("attribute_blocked", f"{describe_value(obj)}.{name!s:.80}: {message}", exc_type)

    @staticmethod
    def _extra_refusal(obj):
        """str.format reached around safer_getattr's str check (super(), UserString)."""
        if (type(obj) is super or isinstance(obj, collections.UserString)
                or (isinstance(obj, type) and issubclass(obj, collections.UserString))):
            return NotImplementedError, "Using the format*() methods of `str` is not safe"
        return None

    @staticmethod
    def _policy_refusal(obj, name):
        try:
            safer_getattr(obj, name, None, getattr=policy_only)
        except Exception as exc:  # noqa: BLE001 - any refusal by the policy
            return str(exc)
        return None

    def getitem(self, obj, index):
        value = default_guarded_getitem(obj, index)
        if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value):
            value = self.vet(value, f"{describe_value(obj)}[...]")
        return value

    def call(self, func, *args, **kwargs):
        """_call_: the result of every call the snippet makes is vetted (and searched, when
        it is a plain container that library code made)."""
        if type(func) is types.MethodType:
            # (the function with its self: on 3.12 a bound method's call takes one more level of
            # the interpreter's C recursion limit, which a deep method recursion would reach first)
            value = func.__func__(func.__self__, *args, **kwargs)
        else:
            value = func(*args, **kwargs)
        kind = type(value)
        if kind in SCALAR_TYPES:
            return value
        if isinstance(value, type) and vars(value).get("__module__") == __name__ and value not in _GUARD_CLASSES:
            # type(), namedtuple(), NamedTuple(), TypedDict() name the caller's module as the
            # class's: that is this frame's, not the snippet's (whose classes are __sandbox__'s)
            type.__setattr__(value, "__module__", SNIPPET_MODULE)
        if kind in CONTAINER_TYPES:
            if type(func) is types.FunctionType and func.__globals__ is self.globals:
                return value  # the snippet's own function: built from vetted values
            return self.check_container(value, f"the result of {callable_name(func)}()")
        if not needs_vet(value):
            return value
        return self.vet(value, f"the result of {callable_name(func)}()")

    def apply(self, func, *args, **kwargs):
        """_apply_ (calls with *args or **kwargs): the unpacked arguments are vetted too,
        since library code may call what they hold."""
        return self.call(func, *self.vet_params(*args), **self.vet_kwargs(kwargs))

    def vet_params(self, *values):
        """_vet_params_: the parameters of a snippet function on entry (library code
        calls snippet functions back with values no guard has seen)."""
        for value in values:
            if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value):
                return tuple(self._vet_argument(v) if (type(v) not in PLAIN_TYPES or v is REAL_BUILTINS)
                             and needs_vet(v) else v for v in values)
        return values

    def _vet_argument(self, value):
        # __exit__(self, exc_type, exc, tb) and ExitStack callbacks get the traceback
        # whenever the body raised: None there, so that the snippet's own exception goes on
        # (traceback.format_exc() gives its text)
        return None if type(value) is types.TracebackType else self.vet(value, "an argument")

    def vet_kwargs(self, kwargs):
        for value in kwargs.values():
            if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value):
                return dict(zip(kwargs, self.vet_params(*kwargs.values())))
        return kwargs

    def vet_one(self, value):
        return self.vet_params(value)[0]

    def vet_matched(self, *values) -> bool:
        """_vet_matched_: the names a match pattern captured, before its guard and body
        run. A value the guards would hand out otherwise is refused (the interpreter
        already bound it); True otherwise, so the case goes on as written."""
        for value in values:
            if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value) \
                    and self.vet(value, "a value a match pattern captured") is not value:
                raise self.refuse("attribute_blocked", f"a match pattern captured {describe_value(value)}, which "
                                                       "the sandbox hands out only through its guards: read it "
                                                       "with an index or attribute instead")
        return True

    def vet_entered(self, value):
        """_vet_entered_: what `with X as name` binds (X.__enter__'s result)."""
        if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value):
            return self.vet(value, "the value of `with ... as`")
        return value

    def getiter(self, ob):
        """_getiter_: iteration, comprehensions and unpacking; every item is vetted."""
        if type(ob) in PLAIN_ITERABLES:
            return ob
        return self._vetted_items(ob)

    async def aiter(self, ob, unpack_spec=None):
        """_getaiter_: `async for` and async comprehensions; every item is vetted. With
        `unpack_spec` (an async comprehension's tuple target), each item is unpacked
        by the guarded unpacking, which vets every element."""
        async for item in ob:
            if (type(item) not in PLAIN_TYPES or item is REAL_BUILTINS) and needs_vet(item):
                item = self.vet(item, "an item of async iteration")
            if unpack_spec is not None:
                item = guarded_unpack_sequence(item, unpack_spec, self.getiter)
            yield item

    def _vetted_items(self, ob):
        for item in ob:
            if (type(item) not in PLAIN_TYPES or item is REAL_BUILTINS) and needs_vet(item):
                item = self.vet(item, "an item of iteration")
            yield item

    def hasattr(self, obj, name):
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def super_attr(self, sup, name):
        """`super().<dunder>` for the snippet's own objects only, and from one of its own
        classes: super(LibraryClass, obj) would skip past the checks a stand-in class
        (stand_ins.py) makes in its own __init__."""
        if (type(sup) is not super or name not in SUPER_METHODS or not self.owns(sup.__self__)
                or sup.__thisclass__ not in self.classes):
            raise self.refuse("attribute_blocked", f"super().{name!s:.80} is only available "
                                                   "inside the snippet's own classes")
        value = getattr(sup, name)
        return self.checked_new(value) if name == "__new__" else value

    def snippet_class(self, cls) -> bool:
        return cls in self.classes or (isinstance(cls, type) and self.being_built(cls))

    def mro_method(self, cls: type):
        """cls.mro() (and type.mro(cls)): the classes of cls's MRO the snippet holds anyway,
        in order: cls itself, its own classes, the bases its class statements named, the
        built-in ones and those an allowed module names (enum.Enum, collections.abc's).
        Never the classes a library keeps behind its public one (pandas.core's mixins) nor
        the real class behind a sandbox's (stand_ins.HIDDEN): their methods run on the
        snippet's objects without what the public class checks or overrides."""
        def visible(klass) -> list:
            if not isinstance(klass, type) or issubclass(klass, type):
                raise TypeError("mro() takes a class")
            named = {base for k in klass.__mro__ if k in self.classes for base in k.__bases__}
            return [k for k in klass.__mro__ if k is klass or k in named or self.snippet_side(k)
                    or (id(k) not in stand_ins.HIDDEN and self.named_by_allowed_module(k))]
        if cls is self.type or cls is type:
            return visible
        return lambda: visible(cls)

    def named_by_allowed_module(self, cls: type) -> bool:
        module = vars(cls).get("__module__")
        return (type(module) is str and self.permits(module)
                and getattr(sys.modules.get(module), _TYPE_QUALNAME(cls), None) is cls)

    def checked_new(self, new):
        """A `__new__` the snippet reached (its class's, super()'s, object's), for the snippet's
        own classes only: object.__new__(LibraryClass) would make a library object whose
        __init__ never ran its checks."""
        def __new__(cls, *args, **kwargs):
            if not (isinstance(cls, type) and self.owns(cls)):
                what = cls.__name__ if isinstance(cls, type) else describe_value(cls)
                raise self.refuse("call_blocked", f"__new__ makes instances of the snippet's own classes, not of "
                                                  f"{what!s:.80}: call that class itself", SandboxRefused)
            return new(cls, *args, **kwargs)
        return __new__

    def library_method(self, cls: type, name, value):
        """`value`, read from the class `cls`: a method (or property) a library class
        defines takes an instance of that class as self. Library code trusts what it
        reads from self, and a stand-in self of the snippet's would choose it
        (csr_matrix.sort_indices(fake) hands fake.indptr and fake.indices to compiled
        code that writes where they say), also once it is placed in a class of the
        snippet's. Static and class methods, and the snippet's own, are as they are."""
        owner = next((klass for klass in cls.__mro__ if name in vars(klass)), None)
        if owner is None or vars(owner)[name] is not value or owner in self.classes:
            return value
        known = self.library_methods.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        refuse, classes = self.refuse_call, self.classes

        def for_instances(function):
            def method(*args, **kwargs):
                mro = type(args[0]).__mro__ if args else ()
                if args and owner not in mro:  # (not isinstance: ABCs take registrations)
                    raise refuse(f"{owner.__name__}.{name} takes a {owner.__name__} as self, not "
                                 f"{type(args[0]).__name__}: call it on one (obj.{name}), library methods do "
                                 "not run on other objects")
                # the method self's own class uses, or one a class of the snippet's overrides: a
                # library class between them that overrides it (a subset refusing it) has the say
                used = next((klass for klass in mro if name in vars(klass)), owner)
                if used is not owner and used not in classes:
                    raise refuse(f"{owner.__name__}.{name} is not the {name} of a {type(args[0]).__name__} "
                                 f"({used.__name__} has its own): call obj.{name}(...) on the object itself")
                return function(*args, **kwargs)
            for attr in ("__name__", "__qualname__", "__doc__", "__module__"):  # (as the library's reads)
                setattr(method, attr, getattr(function, attr, None))
            return method
        if isinstance(value, property):
            checked = property(*(for_instances(f) if f is not None else None
                                 for f in (value.fget, value.fset, value.fdel)), value.__doc__)
        elif callable(value):  # a function as Cython or a decorator makes it: a method all the same
            checked = for_instances(value)
        elif type(value) in _SELF_CHECKING_DESCRIPTORS:
            return value
        else:  # (pandas' cache_readonly, functools.cached_property: they call a library function on self)
            raise refuse(f"{owner.__name__}.{name} is read on an instance (obj.{name}), where it gives its value; "
                         "read from the class it is the library's descriptor, which runs on its own objects only")
        self.library_methods[id(value)] = (value, checked)
        return checked

    # -- write guards
    def owns(self, ob) -> bool:
        """Did the snippet create ``ob`` (its class, function or an instance of its class)?"""
        cls = type(ob)
        if cls in self.classes or cls in ALWAYS_WRITABLE_TYPES:  # the common case first
            return True
        if cls is types.FunctionType:
            return ob.__globals__ is self.globals
        if isinstance(ob, type):
            cls = ob
        return any(base in self.classes for base in cls.__mro__) or self.being_built(cls)

    def being_built(self, cls: type) -> bool:
        """The class the snippet's class statement is making right now: Enum's metaclass
        makes its members (and runs their __init__, which sets their attributes) before
        the statement is done and the class is registered."""
        if not self.building or cls in self.defined:
            return False
        module = vars(cls).get("__module__")     # (read as type itself keeps them: no metaclass answers)
        return (type(module) is str and module == SNIPPET_MODULE
                and _TYPE_QUALNAME(cls) == self.building[-1].__qualname__)

    # -- names that start with "_" (private_names.py)
    def _underscore_read(self, obj, name: str):
        """True when this private or dunder attribute may be read on `obj`; None
        leaves the decision to the usual rules (which refuse it)."""
        kinds = private_names.SAFE_DUNDERS.get(name, ())
        if "own" in kinds or "own class" in kinds:
            # (a bound method's data is its function's: obj.method.__defaults__)
            target = obj.__func__ if type(obj) is types.MethodType and name != "__dict__" else obj
            own = self.only_snippet_classes(target) and ("own" in kinds or isinstance(obj, type))
            return True if own and hasattr(obj, name) else None
        if "enum class" in kinds:
            return True if isinstance(obj, enum.EnumMeta) else None
        if "annotated" in kinds:
            return True if type(obj) is _ANNOTATED_ALIAS else None
        if private_names.private_name_allowed(name):
            if self.only_snippet_classes(obj):
                return True
            if isinstance(obj, tuple) and hasattr(type(obj), "_fields") and name in private_names.PRIVATE_API["namedtuple"]:
                return True
            if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields") \
                    and name in private_names.PRIVATE_API["namedtuple"]:
                return True
            if name in private_names.PRIVATE_API["ast"] and issubclass(obj if isinstance(obj, type) else type(obj),
                                                                        ast.AST):
                return True
            library_names = self.open_base_names(obj)
            if library_names is not None and name not in library_names:
                return True
            return None
        if kinds and (_kind_of(obj) in kinds or "any" in kinds):
            return True
        if name == "__new__" and self.only_snippet_classes(obj):
            # cls.__new__(cls) in an alternative constructor: object's (or a built-in base's),
            # handed out through checked_new, as object.__new__ is
            return True
        if name in SUPER_METHODS and self.owns(obj):
            # Base.__init__(self), self.__add__(other): a method the snippet defined, bound or not.
            # (An inherited library method is not: Base.__init__(foreign, ...) would write onto a
            # library object, a descriptor's __get__(foreign) into its __dict__.)
            method = getattr(obj, name, None)
            function = getattr(method, "__func__", method)
            if type(function) is types.FunctionType and function.__globals__ is self.globals:
                return True
        return None

    def only_snippet_classes(self, ob) -> bool:
        """The snippet's own object all the way down: its function, or a class (or an
        instance of one) whose bases are the snippet's classes, object or built-in
        exceptions. A subclass of a library class is not: the library's private
        attributes stay out of reach."""
        if type(ob) is types.FunctionType:
            return ob.__globals__ is self.globals
        cls = ob if isinstance(ob, type) else type(ob)
        return cls in self.classes and all(map(self.snippet_side, cls.__mro__))

    def open_base_names(self, ob) -> frozenset | None:
        """For a class of the snippet's (or an instance of one) whose library bases all derive
        from library_policy.open_bases (a unittest.TestCase): the private names those keep
        to themselves; the others are the snippet's. None for any other object."""
        cls = ob if isinstance(ob, type) else type(ob)
        return self._open_base_names_of(cls) if cls in self.classes else None

    def _open_base_names_of(self, cls: type) -> frozenset | None:
        names = self.open_names.get(cls)
        if names is None:
            names = frozenset()
            for base in cls.__mro__:
                if self.snippet_side(base):
                    continue
                kept = [library_policy.open_bases[a] for a in base.__mro__ if a in library_policy.open_bases]
                if not kept:
                    names = False   # (a base that is not open: the usual rule)
                    break
                names = names.union(*kept)
            self.open_names[cls] = names
        return names if names is not False else None

    def snippet_side(self, base: type) -> bool:
        """One of the snippet's classes, a built-in class (object, dict, an exception: none
        has a private attribute) or a marker base (private_names.MARKER_BASES): its
        attributes are the snippet's."""
        return base in self.classes or base in private_names.MARKER_BASES or (
            base.__module__ == "builtins" and not issubclass(base, type))

    def vars(self, *args):
        """vars(obj): the attributes of the snippet's own objects, as obj.__dict__ gives
        them (own_attributes.py: writes reach the object through the setattr guard); the
        library's are not its to list. Without an argument, like locals(), it is not
        available: the namespace is the guards' too (globals() gives the snippet's names)."""
        if len(args) != 1:
            raise self.refuse("call_blocked", "vars() needs an object of the snippet's own (vars(obj)); "
                                              "globals() gives the snippet's own names", SandboxRefused)
        (obj,) = args
        if self.only_snippet_classes(obj) and hasattr(obj, "__dict__"):
            if type(vars(obj)) is dict:
                return own_attributes(obj, self.setattr, self.delattr)
            return {k: v for k, v in vars(obj).items() if not (k.startswith("__") and k.endswith("__"))}
        if type(obj) is types.SimpleNamespace:
            # its public attributes, as getattr() reads them (a copy: writes go to setattr)
            public = {k: v for k, v in vars(obj).items() if type(k) is str and not k.startswith("_")}
            return self.check_container(public, "vars() of a SimpleNamespace")
        raise self.refuse("call_blocked", f"vars() of {describe_value(obj)} is not available: it works on the "
                                          "snippet's own objects; use dir() and getattr() for others",
                          SandboxRefused)

    def dir(self, *args):
        """dir(obj): the names that do not start with "_" (and the snippet's own
        objects' private ones). Without an argument: not available, as vars()."""
        if len(args) != 1:
            raise self.refuse("call_blocked", "dir() needs an object (dir(obj)); the snippet's own names: "
                                              "sorted(globals())", SandboxRefused)
        (obj,) = args
        own = self.only_snippet_classes(obj)
        if type(obj) is ModuleProxy:
            names = dir(object.__getattribute__(obj, "_ModuleProxy__module"))
        elif type(obj) is registry.ModuleSubset:
            names = registry.names(obj)
        else:
            names = dir(obj)
        return sorted(n for n in names if not n.startswith("_") or (own and not n.startswith("__")))

    def help(self, *args):
        """help(obj): its name and docstring, printed (no pager, no source), both read
        through the guard as obj.__name__ and obj.__doc__ would be."""
        if len(args) != 1 or isinstance(args[0], str):
            print("help(obj) prints obj's docstring (help(json.dumps), help(df.pivot_table)); dir(obj) lists "
                  "its names; a topic or module is not looked up by name here")
            return
        (obj,) = args
        named = _kind_of(obj) in ("class", "function", "method", "module")  # (what has a __name__ here)
        name = self.getattr(obj, "__name__", None) if named else None
        title = name if isinstance(name, str) else f"an object of type {type(obj).__name__}"
        doc = self.getattr(obj, "__doc__", None)
        print(f"Help on {title}:\n\n{doc.strip() if isinstance(doc, str) and doc.strip() else '(no docstring)'}\n")

    def write_private(self, ob):
        """_write_private_: `obj._x = ...` only on the snippet's own objects."""
        if self.only_snippet_classes(ob):
            return ClassWrite(ob, self) if isinstance(ob, type) else ob
        library_names = self.open_base_names(ob)
        if library_names is not None:
            return ClassWrite(ob, self) if isinstance(ob, type) else StateWrite(ob, self, library_names)
        raise self.refuse("attribute_blocked", f"private attributes (names starting with _) of "
                                               f"{describe_value(ob)} cannot be written: only those of the "
                                               "snippet's own classes can")

    def write_special(self, ob):
        """_write_special_: `cls.__repr__ = fn` only on the snippet's own classes (special_methods.py)."""
        if isinstance(ob, type) and ob in self.classes:
            return special_methods.SpecialMethodWrite(ob, self)
        what = f"the class {_TYPE_QUALNAME(ob)}" if isinstance(ob, type) else f"a {describe_value(ob)} object"
        raise self.refuse("attribute_blocked", f"special methods are set on the snippet's own classes, not on "
                                               f"{what}: " + special_methods.advice("__repr__"))

    def set_special_method(self, cls: type, name, value) -> None:
        """`cls.name = value` for a special method, under the class body's rules."""
        if not special_methods.settable(name):
            raise self.refuse("attribute_blocked", f"{name!r:.80} is not set on a class here: use an ordinary "
                                                   "attribute name, or one of the special methods a class body "
                                                   "may define")
        if not special_methods.is_snippet_function(value, self.owns):
            raise self.refuse("attribute_blocked", f"{cls.__name__}.{name} is set to a def or lambda of the "
                                                   f"snippet's (or None), not {describe_value(value)}: "
                                                   + special_methods.advice(name))
        affected = [cls, *(c for c in self.classes if c is not cls and cls in c.__mro__)]
        if name in ATTRIBUTE_HOOKS and not all(self.snippet_side(base) for c in affected for base in c.__mro__[1:]):
            raise self.refuse("attribute_blocked", f"class {cls.__name__}: {name} is for classes of the snippet's "
                                                   "own all the way down (a library base sets its private "
                                                   "attributes through it); validate in a method or a property "
                                                   "instead")
        if name == "__deepcopy__" and value is not None:  # it gets a handle, never copy's memo (copy_memo.py)
            value = copy_memo.guarded_method(value, self.refuse_call)
        self.check_class_write(cls, name, value)
        self.defined.setdefault(cls, set()).add(name)   # (for the classes derived from it later)
        setattr(cls, name, value)

    def write_guard(self, ob):
        """_write_: full_write_guard's pass-through for dict and list, plus the snippet's own
        objects; everything else gets item writes only (see ForeignWrite)."""
        cls = type(ob)
        if cls is dict or cls is list or cls in library_policy.writable_types:
            return ob
        if self.owns(ob):
            if isinstance(ob, type):
                return ClassWrite(ob, self)
            names = self.library_state(cls)
            return StateWrite(ob, self, names) if names else ob
        if issubclass(cls, library_policy.writable_families):
            return ob
        return ForeignWrite(ob, self)

    def library_state(self, cls: type) -> frozenset:
        """The names a snippet class's library bases keep their state under (empty for
        a class that is the snippet's all the way down), once per class."""
        names = self.state_names.get(cls)
        if names is None:
            bases = [base for base in cls.__mro__ if not self.snippet_side(base)]
            names = self.state_names[cls] = library_policy.state_names(bases) if bases else frozenset()
        return names

    def setattr(self, obj, name, value):
        setattr(self._settable(obj, name, "setattr"), name, value)

    def delattr(self, obj, name):
        delattr(self._settable(obj, name, "delattr"), name)

    def _settable(self, obj, name, what: str):
        """The object to write `name` on: a private name only on the snippet's own
        objects (as `obj._x = ...` is), never a dunder or a guard-family name."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if name.startswith("_"):
            if special_methods.settable(name):
                return self.write_special(obj)
            if not private_names.private_name_allowed(name):
                raise self.refuse("attribute_blocked", f"{what} of {name!r:.80} is not allowed: special names and "
                                                       "the sandbox's own (_x_) are not set by name; use an "
                                                       "ordinary attribute name")
            return self.write_private(obj)
        return self.write_guard(obj)

    def object_method(self, name: str):
        """object.__setattr__ / object.__delattr__ (a frozen dataclass's __post_init__ sets its
        fields with them) on the snippet's own objects, with setattr's name rules."""
        real = getattr(object, name)

        def method(obj, attr, *value):
            if not self.owns(obj) or self._settable(obj, attr, f"object.{name}") is not obj:
                raise self.refuse("attribute_blocked", f"object.{name}() works on the snippet's own objects "
                                                       f"only, not on {describe_value(obj)}")
            return real(obj, attr, *value)
        method.__name__ = method.__qualname__ = name
        return method

    def match_class(self, cls, names: tuple, positional: int):
        """_match_class_: what `case cls(a=..., b=...)` matches through. Its isinstance() is
        cls's, then reads each attribute the pattern will read (the keywords, and
        __match_args__ for the positional ones) through the guards: a refusal stops the
        match, and a value the guards would hand out otherwise (a wrapper, a stand-in, a
        fresh object on each read) is refused too, since the interpreter then reads the
        attribute itself, unguarded. Made once per class and names."""
        if not isinstance(cls, type):
            raise TypeError("called match pattern must be a class")
        key = (cls, names, positional)
        if key not in self.match_classes:
            namespace, bases = {}, ()
            if hasattr(cls, "__match_args__"):
                namespace["__match_args__"] = match_args = cls.__match_args__
                if type(match_args) is not tuple:
                    raise self.refuse("attribute_blocked", f"{cls.__name__}.__match_args__ must be a tuple of "
                                                           "attribute names (__match_args__ = ('x', 'y'))")
                unread = [name for name in match_args[:positional] if not is_plain_name(name)]
                if unread:
                    raise self.refuse("attribute_blocked", f"{cls.__name__}.__match_args__ names {unread[0]!r}, which "
                                                           "a pattern may not read: match fewer positions, or public "
                                                           f"attributes by keyword (case {cls.__name__}(name=...))")
            else:  # int(x), str(s)...: the subject itself, through a base that matches itself too
                match_args = ()
                bases = tuple(base for base in cls.__mro__ if base in _MATCHING_ITSELF)[:1]
            read = (*names, *match_args[:positional])
            ctx = self

            class MatchedThroughGuards(type):
                def __instancecheck__(made, subject):
                    if not isinstance(subject, cls):
                        return False
                    for name in read:
                        try:
                            raw = getattr(subject, name)
                        except AttributeError:
                            return False  # (the interpreter's own read fails the pattern too)
                        if ctx.getattr(subject, name) is not raw:
                            raise ctx.refuse("attribute_blocked", f"case {cls.__name__}(...): its attribute {name!r} is "
                                                                  "not read as it is in a pattern; test it in a guard "
                                                                  f"(case {cls.__name__}() if ...)")
                    return True

            self.match_classes[key] = MatchedThroughGuards(cls.__name__, bases, namespace)
        return self.match_classes[key]

    def metaclass(self, value):
        """_metaclass_: `class C(metaclass=...)` takes abc.ABCMeta (as `class C(ABC)` has it)
        or type, never a metaclass of the snippet's or a library's other ones."""
        if value is self.abc_meta_name():
            return abc.ABCMeta
        if value is self.type:
            return type
        raise self.refuse("attribute_blocked", METACLASS_ADVICE)

    def build_class(self, func, name, /, *bases, **kwargs):
        """__build_class__: remember the classes the snippet defines (they are writable)."""
        self.building.append(func)
        try:
            cls = builtins.__build_class__(func, name, *bases, **kwargs)
        finally:
            self.building.pop()
        if isinstance(cls, type):
            self.check_class(cls, class_body_names(func))
        return cls

    # -- what library code trusts about its own classes
    # contextlib's redirect_stdout swaps getattr(sys, self._stream); dataclasses pastes a
    # Field's `name` into source it exec()s. A snippet's class may add names and override a
    # library base's methods, but not give it one of the library's private names, nor put a
    # descriptor that is not a method (a property, a slot) where a library base has a name:
    # a property answers each read anew, so a value checked once is not the value used.
    # Checked for the names the snippet gave (what a library's own hooks set is theirs), when
    # a class is made and when one is written to, over every snippet class in its MRO.
    def check_class(self, cls: type, names) -> None:
        """A class the snippet made, with the names its body (or namespace) defined."""
        final = next((base for base in cls.__mro__
                      if base in private_names.FINAL_CLASSES or base in library_policy.final_classes), None)
        if final is not None:
            why = private_names.FINAL_CLASSES.get(final) or library_policy.final_classes[final]
            raise self.refuse("attribute_blocked", f"class {cls.__name__}: {why}")
        names = set(names) | set(_slot_names(cls))
        hooks = ATTRIBUTE_HOOKS & set().union(names, *(self.defined.get(k, ()) for k in cls.__mro__[1:]))
        if hooks and not all(map(self.snippet_side, cls.__mro__[1:])):
            raise self.refuse("attribute_blocked", f"class {cls.__name__}: {', '.join(sorted(hooks))} is for classes "
                                                   "of the snippet's own all the way down (a library base sets "
                                                   "its private attributes through it); validate in a method or "
                                                   "a property instead")
        own_deepcopy = vars(cls).get("__deepcopy__")
        if own_deepcopy is not None:  # it gets a handle, never copy's memo (copy_memo.py)
            type.__setattr__(cls, "__deepcopy__", copy_memo.guarded_method(own_deepcopy, self.refuse_call))
        for klass in cls.__mro__:
            for name in (names if klass is cls else self.defined.get(klass, ())):
                if name in vars(klass):
                    self.check_override(cls, name, vars(klass)[name])
        kept = sorted(names & (self._open_base_names_of(cls) or frozenset()))
        if kept:   # (a test case's _testMethodName in the class body: unittest's own name)
            raise self.refuse("attribute_blocked", state_refusal(cls, kept[0]))
        self.defined[cls] = names
        self.classes.add(cls)
        self.check_state_shadows(cls)

    def check_state_shadows(self, cls: type) -> None:
        """A value (not a method) in a snippet class under a name its library bases keep
        state under would answer for that state where an instance has none of its own
        (a property always: BSpline's methods would read the snippet's c)."""
        state = self.library_state(cls)
        if not state:
            return
        for klass in cls.__mro__:
            if klass in self.classes:
                for name, value in vars(klass).items():
                    if name in state and not isinstance(value, _METHOD_KINDS):
                        raise self.refuse("attribute_blocked", f"class {cls.__name__}: {state_refusal(cls, name)}")

    def check_class_write(self, klass: type, name: str, value) -> None:
        """`klass.name = value`: checked for klass and every snippet class derived from it."""
        affected = [klass, *(c for c in self.classes if c is not klass and klass in c.__mro__)]
        for cls in affected:
            if name in (self.open_base_names(cls) or ()):   # (a test case's _classSetupFailed: unittest's)
                raise self.refuse("attribute_blocked", state_refusal(cls, name))
        if not isinstance(value, _METHOD_KINDS):
            for cls in affected:
                if name in self.library_state(cls):
                    raise self.refuse("attribute_blocked", state_refusal(cls, name))
        if not _may_override(klass, name, value) and not any(
                library_policy.c_attribute_owner(cls.__mro__[1:], name) for cls in affected):
            return  # a plain value or a method (the common case: Counter.count += 1)
        for cls in affected:
            self.check_override(cls, name, value)
        self.defined.setdefault(klass, set()).add(name)  # (for the classes derived from it later)

    def check_override(self, cls: type, name: str, value) -> None:
        library_bases = [base for base in cls.__mro__[1:] if not self.snippet_side(base)]
        owner = library_policy.c_attribute_owner(library_bases, name)
        if owner is not None:
            raise self.refuse("attribute_blocked", f"class {cls.__name__}: {name!r:.80} is an attribute of "
                              f"{owner.__module__}.{owner.__qualname__}, which its compiled code and the "
                              "sandbox's checks read as it is: give your method or value another name")
        kind = _may_override(cls, name, value)
        if not kind:
            return
        private, descriptor = kind
        if private and descriptor:
            owner = library_bases[0] if library_bases else None
        else:
            owner = next((base for base in library_bases if name in vars(base)), None)
        if owner is not None and not descriptor and any(name in library_policy.override_hooks.get(base, ())
                                                        for base in library_bases):
            function = value.__func__ if type(value) in (staticmethod, classmethod) else value
            if type(function) is types.FunctionType and self.owns(function):
                return  # a hook the library documents for subclasses to define (rv_continuous._pdf)
        if owner is not None:
            what = "a private name" if private else "a property, slot or descriptor"
            raise self.refuse("attribute_blocked", f"class {cls.__name__}: {name!r:.80} cannot be {what} here: "
                              f"{owner.__module__}.{owner.__qualname__} relies on its own attributes; give "
                              "yours another name (methods may be overridden)")

    # -- classes made at run time: the class-body policy applies to their namespace too
    def check_namespace(self, namespace, where: str) -> dict:
        """The namespace as a plain dict, checked: the copy is what the class is made from
        (a dict subclass's __iter__ could hide from the check what dict() copies)."""
        if not isinstance(namespace, dict):
            raise TypeError(f"{where}: the namespace must be a dict")
        namespace = dict(namespace)
        for key, value in namespace.items():
            if type(key) is not str or (key.startswith("_") and key not in SUPER_METHODS
                                        and key != "__doc__"):
                raise self.refuse("attribute_blocked", f"{where}: a class attribute named {key!r:.80} "
                                                       "is not allowed: a namespace takes ordinary names, __doc__ "
                                                       "and the special methods a class body may define; write a "
                                                       "class statement for anything else")
            # as in a class body (rp_compile's alias rule): the interpreter calls a special
            # method with values no guard has seen (an __exit__ gets the traceback), so it is
            # None or a function the snippet wrote, as is or as a static or class method
            function = value.__func__ if type(value) in (staticmethod, classmethod) else value
            if key in SUPER_METHODS and function is not None and not (
                    type(function) is types.FunctionType and self.owns(function)):
                raise self.refuse("attribute_blocked", f"{where}: the special method {key} is given as a "
                                                       "function of the snippet's (def or lambda) or None, "
                                                       f"not {describe_value(function)}")
        return namespace

    def _make_type(self):
        """The `type` builtin: type(x) as usual (never a metaclass: type(int) is refused),
        isinstance(x, type) as usual, and type(name, bases, namespace) under the
        class-body policy."""
        ctx = self

        class TypeGuard(type):
            def __instancecheck__(cls, obj):
                return isinstance(obj, type)

            def __subclasscheck__(cls, sub):
                return issubclass(sub, type)

            def __call__(cls, *args, **kwargs):
                if len(args) == 1 and not kwargs:
                    result = type(args[0])
                    if issubclass(result, type):
                        raise ctx.refuse("attribute_blocked", f"type() of a class is its metaclass "
                                                              f"({result.__name__}), which is not available")
                    if id(result) in DENIED_OBJECTS or id(result) in library_policy.refused_ids:
                        raise ctx.refuse("attribute_blocked", f"type() of this value is "
                                                              f"{result.__name__}, which is not available; "
                                                              "use callable(x) or isinstance(x, ...)")
                    if needs_vet(result):
                        return ctx.vet(result, "type() of this value")  # a class's stand-in
                    return result
                if len(args) != 3:
                    raise TypeError("type() takes 1 or 3 arguments")
                name, bases, namespace = args
                namespace = ctx.check_namespace(namespace, "type()")
                made = type(name, bases, namespace, **kwargs)
                ctx.check_class(made, namespace)
                return made

        return TypeGuard("type", (), {})

    def make_dataclass(self, cls_name, fields, **kwargs):
        if kwargs.get("namespace") is not None:
            kwargs["namespace"] = self.check_namespace(kwargs["namespace"], "make_dataclass()")
        for base in kwargs.get("bases") or ():
            self.check_field_names(base)
        fields = [plain_item(spec, "a dataclass field", self.refuse) for spec in fields]
        made = dataclasses.make_dataclass(cls_name, fields, **kwargs)
        self.check_class(made, [*(kwargs.get("namespace") or ()), *map(_field_name, fields)])
        return made

    def dataclass(self, cls=None, /, **kwargs):
        """dataclasses.dataclass pastes field names into the source it exec()s (with real
        builtins): every field name it will use, its own and inherited, must be a plain
        identifier when it is used, not only when the snippet first wrote it."""
        def wrap(target):
            if target not in self.classes:  # (it writes __init__, __eq__, __repr__... onto the class)
                raise self.refuse("attribute_blocked", "dataclasses.dataclass decorates the snippet's own classes, "
                                                       f"not {describe_value(target)}")
            with self.snippet_module_registered():
                self.check_field_names(target)
                made = dataclasses.dataclass(target, **kwargs)
            if made is not target and isinstance(made, type):  # slots=True makes a new class of the same body
                self.check_class(made, self.defined.get(target, ()))
            return made
        return wrap if cls is None else wrap(cls)

    @contextlib.contextmanager
    def snippet_module_registered(self):
        """dataclasses reads a string annotation ('ClassVar[int]', every one under `from
        __future__ import annotations`) by looking its name up in sys.modules[cls.__module__]:
        for the snippet's classes, a module of the snippet's names that it looks for (typing
        and dataclasses, ClassVar, InitVar and KW_ONLY, under whatever name the snippet gave
        them), there only while dataclasses looks."""
        view = types.ModuleType(SNIPPET_MODULE)
        vars(view).update((name, unproxied(value)) for name, value in list(self.globals.items())
                          if type(name) is str and _dataclass_marker(unproxied(value)))
        before = sys.modules.get(SNIPPET_MODULE)   # (an in-process run of plain Python left its own)
        sys.modules[SNIPPET_MODULE] = view
        try:
            yield
        finally:
            if before is None:
                sys.modules.pop(SNIPPET_MODULE, None)
            else:
                sys.modules[SNIPPET_MODULE] = before

    def total_ordering(self, cls):
        """functools.total_ordering sets the missing comparison methods on the class: the
        snippet's own classes only."""
        if cls not in self.classes:
            raise self.refuse("attribute_blocked", "functools.total_ordering decorates the snippet's own classes, "
                                                   f"not {describe_value(cls)}")
        return functools.total_ordering(cls)

    def check_field_names(self, target) -> None:
        if not isinstance(target, type):
            return
        # (the name annotated KW_ONLY, `_` by convention, is a marker dataclasses never pastes;
        # as text, "KW_ONLY", it is one when dataclasses' own reading of the text says so)
        names = [name for name, kind in target.__dict__.get("__annotations__", {}).items()
                 if kind is not dataclasses.KW_ONLY and not _text_of_kw_only(kind, target)]
        for base in target.__mro__:
            fields = base.__dict__.get("__dataclass_fields__")
            if isinstance(fields, dict):
                names += list(fields) + [getattr(f, "name", None) for f in fields.values()]
        own = self.only_snippet_classes(target)  # private fields, as private attributes: on own classes only
        for name in names:
            if not (is_plain_name(name) or own and private_names.private_field_allowed(name)):
                raise self.refuse("attribute_blocked", f"dataclass field name {name!r:.80} is not allowed: "
                                                       "field names are identifiers; one starting with '_' only "
                                                       "in a class whose bases are all the snippet's own, and "
                                                       "never a special name, a guard's (_x_) or one dataclasses "
                                                       "uses itself (_dflt_*, _type_*): rename the field")

    def check_enum_names(self, names):
        """The enum functional API (Enum('E', names)) defines a class attribute per name:
        dunder and sunder names would define methods and hooks. Returns the names as plain
        values, checked (an iterator is consumed here; a str or list subclass could answer
        enum otherwise than it answered the check)."""
        if isinstance(names, str):
            return [plain_item(name, "an enum member", self.refuse)
                    for name in str.split(str.replace(str.__str__(names), ",", " "))]
        if isinstance(names, (dict, types.MappingProxyType)):
            items = dict(names)
            for name in items:
                plain_item(name, "an enum member", self.refuse)
            return items
        return [plain_item(item, "an enum member", self.refuse) for item in names]

    # -- functools' attribute copiers read and write caller-chosen names: defaults only,
    # and onto functions only (copying __annotations__ onto a class feeds dataclass())
    def update_wrapper(self, wrapper, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS,
                       updated=functools.WRAPPER_UPDATES):
        self._default_copies_only(assigned, updated)
        if isinstance(wrapper, type) or not self.owns(wrapper):
            raise self.refuse("attribute_blocked", "functools.update_wrapper/wraps apply to the snippet's own "
                                                   "functions (the wrapper a decorator of its returns), not "
                                                   f"to {describe_value(wrapper)}")
        # a library function's __dict__ holds its private state: copied only from the snippet's own
        return functools.update_wrapper(wrapper, wrapped, updated=() if not self.owns(wrapped) else updated)

    def wraps(self, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS, updated=functools.WRAPPER_UPDATES):
        self._default_copies_only(assigned, updated)
        return lambda wrapper: self.update_wrapper(wrapper, wrapped)

    def _default_copies_only(self, assigned, updated) -> None:
        if tuple(assigned) != functools.WRAPPER_ASSIGNMENTS or tuple(updated) != functools.WRAPPER_UPDATES:
            raise self.refuse("attribute_blocked", "functools.update_wrapper/wraps copy only the default "
                                                   "attributes in the sandbox")

    # -- safe replacements for operator's unguarded gadgets
    def attrgetter(self, attr, *attrs):
        paths = []
        for name in (attr, *attrs):
            if type(name) is not str:
                raise TypeError("attribute name must be a string")
            paths.append(name.split("."))

        def get(obj):
            values = []
            for path in paths:
                value = obj
                for part in path:
                    value = self.getattr(value, part)
                values.append(value)
            return values[0] if len(values) == 1 else tuple(values)
        return get

    def methodcaller(self, name, /, *args, **kwargs):
        if type(name) is not str:
            raise TypeError("method name must be a string")
        return lambda obj: self.getattr(obj, name)(*args, **kwargs)

    def setitem(self, obj, key, value):
        self.write_guard(obj)[key] = value

    def delitem(self, obj, key):
        del self.write_guard(obj)[key]


# Library types whose attributes are meant to be set by user code: getcontext().prec = 50.


# --------------------------------------------------------------------------- builtins

_EXCEPTIONS = {
    name: value for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException) and not name.startswith("_")
}

_PLAIN_BUILTINS = {
    name: getattr(builtins, name) for name in (
        "list", "tuple", "dict", "set", "frozenset", "bytes", "bytearray", "enumerate", "zip",
        "map", "filter", "reversed", "sorted", "min", "max", "sum", "any", "all", "iter",
        "next", "object", "property", "staticmethod", "classmethod", "super", "type", "format",
        "bin", "ascii", "NotImplemented", "Ellipsis")
}


def _base_builtins() -> dict:
    """safe_builtins + the harmless utility_builtins + what ordinary code needs.

    limited_builtins is left out: its range() refuses more than 1000 items and its list()
    refuses strings, which breaks ordinary code; size limits are the rlimits' job.
    """
    names = dict(safe_builtins)
    names.pop("_getattr_", None)  # safer_getattr with default None: ours raises instead
    names.update({k: v for k, v in utility_builtins.items()
                  if not isinstance(v, types.ModuleType) and k != "string"})
    names.update(_EXCEPTIONS)
    names.update(_PLAIN_BUILTINS)
    return names


_BASE_BUILTINS = _base_builtins()


_TYPE_QUALNAME = vars(type)["__qualname__"].__get__
_ANNOTATED_ALIAS = type(typing.Annotated[int, 0])


def _dataclass_marker(value) -> bool:
    """What dataclasses looks for behind a name of a string annotation."""
    return (value is typing or value is dataclasses
            or value is typing.ClassVar or value is dataclasses.InitVar or value is dataclasses.KW_ONLY
            or type(value) is dataclasses.InitVar
            or type(value) is getattr(typing, "_GenericAlias", None) and value.__origin__ is typing.ClassVar)


def _text_of_kw_only(annotation, cls) -> bool:
    """dataclasses' own test of a string annotation for KW_ONLY (sys.modules holds the
    snippet's names while it runs: snippet_module_registered)."""
    is_type, is_kw_only = getattr(dataclasses, "_is_type", None), getattr(dataclasses, "_is_kw_only", None)
    return (type(annotation) is str and is_type is not None and is_kw_only is not None
            and bool(is_type(annotation, cls, dataclasses, dataclasses.KW_ONLY, is_kw_only)))


def restricted_globals(ctx: ExecutionContext, stdout) -> dict:
    names = dict(_BASE_BUILTINS)
    names.update(
        getattr=ctx.getattr, hasattr=ctx.hasattr, setattr=ctx.setattr, delattr=ctx.delattr, type=ctx.type,
        __import__=ctx.import_, __build_class__=ctx.build_class, vars=ctx.vars, dir=ctx.dir,
        input=_no_input, open=ctx.open, exit=_exit, quit=_exit, help=ctx.help,
    )
    for name, advice in WITHHELD_BUILTINS.items():
        names[name] = _withheld(ctx, name, advice)
    names["globals"] = snippet_globals.globals_for(ctx)
    glb = {
        "__builtins__": names,
        "__name__": SNIPPET_MODULE,
        "__metaclass__": type,
        "_getattr_": ctx.getattr,
        "_getitem_": ctx.getitem,
        "_getiter_": ctx.getiter,
        "_getaiter_": ctx.aiter,
        "_call_": ctx.call,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": ctx.write_guard,
        "_write_private_": ctx.write_private,
        "_write_special_": ctx.write_special,
        "_import_star_": ctx.import_star,
        "_inplacevar_": inplacevar,
        "_apply_": ctx.apply,
        "_vet_params_": ctx.vet_params,
        "_vet_kwargs_": ctx.vet_kwargs,
        "_vet_one_": ctx.vet_one,
        "_vet_entered_": ctx.vet_entered,
        "_vet_matched_": ctx.vet_matched,
        "_print_": lambda getattr_: Printer(stdout, getattr_),
        "_super_attr_": ctx.super_attr,
        "_class_of_": ctx.type,  # x.__class__ (rp_compile): what type(x) gives
        FALLBACK_GETATTR: public_getattr,
        "_metaclass_": ctx.metaclass,
        "_match_class_": ctx.match_class,
        "_match_value_": MatchedValue,
    }
    ctx.globals = glb
    return glb


class MatchedValue:
    """What a value pattern (`case Color.RED:`) reads back: its dotted name's value, read
    through the guards before the match statement (rp_compile.visit_MatchValue)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def class_body_names(body) -> set:
    """The names a class statement's body binds (its code's STORE_NAMEs), as the class
    namespace gets them: private names already mangled."""
    return {op.argval for op in dis.get_instructions(body.__code__) if op.opname == "STORE_NAME"}


def _slot_names(cls: type) -> list:
    """The attributes the class's `__slots__` made (read from the class: `__slots__` itself
    may have been an iterator, spent by then)."""
    return [name for name, value in vars(cls).items() if type(value) is types.MemberDescriptorType]


_ENUM_PROPERTY = getattr(enum, "property", None)  # (3.11+)
# The built-in classes whose one positional pattern is the subject itself (`case int(n)`).
_MATCHING_ITSELF = (bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)
# What a class body defines as a method (check_override lets these override a library's).
_METHOD_KINDS = (types.FunctionType, types.BuiltinFunctionType, classmethod, staticmethod)
# descriptors of library classes written in C that check the type of the object they are
# given (a named tuple's fields): handed out from the class as they are
_SELF_CHECKING_DESCRIPTORS = (type(collections.namedtuple("_Pair", "a").a),)


def _may_override(cls: type, name: str, value):
    """(private, descriptor) when `name = value` in a class could redefine what a library
    base trusts; None for a public plain value or method."""
    if type(value) is _ENUM_PROPERTY and isinstance(getattr(value, "member", None), cls):
        return None  # an enum member whose name a mixin type has: enum's own redirect to it
    private = name.startswith("_") and not name.startswith("__") and not name.endswith("_")
    # a descriptor that is not a method: a property, a slot, anything that answers each read anew
    descriptor = hasattr(type(value), "__get__") and not isinstance(value, _METHOD_KINDS)
    return (private, descriptor) if private or descriptor else None


def _field_name(spec):
    """A field spec plain_item made: a name, or (name, type[, field])."""
    return spec if type(spec) is str else spec[0]


def plain_item(item, what: str, refuse):
    """A name, or a (name, ...) tuple, as exact str and tuple, its name plain (is_plain_name):
    library code that pastes or defines the name then sees what was checked."""
    if type(item) in (tuple, list):
        item = tuple(item)
    elif type(item) is not str:
        raise refuse("attribute_blocked", f"{what} is given as a name or a (name, value) pair of plain values, "
                                          f"not a {type(item).__name__}")
    name = item if type(item) is str else (item[0] if item else None)
    if not is_plain_name(name):
        raise refuse("attribute_blocked", f"{what} named {name!r:.80} is not allowed: names are identifiers "
                                          "that do not start with '_'")
    return item


def public_getattr(method):
    """A snippet class's __getattr__, asked only for public names: trusted code looks up
    protocols by dunder name (numpy's __array_interface__, copy's __deepcopy__) and
    libraries private markers (pandas' _typ), and a catch-all must not answer them."""
    def __getattr__(self, name):
        if type(name) is not str or name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!s:.80} object has no attribute {name!r:.80}")
        return method(self, name)
    return __getattr__


# Special methods every attribute write of an instance goes through (check_class).
ATTRIBUTE_HOOKS = frozenset({"__setattr__", "__delattr__"})

# Builtins a snippet does not get, and what to use instead (validate reports their use too).
WITHHELD_BUILTINS = {
    "locals": "the snippet's names are simply its variables; globals() lists the module's, and a function "
              "can return what it wants to show",
    "compile": "write the code directly: code is not built from strings here",
    "memoryview": "use bytes or bytearray and slices",
}


def _withheld(ctx, name: str, advice: str):
    def withheld(*args, **kwargs):
        raise ctx.refuse_call(f"{name}() is not available in the sandbox: {advice}")
    withheld.__name__ = withheld.__qualname__ = name
    return withheld


def _exit(code=None):
    """exit() / quit() as in a script: SystemExit (0 or None: the run went well)."""
    raise SystemExit(code)


def _no_input(*args, **kwargs):
    raise RuntimeError("input() has no stdin in the sandbox: put the data in the code (a string or a list), "
                       "or pass files with the filesystem profile")


def _kind_of(obj) -> str:
    """The kind private_names.SAFE_DUNDERS speaks of."""
    if isinstance(obj, type):
        return "class"
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return "function"
    if isinstance(obj, types.MethodType):
        return "method"
    if isinstance(obj, BaseException):
        return "exception"
    if type(obj) is ModuleProxy:
        return "module"
    return "other"


# This module's own classes (a call that returns one leaves its __module__ as it is).
_GUARD_CLASSES = frozenset(value for value in tuple(globals().values())
                           if isinstance(value, type) and value.__module__ == __name__)
