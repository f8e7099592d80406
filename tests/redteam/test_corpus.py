"""Every attack of the shared corpus (shared/redteam/corpus.json) and of our own
variants (variants.json, same record format) THROUGH THE MCP SERVER, with a real
MCP client, twice: with RestrictedPython on (`rp`, the product as shipped) and
with SANDBOX_RESTRICTED_PYTHON=false (`norp`, the kernel layers alone).

The corpus is $SANDBOX_REDTEAM_CORPUS, else the copy of shared/redteam/corpus.json that
the project carries (tests/redteam/corpus.json); without either the suite fails, it is
never skipped.

Rules applied to every case, in both modes
------------------------------------------
* The answer is well formed: a tool result whose JSON text parses, `success` is a
  bool, `error_type` one of the server's declared types.
* No host data in any field: neither the canary file's text (HOSTCANARY-5d1e9b)
  nor the server's secret (sbx-secret-7f3a9c). Verbatim echoes of the snippet's
  own source lines (a traceback or SyntaxError quoting the code, whose string
  literals hold markers) are removed before any text check.
* No host-side effect (tests/redteam/hostcanary.py, which gives this run its own
  canaries in place of the corpus's fixed names): no contact with the TCP
  listeners (the corpus's 127.0.0.1:47011, [::1]:47013), the UDP collector (127.0.0.1:47012), the
  abstract and path unix sockets; no open/read/change of /tmp/SANDBOX_HOST_CANARY.txt
  (inotify); the SysV segment untouched; the same-user sleeper neither signalled
  nor killed; no host path the snippet names (its /tmp, /var/tmp, /dev/shm string
  literals, its relative sbx_canary* names in the server's cwd) exists afterwards;
  and, at the end of the session (test_zz_host_canaries.py), no new entry in /tmp,
  /var/tmp, /dev/shm or the server's cwd.
* The answer comes within the case's timeout + 3 s, scaled by the machine's slowness
  (never a hang); no process of the execution is left once the fork server's tree is
  back to its warm pool (waited for, a minute at most); the MCP client saw no line on the channel that is not
  JSON-RPC (test_wire.py checks every byte for the fd-1 writers); the server is alive, its RSS stays bounded, and it
  answers the next request (an ordinary execution) correctly.
* Every answer that reports a blocked operation (error_type security_violation, or
  security_events) has a matching security event, same execution_id, in the
  server's audit log (SANDBOX_AUDIT_LOG).
* `followup_code` runs as a second execution: no marker may ever appear there
  (state never crosses executions, whatever the mode).

Mode `rp` (RestrictedPython on)
-------------------------------
* The error_type must match the record's expected outcome or one of its
  also_acceptable outcomes: compile_error -> syntax_error|security_violation;
  runtime_error -> runtime_error|security_violation|memory_limit; limit_kill ->
  timeout|memory_limit|output_limit; truncated -> success with a *_truncated flag,
  or output_limit; contained -> anything (without a marker); crash_reported ->
  runtime_error with a `signal` field, or internal_error. A request that itself
  exceeds a configured maximum (timeout, memory_limit, code size: RES-021,
  DOS-013's 10 MB generator) may also be refused with invalid_argument.
* No `ESCAPED:` marker anywhere, nor the record's canary.marker for kind stdout;
  the one exception is RP-034 (the XML text it dumps holds the marker as data, and
  seeing it inside the returned stdout is explicitly acceptable; its wire check is
  in test_wire.py).
* compile_error records are also sent to validate_code, which must answer
  valid=false promptly.
* Per-canary harness checks: `truncated` -> stdout/stderr within the cap and
  marked, error text within 20,000 characters; `SBX-HOSTNAME` -> the name printed
  differs from the host's; `site-packages` -> the error and traceback reveal no
  host path (site-packages, the checkout, the home directory, RestrictedPython
  internals); `sleep 4242` -> no such process on the host.

Mode `norp` (SANDBOX_RESTRICTED_PYTHON=false, kernel layers alone)
-------------------------------------------------------------------
A Python-level escape is expected here (typing.sys works, `import os` works); what
must never happen is an OS-level effect. So:
* layer `python` records: markers are tolerated (they prove a Python-level bypass
  only), provided a marker that reports a pid reports the sandbox's own pid (2, from
  a probe: the pid namespace holds) and no host data is in the answer. The expected
  outcome is not asserted, except for the resource/crash records below.
* layer `chained` records: only the `ESCAPED:python_guard_bypassed` marker (the
  Python step) is tolerated; the OS step's marker (e.g. chained_exec_allowed) fails.
* layer `os` and `python+os` records: no marker at all: the kernel layers must stop
  the attack by themselves. One documented exception, NET-001: creating an AF_UNIX
  socket is allowed by design (DESIGN.md: seccomp refuses every family but AF_UNIX;
  the empty network and mount namespaces leave it nothing to reach, which NETV-001
  checks); any other family is a failure. In the doors modes (the network profile on)
  AF_INET/AF_INET6 stream and AF_INET datagram sockets are allowed too: they live in the
  sandbox's own network namespace, whose only way out is the egress proxy; netlink, raw
  and packet sockets stay a failure.
* records with danger resource_exhaustion or crash keep their expected outcome:
  the bound comes from the kernel (rlimits, the fork server's timeout), not from
  RestrictedPython.
* the harness checks that concern the host (files, sockets, signals, hostname,
  leftover processes, the server's health) apply as in `rp`; the error-text
  checks (LEAK-009's paths, validate_code) do not: with RestrictedPython off the
  snippet may read module paths itself.

The same rules, by category
---------------------------
restricted_python_escape, pyjail (mostly layer python): rp -> the expected outcome
    and no marker; norp -> markers tolerated (pid 2, no host data), outcome not
    asserted; the few os-layer records among them (PJV-009) follow the os rule.
filesystem: both modes -> no marker of an os/python+os record, the canary file
    never opened (inotify), no path the snippet names created on the host, no new
    file in the shared temporary directories or the server's cwd; rp also asserts
    the outcome.
network: both modes -> no contact recorded by any listener or the UDP collector,
    no marker (NET-001's AF_UNIX-only exception in norp).
process: both modes -> the sleeper neither signalled nor killed, the server alive
    and answering, nothing left running (the fork server back to its warm pool
    within 2 s, no 'sleep 4242'); PROC-004/LEAK-003 may report the sandbox's own
    init (pid 1), as their records allow.
info_leak: both modes -> neither the secret nor the canary text in any field, the
    hostname printed differs from the host's; rp -> no host path in errors.
resource, dos: both modes -> the expected outcome for danger resource_exhaustion
    or crash (the kernel bounds them), the answer within timeout + 3 s (scaled), output and
    error texts within their caps, the server's RSS bounded; rp -> every record's
    outcome.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from hostcanary import processes_matching
from mcpsync import ServerGone, process_stats, fork_server_of, all_descendants
from mcp_client import result_text, sandboxes
import redteam_lib as lib
from redteam_lib import MAX_CODE_SIZE, MAX_MEMORY, MAX_OUTPUT, MAX_TIMEOUT, POOL_SIZE, load_corpus, load_variants

CORPUS = load_corpus()
VARIANTS = load_variants()
CASES = CORPUS + VARIANTS

PARAMS = [pytest.param(mode, case, id=f"{mode}-{case['id']}") for mode in ("rp", "norp", "doors", "norp_doors")
          for case in CASES]
RP_MODES = ("rp", "doors")  # RestrictedPython on: the default profile, and with more profiles on
DOORS_MODES = ("doors", "norp_doors")  # the network, filesystem and data-science profiles on


@pytest.fixture(scope="session")
def context(servers, canaries):
    info, _raw, _elapsed = servers["rp"].ensure().call("get_sandbox_info", {})
    doors, _raw, _elapsed = servers["doors"].ensure().call("get_sandbox_info", {})
    ctx = dict(canaries.context())
    ctx["doors_modules"] = sorted(set(doors["allowed_modules"]) - set(info["allowed_modules"]))
    ctx.update(repo=str(lib.REPO), home=os.path.expanduser("~"), allowed_modules=sorted(info["allowed_modules"]),
               host_hostname=lib.host_hostname(), layers=info.get("layers"))
    return ctx


@pytest.fixture(scope="session")
def sandbox_pid(servers):
    """The snippet's pid as the snippet sees it with RestrictedPython off."""
    data, _raw, _elapsed = servers["norp"].ensure().call(
        "execute_code", {"code": "import os\nresult = os.getpid()", "timeout": 5})
    assert data["success"], data
    return data["result"]


