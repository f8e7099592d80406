"""What a subset declares (Subset), and what it is made over for one execution
(Execution). Each subset is declared once, by the module whose code makes its values,
so its names, its values and the reason for the rest stay together; the registry
collects the declarations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from sandbox.restricted import snippet_files


@dataclass(frozen=True)
class Execution:
    """What a subset is made over: `files` and `refuse`, the snippet's directory
    (snippet_files) and how to refuse a path outside it; `formatter`, the execution's
    guarded string.Formatter class; `snippet_open`, the snippet's open();
    `snippet_names()`, the running snippet's globals."""

    files: str | None = None
    refuse: Callable | None = None
    formatter: Callable | None = None
    snippet_open: Callable | None = None
    snippet_names: Callable | None = None

    def snippet_files(self, module: str) -> snippet_files.SnippetFiles:
        """The directory functions and open() for `module`, which refuse naming it."""
        return snippet_files.SnippetFiles(self.files, self.refuse, self.snippet_open, module)


@dataclass(frozen=True)
class Subset:
    """A module a snippet gets a few names of: exactly `names` (those this Python has),
    and `with_files` where the snippet has a directory. `values(execution)` maps them to
    what the snippet gets (whatever else it maps is left out). `why` ends the refusal of
    any other name; `shown`, how a long list of names is summed up; `denied_types`,
    qualified names of types whose instances no guard hands out once the module is in use."""

    name: str
    names: tuple[str, ...]
    why: str
    values: Callable[[Execution], Mapping]
    with_files: tuple[str, ...] = ()
    shown: tuple[str, ...] | None = None
    denied_types: tuple[str, ...] = ()
