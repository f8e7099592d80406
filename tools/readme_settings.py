"""Write the README's settings table and .env.example from the one list of settings
(sandbox.config.VARIABLES): `python tools/readme_settings.py` rewrites the lines between the
two markers in README.md, and .env.example whole. tests/packaging/test_readme.py fails when
either committed file differs from what this writes."""

import os
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sandbox.config import VARIABLES  # noqa: E402
from sandbox.limits_parse import format_size  # noqa: E402

README = Path(__file__).resolve().parents[1] / "README.md"
ENV_EXAMPLE = Path(__file__).resolve().parents[1] / ".env.example"
ENV_EXAMPLE_HEAD = """\
# mcp-server-python-sandbox settings (this file is written by tools/readme_settings.py).
# Copy this file, edit it, and name it with --env-file FILE or SANDBOX_ENV_FILE=FILE:
# a .env in the working directory is never read on its own. Real environment variables win
# over this file. Every line below shows the default (commented out: computed at start, or
# this file's own name).
# A bad value stops the server at start with a message naming the variable (exit code 2).
# Sizes accept bytes or k/m/g suffixes (binary: 1m = 1048576 bytes).
"""
START = "<!-- settings table: written by tools/readme_settings.py from sandbox/config.py VARIABLES -->"
END = "<!-- end of settings table -->"


def table() -> str:
    rows = ["| setting | default | what it sets | weakens isolation |", "| --- | --- | --- | --- |"]
    for variable in VARIABLES.values():
        default = variable.documented_default
        shown = f"`{default}`" if default and not default.startswith("<") else (default.strip("<>") or "(empty)")
        weakens = "yes" if variable.opens else ""
        rows.append(f"| `{variable.name}` | {shown} | {markdown_text(variable.doc)} | {weakens} |")
    return "\n".join(rows)


def markdown_text(text: str) -> str:
    """Plain text in a table cell: no tag (`<server>`) and no column break."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")


def env_example() -> str:
    """.env.example: each setting's line at its default, after its doc and, when a value
    other than the default weakens isolation, what it opens."""
    blocks = [ENV_EXAMPLE_HEAD]
    for variable in VARIABLES.values():
        text = f"{variable.doc[:1].upper()}{variable.doc[1:]}{accepted(variable)}."
        if variable.opens:
            text += f" Weakens isolation: {variable.opens}."
        lines = textwrap.wrap(text, 92, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False)
        default = variable.documented_default
        # the file cannot name itself, and a default computed at start has no line to show
        commented = variable.attribute is None or default.startswith("<")
        shown = f"# {variable.name}= (default: {default.strip('<>')})" if default.startswith("<") else \
            f"{'# ' if commented else ''}{variable.name}={default}"
        lines.append(shown)
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def accepted(variable) -> str:
    """The values a number-like setting accepts, as its doc's tail ("" for other kinds)."""
    if variable.kind not in ("integer", "size", "seconds") or len(variable.bounds) != 2:
        return ""
    low, high = variable.bounds
    said = {"size": format_size, "seconds": lambda n: f"{n:g}"}.get(variable.kind, str)
    high = high if isinstance(high, str) else said(high)
    if variable.kind == "seconds":
        return f"; greater than {said(low)}, at most {high}"
    return f"; from {said(low)} to {high}"


def rewritten(text: str) -> str:
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"readme_settings: README.md lacks the markers {START!r} and {END!r}")
    return f"{head}{START}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    README.write_text(rewritten(README.read_text()))
    ENV_EXAMPLE.write_text(env_example())
