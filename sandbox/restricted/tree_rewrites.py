"""Rewrites of the restricted tree that put guard calls where a value enters the snippet's
own code: a function's and a lambda's parameters on entry (_vet_params_, _vet_kwargs_,
_vet_one_), and the last expression's value kept as the result."""

from __future__ import annotations

import ast

from RestrictedPython.transformer import copy_locations

from sandbox.restricted.base import LAST_VALUE


def _parameter_names(args: ast.arguments) -> tuple[list[str], str | None, list[str], str | None]:
    return ([a.arg for a in args.posonlyargs + args.args], args.vararg.arg if args.vararg else None,
            [a.arg for a in args.kwonlyargs], args.kwarg.arg if args.kwarg else None)


def locate(tree: ast.AST, like: ast.AST) -> None:
    """Give every node of a generated tree the position of `like` (for tracebacks)."""
    for child in ast.walk(tree):
        if "lineno" in child._attributes:
            copy_locations(child, like)


def vet_call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(func, ast.Load()), args=list(args), keywords=[])


def vet_parameters_on_entry(node: ast.FunctionDef) -> None:
    """`def f(a, b, *c, d, **e)` starts with `a, b, d = _vet_params_(a, b, d)`,
    `c = _vet_params_(*c)` and `e = _vet_kwargs_(e)` (after a docstring)."""
    positional, vararg, kwonly, kwarg = _parameter_names(node.args)
    names = positional + kwonly
    body = []
    if names:
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        body.append(ast.Assign([target], vet_call("_vet_params_", *[ast.Name(n, ast.Load()) for n in names])))
    if vararg:
        body.append(ast.Assign([ast.Name(vararg, ast.Store())],
                               vet_call("_vet_params_", ast.Starred(ast.Name(vararg, ast.Load()), ast.Load()))))
    if kwarg:
        body.append(ast.Assign([ast.Name(kwarg, ast.Store())], vet_call("_vet_kwargs_", ast.Name(kwarg, ast.Load()))))
    if not body or not node.body:  # (a body the transformer emptied has already failed the compile)
        return
    first = node.body[0]
    at = 1 if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
        first.value.value, str) else 0
    for stmt in body:
        locate(stmt, first)
    node.body[at:at] = body


def vet_lambda_parameters(node: ast.Lambda) -> None:
    """`lambda a, *b, c, **d: body` becomes
    `lambda a, *b, c, **d: (lambda a, *b, c, **d: body)(*_vet_params_(a, *b), c=_vet_one_(c), **_vet_kwargs_(d))`."""
    positional, vararg, kwonly, kwarg = _parameter_names(node.args)
    if not (positional or vararg or kwonly or kwarg):
        return
    inner_args = ast.arguments(
        posonlyargs=[], args=[ast.arg(n) for n in positional],
        vararg=ast.arg(vararg) if vararg else None, kwonlyargs=[ast.arg(n) for n in kwonly],
        kw_defaults=[None] * len(kwonly), kwarg=ast.arg(kwarg) if kwarg else None, defaults=[])
    passed = [ast.Name(n, ast.Load()) for n in positional]
    if vararg:
        passed.append(ast.Starred(ast.Name(vararg, ast.Load()), ast.Load()))
    keywords = [ast.keyword(arg=n, value=vet_call("_vet_one_", ast.Name(n, ast.Load()))) for n in kwonly]
    if kwarg:
        keywords.append(ast.keyword(arg=None, value=vet_call("_vet_kwargs_", ast.Name(kwarg, ast.Load()))))
    call = ast.Call(func=ast.Lambda(args=inner_args, body=node.body),
                    args=[ast.Starred(vet_call("_vet_params_", *passed), ast.Load())], keywords=keywords)
    locate(call, node.body)
    node.body = call


def capture_last_value(tree: ast.Module) -> None:
    """The value of a final expression statement goes to an internal name (the result)."""
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        assign = ast.Assign(targets=[ast.Name(LAST_VALUE, ast.Store())], value=last.value)
        copy_locations(assign, last)
        tree.body[-1] = assign
