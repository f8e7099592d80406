"""`ast` as the sandbox gives it to a restricted snippet (sandbox/restricted/subsets/snippet_ast.py): code
parsed into a tree, walked, visited, changed and unparsed gives plain CPython's output;
the routes by which the module's walkers would read attributes of other objects by
name, a node's constructor would set private names, and a visitor would dispatch on a
library's object stay closed, and nothing compiles a tree. In this process, with no
kernel layer: the Python layer must hold alone."""

from __future__ import annotations

import contextlib
import io
import sys

import pytest

from sandbox import profiles
from sandbox.restricted import run as restricted

BASIC = frozenset(profiles.allowed_modules(["basic"]))


def run(code):
    out, err = io.StringIO(), io.StringIO()
    reply = restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=out, stderr=err)
    return reply, out.getvalue()


def plain(code) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<plain>", "exec", dont_inherit=True), {"__name__": "__main__"})
    return out.getvalue()


SOURCE = '''SOURCE = """
import os, sys as system
from collections import defaultdict
def add(a, b=2):
    \\"\\"\\"Add two numbers.\\"\\"\\"
    return a + b
class Calc:
    def mul(self, x, y):
        return x * y
result = add(1) + Calc().mul(2, 3)
"""
'''

AGENT_SNIPPETS = [
    # what a file defines and imports
    SOURCE + "import ast\ntree = ast.parse(SOURCE)\n"
    "print([n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))])\n"
    "imports = []\nfor node in ast.walk(tree):\n    if isinstance(node, ast.Import):\n"
    "        imports += [(a.name, a.asname) for a in node.names]\n    elif isinstance(node, ast.ImportFrom):\n"
    "        imports.append((node.module, [a.name for a in node.names]))\nprint(imports)\n"
    "print(ast.get_docstring(tree.body[2]), tree.body[2].lineno, tree.body[2].end_lineno)\n"
    "print([arg.arg for arg in tree.body[2].args.args], ast.unparse(tree.body[2].args.defaults[0]))\n",
    # a visitor that counts calls, going on into the children
    SOURCE + "import ast\nclass Calls(ast.NodeVisitor):\n    def __init__(self):\n        self.seen = {}\n"
    "    def visit_Call(self, node):\n        f = node.func\n"
    "        name = f.id if isinstance(f, ast.Name) else f.attr\n"
    "        self.seen[name] = self.seen.get(name, 0) + 1\n        self.generic_visit(node)\n"
    "v = Calls()\nv.visit(ast.parse(SOURCE))\nprint(sorted(v.seen.items()))\n",
    # a transformer that renames, replaces constants, and is printed back as code
    SOURCE + "import ast\nclass Rename(ast.NodeTransformer):\n    def visit_Name(self, node):\n"
    "        if node.id == 'a':\n            node.id = 'first'\n        return node\n"
    "    def visit_Constant(self, node):\n        if isinstance(node.value, int):\n"
    "            return ast.copy_location(ast.Constant(value=node.value * 10), node)\n        return node\n"
    "tree = ast.fix_missing_locations(Rename().visit(ast.parse(SOURCE)))\nprint(ast.unparse(tree))\n",
    # a tree as text, fields by name, source segments, nodes made by hand
    SOURCE + "import ast\ntree = ast.parse(SOURCE)\nprint(ast.dump(ast.parse('x + 1', mode='eval')))\n"
    "print(ast.dump(tree.body[0], include_attributes=True))\n"
    "print([name for name, _ in ast.iter_fields(tree.body[2])], tree.body[2]._fields, ast.Name._fields)\n"
    "print(ast.get_source_segment(SOURCE, tree.body[2].body[1]))\n"
    "node = ast.BinOp(left=ast.Constant(1), op=ast.Add(), right=ast.Name(id='x', ctx=ast.Load()))\n"
    "print(ast.unparse(node), ast.dump(node, indent=1))\n"
    "print(len(list(ast.iter_child_nodes(tree))), ast.literal_eval('[1, (2, 3)]'))\n"
    "ast.increment_lineno(tree, 10)\nprint(tree.body[0].lineno)\n",
    # a match over node classes, and a syntax error as Python gives it
    "import ast\nfor stmt in ast.parse('x = 1\\nprint(x)\\ndef f(): pass').body:\n    match stmt:\n"
    "        case ast.Assign(targets=[ast.Name(id=name)]):\n            print('assign', name)\n"
    "        case ast.Expr(value=ast.Call(func=ast.Name(id=fn))):\n            print('call', fn)\n"
    "        case ast.FunctionDef(name=name):\n            print('def', name)\n"
    "try:\n    ast.parse('def (:')\nexcept SyntaxError as e:\n    print('SyntaxError', e.lineno)\n",
]


@pytest.mark.parametrize("code", AGENT_SNIPPETS)
def test_what_agents_write_with_ast_gives_cpythons_output(code):
    reply, out = run(code)
    assert reply["success"], reply
    assert out == plain(code)


# an object of the snippet's whose _fields name what the walkers must never read on it
FOREIGN = ("import ast\nclass Own:\n    _fields = ('__globals__', '__class__')\n    _attributes = ('lineno',)\n"
           "def f():\n    pass\nf._fields = ('__globals__', '__code__')\n")


