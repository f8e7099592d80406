"""End to end: bin/mcp-server-python-sandbox started as a subprocess, driven by the `mcp` package's
own client over stdio (and by bare JSON-RPC lines where the wire itself is tested).

Nothing here is faked: the server forks real hardened children through the runner.
"""

import base64
import importlib.util
import json
import math
import os
import signal
import stat
import sys
import time
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_client import (  # noqa: E402
    RawServer,
    blocking_session,
    cpu_ticks,
    open_session,
    descendants,
    result_text,
    structured,
    wait_until,
)
from slowness import scaled  # noqa: E402

LAYERS = {"namespaces", "seccomp", "landlock", "privilege_drop", "rlimits", "restricted_python"}


@pytest.fixture(scope="module")
def server():
    """One server with the default configuration, shared by the tests that do not change it."""
    with blocking_session({"SANDBOX_MAX_CONCURRENCY": "4"}) as running:
        yield running


def execute(server, code, **arguments):
    data, result = server.call("execute_code", {"code": code, **arguments})
    return data, result


def ok(server, code, **arguments) -> dict:
    data, result = execute(server, code, **arguments)
    assert not result.is_error and data["success"], data
    return data


def refused(server, arguments: dict) -> tuple[dict, str]:
    """A call that must come back as a tool error (isError), with its text."""
    data, result = server.call("execute_code", arguments)
    assert result.is_error, result
    return data, result_text(result)


def all_layers_active(server) -> bool:
    info, _ = server.call("get_sandbox_info")
    return info["strongest_isolation_available"]


# ----------------------------------------------------------------------------- tools and schemas


def test_tools_are_listed_with_input_and_output_schemas(server):
    assert set(server.tools) == {"execute_code", "validate_code", "get_sandbox_info", "create_session", "close_session"}
    execute_tool = server.tools["execute_code"]
    properties = execute_tool.input_schema["properties"]
    assert execute_tool.input_schema["required"] == ["code"]
    assert set(properties) == {   # files only with the filesystem profile
        "code", "timeout", "capture_output", "allowed_imports", "memory_limit", "use_container", "session_id",
    }
    assert properties["code"]["type"] == "string"
    assert properties["timeout"]["type"] == "number"
    assert properties["timeout"]["default"] == 30 and properties["timeout"]["maximum"] == 300
    assert properties["memory_limit"]["default"] == "128m"
    assert properties["allowed_imports"]["type"] == "array" and properties["allowed_imports"]["default"] == []
    assert properties["capture_output"] == {**properties["capture_output"], "type": "boolean", "default": True}
    assert properties["use_container"]["default"] is False
    for name, required in {
        "execute_code": {"success", "execution_id"},
        "validate_code": {"validation", "analysis"},
        "get_sandbox_info": {"server", "profiles", "limits", "layers", "restricted_python", "sessions"},
        "create_session": {"session_id", "expires_in", "profiles", "limits"},
        "close_session": {"closed", "message"},
    }.items():
        schema = server.tools[name].output_schema
        assert schema["type"] == "object" and required <= set(schema["properties"]), (name, schema)
        assert server.tools[name].description
    output = server.tools["execute_code"].output_schema["properties"]
    for field in ("result", "stdout", "stderr", "execution_time", "variables", "error", "error_type", "line"):
        assert field in output


def test_tools_list_is_at_most_6_kb_and_execute_codes_description_at_most_1200_characters(server):
    """Every conversation pays for tools/list: its size is a property of the product."""
    async def listing(running):
        return await running.session.list_tools()
    tools = server.run(listing)
    wire = tools.model_dump_json(by_alias=True, exclude_none=True)
    assert {tool.name for tool in tools.tools} == set(server.tools)
    assert len(wire.encode()) <= 6000, len(wire.encode())
    assert len(server.tools["execute_code"].description) <= 1200


def test_tools_list_is_at_most_6_kb_with_every_profile_and_code_mode_on(tmp_path):
    """The largest product-made listing: every profile, and code mode with its rules (the
    stubs of the upstreams' own tools are theirs, capped apart: none connects here)."""
    if not all(importlib.util.find_spec(name) for name in ("numpy", "pandas", "matplotlib")):
        pytest.skip("the data-science libraries are not installed here: the profile refuses to start")
    upstreams = tmp_path / "tool-servers.json"
    upstreams.write_text(json.dumps({"mcpServers": {"gone": {"command": "/bin/true", "args": []}}}))
    env = {"SANDBOX_ENABLE_NETWORK": "true", "SANDBOX_ENABLE_FILESYSTEM": "true",
           "SANDBOX_ENABLE_DATA_SCIENCE": "true", "SANDBOX_TOOL_SERVERS": str(upstreams)}
    with blocking_session(env) as running:
        tools = running.run(lambda r: r.session.list_tools())
    description = next(tool.description for tool in tools.tools if tool.name == "execute_code")
    if "data science: " not in description:
        pytest.skip("the data-science libraries are not installed here")
    assert "Code mode:" in description and "Network:" in description and "out/" in description
    wire = tools.model_dump_json(by_alias=True, exclude_none=True)
    assert len(wire.encode()) <= 6000, len(wire.encode())


def test_output_schemas_carry_no_prose_and_accept_every_answer(server):
    """No titles, descriptions or defaults in what tools/list shows of an answer; every
    field a model object carries is a property of the published schema."""
    from sandbox.mcp import tool_models as product
    models = {"execute_code": product.ExecutionResult, "validate_code": product.ValidationResult,
              "get_sandbox_info": product.SandboxInfo, "create_session": product.SessionCreated,
              "close_session": product.SessionClosed}
    for name, model in models.items():
        schema = server.tools[name].output_schema
        text = json.dumps(schema)
        assert '"title"' not in text and '"description"' not in text and '"default"' not in text, (name, text)
        assert set(schema["properties"]) == set(model.model_fields), name


def test_tool_descriptions_have_no_stray_indentation(server):
    for tool in server.tools.values():
        texts = [tool.description] + [field.get("description", "") for field in tool.input_schema["properties"].values()]
        for text in texts:
            assert text == text.strip() and "\n" not in text and "  " not in text, (tool.name, text)


def test_use_container_is_described_as_the_compatibility_name_it_is(server):
    described = server.tools["execute_code"].input_schema["properties"]["use_container"]["description"]
    assert "compatibility" in described and "no container" in described


