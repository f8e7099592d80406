"""The namespaces of one execution and the user namespace's id maps.

The fork server clones each child straight into new user, pid, mount, IPC and
UTS namespaces (and a new, empty network namespace unless the network profile
is on), then writes the child's id maps from outside: one line mapping
INSIDE_ID to an unprivileged host id. As root that id is
SANDBOX_ID (nobody), so a sandbox never holds a host uid that owns
anything; as an ordinary user it is the user's own uid, the only one it may map.
"""

from __future__ import annotations

from . import kernel

# The uid/gid the snippet has inside its user namespace.
INSIDE_ID = 1000
# As root, the host uid/gid every sandbox runs as ("nobody": owns nothing).
SANDBOX_ID = 65534


def clone_flags(*, network: bool) -> int:
    """The namespaces a child is cloned into; the network one only when the
    network profile is off (an empty namespace: not even loopback is up)."""
    flags = (kernel.CLONE_NEWUSER | kernel.CLONE_NEWNS | kernel.CLONE_NEWPID
             | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS)
    if not network:
        flags |= kernel.CLONE_NEWNET
    return flags


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
