"""`obj.__dict__` of the snippet's own object, as the snippet sees it.

The real instance dict would take any key, and a dunder key becomes a protocol that
library code reads from the instance (copy's __reduce_ex__ and __deepcopy__, numpy's
__array_interface__, which names a raw memory address). The snippet gets a copy of
the attributes instead (a dict: json.dumps and ** work) whose writes go onto the
object through the setattr guard, so `self.__dict__.update(kwargs)` and
`obj.__dict__[name] = value` work for ordinary names and are refused for the others.
A copy kept in a variable does not see attribute changes made after it was read.
"""

from __future__ import annotations

import copy

_MISSING = object()


def own_attributes(owner, setattr_guard, delattr_guard) -> "OwnAttributes":
    """The view of `owner`'s attributes (the guards have checked that it is the snippet's)."""
    return write_through({k: v for k, v in vars(owner).items() if not (k.startswith("__") and k.endswith("__"))},
                         owner, setattr_guard, delattr_guard)


def write_through(items: dict, owner, set_one, delete_one) -> "OwnAttributes":
    """A dict copy of `items` whose writes also go to `owner`: set_one(owner, key, value)
    and delete_one(owner, key), which refuse what the snippet may not write."""
    view = dict.__new__(OwnAttributes)
    dict.update(view, items)
    view._owner, view._setattr, view._delattr = owner, set_one, delete_one
    return view


class OwnAttributes(dict):
    __slots__ = ("_owner", "_setattr", "_delattr")

    def __init__(self, *args, **kwargs):
        # type(obj.__dict__) reaches this class: made by the snippet, it would copy the
        # private attributes of any object
        raise TypeError("this view of names is made by obj.__dict__, vars(obj) or globals() only")

    def __setitem__(self, key, value):
        self._setattr(self._owner, key, value)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        self._delattr(self._owner, key)
        dict.__delitem__(self, key)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other):
        self.update(other)
        return self

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return dict.__getitem__(self, key)

    def pop(self, key, default=_MISSING):
        if key in self:
            value = dict.__getitem__(self, key)
            del self[key]
            return value
        if default is _MISSING:
            raise KeyError(key)
        return default

    def popitem(self):
        if not self:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self))
        return key, self.pop(key)

    def clear(self):
        for key in list(self):
            del self[key]

    # a copy is a plain dict: copying has no object to write to
    def __copy__(self):
        return dict(self)

    def __deepcopy__(self, memo):
        return copy.deepcopy(dict(self), memo)