def test_get_sandbox_info_answers_with_a_short_summary_and_the_detail_on_request(server):
    info, result = server.call("get_sandbox_info")
    summary = result_text(result)
    assert len(summary) <= 1500, len(summary)
    assert "profiles on: basic" in summary and "isolation layers active:" in summary and "timeout 30 s" in summary
    assert "importable: " in summary and "json" in summary and "detail=true" in summary
    assert info["allowed_modules"] and info["rules"] and info["layers"]   # structured content stays whole
    detailed, result = server.call("get_sandbox_info", {"detail": True})
    assert json.loads(result_text(result)) == detailed


def test_an_operator_mount_is_listed_and_read_through_the_server(tmp_path):
    data_dir = tmp_path.resolve() / "data"
    data_dir.mkdir(mode=0o755)   # readable by the sandbox's uid (unprivileged, as root)
    (data_dir / "table.csv").write_text("a,b\n1,2\n")
    with blocking_session({"SANDBOX_MOUNTS": f"{data_dir}:/data"}) as mounted:
        info, result = mounted.call("get_sandbox_info")
        assert info["mounts"] == [{"path": "/data", "mode": "ro"}]
        assert "mounted host directories: /data (ro)" in result_text(result)
        data, _ = mounted.call("execute_code", {"code": "result = open('/data/table.csv').read()"})
        assert data["success"] and data["result"] == "a,b\n1,2\n", data.get("error")


def test_a_cut_names_out_only_with_the_filesystem_profile(server):
    data = ok(server, "print('x' * 100000)")
    assert data["stdout_truncated"] and "left out here" in data["stdout"] and "out/" not in data["stdout"]


def test_results_carry_structured_content_and_a_short_text_for_the_model(server):
    data, result = execute(server, "result = 6 * 7")
    assert result.structured_content == data and data["execution_id"]
    assert result_text(result) == "result: 42"


FIBONACCI = """
def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
sequence = [fib(i) for i in range(10)]
print("first ten:", sequence)
result = sequence[-1]
"""

STATISTICS = """
import statistics
data = [2, 4, 4, 4, 5, 5, 7, 9]
print("mean", statistics.mean(data))
print("stdev", round(statistics.pstdev(data), 3))
result = {"median": statistics.median(data), "mode": statistics.mode(data)}
"""


@pytest.mark.parametrize("code,expected", [
    ("print('hello')\nresult = 2 + 2", "stdout:\nhello\nresult: 4"),
    (FIBONACCI, "stdout:\nfirst ten: [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]\nresult: 34"),
    (STATISTICS, "stdout:\nmean 5\nstdev 2.0\nresult: {'median': 4.5, 'mode': 4}"),
])
def test_text_block_of_the_readme_examples(server, code, expected):
    """What the model reads: the printed lines and the result, no ids, timings or flags."""
    data, result = execute(server, code)
    assert data["success"], data
    text = result_text(result)
    assert text == expected
    for noise in (data["execution_id"], "execution_time", "max_rss", "truncated", "null"):
        assert noise not in text


def test_text_block_of_an_error_is_a_short_traceback_with_a_hint(server):
    data, result = execute(server, "def f(x):\n    return 1 / x\nf(0)")
    text = result_text(result)
    assert text.startswith("error (runtime_error, line 2):\nTraceback (most recent call last):")
    assert 'File "<snippet>", line 3, in <module>' in text and "ZeroDivisionError: division by zero" in text
    assert "site-packages" not in text and "sandbox/" not in text
    data, result = execute(server, "while True:\n    pass", timeout=1)
    assert result_text(result).splitlines()[-1].startswith("hint: make the code do less per call")


def test_big_output_is_cut_head_and_tail_with_a_marker(server):
    """A 2 MiB print comes back within the cap (32 KiB by default), its head and its tail
    kept, with a marker at the cut saying how much was left out and how to get less."""
    data, result = execute(server, "print('HEAD' + 'x' * (2 << 20) + 'TAIL')\nresult = 'done'", timeout=20)
    assert data["success"] and data["stdout_truncated"], {k: data[k] for k in ("error", "error_type")}
    out = data["stdout"]
    assert len(out) < 34 << 10
    assert out.startswith("HEADxxx") and out.rstrip("\n").endswith("xxxTAIL")
    assert "bytes left out here: print less, or return a smaller value" in out   # no out/ in this profile
    assert "2,0" in out.split("[... ", 1)[1][:12]  # about 2,0xx,xxx bytes
    assert "result: done" in result_text(result)
    data, result = execute(server, "result = 'R' * 60000 + 'END'")
    assert data["result_truncated"] and data["result"].startswith("'RRR") and data["result"].endswith("END'")
    assert "characters left out here" in data["result"]


def test_the_text_block_shows_the_repr_and_one_cap_cuts_the_result_once(server):
    """The model reads the value as Python shows it; the structured result stays JSON.
    A 10 MB string is cut once, at the cap the description states, with one marker."""
    data, result = execute(server, "result = (1, 'a', None, {1, 2})")
    assert data["result"] == [1, "a", None, [1, 2]]
    assert "result: (1, 'a', None, {1, 2})" in result_text(result)
    data, result = execute(server, "result = 'S' * (10 << 20) + 'END'", timeout=60)
    assert data["result_truncated"] and data["result"].endswith("END'")
    assert 30 << 10 < len(data["result"].encode()) <= 32 << 10
    shown = result_text(result)
    assert shown.count("left out here") == 1 and "truncated" not in shown and shown.rstrip().endswith("END'")


def test_layers_are_logged_at_start(server):
    """One line per fact: the active layers on one line (an inactive one gets its own)."""
    log = server.stderr_text()
    active = [line for line in log.splitlines() if "isolation layers active: " in line]
    assert len(active) == 1
    assert set(active[0].split("isolation layers active: ", 1)[1].split(", ")) == LAYERS


# ----------------------------------------------------------------------------- the reference README


def test_readme_basic_execution(server):
    data = ok(server, "result = 2 + 2\nprint(f'The answer is: {result}')", timeout=10, capture_output=True)
    assert data["result"] == 4
    assert data["stdout"] == "The answer is: 4\n"
    assert data["stderr"] == ""
    assert "result" in data["variables"]
    assert data["execution_id"] and data["execution_time"] >= 0


