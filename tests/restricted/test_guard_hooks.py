"""The attribute read guard as a table of named hooks (sandbox/restricted/guards/reads.py):
the order one read walks, and names that only look like the ones a hook answers."""

from __future__ import annotations

import io
import types

import pytest

from sandbox import profiles
from sandbox.restricted.guards import ExecutionContext, reads, restricted_globals
from sandbox.restricted.imports import Events

BASIC = profiles.allowed_modules(["basic"])


class LooksLikeAName(str):
    """A str subclass whose hash differs from the text's: a dict keyed by names misses it,
    while `==` (what a hook compares with) still matches it."""

    def __hash__(self):
        return 1


@pytest.fixture
def ctx():
    context = ExecutionContext(frozenset(BASIC), Events())
    restricted_globals(context, io.StringIO())
    return context


def test_every_hook_has_a_name_and_says_what_it_guards():
    hooks = [hook for hook, _ in reads.READ_HOOKS] + list(reads.VALUE_HOOKS)
    assert len({hook.__name__ for hook in hooks}) == len(hooks)
    for hook in hooks:
        assert hook.__doc__ and len(hook.__doc__.split()) >= 5, hook.__name__


@pytest.mark.parametrize("name", ["mro", "__new__", "__setattr__", "format", "tb_next", "fset", "shape", "_x"])
def test_a_read_walks_the_hooks_for_its_name_in_the_table_order(name):
    walked = reads._HOOKS_BY_NAME.get(name, reads._HOOKS_FOR_ANY_NAME)
    expected = tuple(hook for hook, names in reads.READ_HOOKS if names is None or name in names)
    assert walked == expected


def test_mro_is_the_guarded_one_for_a_name_that_only_looks_like_it(ctx):
    for name in ("mro", LooksLikeAName("mro")):
        method = ctx.getattr(int, name)
        assert type(method) is types.FunctionType and method() == [int, object], name


def test_object_new_is_the_checked_one_for_a_name_that_only_looks_like_it(ctx):
    for name in ("__new__", LooksLikeAName("__new__")):
        new = ctx.getattr(object, name)
        assert new is not object.__new__ and new.__name__ == "__new__", name
        with pytest.raises(Exception, match="snippet's own classes"):
            new(dict)


def test_a_library_property_setter_is_refused_for_a_name_that_only_looks_like_it(ctx):
    library_property = property(lambda self: 1, lambda self, value: None)   # (not the snippet's functions)
    with pytest.raises(AttributeError, match="library property's"):
        ctx.getattr(library_property, "fset")
    with pytest.raises(AttributeError):   # (its own hash makes the real lookup miss too)
        ctx.getattr(library_property, LooksLikeAName("fset"))