def test_sandbox_pid_is_namespaced(sandbox_pid):
    assert sandbox_pid == 1, f"the snippet should be PID 1 of its own pid namespace, got {sandbox_pid}"


def test_carried_corpus_is_the_shared_one():
    """The project carries a copy of shared/redteam/corpus.json; where shared/ is beside
    the checkout, the copy must be current (refresh it with cp)."""
    if not lib.SHARED_CORPUS.is_file():
        pytest.skip(f"no {lib.SHARED_CORPUS} to compare the carried copy with")
    assert lib.CARRIED_CORPUS.read_bytes() == lib.SHARED_CORPUS.read_bytes(), \
        f"refresh the copy: cp {lib.SHARED_CORPUS} {lib.CARRIED_CORPUS}"


def test_corpus_is_complete():
    assert len(CORPUS) >= 94, f"only {len(CORPUS)} corpus records"
    categories = {c["category"] for c in CORPUS}
    missing = categories - {v["category"] for v in VARIANTS}
    assert not missing, f"no variant for the families {missing}"
    assert len(VARIANTS) >= 25
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate ids"


def _settled_pool(fork_server: "int | None", timeout: float = 60.0) -> "tuple[bool, list]":
    """Wait until the fork server's tree is back to its warm pool."""
    if not fork_server:
        return True, []
    deadline = time.monotonic() + timeout
    while True:
        below = sandboxes(all_descendants(fork_server))
        live = [p for p in below if _state(p) not in ("Z", None)]
        direct = [p for p in live if _parent(p) == fork_server]
        if len(direct) <= POOL_SIZE and len(live) <= 3 * POOL_SIZE:
            return True, live
        if time.monotonic() > deadline:
            return False, [(p, _cmd(p)) for p in live]
        time.sleep(0.05)


