"""The snippet's `ast` (a subset): code parsed into a tree, walked, changed and
printed back as text (unparse), never compiled or run. compile() is not among
the snippet's builtins and nothing the snippet can call compiles a tree it
hands over, so a tree is data here, whose nodes the snippet may also write
(library_policy.writable_families).

The module's walkers (walk, dump, iter_fields, a visitor's generic_visit...)
read each node's attributes by the names in its `_fields`, past the guards.
Every node of a tree is an ast.AST, whose `_fields` are the library's public
names (a snippet class derived from a node may not define them, nor set them on
an instance: rp_guards.check_class and write_private). The object a walk starts
from is checked to be a node too: an object of the snippet's own with
`_fields = ('__globals__',)` would otherwise be read by those names. A visitor
dispatches with getattr(self, 'visit_' + name), so it must be the snippet's
visitor, never a library's (pandas visits its expressions with one).
"""

from __future__ import annotations

import ast
import functools

from sandbox.restricted.subsets.subset import Subset

# Deprecated aliases (3.8-3.13) and node classes that no parse makes any more.
_OLD_NODES = frozenset({"Num", "Str", "Bytes", "NameConstant", "Ellipsis", "slice", "Index", "ExtSlice", "Suite",
                        "AugLoad", "AugStore", "Param"})
NODE_CLASSES = tuple(sorted(name for name, value in vars(ast).items()
                            if isinstance(value, type) and issubclass(value, ast.AST) and name not in _OLD_NODES))
FUNCTIONS = ("parse", "literal_eval", "dump", "unparse", "walk", "iter_fields", "iter_child_nodes", "get_docstring",
             "get_source_segment", "copy_location", "fix_missing_locations", "increment_lineno")
NAMES = (*FUNCTIONS, "NodeVisitor", "NodeTransformer", *NODE_CLASSES)


def _public_keywords_only(real_init):
    """A node's constructor sets every keyword it is given as an attribute, past the
    setattr guard: ast.Name(__class__=...), ast.Name(__dict__=d), ast.Name(_fields=...).
    Only the names of fields (and the location attributes), none starting with "_".
    Installed on ast.AST once, for every caller (the library's own nodes take such
    names only)."""
    def __init__(self, *args, **kwargs):
        for name in kwargs:
            if name.startswith("_"):
                raise TypeError(f"{type(self).__name__}() takes the node's fields as keywords "
                                f"({', '.join(type(self)._fields) or 'none'}), not {name!r:.80}")
        real_init(self, *args, **kwargs)
    __init__.__qualname__ = "AST.__init__"
    return __init__


ast.AST.__init__ = _public_keywords_only(ast.AST.__init__)


def _node(value, where: str):
    if not issubclass(type(value), ast.AST):  # (type(), not isinstance: a __class__ property passes that)
        raise TypeError(f"ast.{where} takes a node of a tree (what ast.parse returns, or one made as "
                        f"ast.Name(id='x', ctx=ast.Load())), not {type(value).__name__}")
    return value


def _starting_at_a_node(function, where: str, *, nodes: int = 1):
    """`function`, with its first `nodes` arguments checked to be nodes."""
    @functools.wraps(function)
    def checked(*args, **kwargs):
        if len(args) < nodes:
            raise TypeError(f"ast.{where} takes {nodes} node{'s' if nodes > 1 else ''} as its first argument"
                            f"{'s' if nodes > 1 else ''}")
        for value in args[:nodes]:
            _node(value, where)
        return function(*args, **kwargs)
    del checked.__wrapped__   # (the original is the library's, whose checks are these)
    return checked


def parse(source, filename="<unknown>", mode="exec", *, type_comments=False, feature_version=None):
    """ast.parse(source): the tree of the code in `source` (text or bytes)."""
    if isinstance(source, str):
        source = str.__str__(source)
    elif isinstance(source, (bytes, bytearray)):
        source = bytes(source)
    else:
        raise TypeError(f"ast.parse takes the code as text (str or bytes), not {type(source).__name__}")
    if not isinstance(filename, str):
        raise TypeError("ast.parse(filename=...) is a str: the name shown in a SyntaxError")
    return ast.parse(source, str.__str__(filename), mode, type_comments=bool(type_comments),
                     feature_version=feature_version)


def get_source_segment(source, node, *, padded=False):
    """ast.get_source_segment(source, node): the text `node` was parsed from."""
    if not isinstance(source, str):
        raise TypeError("ast.get_source_segment takes the source text the tree was parsed from")
    return ast.get_source_segment(str.__str__(source), _node(node, "get_source_segment"), padded=bool(padded))


def _checked_visitor(visitor, kind: type, where: str):
    if not issubclass(type(visitor), kind):
        raise TypeError(f"ast.{where} visits with a visitor of the snippet's: subclass ast.{kind.__name__} and "
                        "call visitor.visit(tree)")


class NodeVisitor(ast.NodeVisitor):
    """ast.NodeVisitor: subclass it, define visit_<NodeClass>(self, node) methods and
    call self.generic_visit(node) in them to go on into the node's children."""

    def visit(self, node):
        _checked_visitor(self, NodeVisitor, "NodeVisitor.visit")
        return super().visit(_node(node, "NodeVisitor.visit"))

    def generic_visit(self, node):
        _checked_visitor(self, NodeVisitor, "NodeVisitor.generic_visit")
        return super().generic_visit(_node(node, "NodeVisitor.generic_visit"))


class NodeTransformer(NodeVisitor, ast.NodeTransformer):
    """ast.NodeTransformer: a visitor whose visit_<NodeClass> methods return the node
    that replaces the one visited (or None to remove it)."""


for _made in (NodeVisitor, NodeTransformer):
    _made.__module__ = "ast"


def values() -> dict:
    """The names SUBSET lists."""
    found = {name: getattr(ast, name) for name in NODE_CLASSES}
    found.update(parse=parse, get_source_segment=get_source_segment, literal_eval=ast.literal_eval,
                 NodeVisitor=NodeVisitor, NodeTransformer=NodeTransformer,
                 copy_location=_starting_at_a_node(ast.copy_location, "copy_location", nodes=2))
    for name in ("dump", "unparse", "walk", "iter_fields", "iter_child_nodes", "get_docstring",
                 "fix_missing_locations", "increment_lineno"):
        found[name] = _starting_at_a_node(getattr(ast, name), name)
    return found


SUBSET = Subset(
    # code parsed into a tree, walked, changed and unparsed (never compiled nor run)
    "ast", NAMES,
    "the rest of ast compiles trees to code; here a tree is data: parse, walk or visit it, change it, "
    "and unparse it back to text (literal_eval reads a literal from text)",
    lambda execution: values(),
    shown=(*FUNCTIONS, "NodeVisitor", "NodeTransformer",
           "AST and every node class (Module, FunctionDef, Name, Call, Constant...)"))