def test_readme_data_analysis_with_allowed_imports(server):
    code = "import math\ndata = [1, 2, 3, 4, 5]\nresult = sum(data) / len(data)\nprint(f'Average: {result}')"
    data = ok(server, code, allowed_imports=["math"], timeout=15)
    assert data["result"] == 3.0 and data["stdout"] == "Average: 3.0\n"


def test_readme_statistics(server):
    code = (
        "import statistics\n"
        "data = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
        "mean = statistics.mean(data)\nmedian = statistics.median(data)\nstdev = statistics.stdev(data)\n"
        "result = {'mean': mean, 'median': median, 'std_dev': stdev}\n"
        "print(f'Statistics: {result}')\n"
    )
    data = ok(server, code)
    assert data["result"]["mean"] == 5.5 and data["result"]["median"] == 5.5
    assert abs(data["result"]["std_dev"] - 3.0276503540974917) < 1e-9
    assert data["stdout"].startswith("Statistics: {'mean': 5.5")


def test_readme_fibonacci(server):
    code = (
        "def fibonacci(n):\n    if n <= 1:\n        return n\n    return fibonacci(n-1) + fibonacci(n-2)\n\n"
        "result = [fibonacci(i) for i in range(10)]\nprint('Fibonacci sequence:', result)\n"
    )
    data = ok(server, code)
    assert data["result"] == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
    assert data["stdout"] == "Fibonacci sequence: [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]\n"


def test_readme_bubble_sort(server):
    code = (
        "def bubble_sort(arr):\n    n = len(arr)\n    for i in range(n):\n        for j in range(0, n-i-1):\n"
        "            if arr[j] > arr[j+1]:\n                arr[j], arr[j+1] = arr[j+1], arr[j]\n    return arr\n\n"
        "test_data = [64, 34, 25, 12, 22, 11, 90]\nresult = bubble_sort(test_data.copy())\nprint(f'Sorted: {result}')\n"
    )
    data = ok(server, code)
    assert data["result"] == [11, 12, 22, 25, 34, 64, 90]
    assert data["stdout"] == "Sorted: [11, 12, 22, 25, 34, 64, 90]\n"


def test_readme_leibniz_pi(server):
    code = (
        "import math\n\ndef calculate_pi_leibniz(terms):\n    pi_approx = 0\n    for i in range(terms):\n"
        "        pi_approx += ((-1) ** i) / (2 * i + 1)\n    return pi_approx * 4\n\n"
        "result = calculate_pi_leibniz(1000)\nprint(f'Pi approximation: {result}')\n"
        "print(f'Difference from math.pi: {abs(result - math.pi)}')\n"
    )
    data = ok(server, code)
    assert abs(data["result"] - math.pi) < 2e-3
    assert data["stdout"].startswith("Pi approximation: 3.14")


def test_readme_validate_code_refuses_os(server):
    data, result = server.call("validate_code", {"code": "import os\nos.system('rm -rf /')"})
    assert not result.is_error  # the tool worked; the code is what is invalid
    assert data["validation"]["valid"] is False
    assert any("os" in error["message"] for error in data["validation"]["errors"])
    assert data["analysis"]["line_count"] == 2
    assert data["analysis"]["character_count"] == len("import os\nos.system('rm -rf /')")
    assert isinstance(data["recommendations"], list)


def test_validate_code_accepts_good_code_and_reports_syntax_errors(server):
    data, _ = server.call("validate_code", {"code": "import math\nresult = math.sqrt(16)"})
    assert data["validation"]["valid"] is True and data["validation"]["errors"] == []
    data, _ = server.call("validate_code", {"code": "def broken(:\n    pass"})
    assert data["validation"]["valid"] is False
    assert data["validation"]["errors"][0]["line"] == 1


def test_readme_container_example_with_numpy():
    pytest.importorskip("numpy")
    pytest.importorskip("pandas")  # the data-science profile needs both to start
    code = "import numpy as np\ndata = np.array([1, 2, 3, 4, 5])\nresult = np.mean(data)"
    with blocking_session({"SANDBOX_ENABLE_DATA_SCIENCE": "true"}) as server:
        arguments = {"code": code, "use_container": True, "memory_limit": "256m", "timeout": 30}
        data, result = server.call("execute_code", arguments)
        if all_layers_active(server):
            assert not result.is_error, data
            assert data["result"] == 3.0
        else:
            assert data["error_type"] == "isolation_unavailable"


# ----------------------------------------------------------------------------- each parameter


def test_timeout_stops_the_code_and_returns_promptly(server):
    started = time.monotonic()
    data, result = execute(server, "while True:\n    pass", timeout=1)
    elapsed = time.monotonic() - started
    assert result.is_error and data["error_type"] == "timeout", data
    assert elapsed < 1 + scaled(2), elapsed


def test_memory_limit_stops_a_large_allocation(server):
    data, result = execute(server, "data = bytearray(100 * 1024 * 1024)\nresult = len(data)", memory_limit="32m")
    assert result.is_error and data["error_type"] == "memory_limit", data
    # The same allocation fits under a larger limit.
    assert ok(server, "data = bytearray(100 * 1024 * 1024)\nresult = len(data)", memory_limit="512m")["result"] == (
        100 * 1024 * 1024
    )


def test_memory_limit_accepts_the_documented_spellings(server):
    for limit in ("64m", "1g", "65536k", 64 * 1024 * 1024, "67108864"):
        assert ok(server, "result = 1", memory_limit=limit)["result"] == 1


def test_allowed_imports_narrow_the_configured_modules(server):
    assert ok(server, "import math\nresult = math.floor(2.5)", allowed_imports=["math"])["result"] == 2
    data, result = execute(server, "import json\nresult = json.dumps(1)", allowed_imports=["math"])
    assert result.is_error and data["error_type"] == "security_violation"
    assert "json" in data["error"]
    # Without narrowing, json is part of the basic profile.
    assert ok(server, "import json\nresult = json.dumps(1)")["result"] == "1"


