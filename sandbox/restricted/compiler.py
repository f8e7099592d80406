"""The RestrictedPython layer, compile time: parsing a snippet, compiling it under the
policy (snippet_policy.SnippetPolicy) or as plain Python, and the errors either gives."""

from __future__ import annotations

import ast
import re
import types

from sandbox.restricted.base import SNIPPET_FILENAME
from sandbox.restricted.snippet_policy import SnippetPolicy
from sandbox.restricted.tree_rewrites import capture_last_value


class CompileError(Exception):
    def __init__(self, error_type: str, message: str, line: int | None, rejected=()):
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.line = line
        self.rejected = list(rejected)


# (the parser raises MemoryError for deep nesting too, with no message: the two cannot be told apart)
_TOO_COMPLEX = ("SyntaxError: the source is too deeply nested or too large to compile: flatten the nesting, "
                "send less code, or pass a larger memory_limit")
LINE_PREFIX = re.compile(r"^Line (\d+):")
MAX_SHOWN_LINE = 200  # a longer line is not repeated in a syntax error
_UNPARSABLE = re.compile("[\x00\ud800-\udfff]")


def _line_at(code: str, index: int) -> int:
    return code.count("\n", 0, max(index, 0)) + 1


def _syntax_error(exc: SyntaxError) -> CompileError:
    """The parser's message with the line it points at, marked as Python marks it (the
    snippet's own text: the model sees where, not just which line)."""
    message = f"{type(exc).__name__}: {exc.msg}"
    text = (exc.text or "").split("\n", 1)[0].rstrip()
    if text and len(text) <= MAX_SHOWN_LINE:
        shown = text.lstrip()
        start = (exc.offset or 0) - 1 - (len(text) - len(shown))
        end = (exc.end_offset or 0) - 1 - (len(text) - len(shown)) if exc.end_lineno == exc.lineno else start + 1
        message += f"\n    {shown}"
        if 0 <= start <= len(shown):
            message += "\n    " + " " * start + "^" * max(1, min(end, len(shown)) - start)
    return CompileError("syntax_error", message, exc.lineno)


def parse_snippet(code) -> ast.Module:
    if not isinstance(code, str):
        raise CompileError("syntax_error", "SyntaxError: the source must be text", None)
    bad = _UNPARSABLE.search(code)
    if bad is not None:  # the parser's own errors for these differ between versions
        what = "a NUL byte" if bad.group() == "\x00" else "a lone surrogate"
        raise CompileError("syntax_error", f"SyntaxError: the source contains {what}",
                            _line_at(code, bad.start()))
    try:
        return ast.parse(code, SNIPPET_FILENAME, "exec")  # a str: any coding cookie is ignored
    except SyntaxError as exc:
        raise _syntax_error(exc) from None
    except (MemoryError, RecursionError):
        raise CompileError("syntax_error", _TOO_COMPLEX, None) from None
    except (ValueError, UnicodeError) as exc:
        raise CompileError("syntax_error", f"SyntaxError: {exc}", None) from None


def _text_annotations(tree: ast.Module) -> list:
    """Under `from __future__ import annotations` no annotation is evaluated: Python keeps
    each as the text of its expression. The policy would rewrite that expression first
    (typing.ClassVar[int] became "_getitem_(_getattr_(typing, 'ClassVar'), int)", and
    dataclasses no longer saw the ClassVar), so these are left as the snippet wrote them:
    text, as a string annotation it could have written itself."""
    futures = (node for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "__future__")
    if not any(alias.name == "annotations" for node in futures for alias in node.names):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            found.append(node.returns)
        elif isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            found.append(node.annotation)
    return found


def compile_snippet(code, restricted: bool) -> types.CodeType:
    tree = parse_snippet(code)
    try:
        if restricted:
            errors: list[str] = []
            policy = SnippetPolicy(errors, [], {})
            policy.left_as_text = {id(annotation): annotation for annotation in _text_annotations(tree)}
            tree = policy.visit(tree)
            if errors:
                match = LINE_PREFIX.match(errors[0])
                raise CompileError("security_violation", "\n".join(errors),
                                    int(match.group(1)) if match else None, rejected=errors)
        else:
            capture_last_value(tree)
        # dont_inherit: this module's `from __future__ import annotations` is not the snippet's.
        # A top-level `await` (as in a notebook) makes the code a coroutine (restricted._run).
        return compile(tree, SNIPPET_FILENAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:
        raise _syntax_error(exc) from None
    except (MemoryError, RecursionError):
        raise CompileError("syntax_error", _TOO_COMPLEX, None) from None
    except (ValueError, TypeError) as exc:
        raise CompileError("syntax_error", f"SyntaxError: {exc}", None) from None
