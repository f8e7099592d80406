"""What the policy's tables change in the libraries while a restricted snippet runs (and
reports): functions switched off, checked, forced or wrapped, every module binding of each
included; put back on exit."""

from __future__ import annotations

import contextlib
import errno
import functools
import sys

from sandbox.restricted.libraries.compiled_inputs import signature_of
from sandbox.restricted.libraries.lookup import lookup

_NO_PROGRAMS_ADVICE = "no program can run in the sandbox (a library tried to start one): do the work in Python"
_BY_PATH_ADVICE = "files in the sandbox are named by path, not by file descriptor: pass the file's name"


def _with_keywords(original, *, forced: dict):
    signature = signature_of(original)

    @functools.wraps(original)
    def forcing(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)   # (a mismatch is the call's own TypeError)
        bound.arguments.update(forced)
        return original(*bound.args, **bound.kwargs)
    return forcing


def _refusing_subclass(cls: type, refusal) -> type:
    """`cls` with a load() that refuses (a C class's methods cannot be replaced in place)."""
    return type(cls.__name__, (cls,), {"load": refusal, "__module__": cls.__module__, "__doc__": cls.__doc__})


class SwitchedOff:
    """While a restricted snippet runs (and reports), each loaded entry of switched_off
    is replaced with a refusal, and each of by_path_only with a version that refuses a
    descriptor number; `apply()` again after an import catches modules that import
    loaded. Put back on exit, so the process keeps no trace of one run's policy (a
    pooled child pre-warms in restricted mode). `policy`: the engine (policy.py), whose
    tables say what to change and which records the originals and their other bindings."""

    def __init__(self, policy, refuse):
        self.policy = policy
        self.tables = policy.tables
        self.refuse = refuse
        self.saved: dict[tuple, tuple] = {}

    def apply(self) -> None:
        tables = self.tables
        for qualified, message in tables.switched_off.items():
            def switched_off(*args, _message=message, **kwargs):
                raise self.refuse(_message)
            self._replace(qualified, functools.partial(self._switched_off, off=switched_off))
        for qualified in tables.by_path_only:
            self._replace(qualified, self._by_path_only)
        for qualified in tables.no_programs:
            self._replace(qualified, lambda original: self._no_program)
        for qualified, neutral in tables.neutral_while_running.items():
            self._replace(qualified, lambda original, _neutral=neutral: _neutral)
        for qualified, (check, advice) in tables.checked_source.items():
            self._replace(qualified, functools.partial(self._checked_source, check=check, advice=advice))
        for qualified, check in tables.checked_calls.items():
            self._replace(qualified, functools.partial(self._checked_call, check=check, name=qualified))
        for qualified, forced in tables.forced_keywords.items():
            self._replace(qualified, functools.partial(_with_keywords, forced=forced))
        for qualified, make in tables.wrapped_while_running.items():
            self._replace(qualified, functools.partial(make, refuse=self.refuse))
        for qualified, why in tables.not_subclassed.items():
            def refuse_subclass(cls, *args, _why=why, **kwargs):
                raise self.refuse(f"a subclass of {cls.__mro__[1].__name__}: {_why}")
            self._replace(qualified + ".__init_subclass__", lambda original, _off=refuse_subclass: classmethod(_off))

    def _no_program(self, *args, **kwargs):
        self.refuse(_NO_PROGRAMS_ADVICE)  # (the security event; the exception is the kernel's kind)
        exc = PermissionError(errno.EPERM, _NO_PROGRAMS_ADVICE)
        exc._sandbox_refused = True
        raise exc

    def _switched_off(self, original, *, off):
        """The refusal for a function or method; for a class (a C unpickler, whose methods
        cannot be replaced in place), a subclass whose load() refuses, and the same load()
        set on every subclass a library already derived from it."""
        if not isinstance(original, type):
            return off
        pending = list(original.__subclasses__())
        while pending:
            sub = pending.pop()
            pending.extend(sub.__subclasses__())
            if (id(sub), "load") not in self.saved and not sub.__module__.startswith("sandbox."):
                with contextlib.suppress(TypeError):  # (a C subclass: none is loaded here today)
                    self._set(sub, "load", off)
        return _refusing_subclass(original, off)

    def _replace(self, qualified: str, make) -> None:
        owner_name, _, attr = qualified.rpartition(".")
        if owner_name.partition(".")[0] not in sys.modules:
            return  # (most entries, in most runs: a library not imported; lookup() would find nothing)
        owner = sys.modules.get(owner_name) or lookup(owner_name)  # (a module, or a class)
        if owner is None or not hasattr(owner, attr):
            return
        if (id(owner), attr) not in self.saved:
            original = getattr(owner, attr)
            # (a resolve() later in this run, after an import, then finds the other bindings of
            # the original, not of this replacement: it only records what it has not seen)
            if qualified not in self.tables.by_path_only:  # (io.open is open: library code opens descriptors with it)
                self.policy.originals.setdefault(qualified, original)
            replacement = make(original)
            if isinstance(owner, type) and isinstance(vars(owner).get(attr), (staticmethod, classmethod)) \
                    and callable(replacement) and not isinstance(replacement, (staticmethod, classmethod)):
                # (it wraps the function as the class hands it out, bound already: stored as a
                # plain function it would become a method of the class's instances)
                replacement = staticmethod(replacement)
            self._set(owner, attr, replacement)
        replacement = getattr(owner, attr)
        for module, other in self.policy.other_bindings.get(qualified, ()):
            if (id(module), other) not in self.saved:
                self._set(module, other, replacement)

    def _set(self, owner, attr: str, replacement) -> None:
        # as stored (a class's staticmethod stays one); None when the class inherits it
        self.saved[(id(owner), attr)] = (owner, attr, vars(owner).get(attr))
        setattr(owner, attr, replacement)

    def _checked_call(self, original, *, check, name):
        shown = name.rpartition(".")[0] if name.endswith(".__call__") else name

        @functools.wraps(original)
        def checked(*args, **kwargs):
            why = check(*args, **kwargs)
            if why is not None:
                raise self.refuse(f"{shown}: {why}")
            return original(*args, **kwargs)
        return checked

    def _checked_source(self, original, *, check, advice):
        @functools.wraps(original)
        def checked(*args, **kwargs):
            source = original(*args, **kwargs)
            why = check(source, args, kwargs)
            if why is not None:
                raise self.refuse(f"a library generated Python code from the snippet's names ({why}), and the "
                                  f"sandbox does not run it: {advice}")
            return source
        return checked

    def _by_path_only(self, original):
        @functools.wraps(original)
        def by_path(file, *args, **kwargs):
            if isinstance(file, int):
                raise self.refuse(_BY_PATH_ADVICE)
            return original(file, *args, **kwargs)
        self.policy.by_path_ids.add(id(by_path))
        return by_path

    def __enter__(self):
        self.apply()
        return self

    def __exit__(self, *exc):
        for owner, attr, original in self.saved.values():
            self.policy.by_path_ids.discard(id(getattr(owner, attr)))
            if original is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, original)
        self.saved.clear()