def test_allowed_imports_can_never_widen(server):
    for module in ("os", "subprocess", "socket", "ctypes"):
        data, text = refused(server, {"code": f"import {module}", "allowed_imports": [module]})
        assert data["error_type"] == "security_violation"
        assert module in data["error"]
        assert "allowed_imports" in data["error"]
    data, _ = refused(server, {"code": "import socket", "allowed_imports": ["math", "socket"]})
    assert "SANDBOX_ENABLE_NETWORK" in data["error"]  # says how the operator could allow it


def test_capture_output_false_omits_stdout_and_stderr(server):
    data = ok(server, "print('hello')\nresult = 5", capture_output=False)
    assert data["stdout"] == "" and data["stderr"] == ""
    assert data["result"] == 5


def test_use_container_succeeds_when_every_layer_is_active(server):
    info, _ = server.call("get_sandbox_info")
    data, result = execute(server, "result = 2 + 2", use_container=True)
    inactive = sorted(name for name, layer in info["layers"].items() if not layer["active"])
    if not inactive:
        assert not result.is_error and data["result"] == 4
    else:  # an ordinary user on a host without some layer
        assert result.is_error and data["error_type"] == "isolation_unavailable"
        for name in inactive:
            assert name in data["error"]


def test_use_container_names_the_missing_layer():
    with blocking_session({"SANDBOX_UNSAFE_DISABLE_LAYERS": "landlock"}) as server:
        info, _ = server.call("get_sandbox_info")
        assert info["layers"]["landlock"]["active"] is False
        assert info["layers"]["landlock"]["detail"]
        assert info["strongest_isolation_available"] is False
        data, result = execute(server, "result = 1", use_container=True)
        assert result.is_error and data["error_type"] == "isolation_unavailable"
        assert "landlock (" in data["error"] and "use_container" in data["error"]
        # Without use_container the call runs on the layers that are active.
        assert ok(server, "result = 1")["result"] == 1
        assert "SANDBOX_UNSAFE_DISABLE_LAYERS=landlock" in server.stderr_text()


def test_without_a_mount_namespace_the_description_promises_no_scratch_directory():
    """No mount namespace, no private /tmp: the description says open() is refused, as the refusal does."""
    with blocking_session({"SANDBOX_UNSAFE_DISABLE_LAYERS": "namespaces"}) as server:
        description = server.tools["execute_code"].description
        data, _ = execute(server, "open('notes.txt', 'w')")
    assert "open() is refused" in description and "private scratch directory, gone" not in description
    assert not data["success"] and "io.StringIO" in data["error"], data


def test_missing_layer_message_names_each_layer_and_why():
    from sandbox.mcp.request_checks import describe_missing_layers

    message = describe_missing_layers([("seccomp", "kernel built without seccomp"), ("landlock", "")])
    assert "seccomp (kernel built without seccomp)" in message
    assert "landlock (no reason given)" in message
    assert "use_container" in message and "container runtime" in message


def test_files_need_the_filesystem_profile(server):
    data, _ = refused(server, {"code": "result = 1", "files": {"data.csv": "a,b\n"}})
    assert data["error_type"] == "invalid_argument" and "SANDBOX_ENABLE_FILESYSTEM" in data["error"]


def test_filesystem_profile_takes_files_in_and_gives_files_back():
    code = (
        "import pathlib\n"
        "rows = pathlib.Path('data.csv').read_text().splitlines()\n"
        "assert pathlib.Path('out').is_dir()\n"
        "pathlib.Path('out/count.txt').write_text(str(len(rows)))\n"
        "result = [len(rows), len(pathlib.Path('blob.bin').read_bytes())]"
    )
    with blocking_session({"SANDBOX_ENABLE_FILESYSTEM": "true"}) as server:
        data = ok(server, code, files={"data.csv": "a,b\n1,2\n3,4\n", "blob.bin": {"base64": "AAECAw=="}})
        assert data["result"] == [3, 4]
        [out] = data["files"]
        assert out["path"] == "out/count.txt" and out["size"] == 1 and out["returned_as"] == "text"
        data, result = execute(server, "result = 1", files={"../escape.txt": "x"})
        assert result.is_error and "escape.txt" in data["error"]


def test_matplotlib_figures_come_back_as_image_blocks():
    pytest.importorskip("matplotlib")
    code = "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nresult = 'plotted'"
    with blocking_session({"SANDBOX_ENABLE_DATA_SCIENCE": "true"}) as server:
        data, result = execute(server, code, memory_limit="512m")
        assert not result.is_error, data
        assert data["images"] == [{"mime_type": "image/png"}]
        images = [block for block in result.content if block.type == "image"]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        import base64

        assert base64.b64decode(images[0].data).startswith(b"\x89PNG")


def test_get_sandbox_info(server):
    data, result = server.call("get_sandbox_info")
    assert not result.is_error
    assert data["server"]["name"] == "mcp-server-python-sandbox" and data["server"]["version"]
    assert data["restricted_python"] is True
    assert data["profiles"]["basic"]["enabled"] is True
    assert {"math", "json", "statistics"} <= set(data["profiles"]["basic"]["modules"])
    for name in ("data_science", "network", "filesystem"):
        assert data["profiles"][name]["enabled"] is False
        assert data["profiles"][name]["switch"].startswith("SANDBOX_ENABLE_")
    assert "os" not in data["allowed_modules"] and "math" in data["allowed_modules"]
    assert "stderr" in data["module_subsets"]["sys"] and "compress" in data["module_subsets"]["gzip"], data
    assert "modules" not in data["module_subsets"]["sys"] and "open" not in data["module_subsets"]["gzip"]
    limits = data["limits"]
    assert limits["timeout"] == {"default": 30.0, "max": 300.0}
    assert limits["memory_limit"]["default"] == "128m" and limits["memory_limit"]["max"] == "1g"
    assert limits["max_output_size"] == 32768 and limits["max_concurrency"] == 4
    assert set(data["layers"]) == LAYERS
    for name, layer in data["layers"].items():
        assert isinstance(layer["active"], bool) and layer["detail"], name
    assert data["python_layer"].startswith("holds on its own")
    assert data["weakened_by"] == []


# ----------------------------------------------------------------------------- bad input


def test_missing_or_mistyped_code_is_a_tool_error(server):
    for arguments, fragment in (({}, "code"), ({"code": 5}, "code"), ({"code": None}, "code")):
        data, result = server.call("execute_code", arguments)
        assert result.is_error and fragment in result_text(result)


