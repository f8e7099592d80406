"""Runs last in this folder (files are collected in name order): after every
attack of the session, the host canaries are exactly as they were set up."""

from __future__ import annotations

import os
import re

import hostcanary
import redteam_lib
from mcp_client import wait_until


def snippet_names() -> set:
    """Every file name the corpus and the variants mention in a string literal."""
    names = set()
    for case in redteam_lib.load_corpus() + redteam_lib.load_variants():
        for text in (case.get("code", ""), case.get("followup_code", "")):
            for literal in re.findall(r"""['"]([^'"\\\n]{1,200})['"]""", text):
                base = os.path.basename(literal.rstrip("/"))
                if re.fullmatch(r"[\w.\-]{3,}", base) and not base.isdigit():
                    names.add(base)
    return names


def test_host_canaries_were_set_up(canaries):
    # only IPv6 may legitimately be missing on a host; anything else weakens the suite
    missing = {k: v for k, v in canaries.unavailable.items() if k not in ("tcp6",)}
    assert not missing, f"host canaries that could not be set up: {missing}"


def test_the_snippets_name_this_runs_canaries_only(canaries):
    """Every fixed canary name of the corpus and the variants reaches the sandbox as this
    run's own: its file and socket paths, its abstract name, the ports it bound."""
    fixed = (hostcanary.CORPUS_FILE, hostcanary.CORPUS_UNIX_PATH, "\\0" + hostcanary.CORPUS_ABSTRACT + "'",
             *(str(port) for port in hostcanary.CORPUS_PORTS.values()))
    cases = [case for case in redteam_lib.load_corpus() + redteam_lib.load_variants()
             if any(name in case["code"] for name in fixed)]
    assert len(cases) >= 8, [case["id"] for case in cases]
    for case in cases:
        code = canaries.localize(case["code"])
        assert not [name for name in fixed if name in code], (case["id"], code)
        assert hostcanary.RUN in code or any(str(port) in code for port in canaries.ports.values()), case["id"]
    assert set(canaries.ports) >= {"tcp4", "udp4"}
    assert not set(canaries.ports.values()) & set(hostcanary.CORPUS_PORTS.values())


def test_host_canaries_untouched(canaries, servers):
    # close the servers first: nothing an attack left behind may surface at shutdown either
    for handle in servers.values():
        handle.close()
    problems = canaries.problems(snippet_names())
    if canaries.unattributed:
        # other people's files on a shared machine: shown, not failed (see hostcanary.attributable)
        print(f"new entries no snippet can have made (other processes on this machine): {canaries.unattributed}")
    assert not problems, "the host was touched:\n" + "\n".join(problems)


def test_no_sandbox_process_left(servers, canaries):
    leftovers = hostcanary.processes_matching("sleep 4242")
    assert not leftovers, f"processes started by attacks survive: {leftovers}"
    if os.geteuid() == 0:
        # A live sandbox-uid process that no fork server (of any server running on
        # this machine) has in its ancestry escaped its execution's process tree.
        # Zombies are dead already; processes of other servers' executions that are
        # just exiting vanish soon: wait for those seen first to go, a minute at most.
        def strays():
            return {int(pid) for pid in hostcanary.sandbox_uid_processes()
                    if hostcanary._stat_field(int(pid), 0) not in (None, "Z", "X")
                    and not hostcanary.has_fork_server_ancestor(int(pid)) and int(pid) not in canaries.nobody_before}
        first = strays()
        wait_until(lambda: not first & strays(), 60)
        lasting = first & strays()
        assert not lasting, f"uid 65534 processes outside every fork server's tree: " \
                            f"{[(p, hostcanary.cmdline_of(p)) for p in lasting]}"
