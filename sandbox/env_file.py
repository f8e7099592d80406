"""The `.env` file format the settings are read from: KEY=VALUE lines, comments, blank lines,
`export `, single or double quotes. A `.env` file is data, not a shell script: no expansion."""

import re


class EnvFileError(ValueError):
    """A file that is not KEY=VALUE lines; the message names the line and what is accepted."""


_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read(path: str) -> dict[str, str]:
    """Parse KEY=VALUE lines: comments, blank lines, `export `, single or double quotes.

    Only double-quoted values know escapes (\\n, \\t, \\", \\\\). Variables are not
    expanded: a .env file is data, not a shell script.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvFileError(f"SANDBOX_ENV_FILE={path!r} cannot be read ({exc}); accepted: a readable UTF-8 file") from None
    values: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("export "):
            text = text[len("export "):].lstrip()
        key, sep, rest = text.partition("=")
        key = key.strip()
        if not sep or not _ENV_KEY.fullmatch(key):
            raise EnvFileError(f"{path}, line {number}: expected KEY=VALUE; accepted: KEY=VALUE, # comments, blank lines")
        try:
            values[key] = _env_value(rest.strip())
        except ValueError as exc:
            raise EnvFileError(f"{path}, line {number}: {exc}") from None
    return values


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _env_value(text: str) -> str:
    if not text or text[0] not in "\"'":
        # Unquoted: a " #" starts a comment.
        return text.split(" #", 1)[0].rstrip()
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if char == quote:
            tail = text[i + 1:].strip()
            if tail and not tail.startswith("#"):
                raise ValueError(f"unexpected text after the closing quote: {tail[:20]!r}")
            return "".join(out)
        if char == "\\" and quote == '"' and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
            continue
        out.append(char)
        i += 1
    raise ValueError(f"missing closing {quote}")