@pytest.mark.parametrize("timeout", [0, -1, 10**9, "abc", True, [], "nan", "inf"])
def test_bad_timeout_is_refused_with_the_accepted_range(server, timeout):
    data, text = refused(server, {"code": "result = 1", "timeout": timeout})
    assert data["error_type"] == "invalid_argument"
    assert "timeout" in data["error"] and "at most 300" in data["error"]


def test_numeric_string_timeout_is_accepted(server):
    assert ok(server, "result = 1", timeout="5")["result"] == 1


@pytest.mark.parametrize("limit", ["lots", "1k", "2g", -5, "", "12q"])
def test_bad_memory_limit_is_refused_with_the_accepted_range(server, limit):
    data, _ = refused(server, {"code": "result = 1", "memory_limit": limit})
    assert data["error_type"] == "invalid_argument"
    assert "memory_limit" in data["error"] and "16m" in data["error"] and "1g" in data["error"]


def test_bad_allowed_imports_are_refused(server):
    for value in (["not a module"], ["os;rm"], "math"):
        data, result = server.call("execute_code", {"code": "result = 1", "allowed_imports": value})
        assert result.is_error, value
        assert "allowed_imports" in result_text(result)


def test_unknown_tool_is_a_tool_error(server):
    data, result = server.call("no_such_tool", {})
    assert result.is_error and "no_such_tool" in result_text(result)


def test_huge_code_is_refused_before_any_child_runs(server):
    code = "x = 1\n" * (10 * 1024 * 1024 // 6)
    started = time.monotonic()
    data, text = refused(server, {"code": code})
    assert time.monotonic() - started < scaled(10)
    assert data["error_type"] == "invalid_argument"
    assert "SANDBOX_MAX_CODE_SIZE" in data["error"] and "1048576" in data["error"]
    data, result = server.call("validate_code", {"code": code})
    assert result.is_error and "SANDBOX_MAX_CODE_SIZE" in data["validation"]["message"]


def test_code_is_python_source_never_json(server):
    # The SDK pre-parses JSON-looking strings for non-str parameters; `code` must stay text.
    assert ok(server, "[1, 2]")["result"] == [1, 2]
    assert ok(server, "123")["result"] == 123


def test_snippet_errors_are_tool_results(server):
    data, result = execute(server, "x = 1\ny = 1 / 0")
    assert result.is_error and data["error_type"] == "runtime_error" and data["line"] == 2
    data, result = execute(server, "def f(:\n  pass")
    assert result.is_error and data["error_type"] == "syntax_error" and data["line"] == 1


# ----------------------------------------------------------------------------- the wire


def test_stdout_carries_only_json_rpc():
    noisy = "import json\nfor i in range(200):\n    print('x' * 100, i)\nresult = 'done'"
    with RawServer() as raw:
        raw.initialize()
        response = raw.call_tool("execute_code", {"code": noisy})
        assert response["result"]["structuredContent"]["result"] == "done"
        raw.call_tool("execute_code", {"code": "while True:\n    pass", "timeout": 0.5})
        raw.call_tool("validate_code", {"code": "import os"})
        raw.call_tool("execute_code", {"code": "x = 1 / 0"})
        raw.request("tools/list")
        assert raw.close() == 0
    assert len(raw.lines) >= 6
    for line in raw.lines:
        assert line.endswith(b"\n")
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0", line[:200]
        assert "id" in message or "method" in message


def test_invalid_json_rpc_lines_do_not_stop_the_server():
    with RawServer() as raw:
        raw.initialize()
        for garbage in (b"not json at all\n", b"{}\n", b'{"jsonrpc": "2.0"}\n', b"[1, 2, 3]\n",
                        b'{"jsonrpc": "2.0", "id": 99, "method": 5}\n', b"\xff\xfe\x00garbage\n", b"\n",
                        b'{"jsonrpc": "2.0", "id": 98, "method": "no/such/method"}\n'):
            raw.send_raw(garbage)
        response = raw.call_tool("execute_code", {"code": "result = 2 + 2"})
        assert response["result"]["structuredContent"]["result"] == 4
        assert raw.close() == 0


# ----------------------------------------------------------------------------- concurrency


async def _sleep_four_times(server, seconds: float) -> list:
    """Four calls at once, each sleeping; the [start, end] of each sleep, by the host's clock."""
    spans = []

    async def one():
        code = f"import time\nstart = time.time()\ntime.sleep({seconds})\nresult = [start, time.time()]"
        data, result = await server.call("execute_code", {"code": code})
        assert not result.is_error, structured(result)
        spans.append(data["result"])

    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(one)
    return sorted(spans)


def test_calls_run_concurrently_up_to_the_limit():
    # every sleep has begun before the first one ends (long enough for four to start)
    with blocking_session({"SANDBOX_MAX_CONCURRENCY": "4"}) as server:
        ok(server, "result = 0")  # warm up
        spans = server.run(_sleep_four_times, scaled(2))
    assert max(start for start, _ in spans) < min(end for _, end in spans), spans


def test_concurrency_one_serializes_the_calls():
    # each sleep begins after the one before it ended
    with blocking_session({"SANDBOX_MAX_CONCURRENCY": "1"}) as server:
        ok(server, "result = 0")
        spans = server.run(_sleep_four_times, 1)
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:])), spans


# ----------------------------------------------------------------------------- cancellation and shutdown


def _burning_child(root_pid: int, before: dict, timeout: float = 120.0) -> int:
    """The descendant of root_pid that burns CPU (the `while True` snippet)."""
    found = []

    def look():
        for pid in descendants(root_pid):
            if cpu_ticks(pid) - before.get(pid, 0) >= 30:
                found.append(pid)
                return True
        return False

    assert wait_until(look, timeout), "no sandbox child started burning CPU"
    return found[0]


def _ticks(root_pid: int) -> dict:
    return {pid: cpu_ticks(pid) for pid in descendants(root_pid)}


