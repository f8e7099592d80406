"""Each test forks a child that calls landlock.restrict and then tries what
Landlock must stop; the child reports every outcome through a pipe and the
parent asserts. The same probes run unrestricted as a control, so a denial
is known to come from Landlock. No other sandbox layer is applied."""

from __future__ import annotations

import ctypes
import errno
import importlib
import os
import re
import socket
import sys

import pytest
from forked import child_value

from sandbox import landlock

ABI = landlock.abi_version()
needs_landlock = pytest.mark.skipif(ABI == 0, reason="Landlock unavailable on this kernel")
READ_PREFIXES = sorted({sys.prefix, sys.base_prefix})


def attempt(fn) -> str:
    """'ok', or the errno name of the OSError that fn raised."""
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def _read(path):
    with open(path, "rb") as f:
        f.read()


def _write(path, mode="wb"):
    with open(path, mode) as f:
        f.write(b"data")


def _unimported(candidates):
    for name in candidates:
        if name not in sys.modules:
            return name
    pytest.skip(f"all of {candidates} already imported")


@pytest.fixture
def layout(tmp_path):
    """A: readable, B: writable, C: neither (holds a secret)."""
    dirs = {name: tmp_path / name for name in "ABC"}
    for d in dirs.values():
        d.mkdir()
    (dirs["A"] / "readme").write_text("readable")
    (dirs["A"] / "keep").write_text("must survive")
    (dirs["B"] / "existing").write_text("writable")
    (dirs["B"] / "doomed").write_text("to be removed")
    (dirs["B"] / "moveme").write_text("to be moved")
    (dirs["B"] / "sub").mkdir()
    (dirs["C"] / "secret").write_text("top secret")
    (dirs["C"] / "other").write_text("also hidden")
    return {k: str(v) for k, v in dirs.items()}


def filesystem_probes(d, restricted: bool):
    A, B, C = d["A"], d["B"], d["C"]
    pure = _unimported(["colorsys", "sched", "wave"])
    # extension modules that need no shared library beyond libc
    ext = _unimported(["_codecs_jp", "_codecs_kr", "_codecs_tw", "_statistics"])

    def child():
        abi = landlock.restrict(READ_PREFIXES + [A], [B]) if restricted else None
        return {
            "abi": abi,
            "read A": attempt(lambda: _read(f"{A}/readme")),
            "list A": attempt(lambda: os.listdir(A)),
            "read C secret": attempt(lambda: _read(f"{C}/secret")),
            "list C": attempt(lambda: os.listdir(C)),
            "create in A": attempt(lambda: _write(f"{A}/new")),
            "append in A": attempt(lambda: _write(f"{A}/readme", "ab")),
            "unlink in A": attempt(lambda: os.unlink(f"{A}/keep")),
            "mkdir in A": attempt(lambda: os.mkdir(f"{A}/newdir")),
            "create in B": attempt(lambda: _write(f"{B}/new")),
            "append in B": attempt(lambda: _write(f"{B}/existing", "ab")),
            "truncate in B": attempt(lambda: os.truncate(f"{B}/existing", 1)),
            "unlink in B": attempt(lambda: os.unlink(f"{B}/doomed")),
            "mkdir+rmdir in B": attempt(lambda: (os.mkdir(f"{B}/d"), os.rmdir(f"{B}/d"))),
            "mkfifo in B": attempt(lambda: os.mkfifo(f"{B}/fifo")),
            "rename within B": attempt(lambda: os.rename(f"{B}/new", f"{B}/sub/new")),
            "read /etc/passwd": attempt(lambda: _read("/etc/passwd")),
            "hard link C->B": attempt(lambda: os.link(f"{C}/secret", f"{B}/stolen")),
            "symlink to C, read": attempt(lambda: (os.symlink(f"{C}/other", f"{B}/sym"),
                                                  _read(f"{B}/sym"))),
            "rename B->C": attempt(lambda: os.rename(f"{B}/moveme", f"{C}/moveme")),
            "execute python": attempt(lambda: _spawn(sys.executable)),
            "import " + pure: attempt(lambda: importlib.import_module(pure)),
            "import " + ext: attempt(lambda: importlib.import_module(ext)),
        }

    return child_value(child)


def _spawn(path):
    pid = os.posix_spawn(path, [path, "-c", "pass"], {})
    os.waitpid(pid, 0)


def test_filesystem_probes_all_work_without_landlock(layout):
    got = filesystem_probes(layout, restricted=False)
    del got["abi"]
    assert got == {k: "ok" for k in got}


@needs_landlock
def test_filesystem_restricted(layout):
    got = filesystem_probes(layout, restricted=True)
    assert got.pop("abi") == min(ABI, landlock.MAX_KNOWN_ABI)
    # Landlock reports a path it cannot reparent across domains as EXDEV.
    denied_cross = {"EACCES", "EXDEV"}
    assert got.pop("hard link C->B") in denied_cross
    assert got.pop("rename B->C") in denied_cross
    denied = {k: got.pop(k) for k in [
        "read C secret", "list C", "create in A", "append in A", "unlink in A",
        "mkdir in A", "read /etc/passwd", "symlink to C, read", "execute python"]}
    assert denied == {k: "EACCES" for k in denied}
    # Everything else (reads in A and the prefix, writes in B, imports) works.
    assert got == {k: "ok" for k in got}


