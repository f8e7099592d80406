"""The private filesystem view of one execution.

Run by the namespace's PID 1 (it must be inside the new pid namespace for the
fresh /proc to show only the sandbox). The host tree is replaced by a tmpfs
root holding: the Python installation and system libraries read-only at their
usual paths, a few device nodes, an empty size-capped /tmp and a new /proc.
Everything else of the host, /etc, /home, /root, the host's /tmp, is absent,
but for the directories the operator named in SANDBOX_MOUNTS (host_mounts.py),
each bound alone at its sandbox path, read-only unless rw, never suid, devices
or exec. The fork server pins each at start (pin_host_directories); the child
opens it again in its own mount namespace (a bind mount's source must be in the
caller's namespace, so the fork server's fd cannot be the source) and refuses
it unless it is the very directory pinned.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from dataclasses import dataclass

from sandbox import host_mounts, libc

NEW_ROOT = "/tmp/.sandbox-root"  # inside a tmpfs mounted over /tmp in our private mount namespace
WORKSPACE = "/workspace"    # the filesystem profile's writable, size-capped working directory
TMP_SIZE = 16 << 20         # the private /tmp (and the workspace's inode count)
TMP_INODES = 4096
DEVICES = ("null", "zero", "full", "random", "urandom")
SINK_DEVICES = ("null", "zero", "full")  # writable too: C libraries fopen("/dev/null", "w") (qhull's messages)
SYSTEM_LIBS = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib")
# public data the standard library reads: zoneinfo's time zones where the tzdata package is not
# installed (a basic install: only the data-science extra's pandas brings it)
SYSTEM_DATA = ("/usr/share/zoneinfo",)
NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf",
                 "/etc/ssl", "/etc/ca-certificates", "/usr/share/ca-certificates", "/etc/services",
                 "/etc/protocols")

_ST_FLAGS = {  # statvfs flags that a remount inside a user namespace must keep
    os.ST_NOSUID: libc.MS_NOSUID,
    os.ST_NODEV: libc.MS_NODEV,
    os.ST_NOEXEC: libc.MS_NOEXEC,
}


def python_paths() -> list[str]:
    """What the interpreter needs to keep importing, and nothing around it: the
    standard library and site-packages directories of this installation, and the
    package directory (or zip archive) of each module already imported from
    elsewhere (this package in a checkout, a library on PYTHONPATH, the .pyz's
    cache). Never sys.path as such: it holds the working directory or PYTHONPATH
    entries, and a directory started from can hold a .env with the API token, or
    be / itself."""
    install = {sysconfig.get_path(key, vars={"base": prefix, "platbase": prefix})
               for key in ("stdlib", "platstdlib", "purelib", "platlib") for prefix in _prefixes()}
    install.update(site.getsitepackages())
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site in sys.path:
        install.add(user_site)
    install = {os.path.realpath(p) for p in install if p and os.path.isdir(p)}
    imported = set()
    for name, module in list(sys.modules.items()):
        if "." in name or module is None:
            continue
        location = _package_location(module)
        if location and not _inside(location, install):
            imported.add(location)
    return _outermost(p for p in install | imported if not _exposes_too_much(p))


def _prefixes() -> set[str]:
    """This installation, and the virtual environment it runs in: the fork
    server starts with -I -S, so site never switched sys.prefix to it."""
    prefixes = {sys.prefix, sys.base_prefix}
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        prefixes.add(venv)
    return prefixes


def _package_location(module) -> str | None:
    """The directory of a package, the file of a plain module, or the zip archive
    either came from; None for built-in and frozen modules."""
    origin = getattr(module, "__file__", None)
    if not isinstance(origin, str):
        return None
    origin = os.path.realpath(origin)
    archive = origin
    while archive not in ("/", "") and not os.path.exists(archive):
        archive = os.path.dirname(archive)  # a path inside a .pyz: the archive itself
    if archive != origin:
        return archive if os.path.isfile(archive) else None
    if os.path.basename(origin).startswith("__init__."):
        return os.path.dirname(origin)
    return origin


def _inside(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _exposes_too_much(path: str) -> bool:
    """/ and anything that is or holds a home directory never become readable."""
    homes = {os.path.realpath(os.path.expanduser("~"))}
    try:
        import pwd
        homes.update(os.path.realpath(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir not in ("", "/"))
    except (ImportError, OSError):
        pass
    return path == "/" or any(_inside(home, [path]) for home in homes)


def readable_paths(*, network: bool) -> list[str]:
    paths = python_paths() + [p for p in SYSTEM_LIBS + SYSTEM_DATA if os.path.isdir(p)]
    if network:
        paths += [p for p in NETWORK_FILES if os.path.exists(p)]
    return _outermost(os.path.realpath(p) for p in paths)


def _outermost(paths) -> list[str]:
    """Drop paths already contained in another path of the list."""
    result: list[str] = []
    for p in sorted(set(paths)):
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in result):
            result.append(p)
    return result


@dataclass(frozen=True)
class PinnedMount:
    """An operator's mount as the fork server found it at start."""
    mount: host_mounts.Mount
    fd: int          # the fork server's O_PATH fd on the directory, held while it lives
    identity: tuple  # (st_dev, st_ino) of that directory: while the fd is held, no other has it


