"""The network and filesystem profiles are enforced below Python: most tests run
with RestrictedPython off, so only the kernel layers decide. The rules the Python
layer adds to a profile's door (files by path only, no file:// through urllib) are
tried with it on."""

from __future__ import annotations

import base64

import os

import pytest
from local_http import serving

from runner_harness import MiB, SyncRunner, only_layers
from slowness import scaled

from sandbox import network_allow as policy


@pytest.fixture(scope="module")
def local_http():
    with serving(b'hello from the host') as port:
        yield port


GET = ("import urllib.request\n"
       "result = urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=3).read().decode()")
RAW_CONNECT = ("import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\ns.settimeout(3)\n"
               "s.connect(('127.0.0.1', {port}))\nresult = 'connected'")


def test_network_off_refuses_even_without_restricted_python(local_http):
    runner = SyncRunner(network=False)
    try:
        r = runner.run(RAW_CONNECT.format(port=local_http), restricted=False)
        assert r["error_type"] == "runtime_error" and "Address family not supported" in r["error"], r
        r = runner.run(GET.format(port=local_http), restricted=False)
        assert not r["success"] and "hello" not in str(r), r
    finally:
        runner.close()


def test_network_on_reaches_a_local_server(local_http):
    runner = SyncRunner(network=True, network_policy=policy.parse(f"127.0.0.1:{local_http}"))
    try:
        r = runner.run(GET.format(port=local_http), restricted=False)
        assert r["success"] and r["result"] == "hello from the host", r
        # other socket families stay closed in the network profile
        r = runner.run("import socket\nsocket.socket(socket.AF_PACKET, socket.SOCK_RAW)", restricted=False)
        assert r["error_type"] == "runtime_error", r
    finally:
        runner.close()


@pytest.mark.parametrize("code", [
    "import urllib.request\nresult = urllib.request.urlopen('file://{path}').read()",
    "import urllib.request\nresult = urllib.request.urlretrieve('file://{path}')[0]",
    "import urllib.request\nresult = urllib.request.build_opener().open('file://{path}').read()",
    "import urllib.request\nresult = urllib.request.URLopener().open('file://{path}').read()",
])
def test_the_network_profile_reads_no_file_through_urllib(code):
    """A file of the Python installation, which the sandbox can read: urllib's file://
    handlers are switched off while a restricted snippet runs."""
    import os
    from sandbox import profiles
    runner = SyncRunner(network=True, network_policy=policy.parse("127.0.0.1"))
    try:
        r = runner.run(code.format(path=os.__file__), allowed=profiles.allowed_modules(["basic", "network"]))
        assert not r["success"] and "file:// URLs are refused" in r["error"], r
        r = runner.run(code.format(path=os.__file__), restricted=False,
                       allowed=profiles.allowed_modules(["basic", "network"]))
        assert r["success"], r  # the door is real without the Python layer (the kernel's view)
    finally:
        runner.close()


@pytest.fixture(scope="module")
def fs_runner():
    runner = SyncRunner(filesystem=True, workspace_size=8 * MiB)
    yield runner
    runner.close()


def run_files(runner, code, files=None):
    from sandbox.forkserver.runner import ExecRequest
    request = ExecRequest(code=code, timeout=scaled(10), memory_limit=128 * MiB, allowed_modules=frozenset(),
                          restricted=False, files=files)
    return runner.loop.run_until_complete(runner.runner.execute(request))


def test_workspace_is_the_cwd_and_files_go_in_and_out(fs_runner):
    r = run_files(fs_runner,
                  "import os\nos.makedirs('out', exist_ok=True)\n"
                  "data = open('input.csv').read() + open('bin/raw.dat', 'rb').read().hex()\n"
                  "open('out/report.txt', 'w').write(data.upper())\nresult = os.getcwd()",
                  files={"input.csv": "a,b\n1,2\n", "bin/raw.dat": {"base64": base64.b64encode(b"\x00\xff").decode()}})
    assert r["success"], r
    assert r["result"] == "/workspace"
    [out] = r["files"]
    assert out["path"] == "out/report.txt"
    assert base64.b64decode(out["base64"]) == b"A,B\n1,2\n00FF"


def test_workspace_is_gone_after_the_run(fs_runner):
    assert run_files(fs_runner, "open('left-behind', 'w').write('x')")["success"]
    r = run_files(fs_runner, "import os\nresult = [os.listdir('.'), os.listdir('out')]")
    assert r["result"] == [["out"], []], r  # a fresh workspace: out/ made for this run, empty