def test_cancelled_request_kills_its_child_and_the_server_goes_on(tmp_path):
    audit = tmp_path / "audit.log"
    with RawServer({"SANDBOX_POOL_SIZE": "0", "SANDBOX_AUDIT_LOG": str(audit)}) as raw:
        raw.initialize()
        raw.call_tool("execute_code", {"code": "result = 0"})  # the fork server is up
        baseline = descendants(raw.process.pid)
        before = _ticks(raw.process.pid)
        request_id = raw.start_request("tools/call", {"name": "execute_code",
                                                      "arguments": {"code": "while True:\n    pass", "timeout": 120}})
        burner = _burning_child(raw.process.pid, before)
        raw.cancel(request_id)
        assert wait_until(lambda: burner not in descendants(raw.process.pid), 60), "child survived its cancellation"
        assert wait_until(lambda: len(descendants(raw.process.pid)) <= len(baseline), 60)
        response = raw.call_tool("execute_code", {"code": "result = 'still here'"})
        assert response["result"]["structuredContent"]["result"] == "still here"
        assert raw.close() == 0
    answered = [json.loads(line) for line in raw.lines]
    assert not any(m.get("id") == request_id for m in answered), "a cancelled request must not be answered"
    outcomes = [json.loads(line)["outcome"] for line in audit.read_text().splitlines()]
    assert outcomes == ["success", "cancelled", "success"]


def test_sdk_client_cancellation_kills_the_child():
    async def give_up_after_a_while(server):
        with anyio.move_on_after(2):
            await server.call("execute_code", {"code": "while True:\n    pass", "timeout": 120})
            raise AssertionError("the endless loop returned")

    with blocking_session({"SANDBOX_POOL_SIZE": "0"}) as server:
        ok(server, "result = 0")
        baseline = len(server.descendants())
        server.run(give_up_after_a_while)
        assert wait_until(lambda: len(server.descendants()) <= baseline, 60), server.descendants()
        assert ok(server, "result = 3")["result"] == 3


@pytest.mark.parametrize("how", ["stdin_eof", "sigterm"])
def test_client_going_away_or_shutdown_kills_every_child(how):
    with RawServer() as raw:
        raw.initialize()
        raw.call_tool("execute_code", {"code": "result = 0"})
        before = _ticks(raw.process.pid)
        raw.start_request("tools/call", {"name": "execute_code",
                                         "arguments": {"code": "while True:\n    pass", "timeout": 120}})
        burner = _burning_child(raw.process.pid, before)
        tree = descendants(raw.process.pid)
        if how == "sigterm":
            raw.process.send_signal(signal.SIGTERM)
        raw.close(timeout=60)
    survivors = [pid for pid in tree if _alive(pid)]
    assert wait_until(lambda: not any(_alive(pid) for pid in tree), 60), survivors
    assert not _alive(burner)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


# ----------------------------------------------------------------------------- audit log


def test_audit_log_records_calls_without_code_or_output(tmp_path):
    audit = tmp_path / "audit.log"
    token = "T" * 40
    code = "secret_marker = 'CODE-MARKER-1234'\nprint('OUTPUT-MARKER-5678')\nresult = 1"
    with blocking_session({"SANDBOX_AUDIT_LOG": str(audit), "SANDBOX_API_TOKEN": token}) as server:
        first = ok(server, code)
        refused(server, {"code": "import os  # CODE-MARKER-1234", "allowed_imports": ["os"]})
        blocked, _ = execute(server, "import subprocess  # CODE-MARKER-1234")
        server.call("validate_code", {"code": "import subprocess  # CODE-MARKER-1234"})
    assert stat.S_IMODE(os.stat(audit).st_mode) == 0o600
    text = audit.read_text()
    for secret in ("CODE-MARKER-1234", "OUTPUT-MARKER-5678", token):
        assert secret not in text
    records = [json.loads(line) for line in text.splitlines()]
    executions = [r for r in records if r["event"] == "execution"]
    assert len(executions) == 3
    success = executions[0]
    assert success["execution_id"] == first["execution_id"]
    assert success["outcome"] == "success" and success["error_type"] is None
    assert len(success["code_sha256"]) == 64 and success["code_size"] == len(code.encode())
    assert success["profiles"] == ["basic"]
    assert success["limits"] == {"timeout": 30.0, "memory": 128 << 20}
    for field in ("timestamp", "cpu_time", "max_rss_bytes", "execution_time"):
        assert field in success
    assert success["timestamp"].endswith("+00:00")
    assert executions[1]["outcome"] == "error" and executions[1]["error_type"] == "security_violation"
    assert blocked["error_type"] == "security_violation" and executions[2]["error_type"] == "security_violation"
    security = [r for r in records if r["event"] == "security"]
    refusal = [r for r in security if r["execution_id"] == executions[1]["execution_id"]]
    assert refusal and refusal[0]["kind"] == "blocked_import" and "os" in refusal[0]["detail"]
    assert [r for r in security if r["execution_id"] == executions[2]["execution_id"]], security
    validations = [r for r in records if r["event"] == "validation"]
    assert len(validations) == 1 and validations[0]["valid"] is False


def test_unwritable_audit_log_does_not_stop_the_server(tmp_path):
    audit = tmp_path / "audit.log"
    with blocking_session({"SANDBOX_AUDIT_LOG": str(audit)}) as server:
        ok(server, "result = 1")
        audit.unlink()
        audit.mkdir()  # now every append fails
        assert ok(server, "result = 2")["result"] == 2
        assert "audit log" in server.stderr_text()


# ----------------------------------------------------------------------------- progress


def test_progress_for_a_long_run_and_none_for_a_short_one():
    """notifications/progress about once a second, elapsed against the timeout, with the
    last printed line; nothing for a run shorter than a second."""
    import anyio

    from mcp_client import open_session

    async def scenario():
        seen = {"long": [], "short": [], "seconds": 0.0}
        async with open_session() as server:
            async def collect(into):
                async def callback(progress, total, message):
                    seen[into].append((progress, total, message))
                return callback
            # a terminal escape and a bidi override in the line: not passed on to the client's status
            long_code = ("import time\nfor i in range(8):\n    print(f'\\x1b[2Jstep {i}\\u202e')\n"
                         "    time.sleep(1)\nresult = 'done'")
            started = time.monotonic()
            result = await server.session.call_tool("execute_code", {"code": long_code, "timeout": 20},
                                                    progress_callback=await collect("long"))
            seen["seconds"] = time.monotonic() - started
            assert result.structured_content["result"] == "done"
            result = await server.session.call_tool("execute_code", {"code": "result = 1"},
                                                    progress_callback=await collect("short"))
            assert result.structured_content["result"] == 1
        return seen

    seen = anyio.run(scenario)
    assert seen["short"] == []
    # one a second: eight seconds of sleep, and however long the run took on this machine
    assert 5 <= len(seen["long"]) <= seen["seconds"] + 2, (seen["seconds"], seen["long"])
    progress = [p for p, _t, _m in seen["long"]]
    assert progress == sorted(progress) and all(total == 20 for _p, total, _m in seen["long"])
    assert any("step" in (message or "") for _p, _t, message in seen["long"][2:]), seen["long"]
    assert not any(ch in (message or "") for _p, _t, message in seen["long"] for ch in "\x1b\u202e"), seen["long"]
    assert "s of 20 s" in seen["long"][0][2]


