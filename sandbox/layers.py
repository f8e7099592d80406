"""Which isolation layers are really active on this host.

"Offered" is not taken on trust: the fork server runs a probe execution through
the real hardening sequence with every layer the host seems to offer. A layer
whose setup fails in the probe is reported inactive with the reason and the
probe is repeated without it; afterwards every execution applies exactly the
layers that passed, and a failure of any of them is fatal for that execution.
"""

from __future__ import annotations

import os

from sandbox import child as child_mod
from sandbox import host_mounts, landlock, mounts, namespaces, rlimits, seccomp
from sandbox.forkserver import child_report
from sandbox.layer_names import KERNEL_LAYERS
from sandbox.wire.messages import RunRequest
from sandbox.wire import protocol



PROBE_CODE = "result = 6 * 7"


def hard_limits(config: dict) -> rlimits.Limits:
    return rlimits.Limits(
        # a session's CPU adds up over its calls, each allowed its timeout on top (child.py)
        cpu_seconds=int(max(config["max_timeout"], config.get("session_max_lifetime", 0))) + 1,
        memory_bytes=int(config["max_memory"]),
        file_size_bytes=max(rlimits.FILE_SIZE_BYTES, int(config.get("max_input", 0))),  # an input file fits
        open_files=rlimits.OPEN_FILES,
        processes=rlimits.PROCESSES,
        memlock_bytes=0,
    )


def establish(fork_server, config: dict):
    """Return (ChildSpec with the active layers, report {layer: {active, detail}})."""
    disabled = set(config.get("disabled_layers", ()))
    network = bool(config["network"])
    report: dict[str, dict] = {}
    candidates = [name for name in KERNEL_LAYERS if name not in disabled]
    for name in KERNEL_LAYERS:
        if name in disabled:
            report[name] = {"active": False, "detail": "disabled by SANDBOX_UNSAFE_DISABLE_LAYERS"}

    if "seccomp" in candidates:
        ok, reason = seccomp.seccomp_status()
        if not ok:
            candidates.remove("seccomp")
            report["seccomp"] = {"active": False, "detail": reason}
    abi = landlock.abi_version()
    if "landlock" in candidates and abi == 0:
        candidates.remove("landlock")
        report["landlock"] = {"active": False, "detail": "this kernel offers no Landlock (ABI 0)"}

    # every import path resolved once here, not per execution
    readable = tuple(mounts.readable_paths(network=network))
    operator_mounts = [host_mounts.Mount(host, where, bool(writable))
                       for host, where, writable in config.get("host_mounts", ())]
    pinned = mounts.pin_host_directories(operator_mounts, readable)
    # children share one empty network namespace only where Landlock scopes abstract sockets
    shared_network = (os.geteuid() == 0 and abi >= 6 and {"namespaces", "landlock", "seccomp"} <= set(candidates)
                      and namespaces.enter_empty_network())
    for _attempt in range(len(KERNEL_LAYERS) + 1):
        # the network profile's sockets only inside a network namespace of the child's own
        inet = network and "namespaces" in candidates
        program = seccomp.build_filter(allow_inet=inet) if "seccomp" in candidates else None
        spec = _spec(config, candidates, program, readable, shared_network, pinned)
        probe = fork_server.run_one(spec, RunRequest(code=PROBE_CODE, timeout=10, memory_limit=64 << 20,
                                                     allowed_modules=()))
        if probe.setup_error and probe.setup_error.get("layer") in candidates:
            layer = probe.setup_error["layer"]
            candidates.remove(layer)
            report[layer] = {"active": False, "detail": setup_failure_detail(layer, probe.setup_error)}
            continue
        frame = child_report.check_execute_frame(probe.result_frame, probe.result_payload, probe.result_cap)
        if isinstance(frame, dict) and frame.get("success") and frame.get("result") == 42:
            break
        raise RuntimeError(f"the sandbox probe failed: setup={probe.setup_error} "
                           f"frame_error={probe.frame_error} frame={str(frame)[:300]} "
                           f"status={probe.status} stderr={probe.out['stderr'].text()[:500] if 'stderr' in probe.out else ''!r}")

    if pinned and "namespaces" not in candidates:
        raise RuntimeError("SANDBOX_MOUNTS needs the namespaces layer, which is not active here ("
                           f"{report.get('namespaces', {}).get('detail', 'unknown')}); remove SANDBOX_MOUNTS or "
                           "run where namespaces work (`check` shows why they do not)")
    for name in candidates:
        report[name] = {"active": True, "detail": _detail(name, config, abi, program, spec)}
    if "seccomp" not in candidates and any(pin.mount.writable for pin in spec.host_mounts):
        report["seccomp"]["detail"] += ("; without it a snippet may leave a set-user-id file in an rw SANDBOX_MOUNTS "
                                        "directory, which the host honours unless that filesystem is nosuid")
    return spec, report