@pytest.mark.parametrize("code,needle", [
    ("open('/etc/passwd').read()", "Error"),                         # not in the private root
    ("open('/usr/lib/sbx-escape', 'w')", "Error"),                   # read-only, Landlock
    ("import os\nos.symlink('/etc/shadow', 'ln')\nopen('ln').read()", "Error"),
    ("import os, glob\nos.link(glob.glob('/usr/lib/os-release')[0] or '/usr/lib/os-release', 'hard')", "Error"),
    ("open('../escape', 'w').write('x')", "Error"),                  # .. from / is / (read-only)
    ("open('big', 'wb').write(b'x' * (16 * 1024 * 1024))", "Error"),  # past the 8 MiB cap
])
def test_workspace_confines_reads_and_writes(fs_runner, code, needle):
    r = run_files(fs_runner, code)
    assert not r["success"] and needle in r["error"], r


def test_bad_input_file_names_are_refused(fs_runner):
    for name in ("../x", "/etc/x", "a/../../x", "", "a\x00b"):
        r = run_files(fs_runner, "result = 1", files={name: "x"})
        assert not r["success"] and "invalid input file" in r["error"], (name, r)


@pytest.mark.skipif(not os.path.isfile("/usr/share/zoneinfo/America/New_York"),
                    reason="this host has no system time zone database")
def test_the_system_time_zone_database_is_there_read_only():
    """zoneinfo reads /usr/share/zoneinfo where the tzdata package is not installed (a basic
    install): ZoneInfo('America/New_York') failed in the sandbox on such a Python."""
    runner = SyncRunner()
    try:
        r = runner.run("import os\nzones = '/usr/share/zoneinfo'\n"
                       "result = [os.path.isfile(zones + '/America/New_York'), os.access(zones, os.W_OK)]",
                       restricted=False)
        assert r["success"] and r["result"] == [True, False], r
        r = runner.run("open('/usr/share/zoneinfo/sbx-escape', 'w')", restricted=False)
        assert not r["success"] and "Error" in r["error"], r
    finally:
        runner.close()


def test_without_the_profile_the_cwd_is_a_scratch_directory_that_goes_with_the_run():
    runner = SyncRunner()
    try:
        for restricted in (True, False):
            code = "import os\nopen('left.txt', 'w').write('x')\nresult = [os.getcwd(), os.listdir('.')]"
            r = runner.run(code, restricted=restricted)
            assert r["success"] and r["result"] == ["/tmp/work", ["left.txt"]], r
        r = runner.run("import os\nresult = os.path.exists('/workspace')", restricted=False)
        assert r["success"] and r["result"] is False, r
        # each run has its own: what the last one left is gone
        r = runner.run("import os\nresult = os.listdir('.')")
        assert r["success"] and r["result"] == [], r
    finally:
        runner.close()


DEVICE_WRITES = ("def attempt(path):\n    try:\n        with open(path, 'w') as f:\n            f.write('x')\n"
                 "        return 'written'\n    except OSError as e:\n        return type(e).__name__\n"
                 "result = [attempt('/dev/' + d) for d in ('null', 'zero', 'urandom', 'random', 'sandbox-probe')]")


@pytest.mark.parametrize("layers", ["all", "landlock alone"])
def test_the_sink_devices_take_writes_and_no_other_device_does(layers):
    """C libraries fopen("/dev/null", "w") for messages they drop (matplotlib's qhull, so
    tricontour failed): null and zero take writes (full answers ENOSPC as it should); the
    entropy devices, and a new file beside them, stay refused."""
    runner = SyncRunner(**({} if layers == "all" else {"disabled_layers": only_layers("landlock")}))
    try:
        r = runner.run(DEVICE_WRITES, restricted=False)
        assert r["success"] and r["result"][:2] == ["written", "written"], r
        assert "written" not in r["result"][2:], r
    finally:
        runner.close()


