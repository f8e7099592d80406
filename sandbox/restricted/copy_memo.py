"""copy.deepcopy's memo, as the snippet may see it.

The memo maps the id() of everything copied so far to its copy, and keeps every
original alive in memo[id(memo)]: a library object's real `__dict__` and its private
containers among them. Read, it is a write primitive on library objects past every
guard; written in advance, it swaps the snippet's objects into a library object's copy
(deepcopy answers from the memo for any id it finds there).

So the snippet never holds one. Its own `__deepcopy__(self, memo)` gets a MemoHandle
(guards/classes.py check_class wraps the method, however the class got it),
which it can pass on, `copy.deepcopy(value, memo)`, and in which it can record and look
up its own copy, `memo[id(self)] = new`, nothing else; and copy.deepcopy takes no
other memo from the snippet (stdlib_stand_ins.py).
"""

from __future__ import annotations

import copy

_KEY = object()  # only this module makes handles: one around a snippet's own dict would be the door
ADVICE = ("a __deepcopy__ may pass its memo on (copy.deepcopy(value, memo)) and record its own copy "
          "(memo[id(self)] = new); other keys of the copy module's memo are not available")


class MemoHandle:
    __slots__ = ("_memo", "_own", "_refuse")

    def __init__(self, memo: dict, obj, refuse, key):
        if key is not _KEY:
            raise TypeError("a memo handle is made by the sandbox only")
        # (the object itself, not its id: an id is reused once its object is gone)
        self._memo, self._own, self._refuse = memo, obj, refuse

    def _checked(self, key):
        if type(key) is not int or key != id(self._own):
            raise self._refuse(f"the memo of copy.deepcopy: only the key id(self) is the snippet's: {ADVICE}")
        return key

    def __setitem__(self, key, value):
        self._memo[self._checked(key)] = value

    def __getitem__(self, key):
        return self._memo[self._checked(key)]

    def __contains__(self, key):
        return self._checked(key) in self._memo

    def get(self, key, default=None):
        return self._memo.get(self._checked(key), default)

    def __iter__(self):
        raise self._refuse(f"the memo of copy.deepcopy cannot be listed: {ADVICE}")

    def __len__(self):
        raise self._refuse(f"the memo of copy.deepcopy cannot be listed: {ADVICE}")

    def __repr__(self):
        return "<copy.deepcopy memo>"


def guarded_method(method, refuse):
    """A snippet class's __deepcopy__ (a function, or any callable the class holds),
    called with a handle in place of the memo."""
    bind = getattr(type(method), "__get__", None)

    def __deepcopy__(self, memo=None):
        handle = memo if type(memo) is MemoHandle else MemoHandle({} if memo is None else memo, self, refuse, _KEY)
        return (bind(method, self, type(self)) if bind is not None else method)(handle)
    return __deepcopy__


def deepcopy(refuse):
    """copy.deepcopy as the snippet calls it: with no memo, or the handle it was given."""
    real = copy.deepcopy

    def deepcopy(x, memo=None):
        if memo is None:
            return real(x)
        if type(memo) is not MemoHandle:
            raise refuse(f"copy.deepcopy(x, memo): {ADVICE}; call copy.deepcopy(x) to start a copy")
        return real(x, memo._memo)
    deepcopy.__qualname__, deepcopy.__module__, deepcopy.__doc__ = "deepcopy", "copy", real.__doc__
    return deepcopy
