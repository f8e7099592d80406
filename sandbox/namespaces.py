"""The namespaces of one execution and the user namespace's id maps.

The fork server clones each child straight into new user, pid, mount, IPC,
UTS and network namespaces, then writes the child's id maps from outside: one line mapping
INSIDE_ID to an unprivileged host id. As root that id is
SANDBOX_ID (nobody), so a sandbox never holds a host uid that owns
anything; as an ordinary user it is the user's own uid, the only one it may map.
Once mapped, the child makes and enters a time namespace of its own
(enter_private_clocks): a clone cannot set a new time namespace's offsets.

The sandbox never shares the host's network namespace. Without the network
profile it has no way out at all; as root, when Landlock scopes abstract Unix
sockets (ABI 6) and seccomp refuses every socket family but AF_UNIX, the
children share one empty network namespace that the fork server entered at
start (enter_empty_network), instead of each creating and tearing down its own:
its loopback stays down and the sandboxes hold no capability over it, seccomp
leaves them no IP socket, and Landlock refuses to connect or send to an abstract
socket bound by another sandbox (each child is its own Landlock domain). When
either of those two layers is off, each child gets a namespace of its own again.
With the network profile on, the child always gets its own: it brings up its
loopback and listens at PROXY_ADDRESS before it drops its capabilities; the
listening socket goes to the server's egress proxy (egress_proxy.py), the only
way out.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import struct
import time

from sandbox import libc

# The uid/gid the snippet has inside its user namespace.
INSIDE_ID = 1000
# As root, the host uid/gid every sandbox runs as ("nobody": owns nothing).
SANDBOX_ID = 65534


# Where the snippet reaches the egress proxy, inside its own network namespace.
PROXY_ADDRESS = ("127.0.0.1", 3128)
PROXY_URL = f"http://{PROXY_ADDRESS[0]}:{PROXY_ADDRESS[1]}"

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def clone_flags(own_network: bool = True) -> int:
    """The namespaces a child is cloned into. Without its own network namespace
    it stays in the fork server's, the shared empty one (enter_empty_network)."""
    flags = (libc.CLONE_NEWUSER | libc.CLONE_NEWNS | libc.CLONE_NEWPID
             | libc.CLONE_NEWIPC | libc.CLONE_NEWUTS)
    return flags | libc.CLONE_NEWNET if own_network else flags


def enter_private_clocks() -> bool:
    """In the child, with the capabilities of its user namespace: a time namespace of its
    own, entered at once, whose monotonic and boot-time clocks start near zero. They count
    from the host's boot, and the host's uptime is not the snippet's to know (sysinfo and
    /proc/uptime are refused for the same reason). False on a kernel without time
    namespaces (before 5.6, or built without them): the clocks are then the host's."""
    try:
        libc.unshare(libc.CLONE_NEWTIME)   # (for the children we never have...)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return False
        raise
    since_boot = {"monotonic": time.CLOCK_MONOTONIC, "boottime": time.CLOCK_BOOTTIME}
    offsets = "".join(f"{name} {-int(time.clock_gettime(clock))} 0\n" for name, clock in since_boot.items())
    fd = os.open("/proc/self/timens_offsets", os.O_WRONLY)
    try:
        os.write(fd, offsets.encode())
    finally:
        os.close(fd)
    fd = os.open("/proc/self/ns/time_for_children", os.O_RDONLY)
    try:
        libc.setns(fd, libc.CLONE_NEWTIME)   # (...so we enter it ourselves: single-threaded, as we are)
    finally:
        os.close(fd)
    return True


def enter_empty_network() -> bool:
    """As root: move the fork server into a new, empty network namespace that the
    children of the profiles without network can share (creating and tearing down
    one per execution costs about 0.7 ms of CPU, bench/README.md). The fork server
    itself needs no network: it talks to the server over pipes it already holds."""
    try:
        libc.unshare(libc.CLONE_NEWNET)
    except OSError:
        return False
    return True


def open_proxy_listener() -> socket.socket:
    """In the child's new network namespace, with its capabilities there:
    bring up loopback and listen at PROXY_ADDRESS, for the proxy outside."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, request + bytes(22))[:18])[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | _IFF_UP) + bytes(22))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(PROXY_ADDRESS)
    listener.listen(64)
    return listener


def map_child_ids(pid: int, outer_uid: int, outer_gid: int, *, deny_setgroups: bool) -> None:
    """Map INSIDE_ID of the child's new user namespace to one host uid/gid.

    Without CAP_SETUID on the host, setgroups must be denied before the gid
    map is accepted; that also keeps the user's supplementary groups (which
    may act as deny entries on host files) from being dropped in there."""
    if deny_setgroups:
        _write(f"/proc/{pid}/setgroups", "deny")
    _write(f"/proc/{pid}/gid_map", f"{INSIDE_ID} {outer_gid} 1\n")
    _write(f"/proc/{pid}/uid_map", f"{INSIDE_ID} {outer_uid} 1\n")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


# Host settings that refuse or cripple unprivileged user namespaces, with the value that
# does it and what the operator can do instead (the first that applies is reported).
USERNS_RESTRICTIONS = (
    ("kernel/apparmor_restrict_unprivileged_userns", "1",
     "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+: "
     "kernel.apparmor_restrict_unprivileged_userns=1); allow them for this Python with an AppArmor "
     "profile granting 'userns,' (see the README), or with "
     "'sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0', or run the server as root"),
    ("kernel/unprivileged_userns_clone", "0",
     "unprivileged user namespaces are switched off (kernel.unprivileged_userns_clone=0); "
     "'sudo sysctl kernel.unprivileged_userns_clone=1', or run the server as root"),
    ("user/max_user_namespaces", "0",
     "user namespaces are switched off (user.max_user_namespaces=0); "
     "'sudo sysctl user.max_user_namespaces=15000', or run the server as root"),
)


def userns_restriction(sysctl_root: str = "/proc/sys") -> str | None:
    """Why this host refuses unprivileged user namespaces, with the way out; None
    when no known setting does (or when running as root, which needs none)."""
    for name, value, advice in USERNS_RESTRICTIONS:
        try:
            with open(f"{sysctl_root}/{name}") as f:
                if f.read().strip() == value:
                    return advice
        except OSError:
            continue
    return None