def test_open_is_given_in_the_filesystem_profile_by_path_only():
    from sandbox import profiles
    runner = SyncRunner(filesystem=True)
    allowed = profiles.allowed_modules(["basic", "filesystem"])
    try:
        r = runner.run("open('a.txt', 'w').write('hi')\nresult = open('a.txt').read()", allowed=allowed)
        assert r["success"] and r["result"] == "hi", r
        r = runner.run("open(4, 'wb').write(b'forged')", allowed=allowed)  # the result pipe
        assert r["error_type"] == "runtime_error" and "named by path" in r["error"], r
        r = runner.run("result = open('/etc/passwd').read()", allowed=allowed)
        assert r["error_type"] == "runtime_error" and "root:" not in str(r), r
    finally:
        runner.close()


@pytest.mark.parametrize("code", [
    "import io\nio.open(4, 'wb').write(b'forged')",
    "import io\nio.FileIO(4, 'w').write(b'forged')",
    "import io\nio.FileIO(file=4, mode='w').write(b'forged')",
    "import io\nio.FileIO('x', 'w', True, lambda path, flags: 4).write(b'forged')",
    "import io\nT = type(open('a.bin', 'wb', buffering=0))\nT(4, 'w').write(b'forged')",
    "import io\nf = io.FileIO(3)\nresult = f.read()",  # the request pipe
    # library code that opens the name it is given with the real open()
    "import tarfile\ntarfile.open(name=4, mode='w').close()",
    "import tarfile\ntarfile.TarFile(4, 'w').close()",
    "import tarfile\ntarfile.open(name=4, mode='w:gz').close()",  # (gzip's builtins.open)
    "import tarfile\ntarfile.bltn_open('x', 'w', opener=lambda path, flags: 4).write('forged')",
])
def test_io_names_files_by_path_only_in_the_filesystem_profile(fs_runner, code):
    """The full io module of the filesystem profile: io.open is open(), and io.FileIO
    takes no descriptor either, nor does library code's open() while the snippet runs
    (tarfile's, gzip's), so the sandbox's own pipes stay out of reach."""
    from sandbox import profiles
    r = fs_runner.run(code, allowed=profiles.allowed_modules(["basic", "filesystem"]))
    assert not r["success"] and r["error_type"] in ("runtime_error", "security_violation"), r
    assert "named by path" in r["error"] or "argument 'opener'" in r["error"], r


def test_io_by_path_still_works_in_the_filesystem_profile(fs_runner):
    from sandbox import profiles
    r = fs_runner.run("import io\nwith io.open('a.txt', 'w') as f:\n    f.write('hi')\n"
                      "with io.FileIO('b.bin', 'wb') as g:\n    g.write(b'x')\n"
                      "raw = open('b.bin', 'rb', buffering=0)\n"
                      "result = [io.open('a.txt').read(), isinstance(raw, io.FileIO), raw.read().decode()]",
                      allowed=profiles.allowed_modules(["basic", "filesystem"]))
    assert r["success"] and r["result"] == ["hi", True, "x"], r
    r = fs_runner.run("import tarfile, io, tempfile\nopen('b.bin', 'wb').write(b'x')\n"
                      "with tarfile.open('a.tar.gz', 'w:gz') as t:\n"
                      "    t.add('b.bin')\nwith tarfile.open('a.tar.gz') as t:\n    names = t.getnames()\n"
                      "with tempfile.TemporaryFile() as f:\n    f.write(b'y')\n    f.seek(0)\n    data = f.read()\n"
                      "result = [names, data.decode()]", allowed=profiles.allowed_modules(["basic", "filesystem"]))
    assert r["success"] and r["result"] == [["b.bin"], "y"], r


def test_open_reaches_only_the_scratch_directory_without_the_profile():
    r = SyncRunner()
    try:
        reply = r.run("open('notes.txt', 'w').write('hi')\nopen('/tmp/plot.txt', 'w').write('ho')\n"
                      "result = open('/tmp/work/notes.txt').read() + open('../plot.txt').read()")
        assert reply["success"] and reply["result"] == "hiho", reply
        for path in ("/etc/passwd", "../../etc/passwd", "/tmp/../proc/self/environ", "/proc/self/status"):
            reply = r.run(f"result = open({path!r}).read()")
            assert reply["error_type"] == "security_violation", reply
            assert "outside the scratch directory" in reply["error"] and "SANDBOX_ENABLE_FILESYSTEM" in reply["error"]
            assert reply["security_events"][0]["kind"] == "call_blocked", reply
        reply = r.run("open(4, 'wb').write(b'forged')")  # the result pipe
        assert reply["error_type"] == "runtime_error" and "named by path" in reply["error"], reply
    finally:
        r.close()
