"""Each security profile, and their combination, through the MCP server: a
profile opens only its own door. Network and filesystem are also proven with
RestrictedPython off, since they are enforced by the kernel (seccomp socket
rule + network namespace; mount namespace + Landlock workspace)."""

from __future__ import annotations

import base64
import importlib.util
import os
import sys

import pytest
from local_http import serving

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from mcp_client import blocking_session  # noqa: E402

HAVE_DATA_SCIENCE = all(importlib.util.find_spec(m) for m in ("numpy", "pandas", "matplotlib"))

PROFILES = {
    "basic": {},
    # loopback is refused unless named: the test server lives there
    "network": {"SANDBOX_ENABLE_NETWORK": "true", "SANDBOX_NETWORK_ALLOW": "127.0.0.1"},
    "filesystem": {"SANDBOX_ENABLE_FILESYSTEM": "true"},
    "data_science": {"SANDBOX_ENABLE_DATA_SCIENCE": "true"},
    "all": {"SANDBOX_ENABLE_NETWORK": "true", "SANDBOX_NETWORK_ALLOW": "127.0.0.1", "SANDBOX_ENABLE_FILESYSTEM": "true",
            "SANDBOX_ENABLE_DATA_SCIENCE": "true"},
}


def enabled(profile: str, door: str) -> bool:
    return profile == door or profile == "all"


@pytest.fixture(scope="module")
def local_http():
    with serving(b'hello over the network profile') as port:
        yield port


@pytest.fixture(scope="module", params=sorted(PROFILES))
def profile(request):
    if request.param in ("data_science", "all") and not HAVE_DATA_SCIENCE:
        pytest.skip("the data-science extra is not installed (make install-datascience)")
    with blocking_session(PROFILES[request.param]) as server:
        yield request.param, server


def run(server, code, **arguments):
    data, result = server.call("execute_code", {"code": code, "timeout": 20, **arguments})
    return data, result


def test_info_lists_the_profile_and_its_modules(profile):
    name, server = profile
    info, _ = server.call("get_sandbox_info")
    for door in ("network", "filesystem", "data_science"):
        assert info["profiles"][door]["enabled"] == enabled(name, door), info["profiles"]
    assert info["profiles"]["basic"]["enabled"]
    assert "math" in info["profiles"]["basic"]["modules"]
    allowed = set(info["allowed_modules"])
    assert ("urllib.request" in allowed) == enabled(name, "network")
    assert ("pathlib" in allowed) == enabled(name, "filesystem")
    if HAVE_DATA_SCIENCE:
        assert ("pandas" in allowed) == enabled(name, "data_science")
    assert not {"os", "sys", "subprocess", "ctypes"} & allowed


def test_network_door(profile, local_http):
    name, server = profile
    get = ("import urllib.request\n"
           f"result = urllib.request.urlopen('http://127.0.0.1:{local_http}/', timeout=5).read().decode()")
    data, _ = run(server, get)
    if enabled(name, "network"):
        assert data["success"] and data["result"] == "hello over the network profile", data
    else:
        assert not data["success"] and data["error_type"] == "security_violation", data
        assert "urllib.request" in data["error"]


def test_filesystem_door(profile):
    name, server = profile
    code = ("import pathlib\nopen('in.txt').read()\npathlib.Path('out').mkdir(exist_ok=True)\n"
            "open('out/report.txt', 'w').write(open('in.txt').read().upper())\nresult = 'written'")
    data, result = run(server, code, files={"in.txt": "quarterly numbers"}) if enabled(name, "filesystem") \
        else run(server, code)
    if enabled(name, "filesystem"):
        assert data["success"], data
        [out] = data["files"]
        assert out["path"] == "out/report.txt" and out["returned_as"] == "text"
        [embedded] = [block for block in result.content if block.type == "resource"]
        assert embedded.resource.text == "QUARTERLY NUMBERS" and embedded.resource.mime_type == "text/plain"
    else:
        assert not data["success"] and data["error_type"] in ("security_violation", "runtime_error"), data


def test_data_science_door(profile):
    name, server = profile
    code = ("import pandas as pd\nimport matplotlib.pyplot as plt\n"
            "df = pd.DataFrame({'x': [1, 2, 3], 'y': [2, 4, 8]})\ndf['z'] = df['x'] * df['y']\n"
            "df.plot(x='x', y='z')\nresult = df.to_dict('list')")
    data, result = run(server, code)
    if enabled(name, "data_science"):
        assert data["success"] and data["result"] == {"x": [1, 2, 3], "y": [2, 4, 8], "z": [2, 8, 24]}, data
        images = [b for b in result.content if getattr(b, "type", None) == "image"]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        assert base64.b64decode(images[0].data).startswith(b"\x89PNG")
    else:
        assert not data["success"] and data["error_type"] == "security_violation", data


def test_no_profile_opens_a_door_to_the_host(profile, local_http):
    """Whatever the profile: host files stay invisible and nothing but the
    network profile's TCP gets out; fork and exec stay refused."""
    name, server = profile
    data, _ = run(server, "result = open('/etc/passwd').read()")
    assert not data["success"] and "root:" not in str(data), data
    for code in ("import os\nos.system('id')", "import subprocess", "import ctypes", "import sys\nsys.modules"):
        data, _ = run(server, code)   # (import sys or os alone gives a subset: module_subsets.py)
        assert data["error_type"] == "security_violation", (code, data)
    data, _ = run(server, "import os\nresult = os.listdir('/')")
    if enabled(name, "filesystem"):  # any path, the kernel decides (Landlock: / is not listable)
        assert not data["success"] or not {"root", "home"} & set(data["result"]), data
    else:  # only the scratch directory
        assert data["error_type"] == "security_violation", data


@pytest.fixture(scope="module", params=["network_off", "network_on", "filesystem_on"])
def kernel_only(request):
    env = {"SANDBOX_RESTRICTED_PYTHON": "false"}
    if request.param == "network_on":
        env.update(SANDBOX_ENABLE_NETWORK="true", SANDBOX_NETWORK_ALLOW="127.0.0.1")
    if request.param == "filesystem_on":
        env["SANDBOX_ENABLE_FILESYSTEM"] = "true"
    with blocking_session(env) as server:
        yield request.param, server


def test_profiles_hold_with_restricted_python_off(kernel_only, local_http):
    name, server = kernel_only
    connect = ("import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\ns.settimeout(3)\n"
               f"s.connect(('127.0.0.1', {local_http}))\nresult = 'connected'")
    data, _ = run(server, connect)
    # even with the network profile: a raw socket reaches nothing, only the proxy goes out
    assert not data["success"] and "connected" not in str(data.get("result")), data
    get = ("import urllib.request\n"
           f"result = urllib.request.urlopen('http://127.0.0.1:{local_http}/', timeout=5).read().decode()")
    data, _ = run(server, get)
    if name == "network_on":
        assert data["success"] and data["result"] == "hello over the network profile", data
        [connection] = data["network"]
        assert connection["allowed"] and connection["port"] == local_http and connection["bytes_received"] > 0
    else:
        assert not data["success"] and "hello" not in str(data), data
    data, _ = run(server, "open('/tmp/../workspace/probe', 'w').write('x')\nresult = 'wrote'")
    if name == "filesystem_on":
        assert data["success"], data
    else:
        assert not data["success"], data
    data, _ = run(server, "import os\nos.execv('/bin/sh', ['sh'])")
    assert not data["success"] and "Operation not permitted" in data["error"], data