def pin_host_directories(mounts, readable) -> tuple[PinnedMount, ...]:
    """Open every operator mount's host directory once (no symbolic link anywhere in
    the path) and keep it open. `readable`: the private root's own paths, which no
    sandbox path may land on, under or above (ValueError naming both)."""
    for mount in mounts:
        for path in readable:
            if host_mounts.overlap(mount.sandbox, path):
                raise ValueError(f"SANDBOX_MOUNTS entry {mount.describe()}: the sandbox path collides with "
                                 f"{path}, which the sandbox's private root already has; choose another "
                                 "sandbox path, such as /data")
    pinned = []
    for mount in mounts:
        fd = libc.open_no_symlinks(mount.host, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        st = os.fstat(fd)
        pinned.append(PinnedMount(mount, fd, (st.st_dev, st.st_ino)))
    return tuple(pinned)


def open_host_sources(pinned) -> dict[str, int]:
    """O_PATH fds of the operator's directories, by sandbox path, opened in the
    child's mount namespace; OSError if one is no longer the directory pinned
    (renamed, replaced, swapped for a symbolic link): nothing is then mounted."""
    fds: dict[str, int] = {}
    try:
        for pin in pinned:
            fd = libc.open_no_symlinks(pin.mount.host, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            fds[pin.mount.sandbox] = fd
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != pin.identity:
                raise OSError(f"{pin.mount.host} is no longer the directory SANDBOX_MOUNTS named at start "
                              "(replaced since); restart the server to mount what is there now")
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    return fds


def open_sources(paths) -> dict[str, int]:
    """O_PATH fds of every bind-mount source (the readable paths and the device
    nodes), opened in the child's new mount namespace (a bind mount's source
    must be in the caller's namespace) before it leaves the uid it was cloned
    with: as root that is uid 0, which may look up paths under /root, where
    the Python may live; afterwards the child never looks up a host path. No
    component may be a symlink: the paths were realpaths when the fork server
    resolved them, and one swapped for a symlink since (by a user who can
    write a parent directory) must not lead root's lookup elsewhere."""
    wanted = list(paths) + [f"/dev/{d}" for d in DEVICES if os.path.exists(f"/dev/{d}")]
    fds: dict[str, int] = {}
    try:
        for path in wanted:
            fds[path] = libc.open_no_symlinks(path, os.O_PATH | os.O_CLOEXEC)
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    return fds


def build_root(source_fds: dict[str, int], *, workspace_size: int = 0, hostname: str = "sandbox",
               host_fds: dict[str, int] | None = None, pinned=()) -> None:
    """Replace the filesystem view with the private root (caller: PID 1 of the
    new pid namespace, holding CAP_SYS_ADMIN over the new mount namespace).
    source_fds: open_sources(), by host path; host_fds: open_host_sources(), by
    sandbox path, for the `pinned` mounts; all closed here."""
    host_fds = host_fds or {}
    # Nothing we mount may propagate back to the host.
    libc.mount(None, "/", None, libc.MS_REC | libc.MS_PRIVATE)
    try:
        _populate(source_fds, workspace_size=workspace_size)
        for pin in pinned:
            _bind_operator_directory(host_fds[pin.mount.sandbox], NEW_ROOT + pin.mount.sandbox,
                                     writable=pin.mount.writable)
    finally:
        for fd in [*source_fds.values(), *host_fds.values()]:
            os.close(fd)
    # pivot_root(new, new) stacks the old root on top of the new one; detaching
    # it leaves no path back to the host tree (no put_old directory needed).
    os.chdir(NEW_ROOT)
    libc.pivot_root(".", ".")
    libc.umount2(".", libc.MNT_DETACH)
    os.chdir("/")
    libc.mount(None, "/", None, libc.MS_REMOUNT | libc.MS_BIND | libc.MS_RDONLY
                 | libc.MS_NOSUID | libc.MS_NODEV)
    libc.sethostname(hostname)


def _populate(source_fds: dict[str, int], *, workspace_size: int) -> None:
    """The new root, built in a tmpfs over the host's /tmp (the sources are
    already open, so a source under /tmp is not hidden by it)."""
    libc.mount("tmpfs", "/tmp", "tmpfs", libc.MS_NOSUID | libc.MS_NODEV, "size=64k,mode=0700")
    os.mkdir(NEW_ROOT, 0o755)
    libc.mount("tmpfs", NEW_ROOT, "tmpfs", libc.MS_NOSUID | libc.MS_NODEV, "size=1m,mode=0755")
    # /tmp first: a Python installation that lives under /tmp (a fresh
    # clone's venv) is then bound on top of it instead of being hidden
    os.makedirs(NEW_ROOT + "/tmp", exist_ok=True)
    libc.mount("tmpfs", NEW_ROOT + "/tmp", "tmpfs", libc.MS_NOSUID | libc.MS_NODEV,
                 f"size={TMP_SIZE},nr_inodes={TMP_INODES},mode=1777")
    os.makedirs(NEW_ROOT + "/dev", 0o755, exist_ok=True)
    for path, fd in source_fds.items():
        _bind(fd, NEW_ROOT + path, read_only=not path.startswith("/dev/"))
    for link in ("/lib", "/lib64", "/lib32", "/libx32"):
        # merged-/usr hosts: keep the symlinks the dynamic loader expects
        if os.path.islink(link) and not os.path.lexists(NEW_ROOT + link):
            os.symlink(os.readlink(link), NEW_ROOT + link)
    if workspace_size:
        os.makedirs(NEW_ROOT + WORKSPACE, exist_ok=True)
        libc.mount("tmpfs", NEW_ROOT + WORKSPACE, "tmpfs", libc.MS_NOSUID | libc.MS_NODEV,
                     f"size={workspace_size},nr_inodes={TMP_INODES},mode=1777")
    os.makedirs(NEW_ROOT + "/proc", exist_ok=True)
    libc.mount("proc", NEW_ROOT + "/proc", "proc",
                 libc.MS_NOSUID | libc.MS_NODEV | libc.MS_NOEXEC)


def _bind(fd: int, target: str, *, read_only: bool) -> None:
    source = f"/proc/self/fd/{fd}"
    if os.path.isdir(source):
        os.makedirs(target, 0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), 0o755, exist_ok=True)
        if not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    libc.mount(source, target, None, libc.MS_BIND | libc.MS_REC)
    flags = libc.MS_REMOUNT | libc.MS_BIND | libc.MS_NOSUID
    flags |= _locked_flags(target)
    if read_only:
        flags |= libc.MS_RDONLY | libc.MS_NODEV
    libc.mount(None, target, None, flags)


def _bind_operator_directory(fd: int, target: str, *, writable: bool) -> None:
    """That one directory (not what is mounted beneath it), never suid, devices or exec."""
    os.makedirs(target, 0o755, exist_ok=True)
    libc.mount(f"/proc/self/fd/{fd}", target, None, libc.MS_BIND)
    flags = libc.MS_REMOUNT | libc.MS_BIND | libc.MS_NOSUID | libc.MS_NODEV | libc.MS_NOEXEC
    flags |= _locked_flags(target)
    if not writable:
        flags |= libc.MS_RDONLY
    libc.mount(None, target, None, flags)


def _locked_flags(path: str) -> int:
    """Flags already on the source mount: a remount inside a user namespace
    that tried to clear them would be refused."""
    st = os.statvfs(path)
    return sum(ms for st_flag, ms in _ST_FLAGS.items() if st.f_flag & st_flag)
