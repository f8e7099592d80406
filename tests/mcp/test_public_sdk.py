"""The product reaches the `mcp` SDK through its public API only: no private module of the
SDK is imported, and no private attribute of the SDK's objects is read. The SDK's private
names are taken from its own source (every `_name` it assigns on an object or defines), so
a name the SDK adds is covered without a list kept here."""

import ast
import pathlib

import mcp

SANDBOX = pathlib.Path(__file__).resolve().parents[2] / "sandbox"
SDK = pathlib.Path(mcp.__file__).resolve().parent

# Private names still read, where the public API offers no way: each is to be removed,
# never added to. cli: MCPServer.run_stdio_async() takes no streams, so the server's own
# stdio transport (lines capped, fd 0/1 moved off the wire) reaches the lowlevel server only.
# server: the SDK names no client connection publicly (ServerRequestContext holds a
# ServerSession that lasts one request; the connection behind it is private).
KNOWN = {("cli.py", "_lowlevel_server"), ("mcp/server.py", "_connection")}


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def sdk_private_names() -> set[str]:
    names = set()
    for path in SDK.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and private(node.attr):
                names.add(node.attr)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and private(node.name):
                names.add(node.name)
    return names


def attributes_read(tree: ast.AST):
    """`obj._name` and `getattr(obj, "_name", ...)` on anything but the module's own self/cls."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name)
                                                    and node.value.id in ("self", "cls")):
            yield node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str)):
            yield node.args[1].value


def sdk_modules_imported(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


SOURCES = {str(path.relative_to(SANDBOX)): ast.parse(path.read_text()) for path in SANDBOX.rglob("*.py")}


def test_the_sdk_private_names_are_found():
    """The crawl of the SDK's source finds what it is meant to (else every check below passes vacuously)."""
    names = sdk_private_names()
    assert {"_tool_manager", "_lowlevel_server"} <= names, sorted(names)[:20]


def test_no_private_module_of_the_sdk_is_imported():
    wrong = {(path, module) for path, tree in SOURCES.items() for module in sdk_modules_imported(tree)
             if module.split(".")[0] in ("mcp", "mcp_types") and any(private(part) for part in module.split("."))}
    assert wrong == set(), "import what the SDK exports; compose where it exports nothing"


def test_no_private_attribute_of_the_sdk_is_read():
    sdk = sdk_private_names()
    wrong = {(path, name) for path, tree in SOURCES.items() for name in attributes_read(tree)
             if private(name) and name in sdk}
    assert wrong - KNOWN == set(), "use the SDK's public API; compose (wrap, not subclass) where it has none"
    assert KNOWN - wrong == set(), "a name in KNOWN is no longer read: remove it from KNOWN"
