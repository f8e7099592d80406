"""validate(): check a snippet without running it, with the same compiler and
the same import hook as execute(), so that the two never disagree."""

from __future__ import annotations

import ast

from sandbox.restricted.json_value import cap_text
from sandbox.restricted.base import MAX_EVENTS, MAX_MESSAGE, SandboxAttributeError, SandboxImportError, SandboxRefused
from sandbox.restricted.compiler import CompileError, LINE_PREFIX, compile_snippet, parse_snippet
from sandbox.restricted.imports import Events
from sandbox.restricted.guards import WITHHELD_BUILTINS, ExecutionContext


def _tool_errors(tree, tools: dict) -> list[dict]:
    """`tools.<server>.<tool>` references that no call could succeed with."""
    errors = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "tools"):
            continue
        server, tool = node.value.attr, node.attr
        if server not in tools:
            why = f"tools.{server} is not a tool server here (servers: {', '.join(sorted(tools)) or 'none'})"
        elif tool not in tools[server]:
            why = f"tools.{server} has no tool {tool!r} (tools: {', '.join(sorted(tools[server])) or 'none'})"
        elif str(tools[server][tool]).startswith("not allowed:"):
            why = f"tools.{server}.{tool} is {tools[server][tool]}"
        else:
            continue
        errors.append({"line": node.lineno, "message": cap_text(why, MAX_MESSAGE)[0]})
    return errors


def validate(code: str, *, restricted: bool, allowed_modules: frozenset[str], tools: dict | None = None,
             files: str | None = None) -> dict:
    """Check ``code`` without running it. Never raises. ``tools`` (code mode's
    listing) lets it report calls to tools that do not exist or are not allowed;
    ``files`` is where execute() would let the snippet's files live."""
    try:
        return _validate(code, restricted, frozenset(allowed_modules or ()), tools, files)
    except BaseException as exc:  # noqa: BLE001
        message = f"validation failed: {type(exc).__name__}"
        return {
            "validation": {"valid": False, "errors": [{"line": None, "message": message}],
                           "message": message},
            "analysis": {"line_count": 0, "character_count": 0, "estimated_complexity": "low"},
            "recommendations": [],
        }


def _validate(code, restricted: bool, allowed: frozenset[str], tools: dict | None = None, files=None) -> dict:
    text = code if isinstance(code, str) else ""
    analysis = {"line_count": len(text.splitlines()), "character_count": len(text),
                "estimated_complexity": _size_complexity(text)}
    errors: list[dict] = []
    tree = None
    try:
        tree = parse_snippet(code)
    except CompileError as exc:
        errors.append({"line": exc.line, "message": cap_text(exc.message, MAX_MESSAGE)[0]})
    if tree is not None:
        analysis["estimated_complexity"] = _complexity(tree)
        if restricted:
            errors.extend(_import_errors(tree, allowed, files))
        if tools is not None:
            errors.extend(_tool_errors(tree, tools))
        try:
            compile_snippet(code, restricted)
        except CompileError as exc:
            for message in exc.rejected or [exc.message]:
                match = LINE_PREFIX.match(message)
                line = int(match.group(1)) if match else exc.line
                errors.append({"line": line, "message": cap_text(message, MAX_MESSAGE)[0]})
    errors.sort(key=lambda e: (e["line"] is None, e["line"] or 0))
    valid = not errors
    message = ("The code is valid" if valid else
               f"Found {len(errors)} problem{'s' if len(errors) != 1 else ''}: {errors[0]['message']}")
    return {
        "validation": {"valid": valid, "errors": errors[:MAX_EVENTS],
                       "message": cap_text(message, MAX_MESSAGE)[0]},
        "analysis": analysis,
        "recommendations": _recommendations(tree, errors, analysis),
    }


