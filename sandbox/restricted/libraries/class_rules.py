"""What a class of the snippet's derived from a library class may not touch: the state the
library's compiled code trusts (state_names, c_attribute_owner), and the private names a
library base keeps for itself (package_private_names)."""

from __future__ import annotations

import dis
import sys
import types

from sandbox import profiles

# Packages whose classes keep state that their compiled code trusts (BSpline's t, c and k are
# read past their ends when they disagree): a class of the snippet's derived from one of
# them may not set, delete or shadow the attributes the library's own code uses.
STATE_TRUSTING_PACKAGES = frozenset(name.split(".")[0] for name in profiles.DATA_SCIENCE) | {"mpmath"}

_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})


def _code_names(code) -> set:
    """The attribute and global names a code object (and the code nested in it) uses."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def state_names(library_bases, writable_attributes: dict) -> frozenset:
    """The names that the classes of STATE_TRUSTING_PACKAGES among `library_bases` use
    in their own code (self.c, self.indices...), but those whose writes the library
    checks itself: a C attribute's setter, `writable_attributes` (a Python property's
    setter may pass anything on: BSpline's c does)."""
    used, checked = set(), set()
    for base in library_bases:
        if (getattr(base, "__module__", None) or "").split(".")[0] not in STATE_TRUSTING_PACKAGES:
            continue
        checked |= writable_attributes.get(base, frozenset())
        for name, value in vars(base).items():
            if type(value) is types.GetSetDescriptorType:
                checked.add(name)
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            functions = (value.fget, value.fset, value.fdel) if isinstance(value, property) else (
                getattr(value, "func", None), value)
            for function in functions:
                if isinstance(function, types.FunctionType):
                    used |= _code_names(function.__code__)
    # (dunders are the class's protocol, never instance state: a class body's __module__ and __doc__)
    return frozenset(name for name in used - checked if not (name.startswith("__") and name.endswith("__")))


def package_private_names(base: type, package: str) -> frozenset:
    """The private names (not dunders) that `base` and its bases define, and that the
    functions and methods of the package's loaded modules use, as attributes or in
    strings (getattr(cls, '_x')): where the library may keep state on a test case."""
    names = set()
    for klass in base.__mro__:
        names.update(vars(klass))

    def add_code(code):
        # attribute names only (not the modules a function imports, nor its globals)
        names.update(op.argval for op in dis.get_instructions(code) if op.opname in _ATTRIBUTE_OPS)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                add_code(const)
            elif isinstance(const, str) and const.isidentifier():
                names.add(const)

    def add(value):
        for item in (value.fget, value.fset, value.fdel) if isinstance(value, property) else (value,):
            item = getattr(item, "__func__", item)
            if isinstance(item, types.FunctionType) and (item.__module__ or "").split(".")[0] == package:
                add_code(item.__code__)

    for module in [m for n, m in list(sys.modules.items()) if n == package or n.startswith(package + ".")]:
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__ and not issubclass(value, tuple):
                for member in list(vars(value).values()):   # (a named tuple's _make is not a test case's)
                    add(member)
            else:
                add(value)
    return frozenset(name for name in names if name.startswith("_") and not name.startswith("__"))


def c_attribute_owner(library_bases, name: str):
    """The first of `library_bases` (of STATE_TRUSTING_PACKAGES) that defines `name` as an
    attribute in C, a getset or member descriptor (ndarray's base, dtype, shape; a slot),
    or None. A method or value of the snippet's under such a name would answer every
    Python read of it (the library's Python code, the sandbox's own checks) while compiled
    code reads the real one."""
    for base in library_bases:
        if ((getattr(base, "__module__", None) or "").split(".")[0] in STATE_TRUSTING_PACKAGES
                and type(vars(base).get(name)) in (types.GetSetDescriptorType, types.MemberDescriptorType)):
            return base
    return None
