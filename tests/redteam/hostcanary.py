"""The host-side canaries the red-team corpus assumes (shared/redteam/README.md),
each recording any contact, so a test can prove that an attack had no effect
outside the sandbox. The corpus names fixed places (/tmp/SANDBOX_HOST_CANARY.txt,
127.0.0.1:47011...); each run sets its canaries up at places of its own and
`localize()` rewrites a snippet's fixed names into them, so two runs on one
machine never share a canary:

* SANDBOX_HOST_CANARY.txt holding HOSTCANARY-5d1e9b, in a world-readable
  directory of the run's own under /tmp (only the sandbox layers may stop a
  read), watched with inotify: any open, read or change of the inode is
  recorded, whatever mount namespace it came from;
* TCP listeners on 127.0.0.1 and [::1] and a UDP collector on 127.0.0.1, on
  ports the kernel picks; an abstract unix socket "\\0sbx-host-canary-<run>"
  and a unix socket sbx-host-canary.sock beside the file: every connection or
  datagram is recorded;
* a SysV shared memory segment (ipcmk -M 4096): its attach count and times;
* a sleeping process of the same user that records every signal it receives;
* listings of /tmp, /var/tmp, /dev/shm and the server's working directory.

Everything is loopback only. `problems()` lists what an attack changed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fnmatch
import os
import re
import secrets
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

CANARY_TEXT = "HOSTCANARY-5d1e9b"
SECRET_NAME = "SANDBOX_CANARY_SECRET"
SECRET_VALUE = "sbx-secret-7f3a9c"
# This run's places: its pid and a random part, so that no other run (another checkout,
# the ordinary-user pass) shares or removes them.
RUN = f"{os.getpid()}-{secrets.token_hex(4)}"
CANARY_DIR = f"/tmp/sbx-canary-{RUN}"
CANARY_FILE = f"{CANARY_DIR}/SANDBOX_HOST_CANARY.txt"
UNIX_PATH = f"{CANARY_DIR}/sbx-host-canary.sock"
ABSTRACT = f"\0sbx-host-canary-{RUN}"
WATCHED_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
# The fixed names the corpus's snippets use, and what each becomes in this run
# (the ports once the listeners are bound).
CORPUS_FILE = "/tmp/SANDBOX_HOST_CANARY.txt"
CORPUS_UNIX_PATH = "/tmp/sbx-host-canary.sock"
CORPUS_ABSTRACT = "sbx-host-canary"
CORPUS_PORTS = {"tcp4": 47011, "udp4": 47012, "tcp6": 47013}
SANDBOX_UID = 65534

# Entries other test infrastructure creates in the shared temporary directories
# (pytest, tempfile, tests/mcp_client.py's stderr logs, tests/forkserver/test_runner.py's
# secrets, the ordinary-user run): not an attack's doing.
INFRA_PATTERNS = ("pytest-of-*", "sbx-canary-*", "mcp-server-python-sandbox-stderr-*", "tmp*", "sbx-host-secret-*",
                  "sbx-root-only-*", "sbx-clone-secret-*", "sandbox-usertest-*", "sbx-redteam-*", "sbx-soak-*", "sbx-fuzz-*", "sbx-audit-*",
                  "sbx-death-*", "hypothesis*", "pymp-*", "_MEI*", ".X*", "systemd-private-*", "sem.mp-*",
                  "snap-private-tmp", "*.pyz", "sandbox-*.log", "ssh-*")

SLEEPER = r"""
import os, signal, sys
def note(sig, frame):
    os.write(1, b"SIG %d\n" % sig)
for sig in signal.valid_signals():
    if sig in (signal.SIGKILL, signal.SIGSTOP):
        continue
    try:
        signal.signal(sig, note)
    except (OSError, ValueError, RuntimeError):
        pass
os.write(1, b"READY\n")
while True:
    signal.pause()