def setup_failure_detail(layer: str, setup_error: dict, sysctl_root: str = "/proc/sys") -> str:
    """Why a layer failed here, and, for the namespaces of an ordinary user on a host
    that restricts them (Ubuntu's AppArmor), the setting to change."""
    detail = f"setup failed on this host: {setup_error.get('error')}"
    if layer == "namespaces" and os.geteuid() != 0:
        why = namespaces.userns_restriction(sysctl_root)
        if why:
            detail += f"; {why}"
    return detail


def _spec(config: dict, layers, program, readable: tuple, empty_network_shared: bool,
          pinned: tuple = ()) -> child_mod.ChildSpec:
    return child_mod.ChildSpec(
        layers=frozenset(layers),
        network=bool(config["network"]) and "namespaces" in layers,
        host_root=os.geteuid() == 0,
        filesystem=bool(config["filesystem"]),
        workspace_size=int(config["workspace_size"]),
        max_request=int(config.get("max_request", protocol.MAX_REQUEST)),
        hard_limits=hard_limits(config),
        seccomp_program=program,
        readable=readable,
        empty_network_shared=empty_network_shared,
        host_mounts=pinned if "namespaces" in layers else (),
    )


def _detail(name: str, config: dict, abi: int, program, spec: child_mod.ChildSpec) -> str:
    root = os.geteuid() == 0
    active = spec.layers
    inet = bool(config.get("network")) and "namespaces" in active
    if name == "namespaces":
        if config.get("network"):
            net = ("a network namespace of its own whose only way out is the egress proxy listening at "
                   f"{namespaces.PROXY_URL}")
        elif spec.own_network:
            net = "an empty network namespace of its own"
        else:
            net = ("the fork server's empty network namespace, shared by the sandboxes (loopback down, no IP "
                   "socket; Landlock refuses another sandbox's abstract sockets)")
        return ("user, pid, mount, ipc and uts namespaces and " + net + "; private root with the Python "
                "installation read-only, an empty size-capped tmpfs /tmp and a fresh /proc"
                + _operator_mounts(spec))
    if name == "privilege_drop":
        sandbox_id = f"uid/gid {namespaces.SANDBOX_ID}:{namespaces.SANDBOX_ID} with no supplementary groups"
        if "namespaces" in active:
            host = f"host {sandbox_id}" if root else f"the user's own uid {os.getuid()}"
            who = f"runs as uid {namespaces.INSIDE_ID} of its own user namespace, mapped to {host}"
        else:
            who = f"runs as {sandbox_id}" if root else f"runs as the unprivileged uid {os.getuid()}"
        return who + "; every capability set empty (bounding and ambient too), no_new_privs, not dumpable"
    if name == "rlimits":
        return "CPU (hard = soft + 1 s), data and address space, file size, open files, processes, core 0, memlock 0"
    if name == "landlock":
        tcp = (f"TCP connect only to the proxy's port {namespaces.PROXY_ADDRESS[1]}" if inet
               else "no TCP connect") + ", no TCP bind" if abi >= 4 else "no TCP rules before ABI 4"
        return (f"ABI {abi}: read only the Python installation and system libraries, write only the "
                f"private /tmp{_operator_mounts(spec)}; {tcp}")
    if name == "seccomp":
        return (f"allow-list filter of {len(program) // 8} BPF instructions: foreign-architecture and x32 "
                "calls kill, execve/fork/ptrace/mount/unshare/bpf/io_uring/keyctl and more refused, "
                "no set-user-id or set-group-id file mode, "
                "unknown calls ENOSYS, sockets " + ("AF_UNIX/INET/INET6" if inet else "AF_UNIX only"))
    return ""




def _operator_mounts(spec: child_mod.ChildSpec) -> str:
    if not spec.host_mounts:
        return ""
    return "; SANDBOX_MOUNTS: " + ", ".join(f"{pin.mount.sandbox} ({pin.mount.mode})" for pin in spec.host_mounts)
