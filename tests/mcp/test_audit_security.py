"""Every blocked operation appears in the audit log (SANDBOX_AUDIT_LOG) as a
security event tied to its execution: a blocked import, a refused from-import,
a module gadget refused by the proxy, a policy violation at compile time, the
runtime attribute guard, a write to a module, a refused allowed_imports request,
use_container refused on a host missing a layer, and a seccomp kill (an x32
system call, RestrictedPython off). The log itself holds no code and no output.
"""

from __future__ import annotations

import json
import os
import platform
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "redteam"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcpsync import SyncServer  # noqa: E402

CANARY = "AUDIT-CANARY-4b7e1d"   # in every snippet's code and output: must never reach the log

# name -> (code, extra arguments, accepted error types, accepted security event kinds)
BLOCKED = {
    "import": (f"print({CANARY!r})\nimport subprocess", {}, {"security_violation"}, {"import_blocked", "blocked_import"}),
    "from_import_gadget": (f"print({CANARY!r})\nfrom uuid import os", {}, {"security_violation"},
                           {"import_blocked", "attribute_blocked", "blocked_import"}),
    "module_gadget": (f"print({CANARY!r})\nimport typing\nx = typing.sys", {}, {"security_violation"},
                      {"attribute_blocked", "import_blocked"}),
    "compile_policy": (f"x = {CANARY!r}\ny = ().__class__", {}, {"security_violation", "syntax_error"},
                       {"compile_rejected"}),
    "exec_call": (f"exec({CANARY!r})", {}, {"security_violation", "syntax_error"}, {"compile_rejected"}),
    "runtime_attribute_guard": (f"print({CANARY!r})\nx = getattr((), '__cl' + 'ass__')", {}, {"security_violation"},
                                {"attribute_blocked"}),
    "format_guard": (f"print({CANARY!r})\nx = '{{0.__class__}}'.format(1)", {}, {"security_violation"},
                     {"attribute_blocked"}),
    "module_write": (f"print({CANARY!r})\nimport json\njson.dumps = len", {}, {"security_violation"},
                     {"attribute_blocked", "write_blocked"}),
    "allowed_imports_request": (f"x = {CANARY!r}", {"allowed_imports": ["json", "os", "ctypes"]},
                                {"security_violation"}, {"blocked_import", "import_blocked"}),
}


def read_log(path: str) -> list:
    with open(path, encoding="ascii") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    base = tmp_path_factory.mktemp("sbx-audit")
    servers = {}
    for name, extra in (("rp", {}), ("norp", {"SANDBOX_RESTRICTED_PYTHON": "false"}),
                        ("degraded", {"SANDBOX_UNSAFE_DISABLE_LAYERS": "landlock"})):
        log = str(base / f"audit-{name}.jsonl")
        env = {"SANDBOX_AUDIT_LOG": log, "SANDBOX_LOG_LEVEL": "warning", "SANDBOX_TIMEOUT": "5", **extra}
        servers[name] = (SyncServer(env, cwd=str(base), request_timeout=60), log)
    yield servers
    for server, _log in servers.values():
        server.close()


def security_records(log: str, execution_id: str) -> list:
    return [r for r in read_log(log) if r.get("event") == "security" and r.get("execution_id") == execution_id]


def check_logged(server_and_log, code, extra, accepted_types, kinds):
    server, log = server_and_log
    data, _raw, _elapsed = server.call("execute_code", {"code": code, **extra})
    assert data["error_type"] in accepted_types, data
    records = security_records(log, data["execution_id"])
    assert records, f"no security event in the audit log for {data['execution_id']}: {data}"
    assert {r["kind"] for r in records} & kinds, records
    executions = [r for r in read_log(log) if r.get("event") == "execution"
                  and r.get("execution_id") == data["execution_id"]]
    assert len(executions) == 1 and executions[0]["error_type"] == data["error_type"], executions
    return records


@pytest.mark.parametrize("name", sorted(BLOCKED))
def test_blocked_operation_is_a_security_event(audited, name):
    code, extra, accepted, kinds = BLOCKED[name]
    check_logged(audited["rp"], code, extra, accepted, kinds)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the x32 ABI exists on x86_64 only")
def test_seccomp_kill_is_a_security_event(audited):
    code = f"print({CANARY!r})\nimport ctypes\nctypes.CDLL(None).syscall(0x40000000 | 39)"
    records = check_logged(audited["norp"], code, {}, {"security_violation"}, {"seccomp_kill"})
    assert any("SIGSYS" in r["detail"] or "seccomp" in r["detail"] for r in records), records


def test_missing_layer_refusal_is_a_security_event(audited):
    check_logged(audited["degraded"], f"x = {CANARY!r}", {"use_container": True},
                 {"isolation_unavailable"}, {"missing_layer"})


def test_log_holds_no_code_no_output_and_is_private(audited):
    for server, log in audited.values():
        assert server.healthy()
        with open(log, "rb") as handle:
            text = handle.read().decode("ascii")
        assert CANARY not in text, "the audit log holds code or output"
        assert "sbx-secret" not in text
        mode = stat.S_IMODE(os.stat(log).st_mode)
        assert mode & 0o077 == 0, f"{log} is mode {oct(mode)}"
        for record in read_log(log):
            assert "code" not in record and "stdout" not in record and "result" not in record, record
