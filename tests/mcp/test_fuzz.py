"""Fuzzing the MCP server with hypothesis: random code (text, arbitrary bytes
decoded leniently, token soup), random argument types and sizes for all three
tools, and random garbage written raw on the JSON-RPC stdin followed by a valid
request. The server must answer every well-formed request (a tool result, or a
JSON-RPC error for arguments the SDK rejects) and never die.

The default run is short and derandomized (the same examples every time, well
under a minute); `make fuzz` runs the long versions (marked slow):
    pytest -m slow tests/mcp/test_fuzz.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "redteam"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import RawServer  # noqa: E402
from mcpsync import ServerGone, SyncServer  # noqa: E402

SERVER_ENV = {"SANDBOX_TIMEOUT": "2", "SANDBOX_MAX_TIMEOUT": "4", "SANDBOX_MAX_OUTPUT_SIZE": "16384",
              "SANDBOX_MAX_CODE_SIZE": "65536", "SANDBOX_LOG_LEVEL": "error"}
ERROR_TYPES = {None, "syntax_error", "security_violation", "runtime_error", "timeout", "memory_limit",
               "output_limit", "internal_error", "invalid_argument", "isolation_unavailable"}

COMMON = dict(deadline=None, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
FAST = dict(COMMON, derandomize=True)


def fast(n):
    return settings(max_examples=n, **FAST)


def slow(n):
    return settings(max_examples=n, **COMMON)


# ---------------------------------------------------------------- strategies

TOKENS = ["import", "from", "os", "sys", "typing", "json", "(", ")", "[", "]", "{", "}", ":", "=", "==", "+",
          "*", "**", ".", ",", "lambda", "def", "class", "return", "yield", "await", "async", "while", "for",
          "in", "if", "else", "try", "except", "finally", "with", "as", "raise", "global", "nonlocal", "del",
          "print", "result", "__class__", "__import__", "_getattr_", "exec", "eval", "open", "getattr",
          "'a'", "b'x'", "f'{x}'", "1", "10**10", "-", "\n", "    ", "\t", "#", "\\", ";", "@", "x", "y",
          "match", "case", "_", "...", "None", "True", "not", "and", "or", "is", "\u00e9", "\u200b", "\uff3f"]

CODE = st.one_of(
    st.text(max_size=400),
    st.binary(max_size=400).map(lambda b: b.decode("utf-8", "replace")),
    st.binary(max_size=400).map(lambda b: b.decode("latin-1")),
    st.lists(st.sampled_from(TOKENS), max_size=80).map(" ".join),
    st.lists(st.sampled_from(TOKENS), max_size=80).map("".join),
)

JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=50))
JSON_VALUE = st.recursive(JSON_SCALAR, lambda children: st.one_of(
    st.lists(children, max_size=5), st.dictionaries(st.text(max_size=10), children, max_size=5)), max_leaves=20)

TIMEOUT = st.one_of(st.floats(min_value=-10, max_value=1e6, allow_nan=False), st.integers(-5, 10 ** 9),
                    st.sampled_from(["1", "2s", "abc", "", "0.5", "1e9", "-1", "inf", "nan"]), JSON_VALUE)
MEMORY = st.one_of(st.integers(-1, 2 ** 64), st.sampled_from(["64m", "1g", "10t", "0", "-1", "16m", "lots", "1e3k"]),
                   JSON_VALUE)
IMPORTS = st.one_of(st.lists(st.sampled_from(["json", "math", "os", "sys", "re", "", "a.b", "_io", "json.tool",
                                              "..", "x" * 300]), max_size=6),
                    st.lists(st.text(max_size=30), max_size=6), JSON_VALUE)

EXECUTE_ARGS = st.fixed_dictionaries(
    {"code": st.one_of(CODE, JSON_VALUE)},
    optional={"timeout": TIMEOUT, "memory_limit": MEMORY, "allowed_imports": IMPORTS,
              "capture_output": st.one_of(st.booleans(), JSON_VALUE), "use_container": st.one_of(st.booleans(), JSON_VALUE),
              "unexpected": JSON_VALUE})


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("sbx-fuzz-cwd")
    server = SyncServer(SERVER_ENV, cwd=str(cwd), request_timeout=60)
    yield server
    alive = server.alive()
    server.close()
    assert alive, "the server died during fuzzing"


@pytest.fixture(scope="module")
def raw_fuzz_server(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("sbx-fuzz-raw")
    with RawServer(SERVER_ENV, cwd=str(cwd)) as server:
        server.initialize()
        yield server


# ---------------------------------------------------------------- properties

def call(server: SyncServer, tool: str, arguments) -> "dict | None":
    """One tool call that must be answered: a tool result, or a JSON-RPC error."""
    try:
        data, result, _elapsed = server.call(tool, arguments, timeout=60)
    except ServerGone as exc:
        pytest.fail(f"{tool} got no answer: {exc}\nstderr tail: {server.stderr_text()[-2000:]}")
    except Exception as exc:  # noqa: BLE001 - an MCP error answer (bad arguments) is an answer
        if type(exc).__name__ not in ("MCPError", "McpError", "ValidationError"):
            raise
        return None
    if isinstance(data, dict) and tool == "execute_code" and "success" in data:
        assert isinstance(data["success"], bool), data
        assert data.get("error_type") in ERROR_TYPES, data
        assert data["success"] == (data.get("error_type") is None), data
    return data


def check_execute(server, arguments):
    call(server, "execute_code", arguments)


@fast(100)
@given(code=CODE)
def test_random_code(fuzz_server, code):
    data = call(fuzz_server, "execute_code", {"code": code, "timeout": 2})
    assert data is not None and "success" in data, data


@fast(100)
@given(arguments=EXECUTE_ARGS)
def test_random_execute_arguments(fuzz_server, arguments):
    check_execute(fuzz_server, arguments)


@fast(25)
@given(code=st.one_of(CODE, JSON_VALUE), extra=st.dictionaries(st.text(max_size=10), JSON_VALUE, max_size=3))
def test_random_validate_arguments(fuzz_server, code, extra):
    call(fuzz_server, "validate_code", {"code": code, **extra})


@fast(15)
@given(extra=st.dictionaries(st.text(max_size=10), JSON_VALUE, max_size=4))
def test_random_info_arguments(fuzz_server, extra):
    call(fuzz_server, "get_sandbox_info", extra)


def test_large_inputs(fuzz_server):
    """Sizes around and past the code limit, and a deep JSON argument."""
    for size in (65_000, 65_537, 300_000):
        data = call(fuzz_server, "execute_code", {"code": "#" * size, "timeout": 2})
        assert data is not None
    deep = []
    for _ in range(60):
        deep = [deep]
    call(fuzz_server, "execute_code", {"code": "result = 1", "allowed_imports": deep})
    call(fuzz_server, "validate_code", {"code": {"a": deep}})
    assert fuzz_server.healthy()


# ---------------------------------------------------------------- raw JSON-RPC stdin

_counter = [0]


def raw_round(server: RawServer, garbage: bytes) -> None:
    _counter[0] += 1
    request_id = f"fuzz-{_counter[0]}"
    server.send_raw(garbage + b"\n")
    server.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                 "params": {"name": "execute_code", "arguments": {"code": "result = 6 * 7", "timeout": 2}}})
    try:
        answer = server.wait_for(lambda m: isinstance(m, dict) and m.get("id") == request_id, timeout=60)
    except (TimeoutError, EOFError) as exc:
        pytest.fail(f"no answer after garbage {garbage[:120]!r}: {exc}; server alive: "
                    f"{server.process.poll() is None}; stderr tail: {server.stderr_text()[-2000:]}")
    except ValueError as exc:
        pytest.fail(f"the server wrote a non-JSON line after garbage {garbage[:120]!r}: {exc}")
    assert answer["result"]["structuredContent"]["result"] == 42, answer


GARBAGE = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=500).map(lambda s: s.encode("utf-8", "surrogatepass")),
    JSON_VALUE.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"jsonrpc": st.one_of(st.just("2.0"), JSON_VALUE), "method": st.one_of(
        st.sampled_from(["tools/call", "tools/list", "initialize", "ping", "resources/list", "x", ""]), JSON_VALUE)},
        optional={"id": JSON_VALUE, "params": JSON_VALUE}).map(lambda m: json.dumps(m).encode()),
)


@fast(80)
@given(garbage=GARBAGE)
def test_raw_garbage_then_valid_request(raw_fuzz_server, garbage):
    raw_round(raw_fuzz_server, garbage)


def test_raw_pathological_lines(raw_fuzz_server):
    deep_call = (b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"execute_code",'
                 b'"arguments":{"code":"result = 1","allowed_imports":' + b"[" * 5000 + b"]" * 5000 + b"}}}")
    for garbage in (deep_call, b"\xff" * 100_000, b"[" * 100_000, b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"" * 1000,
                    b"\x00" * 1000, "\ud800".encode("utf-8", "surrogatepass") * 100,
                    b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"execute_code",'
                    b'"arguments":{"code":"x = \'\\ud800\'\\nresult = len(x)"}}}',
                    b" " * (4 << 20)):
        raw_round(raw_fuzz_server, garbage)
    assert raw_fuzz_server.process.poll() is None


# ---------------------------------------------------------------- the long run (make fuzz)

@pytest.mark.slow
@slow(2000)
@given(code=CODE)
def test_random_code_long(fuzz_server, code):
    data = call(fuzz_server, "execute_code", {"code": code, "timeout": 2})
    assert data is not None and "success" in data, data


@pytest.mark.slow
@slow(2000)
@given(arguments=EXECUTE_ARGS)
def test_random_execute_arguments_long(fuzz_server, arguments):
    check_execute(fuzz_server, arguments)


@pytest.mark.slow
@slow(500)
@given(code=st.one_of(CODE, JSON_VALUE), extra=st.dictionaries(st.text(max_size=10), JSON_VALUE, max_size=3))
def test_random_validate_arguments_long(fuzz_server, code, extra):
    call(fuzz_server, "validate_code", {"code": code, **extra})


@pytest.mark.slow
@slow(2000)
@given(garbage=GARBAGE)
def test_raw_garbage_then_valid_request_long(raw_fuzz_server, garbage):
    raw_round(raw_fuzz_server, garbage)


@pytest.mark.slow
def test_server_still_healthy_after_the_long_run(fuzz_server):
    started = time.monotonic()
    assert fuzz_server.healthy()
    assert time.monotonic() - started < 30
