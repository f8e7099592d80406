"""Input files beyond the code limit, and files an earlier run wrote passed back by
URI: their own limit (SANDBOX_MAX_INPUT_SIZE), counted with what URIs resolve to, a
refusal that says what to do, and URIs that reach nothing but what the store issued.
One server per mode (RestrictedPython on and off), reused by every case."""

from __future__ import annotations

import base64
import secrets
import sys
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import blocking_session  # noqa: E402

from sandbox import config  # noqa: E402
from sandbox.config import Settings  # noqa: E402
from sandbox.mcp import file_store  # noqa: E402
from sandbox.mcp.http_gate import HttpGate, allowed_hosts  # noqa: E402
from sandbox.mcp.file_store import URI_PREFIX, FileExpired, FileStore, NotStoreURI  # noqa: E402
from sandbox.mcp.request_checks import RequestRefused, check_input_files  # noqa: E402
from sandbox.wire import protocol  # noqa: E402

MB = 1 << 20
LIMIT = 8 * MB


@pytest.fixture(scope="module", params=["rp", "norp"])
def server(request):
    env = {"SANDBOX_RESTRICTED_PYTHON": "true" if request.param == "rp" else "false",
           "SANDBOX_ENABLE_FILESYSTEM": "true", "SANDBOX_MAX_INPUT_SIZE": str(LIMIT)}
    with blocking_session(env) as handle:
        yield handle


def run(server, code, files=None):
    arguments = {"code": code, "timeout": 30, **({"files": files} if files is not None else {})}
    data, result = server.call("execute_code", arguments)
    return data, result


def written_uri(server, name="out/table.csv", text="a,b\n1,2\n"):
    data, result = run(server, f"open({name!r}, 'w').write({text!r})")
    assert not result.is_error, data
    [entry] = [f for f in data["files"] if f["path"] == name]
    assert entry["uri"].startswith(URI_PREFIX), entry
    return entry["uri"]


