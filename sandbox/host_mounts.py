"""SANDBOX_MOUNTS: host directories the operator hands to every sandbox.

SANDBOX_MOUNTS is a comma list of HOST:SANDBOX[:MODE] entries, MODE being ro (the
default) or rw (only with the filesystem profile), for example
  /srv/data:/data:ro,/srv/scratch:/scratch:rw

Both walls see the same list: the child's private root bind-mounts exactly these
directories (mounts.py: read-only for ro, never suid, devices or exec), Landlock grants
only their mode, and the Python layer's open() and os/pathlib functions reach them
with that mode (restricted/snippet_files.py).

Checked here, before anything starts, so that a bad list stops the server with what to
do and nothing is ever mounted half: each path absolute and normalised; the host side an
existing directory, never /, /proc, /sys, /dev or under them, a home directory as a
whole (or one holding homes), nor one holding the server's own installation or files;
no two entries overlapping on either side; the sandbox side clear of what the private
root already holds (/usr, /lib, /tmp, /proc, the workspace, the Python installation).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

READ_ONLY, READ_WRITE = "ro", "rw"
# what the private root already has at these paths (mounts.py); a mount may not land on,
# under or above one of them
PRIVATE_ROOT = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/tmp", "/proc", "/dev", "/sys", "/workspace")
KERNEL_TREES = ("/proc", "/sys", "/dev")
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
SYNTAX = "HOST:SANDBOX[:ro|rw], comma-separated, both absolute paths (e.g. /srv/data:/data:ro)"


class MountError(ValueError):
    """An entry of SANDBOX_MOUNTS that cannot be mounted: the message says which and why."""


@dataclass(frozen=True)
class Mount:
    host: str          # the real path on the host (symbolic links resolved once, here)
    sandbox: str       # where the snippet sees it
    writable: bool = False

    @property
    def mode(self) -> str:
        return READ_WRITE if self.writable else READ_ONLY

    def describe(self) -> str:
        return f"{self.host}:{self.sandbox}:{self.mode}"


def describe_inside(mounts) -> str:
    """The mounts as a snippet sees them (the host's paths are the operator's business)."""
    return ",".join(f"{m.sandbox}:{m.mode}" for m in mounts) or "none"


def parse(text: str, *, filesystem: bool, own_files=()) -> tuple[Mount, ...]:
    """The entries of SANDBOX_MOUNTS, each checked against the host as it is now.
    `own_files`: the server's files a mount must not hold (its .env, audit log, ...)."""
    mounts = tuple(_entry(raw.strip(), filesystem) for raw in text.split(",") if raw.strip())
    protected = _own_installation() + [os.path.realpath(f) for f in own_files if f]
    for mount in mounts:
        _check_host(mount, protected)
        _check_sandbox(mount)
    _check_overlaps(mounts)
    return mounts


def _entry(raw: str, filesystem: bool) -> Mount:
    parts = raw.split(":")
    if len(parts) not in (2, 3) or not all(parts[:2]):
        raise MountError(f"{raw!r}: expected {SYNTAX}")
    host, sandbox = parts[0], parts[1]
    mode = parts[2].strip().lower() if len(parts) == 3 else READ_ONLY
    if mode not in (READ_ONLY, READ_WRITE):
        raise MountError(f"{raw!r}: the mode is {mode!r}; use ro (read-only, the default) or rw")
    if mode == READ_WRITE and not filesystem:
        raise MountError(f"{raw!r}: rw needs the filesystem profile; switch on SANDBOX_ENABLE_FILESYSTEM=true "
                         "or mount it ro")
    for side, path in (("host", host), ("sandbox", sandbox)):
        if not path.startswith("/"):
            raise MountError(f"{raw!r}: the {side} path {path!r} is relative; give an absolute path")
        if os.path.normpath(path) != (path.rstrip("/") or "/") or "//" in path:
            raise MountError(f"{raw!r}: the {side} path {path!r} is not normalised (., .. or //); "
                             f"write it as {os.path.normpath(path)!r}")
    if not os.path.isdir(host):
        what = "does not exist" if not os.path.lexists(host) else "is not a directory"
        raise MountError(f"{raw!r}: the host path {host!r} {what}; create the directory or fix the path")
    return Mount(host=os.path.realpath(host), sandbox=sandbox.rstrip("/") or "/", writable=mode == READ_WRITE)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def overlap(a: str, b: str) -> bool:
    return _inside(a, b) or _inside(b, a)


def _own_installation() -> list[str]:
    """The directories of this server's code and interpreter."""
    places = {sys.prefix, sys.base_prefix, PACKAGE_DIR, os.path.dirname(os.path.dirname(sys.executable))}
    return sorted(os.path.realpath(p) for p in places if p)


def homes() -> set[str]:
    found = {os.path.realpath(os.path.expanduser("~"))}
    try:
        import pwd
        found.update(os.path.realpath(e.pw_dir) for e in pwd.getpwall() if e.pw_dir not in ("", "/"))
    except (ImportError, OSError):
        pass
    return found


def _check_host(mount: Mount, protected: list[str]) -> None:
    host, entry = mount.host, mount.describe()
    if host == "/":
        raise MountError(f"{entry}: the host's whole filesystem (/) is never mounted; name the directory the "
                         "data is in")
    for tree in KERNEL_TREES:
        if _inside(host, tree):
            raise MountError(f"{entry}: {host} is under {tree}, the kernel's interfaces, which never go into a "
                             "sandbox; mount a directory of plain files")
    for home in sorted(homes()):
        if _inside(home, host):
            whole = "is" if home == host else "holds"
            raise MountError(f"{entry}: {host} {whole} the home directory {home}, with its keys and settings; "
                             "mount the one directory inside it that holds the data")
    for place in protected:
        if _inside(place, host):
            raise MountError(f"{entry}: {host} holds {place}, the sandbox server's own installation or "
                             "settings; mount a directory that holds only the data")
    beneath = [point for point in mount_points() if point != host and _inside(point, host)]
    if beneath:
        raise MountError(f"{entry}: other filesystems are mounted inside {host} ({', '.join(beneath[:3])}), "
                         "which would not be seen; mount each of them as an entry of its own")
    if mount.writable and os.statvfs(host).f_flag & os.ST_RDONLY:
        raise MountError(f"{entry}: {host} is on a read-only filesystem; mount it ro")


def mount_points() -> list[str]:
    """The mount points of this process's mount namespace."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return [_unescape(line.split()[4]) for line in lines if len(line.split()) > 4]


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def _check_sandbox(mount: Mount) -> None:
    where, entry = mount.sandbox, mount.describe()
    if where == "/":
        raise MountError(f"{entry}: a mount cannot replace the sandbox's root; choose a path such as /data")
    for taken in PRIVATE_ROOT + tuple(_own_installation()):
        if overlap(where, taken):
            raise MountError(f"{entry}: the sandbox path {where} collides with {taken}, which the sandbox's "
                             "private root already has; choose a new top-level path such as /data or /mnt/data")


def _check_overlaps(mounts) -> None:
    for i, a in enumerate(mounts):
        for b in mounts[i + 1:]:
            for side in ("host", "sandbox"):
                if overlap(getattr(a, side), getattr(b, side)):
                    raise MountError(f"{a.describe()} and {b.describe()} overlap on the {side} side; "
                                     "give each mount its own directory, neither inside the other")
