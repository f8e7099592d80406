"""Write the README's settings table from the one list of settings (sandbox.config.VARIABLES):
`python tools/readme_settings.py` rewrites the lines between the two markers in README.md.
tests/packaging/test_readme.py fails when the committed table differs from what this writes."""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sandbox.config import VARIABLES  # noqa: E402

README = Path(__file__).resolve().parents[1] / "README.md"
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


def rewritten(text: str) -> str:
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"readme_settings: README.md lacks the markers {START!r} and {END!r}")
    return f"{head}{START}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    README.write_text(rewritten(README.read_text()))
