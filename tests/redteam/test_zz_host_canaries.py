"""Runs last in this folder (files are collected in name order): after every
attack of the session, the host canaries are exactly as they were set up."""

from __future__ import annotations

import os

import hostcanary


def test_host_canaries_were_set_up(canaries):
    # only IPv6 may legitimately be missing on a host; anything else weakens the suite
    missing = {k: v for k, v in canaries.unavailable.items() if k not in ("tcp6",)}
    assert not missing, f"host canaries that could not be set up: {missing}"


def test_host_canaries_untouched(canaries, servers):
    # close the servers first: nothing an attack left behind may surface at shutdown either
    for handle in servers.values():
        handle.close()
    problems = canaries.problems()
    assert not problems, "the host was touched:\n" + "\n".join(problems)


def test_no_sandbox_process_left(servers, canaries):
    leftovers = hostcanary.processes_matching("sleep 4242")
    assert not leftovers, f"processes started by attacks survive: {leftovers}"
    if os.geteuid() == 0:
        # A sandbox-uid process that no fork server (of any server running on this
        # machine) has in its ancestry escaped its execution's process tree.
        strays = [pid for pid in hostcanary.sandbox_uid_processes()
                  if not hostcanary.has_zygote_ancestor(int(pid)) and int(pid) not in canaries.nobody_before]
        assert not strays, f"uid 65534 processes outside every fork server's tree: " \
                           f"{[(p, hostcanary.cmdline_of(int(p))) for p in strays]}"