def _import_errors(tree: ast.Module, allowed: frozenset[str], files: str | None) -> list[dict]:
    """Each import statement put through the import hook itself (which imports only allowed
    modules), so validate() and execute() never disagree."""
    ctx = ExecutionContext(allowed, Events(), files)
    errors = []
    modules = {}  # name bound by `import x` / `import x as y` -> what execute() would bind
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            calls = [(alias.name, (), 0, alias.asname) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            calls = [(node.module or "", tuple(a.name for a in node.names), node.level, None)]
        else:
            continue
        for name, fromlist, level, asname in calls:
            try:
                if fromlist == ("*",) and level == 0:
                    ctx.import_star(name)   # as execute() runs it
                    continue
                module = ctx.import_(name, fromlist=fromlist, level=level)
            except SandboxImportError as exc:
                errors.append({"line": node.lineno, "message": f"Line {node.lineno}: {exc}"})
            except ImportError as exc:
                errors.append({"line": node.lineno,
                               "message": f"Line {node.lineno}: {type(exc).__name__}: {exc}"})
            else:
                if isinstance(node, ast.Import) and (asname is None or "." not in name):
                    modules[asname or name.split(".")[0]] = module
    return errors + _module_attribute_errors(tree, ctx, modules) + _withheld_builtin_errors(tree)


def _module_attribute_errors(tree: ast.Module, ctx: ExecutionContext, modules: dict) -> list[dict]:
    """`module.name` that the module policy refuses (os.system, sys.settrace),
    for names that nothing but an import statement binds: the same guard execute() reads through."""
    rebound = _bound_names(tree, plain_imports=False)
    errors, seen = [], set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                and node.value.id in modules and node.value.id not in rebound and not node.attr.startswith("_")):
            continue
        key = (node.value.id, node.attr)
        if key in seen:
            continue
        seen.add(key)
        try:
            ctx.getattr(modules[node.value.id], node.attr)
        except (SandboxAttributeError, SandboxRefused) as exc:
            errors.append({"line": node.lineno, "message": f"Line {node.lineno}: {exc}"})
        except Exception:  # noqa: BLE001 - a missing attribute is the run's to report
            pass
    return errors


def _withheld_builtin_errors(tree: ast.Module) -> list[dict]:
    """Calls of builtins the snippet does not get (locals(), compile()...), unless it binds
    the name itself."""
    bound = _bound_names(tree)
    return [{"line": node.lineno, "message": f"Line {node.lineno}: {node.func.id}() is not available in the "
                                            f"sandbox: {WITHHELD_BUILTINS[node.func.id]}"}
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in WITHHELD_BUILTINS and node.func.id not in bound]


def _bound_names(tree: ast.Module, plain_imports: bool = True) -> set[str]:
    """Every name the snippet binds: assignments, parameters, definitions, `from` imports,
    and (with `plain_imports`) `import x` statements."""
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    for node in ast.walk(tree):
        if isinstance(node, ast.arguments):
            bound |= {a.arg for a in node.posonlyargs + node.args + node.kwonlyargs + [node.vararg, node.kwarg] if a}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.ImportFrom) or (plain_imports and isinstance(node, ast.Import)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return bound


def _loop_depth(tree: ast.AST) -> int:
    """The deepest nesting of loops and comprehensions (iterative: trees can be deep)."""
    deepest = 0
    stack = [(tree, 0)]
    loops = (ast.For, ast.While, ast.comprehension)
    while stack:
        node, depth = stack.pop()
        if isinstance(node, loops):
            depth += 1
            deepest = max(deepest, depth)
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return deepest


def _complexity(tree: ast.Module) -> str:
    nodes = sum(1 for _ in ast.walk(tree))
    depth = _loop_depth(tree)
    if nodes > 1500 or depth >= 3:
        return "high"
    if nodes > 300 or depth >= 2:
        return "medium"
    return "low"


def _size_complexity(text: str) -> str:
    lines = len(text.splitlines())
    return "high" if lines > 300 else "medium" if lines > 60 else "low"


def _recommendations(tree, errors: list[dict], analysis: dict) -> list[str]:
    tips = []
    if any("import" in e["message"] for e in errors):
        tips.append("Use only the modules of the enabled profiles; get_sandbox_info lists them.")
    if any("starts with \"_\"" in e["message"] for e in errors):
        tips.append("Names and attributes starting with '_' are not available in the sandbox.")
    if tree is not None:
        if any(isinstance(n, ast.While) and isinstance(n.test, ast.Constant) and n.test.value
               for n in ast.walk(tree)):
            tips.append("Make sure 'while True' loops end: execution has a time limit.")
        last = tree.body[-1] if tree.body else None
        assigns_result = any(isinstance(n, ast.Name) and n.id == "result" and isinstance(n.ctx, ast.Store)
                             for n in ast.walk(tree))
        if not assigns_result and not isinstance(last, ast.Expr):
            tips.append("Set a 'result' variable or end with an expression to return a value.")
    if analysis["estimated_complexity"] == "high":
        tips.append("Consider splitting the code into smaller steps.")
    return tips