def _state(pid):
    from mcp_client import state_of
    return state_of(pid)


def _parent(pid):
    from mcp_client import parent_of
    return parent_of(pid)


def _cmd(pid):
    from mcpsync import cmdline
    return cmdline(pid)[:80]


@pytest.mark.parametrize("mode,case", PARAMS)
def test_attack(mode, case, servers, canaries, context, sandbox_pid):
    handle = servers[mode]
    server = handle.ensure()
    report = lib.CaseReport(case["id"], mode)
    run_case(mode, case, handle, canaries, context, sandbox_pid, report)
    assert not report.problems, report.render()


def run_case(mode, case, handle, canaries, context, sandbox_pid, report) -> None:
    server = handle.server
    fork_server = fork_server_of(server.pid)
    ctx = dict(context, server_pid=server.pid, fork_server_pid=fork_server or 0)
    if mode in DOORS_MODES:
        ctx["allowed_modules"] = sorted(set(context["allowed_modules"]) | set(context["doors_modules"]))
    code = canaries.localize(lib.materialize(case, ctx))
    rp = mode in RP_MODES
    if mode in DOORS_MODES:
        code = lib.without_import_probes(code, context["doors_modules"])
    code = lib.without_import_probes(code, lib.SUBSET_MODULES)
    kind = (case.get("canary") or {}).get("kind")
    marker = (case.get("canary") or {}).get("marker", "")
    host_paths = lib.host_paths_named(case, code, canaries.server_cwd)
    preexisting = {p for p in host_paths if os.path.lexists(p)}
    if preexisting:
        report.notes.append(f"paths existed before the case: {sorted(preexisting)}")

    for call_args in lib.call_variants(case):
        timeout = lib.case_timeout(case, call_args)
        arguments = {"code": code, "timeout": timeout, **call_args}
        over = lib.request_over_limits(arguments, MAX_TIMEOUT, MAX_CODE_SIZE, MAX_MEMORY)
        effective_timeout = min(timeout, MAX_TIMEOUT)
        mark = canaries.mark()
        faults = len(server.wire_faults)
        try:
            data, raw, elapsed = server.call("execute_code", arguments, timeout=effective_timeout + 60)
        except ServerGone as exc:
            report.fail(f"the server did not answer / died: {exc}; stderr tail: {server.stderr_text()[-1500:]}")
            handle.ensure()
            return
        except Exception as exc:  # noqa: BLE001 - a JSON-RPC error answer
            report.fail(f"execute_code raised {type(exc).__name__}: {exc}")
            continue
        report.answers.append((f"execute_code {sorted(call_args) or ''}", data, elapsed))
        check_answer(mode, case, code, data, raw, elapsed, over, effective_timeout, report, sandbox_pid, ctx)
        check_audit(handle, data, report)
        if len(server.wire_faults) > faults:
            report.fail(f"the MCP channel carried non-JSON-RPC data: {server.wire_faults[faults:][:3]}")

        # host side
        for contact in canaries.contacts_since(mark):
            report.fail(f"host canary contacted: {contact[1]}: {contact[2]}")
        settled, leftover = _settled_pool(fork_server_of(server.pid) or fork_server)
        if not settled:
            report.fail(f"processes left a minute after the answer: {leftover}")
        if marker == "sleep 4242" or "4242" in code:
            found = processes_matching("sleep 4242")
            if found:
                report.fail(f"'sleep 4242' runs on the host: pids {found}")
        for path in host_paths:
            if os.path.lexists(path) and path not in preexisting:
                report.fail(f"the snippet created {path} on the host")

        # per-canary harness checks
        if marker == "truncated" or case["expect"]["outcome"] == "truncated":
            check_caps(data, report)
        if marker == "SBX-HOSTNAME":
            check_hostname(data, ctx["host_hostname"], report)
        if marker == "site-packages" and rp:
            text = (data.get("error") or "") + "\n" + (data.get("traceback") or "") + "\n" + (data.get("stderr") or "")
            found = lib.host_paths_in_text(text)
            if found:
                report.fail(f"the error/traceback reveals host paths: {found}")

    # validate_code must refuse what compile_error records send (the Python layer's job)
    if rp and case["expect"]["outcome"] == "compile_error":
        try:
            data, _raw, elapsed = server.call("validate_code", {"code": code}, timeout=60)
        except Exception as exc:  # noqa: BLE001
            report.fail(f"validate_code failed: {type(exc).__name__}: {exc}")
        else:
            report.answers.append(("validate_code", data, elapsed))
            if (data.get("validation") or {}).get("valid") is not False:
                report.fail("validate_code says valid=true for a compile_error record")
            if elapsed > lib.scaled(15):
                report.fail(f"validate_code took {elapsed:.1f}s")
            for field_name, token in lib.markers_in(data, code):
                report.fail(f"validate_code answer holds {token!r} in {field_name}")

    if case.get("followup_code"):
        try:
            data, _raw, elapsed = server.call("execute_code", {"code": canaries.localize(case["followup_code"]),
                                                           "timeout": lib.scaled(5)},
                                              timeout=lib.scaled(5) + 60)
        except Exception as exc:  # noqa: BLE001
            report.fail(f"the follow-up call failed: {type(exc).__name__}: {exc}")
        else:
            report.answers.append(("followup", data, elapsed))
            for field_name, token in lib.markers_in(data, case["followup_code"]):
                report.fail(f"state crossed executions: follow-up shows {token!r} in {field_name}")
            if marker and kind == "stdout" and marker in json.dumps(data):
                report.fail(f"follow-up shows the canary marker {marker!r}")

    # the server is alive, bounded, and answers the next request
    if not server.alive():
        report.fail(f"the server died; stderr tail: {server.stderr_text()[-1500:]}")
        handle.ensure()
        return
    stats = process_stats(server.pid)
    if stats.get("rss_kib") and stats["rss_kib"] > lib.SERVER_RSS_LIMIT_KIB:
        report.fail(f"server RSS is {stats['rss_kib']} KiB")
    if not server.healthy():
        report.fail("the server does not answer an ordinary request after this case")


