"""How `make test` shares the tests out among pytest-xdist's workers (`--dist loadfile`):
each test file runs whole on one worker, so that its module fixtures start once, and
tests/redteam runs whole on one worker, in collection order, because its last file
checks the host canaries that the attacks before it ran against. The biggest scopes
go out first (xdist orders them by their number of tests)."""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

ONE_WORKER_PARTS = ("redteam",)


def scope_of(nodeid: str) -> str:
    """tests/<part> for a part that runs on one worker, else the test's file."""
    path = nodeid.split("::", 1)[0]
    folders = path.split("/")
    if len(folders) > 2 and folders[0] == "tests" and folders[1] in ONE_WORKER_PARTS:
        return "/".join(folders[:2])
    return path


class FileScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)