def test_an_input_of_five_megabytes_reaches_the_snippet(server):
    blob = bytes(range(256)) * (5 * MB // 256)
    text = "x" * (5 * MB // 2) + "\n"
    data, result = run(server, "result = [len(open('big.bin', 'rb').read()), len(open('big.txt').read())]",
                       {"big.bin": {"base64": base64.b64encode(blob).decode()}, "big.txt": text})
    assert not result.is_error, data
    assert data["result"] == [len(blob), len(text)]


def test_inputs_over_the_limit_are_refused_with_the_limit_the_size_and_what_to_do(server):
    part = base64.b64encode(b"\0" * (LIMIT // 2 + 1)).decode()
    data, result = run(server, "result = 1", {"a.bin": {"base64": part}, "b.bin": {"base64": part}})
    assert result.is_error and data["error_type"] == "input_too_large", data
    message = data["error"]
    assert "SANDBOX_MAX_INPUT_SIZE" in message and str(LIMIT) in message and str(LIMIT + 2) in message, message
    assert "create_session" in message and "fix the argument" not in message, message


def test_the_code_limit_does_not_apply_to_files(server):
    data, result = run(server, "result = len(open('a.txt').read())", {"a.txt": "y" * (2 * MB)})
    assert not result.is_error, data
    assert data["result"] == 2 * MB


def test_a_file_an_earlier_run_wrote_comes_back_in_by_its_uri(server):
    uri = written_uri(server, text="a,b\n1,2\n")
    data, result = run(server, "result = open('in/table.csv').read()", {"in/table.csv": {"uri": uri}})
    assert not result.is_error, data
    assert data["result"] == "a,b\n1,2\n"


def test_bytes_a_uri_resolves_to_count_toward_the_limit(server):
    uri = written_uri(server, text="z" * 1000)
    filler = base64.b64encode(b"\0" * (LIMIT - 999)).decode()
    data, result = run(server, "result = 1", {"t.csv": {"uri": uri}, "fill.bin": {"base64": filler}})
    assert result.is_error and data["error_type"] == "input_too_large", data
    assert str(LIMIT + 1) in data["error"], data


def test_an_unknown_or_expired_uri_is_refused_by_name(server):
    uri = URI_PREFIX + secrets.token_urlsafe(16)   # what another store's file looks like here
    data, result = run(server, "result = 1", {"x.csv": {"uri": uri}})
    assert result.is_error and data["error_type"] == "input_not_found", data
    assert uri in data["error"] and "x.csv" in data["error"], data


@pytest.mark.parametrize("uri", [
    "file:///etc/passwd",
    "sandbox://files/../../etc/passwd",
    "sandbox://files/%2e%2e%2fetc%2fpasswd",
    "https://example.com/x.csv",
    "SANDBOX://FILES/aaaaaaaaaaaaaaaaaaaaaa",
    "sandbox://files/aaaaaaaaaaaaaaaaaaaaaa/..",
    "sandbox://files/",
    "/workspace/out/table.csv",
])
def test_a_uri_the_store_never_issued_is_refused_before_any_lookup(server, uri):
    data, result = run(server, "result = 1", {"x.csv": {"uri": uri}})
    assert result.is_error and data["error_type"] == "invalid_argument", data
    assert "not a file URI this server issued" in data["error"], data


def test_the_files_parameter_states_its_limit_and_its_forms(server):
    schema = server.tools["execute_code"].input_schema
    text = str(schema["properties"]["files"])
    assert "8m in all" in text.lower() and "base64" in text and "uri" in text, text


# ---------------------------------------------------------------- without a server

def test_a_store_resolves_only_the_uris_it_issued():
    mine, other = FileStore(MB, 600.0), FileStore(MB, 600.0)
    uri = mine.put("out/a.csv", "text/csv", b"1,2\n")
    assert mine.resolve(uri).data == b"1,2\n"
    with pytest.raises(FileExpired, match="unknown or expired"):
        other.resolve(uri)
    with pytest.raises(NotStoreURI):
        mine.resolve(uri + "/..")


def test_an_expired_file_is_unknown(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(file_store.time, "monotonic", lambda: clock[0])
    store = FileStore(MB, 10.0)
    uri = store.put("out/a.csv", "text/csv", b"1")
    clock[0] += 11.0
    with pytest.raises(FileExpired):
        store.resolve(uri)


def test_every_input_travels_as_base64_within_the_request_frame_cap():
    settings = Settings(enable_filesystem=True, max_input_size=LIMIT)
    files = check_input_files({"t.txt": "\x01" * (LIMIT // 2), "b.bin": {"base64": "AAAA" * (LIMIT // 8)}},
                              settings, FileStore(MB, 600.0))
    assert base64.b64decode(files["t.txt"]["base64"]) == b"\x01" * (LIMIT // 2)
    frame = protocol.encode({"code": "\x01" * settings.max_code_size, "files": files})
    assert len(frame) <= protocol.request_frame_cap(settings.max_code_size, settings.max_input_size)
    with pytest.raises(RequestRefused) as refused:
        check_input_files({"t.txt": "x" * (LIMIT + 1)}, settings, FileStore(MB, 600.0))
    assert refused.value.error_type == "input_too_large"


def test_the_caps_grow_with_the_limits_and_never_shrink_below_the_defaults():
    small = Settings(max_code_size=1 << 10, max_input_size=1 << 10)
    large = Settings(max_code_size=16 * MB, max_input_size=256 * MB)
    assert config.message_cap(small) == config.MAX_MESSAGE_BYTES
    assert config.message_cap(large) >= 6 * (16 + 256) * MB
    assert protocol.request_frame_cap(1 << 10, 1 << 10) == protocol.MAX_REQUEST
    assert protocol.request_frame_cap(16 * MB, 256 * MB) >= 6 * 16 * MB + 4 * 256 * MB // 3
    assert protocol.control_frame_cap(protocol.request_frame_cap(16 * MB, 256 * MB)) > \
        protocol.request_frame_cap(16 * MB, 256 * MB)


def test_the_http_gate_lets_through_a_body_the_limits_allow_and_refuses_a_larger_one():
    large = Settings(max_code_size=16 * MB, max_input_size=256 * MB)
    token = "t" * 40
    headers = [(b"host", b"127.0.0.1:8765"), (b"authorization", f"Bearer {token}".encode())]
    body = config.MAX_MESSAGE_BYTES + MB   # over the default cap, within what these limits allow
    for cap, reaches in ((config.message_cap(large), True), (None, False)):
        reached, sent = [], []

        async def app(scope, receive, send):
            reached.append(scope["type"])

        async def send(message):
            sent.append(message)

        gate = HttpGate(app, token, allowed_hosts("127.0.0.1", 8765), max_body=cap)
        scope = {"type": "http", "path": "/mcp", "headers": [*headers, (b"content-length", str(body).encode())]}
        anyio.run(gate, scope, None, send)
        assert (reached == ["http"]) is reaches, (cap, sent)
        assert reaches or sent[0]["status"] == 413, sent


@pytest.mark.slow
def test_inputs_at_the_default_limit_reach_the_snippet_within_the_default_memory_limit():
    """32 MiB of files, one larger than the former 16 MiB write limit, with every setting
    at its default (`make large-inputs`)."""
    blob = base64.b64encode(b"\1" * (20 * MB)).decode()
    files = {"one.bin": {"base64": blob}, "two.txt": "x" * (12 * MB)}
    with blocking_session({"SANDBOX_ENABLE_FILESYSTEM": "true"}) as handle:
        data, result = run(handle, "import os\nresult = [os.path.getsize(n) for n in ('one.bin', 'two.txt')]", files)
    assert not result.is_error, data
    assert data["result"] == [20 * MB, 12 * MB]
