"""Text on its way to a terminal: what a client prints (a text block, a text resource)
and the server's own log lines. Standard library only: the command line imports it
before it knows the platform can run the rest."""

from __future__ import annotations

import re

# Characters a terminal acts on or that reorder what is shown: C0 and C1 controls but
# newline and tab (ESC starts sequences that set the window title or write the clipboard,
# OSC 52), and the format characters that override text direction or hide text.
ACTING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def terminal_safe(text: str) -> str:
    """`text` with those characters written as escapes (\\x1b, \\u202e): a text block
    goes to clients that print it in a terminal, and a model reads the escape as well."""
    return ACTING.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"),
                      text.replace("\r\n", "\n"))