"""

IN_ACCESS, IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_OPEN = 0x1, 0x2, 0x4, 0x8, 0x20
IN_MOVE_SELF, IN_DELETE_SELF = 0x800, 0x400
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
_EVENT = struct.Struct("iIII")


class Inotify:
    """A minimal inotify watch on one file, through ctypes."""

    def __init__(self, path: str, mask: int):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        self.fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        wd = libc.inotify_add_watch(self.fd, path.encode(), mask)
        if wd < 0:
            err = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(err, f"inotify_add_watch {path}")
        self.events: list[int] = []

    def poll(self) -> list[int]:
        while True:
            try:
                data = os.read(self.fd, 4096)
            except BlockingIOError:
                break
            offset = 0
            while offset + _EVENT.size <= len(data):
                _wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                self.events.append(mask)
                offset += _EVENT.size + length
        return list(self.events)

    def close(self) -> None:
        os.close(self.fd)


class HostCanaries:
    def __init__(self, server_cwd: str):
        self.server_cwd = server_cwd
        self.contacts: list[tuple[float, str, str]] = []   # (time, label, detail)
        self.unavailable: dict[str, str] = {}               # canary -> why it could not be set up
        self.notes: list[str] = []
        self._lock = threading.Lock()
        self._sockets: list[tuple[socket.socket, str]] = []
        self._stop_r, self._stop_w = os.pipe()
        self._thread: "threading.Thread | None" = None
        self.inotify: "Inotify | None" = None
        self.file_created = False
        self.dir_created = False
        self.shm_id: "int | None" = None
        self.shm_before: "list[str] | None" = None
        self.sleeper: "subprocess.Popen | None" = None
        self.sleeper_start: "str | None" = None
        self.listings_before: dict[str, set] = {}
        self.free_before: dict[str, int] = {}
        self.ports: dict[str, int] = {}                     # "tcp4"/"udp4"/"tcp6" -> the port bound

    def localize(self, code: str) -> str:
        """A corpus snippet with its fixed canary names turned into this run's."""
        names = {CORPUS_FILE: CANARY_FILE, CORPUS_UNIX_PATH: UNIX_PATH, CORPUS_ABSTRACT: ABSTRACT[1:],
                 **{str(port): str(self.ports.get(label, port)) for label, port in CORPUS_PORTS.items()}}
        pattern = "|".join(re.escape(name) if not name.isdigit() else rf"(?<!\d){name}(?!\d)"
                           for name in sorted(names, key=len, reverse=True))
        return re.sub(pattern, lambda match: names[match.group(0)], code)

    # ---- set up ---------------------------------------------------------------
    def start(self) -> "HostCanaries":
        self._make_file()
        self._make_sockets()
        self._make_shm()
        self._make_sleeper()
        self.listings_before = self.listings()
        self.nobody_before = {int(p) for p in sandbox_uid_processes()} if os.geteuid() == 0 else set()
        self.free_before = {d: shutil.disk_usage(d).free for d in WATCHED_DIRS if os.path.isdir(d)}
        self._thread = threading.Thread(target=self._serve, name="host-canaries", daemon=True)
        self._thread.start()
        return self

    def _make_file(self) -> None:
        try:
            os.mkdir(CANARY_DIR)
            os.chmod(CANARY_DIR, 0o755)   # any uid may look in: only the sandbox may stop it
            self.dir_created = True
            fd = os.open(CANARY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, (CANARY_TEXT + "\n").encode())
            os.close(fd)
            os.chmod(CANARY_FILE, 0o644)
            self.file_created = True
        except OSError as exc:
            self.unavailable["file"] = f"cannot create {CANARY_FILE}: {exc}"
            return
        try:
            self.inotify = Inotify(CANARY_FILE, IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_OPEN
                                   | IN_MOVE_SELF | IN_DELETE_SELF)
        except OSError as exc:
            self.unavailable["file_watch"] = str(exc)

    def _listen(self, label: str, family: int, kind: int, address) -> None:
        sock = socket.socket(family, kind)
        try:
            if family != socket.AF_UNIX:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            if family != socket.AF_UNIX:
                self.ports[label] = sock.getsockname()[1]
            if kind == socket.SOCK_STREAM:
                sock.listen(16)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            self.unavailable[label] = f"cannot listen on {address!r}: {exc}"
            return
        self._sockets.append((sock, label))

    def _make_sockets(self) -> None:
        self._listen("tcp4", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
        self._listen("udp4", socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
        if socket.has_ipv6:
            self._listen("tcp6", socket.AF_INET6, socket.SOCK_STREAM, ("::1", 0))
        else:
            self.unavailable["tcp6"] = "no IPv6 here"
        self._listen("abstract", socket.AF_UNIX, socket.SOCK_STREAM, ABSTRACT)
        if not self.dir_created:
            self.unavailable["unix_path"] = f"no directory {CANARY_DIR} for {UNIX_PATH}"
        else:
            self._listen("unix_path", socket.AF_UNIX, socket.SOCK_STREAM, UNIX_PATH)
            if "unix_path" not in self.unavailable:
                os.chmod(UNIX_PATH, 0o777)  # reachable by any uid: only the sandbox may stop it

    def _make_shm(self) -> None:
        if not shutil.which("ipcmk"):
            self.unavailable["shm"] = "ipcmk is not installed"
            return
        try:
            out = subprocess.run(["ipcmk", "-M", "4096"], capture_output=True, text=True, timeout=10, check=True)
            self.shm_id = int(re.search(r"(\d+)\s*$", out.stdout.strip()).group(1))
            self.shm_before = self._shm_line()
            if self.shm_before is None:
                raise OSError("segment not listed in /proc/sysvipc/shm")
        except (OSError, subprocess.SubprocessError, AttributeError, ValueError) as exc:
            self.unavailable["shm"] = f"ipcmk -M 4096 failed: {exc}"

    def _shm_line(self) -> "list[str] | None":
        try:
            with open("/proc/sysvipc/shm") as handle:
                for line in handle.read().splitlines()[1:]:
                    fields = line.split()
                    if len(fields) > 1 and fields[1] == str(self.shm_id):
                        return fields
        except OSError:
            return None
        return None

    def _make_sleeper(self) -> None:
        self.sleeper = subprocess.Popen([sys.executable, "-S", "-c", SLEEPER], stdout=subprocess.PIPE,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        line = self.sleeper.stdout.readline()
        if line.strip() != b"READY":
            self.unavailable["sleeper"] = f"sleeper did not start: {line!r}"
        os.set_blocking(self.sleeper.stdout.fileno(), False)
        self.sleeper_start = _stat_field(self.sleeper.pid, 19)

    # ---- the recorder -------------------------------------------------------------
    def _record(self, label: str, detail: str) -> None:
        with self._lock:
            self.contacts.append((time.monotonic(), label, detail))

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._stop_r, selectors.EVENT_READ, ("stop", None))
        for sock, label in self._sockets:
            selector.register(sock, selectors.EVENT_READ, ("listen", label))
        if self.sleeper is not None:
            selector.register(self.sleeper.stdout, selectors.EVENT_READ, ("sleeper", None))
        if self.inotify is not None:
            selector.register(self.inotify.fd, selectors.EVENT_READ, ("inotify", None))
        while True:
            for key, _mask in selector.select(0.5):
                kind, label = key.data
                if kind == "stop":
                    selector.close()
                    return
                if kind == "sleeper":
                    try:
                        data = os.read(key.fileobj.fileno(), 4096)
                    except BlockingIOError:
                        continue
                    if data:
                        self._record("sleeper", data.decode(errors="replace").strip())
                    else:
                        selector.unregister(key.fileobj)
                        self._record("sleeper", "the sleeper closed its stdout (it died)")
                elif kind == "inotify":
                    before = len(self.inotify.events)
                    events = self.inotify.poll()
                    for mask in events[before:]:
                        self._record("file", f"inotify event mask 0x{mask:x} on {CANARY_FILE}")
                elif kind == "listen":
                    self._on_socket(key.fileobj, label)

    def _on_socket(self, sock: socket.socket, label: str) -> None:
        try:
            if sock.type == socket.SOCK_DGRAM:
                data, peer = sock.recvfrom(65536)
                self._record(label, f"datagram from {peer!r}: {data[:100]!r}")
                return
            conn, peer = sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._record(label, f"socket error {exc}")
            return
        conn.settimeout(0.5)
        try:
            data = conn.recv(200)
        except OSError:
            data = b""
        conn.close()
        self._record(label, f"connection from {peer!r}: {data[:100]!r}")

    # ---- checks ------------------------------------------------------------------
    def mark(self) -> int:
        with self._lock:
            return len(self.contacts)

    def contacts_since(self, mark: int, settle: float = 0.05) -> list:
        time.sleep(settle)
        if self.inotify is not None:
            # the thread reads inotify too; reading here is only to be prompt
            pass
        with self._lock:
            return list(self.contacts[mark:])

    def listings(self) -> dict[str, set]:
        found = {}
        for directory in (*WATCHED_DIRS, self.server_cwd):
            try:
                found[directory] = set(os.listdir(directory))
            except OSError:
                found[directory] = set()
        # the working directory is the server's own: nothing may appear anywhere below it
        below = set()
        for dirpath, dirnames, filenames in os.walk(self.server_cwd):
            for name in dirnames + filenames:
                below.add(os.path.relpath(os.path.join(dirpath, name), self.server_cwd))
        found[self.server_cwd + "/**"] = below
        return found

    def new_entries(self) -> dict[str, list]:
        """Entries that appeared since start(), minus our fixtures and known test infrastructure."""
        now = self.listings()
        own = {os.path.basename(CANARY_DIR)}
        result = {}
        for directory, names in now.items():
            added = names - self.listings_before.get(directory, set())
            if directory in WATCHED_DIRS:
                added = {n for n in added if n not in own
                         and not any(fnmatch.fnmatch(n, pattern) for pattern in INFRA_PATTERNS)}
            if added:
                result[directory] = sorted(added)
        return result

    def attributable(self, directory: str, name: str, snippet_names: set) -> "str | None":
        """Why a new entry of a shared directory may be a snippet's doing, or None.
        The shared /tmp of a build machine also sees other people's files: an entry
        counts when the sandbox uid owns it, a snippet names it, or it holds a canary."""
        path = os.path.join(directory, name)
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if os.geteuid() == 0 and st.st_uid == SANDBOX_UID:
            return f"owned by the sandbox uid {SANDBOX_UID}"
        if name in snippet_names or name.startswith(("sbx_", "SBX")):
            return "a name an attack uses"
        if os.path.isfile(path) and not os.path.islink(path):
            try:
                with open(path, "rb") as handle:
                    head = handle.read(1 << 16)
            except OSError:
                return None
            for needle in (b"SBX-", b"ESCAPED", CANARY_TEXT.encode(), SECRET_VALUE.encode()):
                if needle in head:
                    return f"holds {needle.decode()!r}"
        return None

    def problems(self, snippet_names: "set | None" = None) -> list[str]:
        """Everything that shows an attack touched the host."""
        time.sleep(0.2)
        out = []
        with self._lock:
            for _t, label, detail in self.contacts:
                out.append(f"{label}: {detail}")
        if "file" not in self.unavailable:
            try:
                with open(CANARY_FILE) as handle:
                    text = handle.read()
                if text.strip() != CANARY_TEXT:
                    out.append(f"{CANARY_FILE} content changed: {text[:100]!r}")
            except OSError as exc:
                out.append(f"{CANARY_FILE} is gone: {exc}")
        if self.shm_id is not None and self.shm_before is not None:
            now = self._shm_line()
            if now is None:
                out.append(f"SysV shm segment {self.shm_id} disappeared")
            else:
                # key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime
                for index, name in ((2, "perms"), (3, "size"), (5, "lpid"), (6, "nattch"), (7, "uid"),
                                    (11, "atime"), (12, "dtime"), (13, "ctime")):
                    if index < len(now) and now[index] != self.shm_before[index]:
                        out.append(f"SysV shm segment {self.shm_id}: {name} changed "
                                   f"{self.shm_before[index]} -> {now[index]}")
        if self.sleeper is not None and "sleeper" not in self.unavailable:
            state = _stat_field(self.sleeper.pid, 0)
            if self.sleeper.poll() is not None or state in (None, "Z", "X"):
                out.append(f"the sleeper {self.sleeper.pid} was killed (status {self.sleeper.returncode})")
            elif state in ("T", "t"):
                out.append(f"the sleeper {self.sleeper.pid} was stopped")
            elif _stat_field(self.sleeper.pid, 19) != self.sleeper_start:
                out.append("the sleeper pid now belongs to another process")
        self.unattributed = {}
        for directory, added in self.new_entries().items():
            if directory not in WATCHED_DIRS:
                # the server's own working directory: nothing else writes there
                out.append(f"new entries in the server's working directory {directory}: {added[:20]}")
                continue
            for name in added:
                why = self.attributable(directory, name, snippet_names or set())
                if why:
                    out.append(f"new entry {os.path.join(directory, name)} ({why})")
                else:
                    self.unattributed.setdefault(directory, []).append(name)
        return out

    def stop(self) -> None:
        if self._thread is not None:
            os.write(self._stop_w, b"x")
            self._thread.join(5)
        for sock, _label in self._sockets:
            sock.close()
        if "unix_path" not in self.unavailable:
            try:
                os.unlink(UNIX_PATH)
            except OSError:
                pass
        if self.inotify is not None:
            self.inotify.close()
        if self.file_created:
            try:
                os.unlink(CANARY_FILE)
            except OSError:
                pass
        if self.dir_created:
            try:
                os.rmdir(CANARY_DIR)
            except OSError:
                pass
        if self.shm_id is not None:
            subprocess.run(["ipcrm", "-m", str(self.shm_id)], capture_output=True, timeout=10)
        if self.sleeper is not None:
            if self.sleeper.poll() is None:
                self.sleeper.kill()
            self.sleeper.wait(5)
            self.sleeper.stdout.close()
        os.close(self._stop_r)
        os.close(self._stop_w)

    def context(self) -> dict:
        """What code generators may embed in a snippet (pids, paths, ports)."""
        return {
            "sleeper_pid": self.sleeper.pid if self.sleeper else 0,
            "canary_file": CANARY_FILE,
            "canary_text": CANARY_TEXT,
            "secret_value": SECRET_VALUE,
            "unix_path": UNIX_PATH,
            "server_cwd": self.server_cwd,
        }


def _stat_field(pid: int, index: int) -> "str | None":
    """Field `index` of /proc/pid/stat counted after the comm field (0 = state)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode(errors="replace")
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    return fields[index] if index < len(fields) else None


def sandbox_uid_processes(uid: int = 65534) -> list[str]:
    """Processes of the sandbox uid on the host (root runs only: the uid drop)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as handle:
                for line in handle:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(name)
                        break
        except OSError:
            continue
    return found


def cmdline_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return ""


def has_fork_server_ancestor(pid: int) -> bool:
    """Is pid inside a live fork server's tree? The fork server names itself in
    its command line (sandbox/process_names.py)."""
    seen = set()
    pid = int(_stat_field(pid, 1) or 0)
    while pid > 1 and pid not in seen:
        seen.add(pid)
        if cmdline_of(pid).startswith("sandbox: fork server"):
            return True
        pid = int(_stat_field(pid, 1) or 0)
    return False


def processes_matching(text: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if text.encode() in handle.read().replace(b"\0", b" "):
                    found.append(int(name))
        except OSError:
            continue
    return found