def check_answer(mode, case, code, data, raw, elapsed, over, timeout, report, sandbox_pid, ctx) -> None:
    rp = mode in RP_MODES
    if not isinstance(data, dict):
        report.fail(f"no structured answer: {raw!r:.300}")
        return
    text = result_text(raw)
    if not text.strip():
        report.fail("the tool result has no text for the model")
    elif data.get("error_type") and f"({data['error_type']}" not in text:
        report.fail(f"the tool result's text does not name the error type: {text[:200]!r}")
    if not isinstance(data.get("success"), bool):
        report.fail("success is not a bool")
    if data.get("error_type") is not None and data["error_type"] not in lib.ERROR_TYPES:
        report.fail(f"unknown error_type {data['error_type']!r}")
    if data.get("success") and data.get("error_type"):
        report.fail("success with an error_type")
    if elapsed > timeout + lib.TIME_MARGIN:
        report.fail(f"answer after {elapsed:.2f}s, timeout {timeout:g}s (+{lib.TIME_MARGIN:g}s margin)")

    # the expected outcome
    assert_outcome = rp or case.get("danger") in ("resource_exhaustion", "crash")
    if mode in DOORS_MODES and case.get("network_profile_door"):
        assert_outcome = False  # the profile opens what the case expects refused; host checks still apply
    if assert_outcome and not lib.outcome_ok(case, data, over):
        report.fail(f"error_type {data.get('error_type')!r} (success={data.get('success')}) does not match "
                    f"the expected {lib.expected_outcomes(case)}")

    # markers and host data
    canary = case.get("canary") or {}
    for field_name, secret in lib.host_data_in(data, code, text):
        report.fail(f"host data {secret!r} in {field_name}")
    own_init_ok = "init" in str(canary.get("check", ""))
    door_opened = False
    for field_name, token in lib.markers_in(data, code, own_init_ok=own_init_ok):
        if case["id"] == "RP-034" and field_name == "stdout":
            continue
        if mode in DOORS_MODES and lib.network_profile_marker(case, token):
            report.notes.append(f"tolerated {token!r}: the network profile's sockets, in its own namespace")
            door_opened = True
            continue
        if rp:
            report.fail(f"marker {token!r} in {field_name}")
        else:
            ok, why = lib.norp_marker_tolerated(case, token, code, sandbox_pid)
            if ok:
                report.notes.append(f"tolerated {token!r}: {why}")
            else:
                report.fail(f"marker {token!r} in {field_name}: {why}")
    if canary.get("kind") == "stdout" and canary.get("marker") and canary["marker"] != "ESCAPED:":
        cleaned = lib.strip_echo(json.dumps(data, ensure_ascii=False, default=str), code)
        if own_init_ok:
            cleaned = lib.drop_own_init_lines(lib.strip_echo(data.get("stdout") or "", code))
        if canary["marker"] in cleaned and rp and not door_opened:
            report.fail(f"the canary marker {canary['marker']!r} appears in the answer")


