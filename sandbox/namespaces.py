"""Creating the namespaces of one execution and the user namespace id maps.

Two ways in, one result:
- as an ordinary user, a new user namespace comes first: it is what grants the
  capabilities needed to create the others and to mount;
- as root, the mount/pid/net/ipc/uts namespaces are created with real root
  (no user namespace needed), and the snippet process later drops to an
  unprivileged uid and creates a user namespace of its own, so that it holds
  no capability over any namespace it can reach.
"""

from __future__ import annotations

from . import kernel

# The uid/gid the snippet sees inside its user namespace.
INSIDE_ID = 1000


def execution_flags(*, network: bool) -> int:
    """Namespaces besides the user namespace; the network one only when the
    network profile is off (an empty namespace: not even loopback is up)."""
    flags = kernel.CLONE_NEWNS | kernel.CLONE_NEWPID | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS
    if not network:
        flags |= kernel.CLONE_NEWNET
    return flags


def enter_user_namespace(outer_uid: int, outer_gid: int) -> None:
    """unshare(CLONE_NEWUSER) and map our one outer id to INSIDE_ID.

    After a uid change the kernel marks the process non-dumpable, which makes
    its /proc/self files root-owned and the maps unwritable: become dumpable
    for the two writes; the caller makes it non-dumpable again right after."""
    kernel.unshare(kernel.CLONE_NEWUSER)
    kernel.set_dumpable(True)
    write_id_maps(outer_uid, outer_gid)


def write_id_maps(outer_uid: int, outer_gid: int) -> None:
    # setgroups must be denied before an unprivileged gid_map is accepted; it
    # also stops the process from dropping supplementary groups that act as
    # deny entries on host files.
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/gid_map", f"{INSIDE_ID} {outer_gid} 1\n")
    _write("/proc/self/uid_map", f"{INSIDE_ID} {outer_uid} 1\n")


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