# ----------------------------------------------------------------------------- files the model can read


def test_files_come_back_as_resources_the_client_understands():
    """A CSV as embedded text (no base64), a small binary as a blob, a 5 MB file as a link
    that resources/read serves, and later no more (SANDBOX_FILE_TTL)."""
    import base64

    import anyio

    from mcp_client import open_session

    code = ("import os\nwith open('out/summary.csv', 'w') as f:\n    f.write('name,total\\na,1\\nb,2\\n')\n"
            "open('out/raw.bin', 'wb').write(bytes(range(256)))\n"
            "open('out/big.txt', 'w').write('x' * (5 * 1024 * 1024))\nresult = sorted(os.listdir('out'))")
    ttl = scaled(3)   # long enough to read the link back on this machine

    async def scenario():
        async with open_session({"SANDBOX_ENABLE_FILESYSTEM": "true", "SANDBOX_FILE_TTL": str(ttl),
                                 "SANDBOX_RESTRICTED_PYTHON": "false"}) as server:
            result = await server.session.call_tool("execute_code", {"code": code, "timeout": 20})
            data = result.structured_content
            assert data["success"], data
            by_type = {}
            for block in result.content:
                by_type.setdefault(block.type, []).append(block)
            [csv] = [b for b in by_type["resource"] if b.resource.mime_type == "text/csv"]
            assert csv.resource.text == "name,total\na,1\nb,2\n"
            [blob] = [b for b in by_type["resource"] if b.resource.mime_type == "application/octet-stream"]
            assert base64.b64decode(blob.resource.blob) == bytes(range(256))
            [link] = by_type["resource_link"]
            assert link.name == "out/big.txt" and link.size == 5 << 20 and str(link.uri).startswith("sandbox://files/")
            read = await server.session.read_resource(link.uri)
            assert read.contents[0].text == "x" * (5 << 20)
            files = {f["path"]: f for f in data["files"]}
            assert files["out/summary.csv"]["returned_as"] == "text" and files["out/big.txt"]["returned_as"] == "link"
            assert "file out/big.txt (5,242,880 bytes) returned as a link" in result.content[0].text
            await anyio.sleep(ttl + 0.5)
            try:
                await server.session.read_resource(link.uri)
            except Exception as exc:  # noqa: BLE001 - the SDK raises the server's error
                return str(exc)
            return "still readable"

    outcome = anyio.run(scenario)
    assert "unknown or expired" in outcome and "run the code again" in outcome, outcome


def test_an_image_too_large_to_decode_goes_back_as_plain_bytes():
    """With RestrictedPython on, a snippet writes a PNG of a few KB that declares 30,000 x
    30,000 pixels into out/: it comes back as application/octet-stream, which no client
    renders, with the reason; a real image next to it is still image/png."""
    code = ("import zlib, binascii\n"
            "def chunk(kind, data):\n"
            "    return len(data).to_bytes(4, 'big') + kind + data + binascii.crc32(kind + data).to_bytes(4, 'big')\n"
            "def png(w, h):\n"
            "    head = w.to_bytes(4, 'big') + h.to_bytes(4, 'big') + bytes([8, 0, 0, 0, 0])\n"
            "    return (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', head)\n"
            "            + chunk(b'IDAT', zlib.compress(b'\\0' * (w + 1) * 50)) + chunk(b'IEND', b''))\n"
            "open('out/bomb.png', 'wb').write(png(30000, 30000))\nopen('out/small.png', 'wb').write(png(64, 48))\n"
            "result = 1")
    with blocking_session({"SANDBOX_ENABLE_FILESYSTEM": "true"}) as server:
        data, result = execute(server, code, timeout=20)
    assert data["success"], data
    files = {f["path"]: f for f in data["files"]}
    assert files["out/bomb.png"]["mime_type"] == "application/octet-stream", files
    assert "not returned as image/png: 30000 x 30000 pixels" in files["out/bomb.png"]["note"]
    assert files["out/small.png"]["mime_type"] == "image/png" and files["out/small.png"].get("note") is None
    blocks = [b for b in result.content if b.type == "resource"]
    assert sorted(b.resource.mime_type for b in blocks) == ["application/octet-stream", "image/png"]


def test_a_text_file_with_terminal_controls_goes_back_as_bytes():
    """A text file under out/ went back as a text resource whatever it held; a CLI client
    prints one as it is, so ESC ] 52 in notes.txt wrote the user's clipboard. A text file
    with characters a terminal acts on goes back as bytes, unchanged, in every way it
    can go (embedded, or served by resources/read); a CSV with CR LF line ends (as the csv
    module writes them) is still text."""
    code = ("import csv\nopen('out/notes.txt', 'w').write('hi \\x1b]52;c;ZWNobyBwd25lZA==\\x07 there')\n"
            "open('out/big.md', 'w').write('\\u202e' + 'x' * (2 * 1024 * 1024))\n"
            "with open('out/table.csv', 'w', newline='') as f:\n    csv.writer(f).writerows([['a', 1], ['b', 2]])\n"
            "result = 1")

    async def scenario():
        async with open_session({"SANDBOX_ENABLE_FILESYSTEM": "true"}) as server:
            result = await server.session.call_tool("execute_code", {"code": code, "timeout": 20})
            data = result.structured_content
            assert data["success"], data
            files = {f["path"]: f for f in data["files"]}
            assert files["out/notes.txt"]["returned_as"] == "blob", files
            assert "holds characters a terminal acts on" in files["out/notes.txt"]["note"], files
            assert files["out/table.csv"]["returned_as"] == "text", files
            embedded = {b.resource.mime_type: b.resource for b in result.content if b.type == "resource"}
            assert base64.b64decode(embedded["text/plain"].blob) == b"hi \x1b]52;c;ZWNobyBwd25lZA==\x07 there"
            assert embedded["text/csv"].text == "a,1\r\nb,2\r\n"
            [link] = [b for b in result.content if b.type == "resource_link"]
            read = await server.session.read_resource(link.uri)
            return read.contents[0]

    served = anyio.run(scenario)
    assert not hasattr(served, "text") and base64.b64decode(served.blob)[:3] == "\u202e".encode(), served