@needs_landlock
def test_files_as_paths_get_file_rights_and_missing_paths_are_skipped(layout):
    C = layout["C"]

    def child():
        landlock.restrict(READ_PREFIXES + [f"{C}/secret", f"{C}/does-not-exist"],
                          [f"{layout['B']}/existing", "/nonexistent/dir"])
        return {
            "read granted file": attempt(lambda: _read(f"{C}/secret")),
            "read sibling": attempt(lambda: _read(f"{C}/other")),
            "list parent": attempt(lambda: os.listdir(C)),
            "write granted file": attempt(lambda: _write(f"{layout['B']}/existing", "ab")),
            "create next to it": attempt(lambda: _write(f"{layout['B']}/new")),
        }

    assert child_value(child) == {
        "read granted file": "ok", "read sibling": "EACCES", "list parent": "EACCES",
        "write granted file": "ok", "create next to it": "EACCES",
    }


@needs_landlock
def test_read_rights_do_not_include_execute():
    # Everything readable, so the exec fails for want of EXECUTE alone (not
    # because the dynamic loader or a library is unreadable).
    true = "/bin/true" if os.path.exists("/bin/true") else sys.executable

    def child(restricted):
        if restricted:
            landlock.restrict(["/"])
        return {"read": attempt(lambda: _read(true)), "execute": attempt(lambda: _spawn(true))}

    assert child_value(lambda: child(False)) == {"read": "ok", "execute": "ok"}
    assert child_value(lambda: child(True)) == {"read": "ok", "execute": "EACCES"}


@needs_landlock
def test_restrict_sets_no_new_privs():
    def child():
        libc = ctypes.CDLL(None, use_errno=True)
        before = libc.prctl(39, 0, 0, 0, 0)  # PR_GET_NO_NEW_PRIVS
        landlock.restrict(READ_PREFIXES)
        return [before, libc.prctl(39, 0, 0, 0, 0)]

    assert child_value(child) == [0, 1]


@pytest.fixture
def tcp_listener():
    with socket.create_server(("127.0.0.1", 0)) as srv:
        yield srv.getsockname()


def tcp_probes(addr, restricted: bool, connect_ports=()):
    def child():
        if restricted:
            landlock.restrict(READ_PREFIXES, connect_ports=connect_ports)

        def connect():
            with socket.create_connection(addr, timeout=5):
                pass

        def bind():
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))

        return {"connect": attempt(connect), "bind": attempt(bind)}

    return child_value(child)


def test_tcp_works_without_landlock(tcp_listener):
    assert tcp_probes(tcp_listener, restricted=False) == {"connect": "ok", "bind": "ok"}


@needs_landlock
def test_tcp_denied(tcp_listener):
    if ABI < 4:
        pytest.skip("TCP rules need Landlock ABI 4")
    assert tcp_probes(tcp_listener, restricted=True) == {"connect": "EACCES", "bind": "EACCES"}


@needs_landlock
def test_tcp_connect_allowed_to_the_named_port_only(tcp_listener):
    """The network profile's rule: connect to the proxy's port, nothing else, and never bind."""
    if ABI < 4:
        pytest.skip("TCP rules need Landlock ABI 4")
    got = tcp_probes(tcp_listener, restricted=True, connect_ports=[tcp_listener[1]])
    assert got == {"connect": "ok", "bind": "EACCES"}
    with socket.create_server(("127.0.0.1", 0)) as other:
        got = tcp_probes(other.getsockname(), restricted=True, connect_ports=[tcp_listener[1]])
    assert got == {"connect": "EACCES", "bind": "EACCES"}


def scope_probes(abstract_name: bytes, restricted: bool):
    parent = os.getpid()

    def child():
        if restricted:
            landlock.restrict(READ_PREFIXES)

        def connect_abstract():
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(abstract_name)

        return {
            "signal parent": attempt(lambda: os.kill(parent, 0)),
            "signal self": attempt(lambda: os.kill(os.getpid(), 0)),
            "abstract unix connect": attempt(connect_abstract),
        }

    return child_value(child)


@pytest.fixture
def abstract_listener():
    name = b"\0sandbox-landlock-test-%d" % os.getpid()
    with socket.socket(socket.AF_UNIX) as srv:
        srv.bind(name)
        srv.listen()
        yield name


def test_scope_probes_work_without_landlock(abstract_listener):
    got = scope_probes(abstract_listener, restricted=False)
    assert got == {k: "ok" for k in got}


@needs_landlock
def test_scoped_signals_and_abstract_unix_sockets(abstract_listener):
    if ABI < 6:
        pytest.skip("scoping needs Landlock ABI 6")
    assert scope_probes(abstract_listener, restricted=True) == {
        "signal parent": "EPERM", "signal self": "ok", "abstract unix connect": "EPERM",
    }


def _min_abi_for_kernel(release: str) -> int:
    major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", release).groups())
    for version, abi in [((6, 15), 7), ((6, 12), 6), ((6, 10), 5), ((6, 7), 4),
                         ((6, 2), 3), ((5, 19), 2), ((5, 13), 1)]:
        if (major, minor) >= version:
            return abi
    return 0


@needs_landlock
def test_abi_version_matches_kernel():
    # Linux 6.15+ reports ABI 7 (6.18 on the development machine).
    assert ABI >= _min_abi_for_kernel(os.uname().release)
    assert landlock.abi_version() == ABI
