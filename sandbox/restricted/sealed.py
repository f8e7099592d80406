"""The sandbox's own classes that a snippet uses but may not subclass (the subsets'
wrappers: a logging Formatter, a TemporaryDirectory, a sqlite3 Connection): a snippet
subclass's instances would be the snippet's own objects, whose private attributes and
slots (the real object a wrapper holds) the guards let it read and write.

A class is sealed when the module that defines it says so (seal()); before that, the
module derives its own classes from it. Not by the subclass's __module__, which a
snippet can name for a class it makes (the enum functional API's module=)."""

from __future__ import annotations

import weakref

_SEALED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # class -> what to do instead


class Sealed:
    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        for base in cls.__mro__[1:]:
            advice = _SEALED.get(base)
            if advice is not None:
                raise TypeError(f"{base.__name__} cannot be subclassed in the sandbox: {advice}")
        super().__init_subclass__(**kwargs)


def seal(*classes: type, advice: str = "wrap it in a class of your own") -> None:
    for cls in classes:
        _SEALED[cls] = advice