def test_hostile_entries_under_out_are_refused_and_reported_never_followed():
    code = ("import os\nos.symlink('/etc/passwd', 'out/passwd')\nos.symlink('/', 'out/root')\n"
            "try:\n    os.mkfifo('out/fifo')\nexcept OSError:\n    pass\nopen('out/real.txt', 'w').write('ok')\nos.link('out/real.txt', 'out/hard')\n"
            "open('out/\u202etxt.exe', 'w').write('x')\nopen('out/fine.txt', 'w').write('fine')\nresult = 1")
    with blocking_session({"SANDBOX_ENABLE_FILESYSTEM": "true", "SANDBOX_RESTRICTED_PYTHON": "false"}) as server:
        data, result = execute(server, code, timeout=20)
    assert data["success"], data
    assert [f["path"] for f in data["files"]] == ["out/fine.txt"]
    refused = {f["path"]: f["reason"] for f in data["files_refused"]}
    assert refused["out/passwd"] == "symbolic link" and refused["out/root"] == "symbolic link"
    assert "out/fifo" not in refused or refused["out/fifo"].startswith("not a regular file")  # seccomp: ENOSYS
    assert refused["out/real.txt"] == "hard link" and refused["out/hard"] == "hard link"
    assert any("name with control or format characters" == why for why in refused.values())
    assert "root:" not in json.dumps(data) and "root:" not in result_text(result)
    assert "file out/passwd not returned: symbolic link" in result_text(result)


ANALYSIS = """
import pandas as pd
import matplotlib.pyplot as plt
df = pd.DataFrame({"region": ["north", "south", "east", "west"], "sales": [120, 95, 143, 88]})
print(df.to_string(index=False))
ax = df.plot.bar(x="region", y="sales", legend=False)
plt.savefig("out/chart.png")
df.describe().to_csv("out/summary.csv")
result = int(df["sales"].sum())
"""


def test_a_pandas_analysis_comes_back_as_text_an_image_and_a_readable_csv():
    """The issue's whole scenario: a short text with the printed table and the result, the
    chart as image content, the CSV as text the client reads without base64."""
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    with blocking_session({"SANDBOX_ENABLE_FILESYSTEM": "true", "SANDBOX_ENABLE_DATA_SCIENCE": "true"}) as server:
        data, result = execute(server, ANALYSIS, timeout=60, memory_limit="512m")
    assert data["success"], data
    text = result_text(result)
    assert text.startswith("stdout:\nregion  sales\n north    120") and "result: 446" in text
    assert len(text) < 1000
    [csv] = [b for b in result.content if b.type == "resource" and b.resource.mime_type == "text/csv"]
    assert csv.resource.text.startswith(",sales\ncount,4.0")
    # the chart saved to out/ and still open is one figure: one image, not an image and a blob
    [png] = [b for b in result.content if b.type == "image"]
    assert base64.b64decode(png.data).startswith(b"\x89PNG")
    assert not [b for b in result.content if b.type == "resource" and b.resource.mime_type == "image/png"]
    files = {f["path"]: f for f in data["files"]}
    assert files["out/chart.png"]["returned_as"] == "image" and files["out/chart.png"]["uri"]
    assert "file out/chart.png" in text and "as the figure's image" in text
    assert "base64" not in json.dumps(data["files"])


def test_a_figure_saved_at_another_dpi_comes_back_once():
    """One image per figure: the chart saved to out/ at 150 dpi and still open is the
    figure's image, not an image and a second PNG."""
    pytest.importorskip("matplotlib")
    code = ("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.savefig('out/hi.png', dpi=150)\n"
            "plt.figure()\nplt.plot([2, 1])\nplt.savefig('out/other.png', dpi=150)\nplt.close()\n")
    with blocking_session({"SANDBOX_ENABLE_FILESYSTEM": "true", "SANDBOX_ENABLE_DATA_SCIENCE": "true"}) as server:
        data, result = execute(server, code, timeout=60, memory_limit="512m")
    assert data["success"], data
    assert len([b for b in result.content if b.type == "image"]) == 1
    files = {f["path"]: f for f in data["files"]}
    assert files["out/hi.png"]["returned_as"] == "image" and files["out/hi.png"]["uri"]
    assert files["out/other.png"]["returned_as"] == "blob"   # its figure was closed: the file is all there is


def test_a_binary_file_comes_back_once_as_a_blob_without_base64_in_the_data():
    with blocking_session({"SANDBOX_ENABLE_FILESYSTEM": "true"}) as server:
        data, result = execute(server, "open('out/raw.bin', 'wb').write(bytes(range(256)))", timeout=20)
    assert data["success"], data
    [blob] = [b for b in result.content if b.type == "resource"]
    assert base64.b64decode(blob.resource.blob) == bytes(range(256))
    [entry] = data["files"]
    assert entry["returned_as"] == "blob" and "base64" not in entry
    assert blob.resource.blob not in json.dumps(data)


@pytest.mark.slow
def test_a_seventy_second_run_sends_progress_all_along():
    """Clients built on the TypeScript SDK give up after 60 s without progress."""
    import anyio

    from mcp_client import open_session

    async def scenario():
        seen = []

        async def callback(progress, total, message):
            seen.append(progress)
        async with open_session(timeout=120) as server:
            code = "import time\nfor i in range(70):\n    print('minute', i)\n    time.sleep(1)\nresult = 'done'"
            result = await server.session.call_tool("execute_code", {"code": code, "timeout": 90},
                                                    progress_callback=callback)
            assert result.structured_content["result"] == "done"
        return seen

    seen = anyio.run(scenario)
    assert len(seen) >= 60, len(seen)
    gaps = [b - a for a, b in zip(seen, seen[1:])]
    assert max(gaps) < min(scaled(3), 30) and seen[-1] >= 68