def check_audit(handle, data, report) -> None:
    """Every blocked operation of this answer is a security event in the audit log."""
    if not isinstance(data, dict):
        return
    blocked = data.get("error_type") == "security_violation" or bool(data.get("security_events"))
    if not blocked:
        return
    execution_id = data.get("execution_id")
    records = []
    try:
        with open(handle.audit_log, encoding="ascii") as log:
            for line in log:
                if execution_id in line:
                    record = json.loads(line)
                    if record.get("event") == "security" and record.get("execution_id") == execution_id:
                        records.append(record)
    except OSError as exc:
        report.fail(f"the audit log cannot be read: {exc}")
        return
    if not records:
        report.fail(f"a blocked operation ({data.get('error_type')}, events {data.get('security_events')}) "
                    f"left no security event in the audit log for execution {execution_id}")


def check_caps(data: dict, report) -> None:
    for stream in ("stdout", "stderr"):
        value = data.get(stream) or ""
        if len(value.encode("utf-8", "surrogatepass")) > 4 * MAX_OUTPUT + 64:
            report.fail(f"{stream} holds {len(value)} characters, over the {MAX_OUTPUT}-byte cap")
        if len(value.encode("utf-8", "surrogatepass")) > MAX_OUTPUT and not data.get(f"{stream}_truncated"):
            report.fail(f"{stream} exceeds the cap without {stream}_truncated")
    for key in ("error", "traceback"):
        if len(data.get(key) or "") > lib.MAX_TEXT:
            report.fail(f"{key} holds {len(data[key])} characters (cap {lib.MAX_TEXT})")
    result = data.get("result")
    if isinstance(result, str) and len(result) > 8 << 20:
        report.fail(f"result holds {len(result)} characters")


def check_hostname(data: dict, host_name: str, report) -> None:
    out = data.get("stdout") or ""
    for line in out.splitlines():
        if line.startswith("SBX-HOSTNAME:"):
            names = [n.strip() for n in line[len("SBX-HOSTNAME:"):].split("/")]
            if host_name and host_name != "sandbox" and host_name in names:
                report.fail(f"the sandbox sees the host's hostname {host_name!r}: {line!r}")
