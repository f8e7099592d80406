"""The package's dependencies point one way: every import (function-local ones too) goes to a
module of the same part or of a lower one, and no group of modules imports itself round."""

import ast
import pathlib

SANDBOX = pathlib.Path(__file__).resolve().parents[2] / "sandbox"

# part -> rank; a module may import its own part and parts of a lower rank
RANKS = {
    "settings": 0, "wire": 0,
    "kernel": 1, "restricted": 1, "egress": 1, "codemode": 1,
    "child": 2,
    "forkserver": 3,
    "mcp": 4,
    "entry": 5,
}
# top-level modules by part (a sub-package is a part of its own name)
TOP_LEVEL = {
    "settings": ("config", "profiles", "limits_parse", "layer_names", "install_source", "env_file", "network_allow",
                 "tool_servers", "host_mounts"),
    "kernel": ("libc", "namespaces", "mounts", "privileges", "rlimits", "landlock", "process_names", "seccomp"),
    "child": ("child", "artifacts"),
    "forkserver": ("layers",),
    "entry": ("cli", "__main__"),
}


def module_name(path: pathlib.Path) -> str:
    parts = ("sandbox",) + path.relative_to(SANDBOX).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in SANDBOX.rglob("*.py")}


def part_of(module: str) -> str:
    first = module.split(".")[1] if module != "sandbox" else ""
    for part, names in TOP_LEVEL.items():
        if first in names:
            return part
    assert first in RANKS, f"{module} belongs to no part: add it to TOP_LEVEL or make it a sub-package"
    return first


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            submodules = {f"{base}.{alias.name}" for alias in node.names} & MODULES.keys()
            found.update(submodules or ({base} & MODULES.keys()))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
    found.discard(module)
    found.discard("sandbox")
    return found


GRAPH = {module: imports_of(module) for module in MODULES if module != "sandbox"}


def test_every_module_belongs_to_a_part():
    for module in GRAPH:
        assert part_of(module) in RANKS


def test_imports_point_down():
    wrong = set()
    for module, targets in GRAPH.items():
        for target in targets:
            source_part, target_part = part_of(module), part_of(target)
            if source_part != target_part and RANKS[target_part] >= RANKS[source_part]:
                wrong.add((module, target))
    assert wrong == set(), "imports that point up or across: pass the collaborator in instead"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert cycles(GRAPH) == []


def test_no_module_is_too_long_to_read_whole():
    long = {module: lines for module, path in MODULES.items()
            if (lines := len(path.read_text().splitlines())) > 600}
    assert long == {}, "split these by concern"