@pytest.mark.parametrize("call", [
    "list(ast.iter_fields({x}))", "list(ast.walk({x}))", "ast.dump({x})", "ast.unparse({x})",
    "list(ast.iter_child_nodes({x}))", "ast.NodeVisitor().generic_visit({x})",
    "ast.NodeTransformer().generic_visit({x})", "ast.NodeVisitor().visit({x})",
    "ast.copy_location({x}, ast.Name(id='y'))", "ast.copy_location(ast.Name(id='y'), {x})",
    "ast.fix_missing_locations({x})", "ast.increment_lineno({x})", "ast.get_source_segment('f', {x})",
])
@pytest.mark.parametrize("target", ["Own()", "Own", "f"])
def test_the_walkers_take_nodes_only(call, target):
    reply, out = run(FOREIGN + "result = " + call.format(x=target))
    assert not reply["success"] and "takes a node of a tree" in reply["error"], reply
    assert "__builtins__" not in repr(reply) and "_getattr_" not in repr(reply)


@pytest.mark.parametrize("code", [
    # a library's visitor (pandas visits its expressions with one) never dispatches for the snippet
    "class Other:\n    def visit_Name(self, node):\n        print('dispatched')\n"
    "ast.NodeVisitor.visit(Other(), ast.Name(id='x'))",
    "ast.NodeTransformer.generic_visit([], ast.Name(id='x'))",
    # a node's constructor sets what it is given, past the setattr guard
    "ast.Name(__class__=ast.Constant)", "ast.Name(_fields=('__class__',))", "ast.Name(**{'__dict__': {}})",
    "ast.Constant(**{'__reduce_ex__': print})", "ast.AST(_attributes=('x',))",
    # a node's private names, set afterwards or in a class derived from a node
    "n = ast.Name(id='x')\nn._fields = ('__class__',)", "setattr(ast.Name(id='x'), '_fields', ())",
    "class N(ast.expr):\n    _fields = ('__globals__',)", "class N(ast.expr):\n    pass\nN()._fields = ('x',)",
    "setattr(ast.Name(id='x'), '__class__', ast.Constant)",
    # nothing compiles a tree, and the rest of the module is not there
    "compile(ast.parse('1'), '<x>', 'eval')", "ast.compile", "ast.PyCF_ONLY_AST", "ast._Unparser",
    "ast.parse.__globals__", "ast.NodeVisitor.__mro__", "ast.walk.__wrapped__", "ast.AST.__init__.__globals__",
    "from ast import _Unparser", "import _ast",
])
def test_closed_routes(code):
    reply, out = run("import ast\n" + code)
    assert not reply["success"], reply
    assert reply["error_type"] == "security_violation" or reply["error"].startswith("TypeError"), reply
    assert out == ""


def test_the_visitors_dispatch_only_for_a_visitor_of_the_snippets_own():
    """Without the guards (they refuse an unbound library method on another object
    first): the subset's visitor checks its self itself."""
    import ast

    from sandbox.restricted.subsets import snippet_ast

    class LibraryVisitor:
        def visit_Name(self, node):
            raise AssertionError("dispatched to another object")
    for method in (snippet_ast.NodeVisitor.visit, snippet_ast.NodeVisitor.generic_visit,
                   snippet_ast.NodeTransformer.generic_visit):
        with pytest.raises(TypeError, match="visitor of the snippet's"):
            method(LibraryVisitor(), ast.Name(id="x"))


def test_a_parsed_tree_holds_only_data_and_literal_eval_of_a_node_only_reads_it():
    reply, out = run("import ast\ntree = ast.parse('def f(x=1):\\n    return x')\n"
                     "kinds = sorted({type(v).__name__ for n in ast.walk(tree) for _, v in ast.iter_fields(n)})\n"
                     "def g():\n    pass\nresult = [kinds, ast.literal_eval(ast.Constant(value=g)) is g]")
    assert reply["success"], reply
    kinds, same = reply["result"]
    assert same is True and {"arguments", "list", "str"} <= set(kinds), kinds
    assert not {"code", "function", "frame", "module"} & set(kinds), kinds


def test_the_source_text_is_parsed_as_given():
    """parse() takes the text itself, never what a str subclass's methods answer."""
    reply, out = run("import ast\nclass S(str):\n    def __str__(self):\n        return 'evil()'\n"
                     "    def strip(self, *a):\n        return 'evil()'\nresult = ast.dump(ast.parse(S('1')))")
    assert reply["success"] and "evil" not in reply["result"] and "value=1" in reply["result"], reply


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.NotRequired is new in Python 3.11")
def test_typed_dict_keys_are_readable_on_the_snippets_own_typed_dicts():
    code = ("from typing import TypedDict, NotRequired\nclass Movie(TypedDict):\n    title: str\n"
            "    year: NotRequired[int]\nclass Loose(TypedDict, total=False):\n    a: int\n"
            "print(sorted(Movie.__required_keys__), sorted(Movie.__optional_keys__), Movie.__total__, Loose.__total__)\n")
    reply, out = run(code)
    assert reply["success"] and out == plain(code), reply
    for other in ("import typing\ntyping.TypedDict.__required_keys__", "import json\njson.JSONDecoder.__total__"):
        reply, _ = run(other)
        assert not reply["success"] and reply["error_type"] == "security_violation", reply
