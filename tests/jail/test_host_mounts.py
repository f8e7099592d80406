"""SANDBOX_MOUNTS: what is refused at start (each reason, naming the entry and what to do),
and, in a real sandbox running raw Python (RestrictedPython off, the kernel alone), that a
mount gives exactly its directory with its mode: symbolic links, `..`, hard links, O_PATH,
file handles and mount calls lead nowhere else, and nothing shows the host's path."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from runner_harness import SyncRunner

from sandbox import host_mounts, mounts
from sandbox.host_mounts import Mount, MountError

HOST_SECRET = "host-secret-beside-the-mount"


def refusal(text: str, **kwargs) -> str:
    with pytest.raises(MountError) as refused:
        host_mounts.parse(text, filesystem=kwargs.pop("filesystem", True), **kwargs)
    return str(refused.value)


@pytest.fixture
def data(tmp_path):
    path = tmp_path.resolve() / "data"
    path.mkdir()
    return path


# ---------------------------------------------------------------- refused at start

def test_a_good_list_parses_with_ro_the_default(data, tmp_path):
    (tmp_path / "scratch").mkdir()
    parsed = host_mounts.parse(f"{data}:/data, {tmp_path.resolve()}/scratch:/scratch:rw", filesystem=True)
    assert parsed == (Mount(str(data), "/data"), Mount(str(tmp_path.resolve() / "scratch"), "/scratch", True))
    assert host_mounts.describe_inside(parsed) == "/data:ro,/scratch:rw"


@pytest.mark.parametrize("entry, says", [
    ("data:/data", "relative"),
    ("{data}:data", "relative"),
    ("{data}", "expected HOST:SANDBOX"),
    ("{data}:/data:rx", "use ro"),
    ("{data}/../data:/data", "not normalised"),
    ("{data}:/x/../data", "not normalised"),
    ("{data}/missing:/data", "does not exist"),
    ("{data}/file:/data", "is not a directory"),
    ("/:/data", "(/) is never mounted"),
    ("/proc:/data", "under /proc"),
    ("/sys/kernel:/data", "under /sys"),
    ("/dev:/data", "under /dev"),
    ("{data}:/", "cannot replace the sandbox's root"),
    ("{data}:/tmp", "collides with /tmp"),
    ("{data}:/usr/lib/data", "collides with /usr"),
    ("{data}:/proc/data", "collides with /proc"),
    ("{data}:/workspace/data", "collides with /workspace"),
    ("{data}:/data,{data}/sub:/other", "overlap on the host side"),
    ("{data}:/data,{tmp}/other:/data/sub", "overlap on the sandbox side"),
])
def test_refused_with_the_entry_and_what_to_do(data, tmp_path, entry, says):
    (data / "file").write_text("x")
    (data / "sub").mkdir()
    (tmp_path / "other").mkdir()
    text = entry.format(data=data, tmp=tmp_path.resolve())
    message = refusal(text)
    assert says in message
    assert text.split(",")[0].split(":")[0] in message or text in message


def test_rw_needs_the_filesystem_profile(data):
    assert "SANDBOX_ENABLE_FILESYSTEM=true" in refusal(f"{data}:/data:rw", filesystem=False)


def test_a_home_directory_is_refused_whole_and_as_a_parent(monkeypatch, tmp_path):
    home = tmp_path.resolve() / "home" / "someone"
    home.mkdir(parents=True)
    monkeypatch.setattr(host_mounts, "homes", lambda: {str(home)})
    assert "is the home directory" in refusal(f"{home}:/data")
    assert "holds the home directory" in refusal(f"{home.parent}:/data")
    (home / "project").mkdir()
    assert host_mounts.parse(f"{home}/project:/data", filesystem=False)


def test_the_real_home_is_refused():
    home = os.path.realpath(os.path.expanduser("~"))
    if not os.path.isdir(home) or home == "/":
        pytest.skip("this user has no home directory")
    assert "home directory" in refusal(f"{home}:/data")


def test_the_servers_installation_and_files_are_refused(data):
    package_parent = os.path.dirname(host_mounts.PACKAGE_DIR)
    assert "own installation" in refusal(f"{package_parent}:/data")
    assert "own installation" in refusal(f"{os.path.realpath(sys.prefix)}:/data")
    env_file = data / ".env"
    env_file.write_text("SANDBOX_TIMEOUT=5\n")
    assert "own installation or settings" in refusal(f"{data}:/data", own_files=[str(env_file)])


def test_a_directory_with_filesystems_mounted_inside_is_refused(data, monkeypatch):
    monkeypatch.setattr(host_mounts, "mount_points", lambda: ["/", str(data), f"{data}/inner"])
    assert "mounted inside" in refusal(f"{data}:/data")


def test_rw_on_a_read_only_filesystem_is_refused(data, monkeypatch):
    class ReadOnly:
        f_flag = os.ST_RDONLY
    monkeypatch.setattr(host_mounts.os, "statvfs", lambda path: ReadOnly())
    assert "read-only filesystem; mount it ro" in refusal(f"{data}:/data:rw")
    assert host_mounts.parse(f"{data}:/data:ro", filesystem=True)


def test_a_sandbox_path_on_the_private_roots_own_paths_is_refused(data):
    readable = mounts.readable_paths(network=False)
    with pytest.raises(ValueError) as refused:
        mounts.pin_host_directories([Mount(str(data), readable[0] + "/data")], readable)
    assert "collides" in str(refused.value)


def test_the_setting_stops_the_server_naming_it(data):
    from sandbox.config import ConfigError, load_settings
    with pytest.raises(ConfigError) as refused:
        load_settings({"SANDBOX_MOUNTS": "/:/data"})
    assert "SANDBOX_MOUNTS" in str(refused.value) and "never mounted" in str(refused.value)
    settings = load_settings({"SANDBOX_MOUNTS": f"{data}:/data"})
    assert settings.mounts == (Mount(str(data), "/data"),)
    assert [w["setting"] for w in settings.weakening] == ["SANDBOX_MOUNTS"]


# ---------------------------------------------------------------- in a sandbox, RestrictedPython off

@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    base = tmp_path_factory.mktemp("mounts").resolve()
    data, scratch = base / "data", base / "scratch"
    data.mkdir()
    scratch.mkdir()
    scratch.chmod(0o1777)   # as root the sandbox writes as an unprivileged uid
    (data / "f.txt").write_text("hello")
    (base / "secret").write_text(HOST_SECRET)
    (data / "absolute").symlink_to(base / "secret")
    (data / "relative").symlink_to("../secret")
    (data / "etc").symlink_to("/etc")
    return base


@pytest.fixture(scope="module", params=["every layer", "mount namespace without landlock"])
def runner(tree, request):
    """The default layers, and the same without Landlock: the mount namespace holds alone."""
    disabled = frozenset({"landlock"}) if "without" in request.param else frozenset()
    runner = SyncRunner(filesystem=True, disabled_layers=disabled,
                        mounts=(Mount(str(tree / "data"), "/data"), Mount(str(tree / "scratch"), "/mnt/scratch", True)))
    yield runner
    runner.close()


PROBE = r'''
import ctypes, errno, json, os
def attempt(fn):
    try:
        value = fn()
        return ["ok", value if isinstance(value, (str, int, list)) else None]
    except OSError as e:
        return [errno.errorcode.get(e.errno, str(e.errno)), None]
def read(path):
    with open(path) as f:
        return f.read()
def write(path):
    with open(path, "w") as f:
        return f.write("x")
libc = ctypes.CDLL(None, use_errno=True)
def c_call(name, *args):
    if getattr(libc, name)(*args) == -1:
        raise OSError(ctypes.get_errno(), name)
    return "done"
out = {}
'''


def probe(runner, code: str) -> dict:
    reply = runner.run(PROBE + code + "\nresult = json.dumps(out)", restricted=False)
    assert reply["success"], (reply.get("error"), reply.get("error_type"), reply.get("stderr"))
    return json.loads(reply["result"])


def test_reads_the_ro_mount_and_cannot_write_it(runner):
    out = probe(runner, '''
out["read"] = attempt(lambda: read("/data/f.txt"))
out["list"] = attempt(lambda: sorted(os.listdir("/data")))
out["write"] = attempt(lambda: write("/data/new"))
out["overwrite"] = attempt(lambda: write("/data/f.txt"))
out["mkdir"] = attempt(lambda: os.mkdir("/data/d"))
out["remove"] = attempt(lambda: os.remove("/data/f.txt"))
out["chmod"] = attempt(lambda: os.chmod("/data/f.txt", 0o777))
''')
    assert out["read"] == ["ok", "hello"]
    assert out["list"] == ["ok", ["absolute", "etc", "f.txt", "relative"]]
    for name in ("write", "overwrite", "mkdir", "remove", "chmod"):
        assert out[name][0] in ("EROFS", "EACCES", "EPERM"), (name, out[name])


def test_writes_the_rw_mount_and_the_host_sees_it(runner, tree):
    out = probe(runner, '''
out["write"] = attempt(lambda: write("/mnt/scratch/made-inside.txt"))
out["exec_bit"] = attempt(lambda: os.chmod("/mnt/scratch/made-inside.txt", 0o755))
out["statvfs"] = attempt(lambda: os.statvfs("/mnt/scratch").f_flag)
''')
    assert out["write"] == ["ok", 1]
    assert (tree / "scratch" / "made-inside.txt").read_text() == "x"
    flags = out["statvfs"][1]
    assert flags & os.ST_NOSUID and flags & os.ST_NODEV and flags & os.ST_NOEXEC


SET_ID = r'''
import shutil, tempfile
SCRATCH = tempfile.mkdtemp(prefix="set-id-", dir="/mnt/scratch")
out["scratch"] = os.path.basename(SCRATCH)
def mode(path):
    return oct(os.stat(path).st_mode & 0o7777)
def fchmodat2(path, bits):   # 452 on x86_64 and aarch64; AT_FDCWD
    long = ctypes.c_long
    return c_call("syscall", long(452), long(-100), path.encode(), long(bits), long(0))
write(SCRATCH + "/made")
out["chmod"] = attempt(lambda: os.chmod(SCRATCH + "/made", 0o4755))
out["chmod setgid"] = attempt(lambda: os.chmod(SCRATCH + "/made", 0o2755))
out["fchmod"] = attempt(lambda: os.fchmod(os.open(SCRATCH + "/made", os.O_RDONLY), 0o6755))
out["fchmodat2"] = attempt(lambda: fchmodat2(SCRATCH + "/made", 0o4755))
out["os.open"] = attempt(lambda: os.close(os.open(SCRATCH + "/created", os.O_CREAT | os.O_WRONLY, 0o4755)))
out["mkdir"] = attempt(lambda: os.mkdir(SCRATCH + "/dir", 0o2755))
out["xattr"] = attempt(lambda: os.setxattr(SCRATCH + "/made", "security.capability",
                                           b"\x00\x00\x00\x02" + b"\xff" * 16))
out["copy"] = attempt(lambda: shutil.copy("/mnt/scratch/host-tool", SCRATCH + "/copied"))
out["plain chmod"] = attempt(lambda: os.chmod(SCRATCH + "/made", 0o755))
out["plain open"] = attempt(lambda: os.close(os.open(SCRATCH + "/plain", os.O_CREAT | os.O_WRONLY, 0o644)))
out["plain mkdir"] = attempt(lambda: os.mkdir(SCRATCH + "/plain-dir", 0o700))
out["modes"] = [mode(SCRATCH + "/made"), mode(SCRATCH + "/plain"), mode(SCRATCH + "/plain-dir")]
out["setfcap_bounding"] = libc.prctl(23, 31, 0, 0, 0)   # PR_CAPBSET_READ, CAP_SETFCAP: 1 if held
try:   # Landlock keeps /proc unreadable
    for line in open("/proc/self/status"):
        if line.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb")):
            out[line.split(":")[0]] = int(line.split()[1], 16)
except OSError:
    pass
'''


def test_no_set_id_file_reaches_the_host_through_a_rw_mount(runner, tree):
    """Seccomp refuses every set-user-id and set-group-id mode, whatever the path: the host
    finds none in the rw mount. The sandbox holds no capability, so no file capability either."""
    host_tool = tree / "scratch" / "host-tool"    # a set-user-id file the host put there
    host_tool.write_text("#!/bin/sh\n")
    host_tool.chmod(0o4755)
    out = probe(runner, SET_ID)
    for name in ("chmod", "chmod setgid", "fchmod", "fchmodat2", "os.open", "mkdir", "copy"):
        assert out[name][0] == "EPERM", (name, out[name])
    assert out["xattr"][0] in ("ENOSYS", "EPERM", "EACCES"), out["xattr"]
    assert {out[name][0] for name in ("plain chmod", "plain open", "plain mkdir")} == {"ok"}
    assert out["modes"] == ["0o755", "0o644", "0o700"]
    assert out["setfcap_bounding"] == 0
    assert out.get("CapEff", 0) == out.get("CapPrm", 0) == out.get("CapBnd", 0) == out.get("CapAmb", 0) == 0
    set_id = [str(path) for path in (tree / "scratch").rglob("*")
              if path != host_tool and path.lstat().st_mode & (stat.S_ISUID | stat.S_ISGID)]
    assert set_id == []
    assert (tree / "scratch" / out["scratch"] / "made").exists()


def test_without_seccomp_the_report_says_what_a_rw_mount_opens(tmp_path):
    scratch = tmp_path.resolve() / "scratch"
    scratch.mkdir()
    runner = SyncRunner(pool_size=0, filesystem=True, disabled_layers=frozenset({"seccomp"}),
                        mounts=(Mount(str(scratch), "/scratch", True),))
    try:
        seccomp = runner.layers()["seccomp"]
    finally:
        runner.close()
    assert not seccomp["active"]
    assert "set-user-id file in an rw SANDBOX_MOUNTS directory" in seccomp["detail"]


ESCAPES = ("/data/absolute", "/data/relative", "/data/../secret", "/data/etc/passwd", "/mnt/scratch/../../secret")


def test_symbolic_links_and_dotdot_resolve_inside_the_sandbox(runner):
    out = probe(runner, f"ESCAPES = {ESCAPES!r}\n" + '''
for name in ESCAPES:
    out[name] = attempt(lambda: read(name))
out["symlink_made"] = attempt(lambda: os.symlink("/", "/mnt/scratch/root-link"))
out["through_it"] = attempt(lambda: sorted(os.listdir("/mnt/scratch/root-link")))
out["root"] = attempt(lambda: sorted(os.listdir("/")))
''')
    for name in ESCAPES:
        assert out[name][0] in ("ENOENT", "EACCES"), (name, out[name])
    assert HOST_SECRET not in json.dumps(out)
    assert out["through_it"] == out["root"]   # the sandbox's own root (or Landlock's refusal), not the host's


def test_hard_links_cross_no_mount(runner, tree):
    (tree / "scratch" / "beside").write_text("x")
    out = probe(runner, f'''
out["ro_to_rw"] = attempt(lambda: os.link("/data/f.txt", "/mnt/scratch/linked"))
out["tmp_to_rw"] = attempt(lambda: (write("/tmp/mine"), os.link("/tmp/mine", "/mnt/scratch/linked2")))
out["host_path"] = attempt(lambda: os.link({str(tree / "secret")!r}, "/mnt/scratch/linked3"))
out["python_file"] = attempt(lambda: os.link(os.__file__, "/mnt/scratch/linked6"))
fd = os.open("/data/f.txt", os.O_PATH)
out["empty_path"] = attempt(lambda: c_call("linkat", fd, b"", -100, b"/mnt/scratch/linked4", 0x1000))
out["proc_fd"] = attempt(lambda: c_call("linkat", -100, f"/proc/self/fd/{{fd}}".encode(), -100,
                                         b"/mnt/scratch/linked5", 0x400))
''')
    for name, (outcome, _) in out.items():
        assert outcome in ("EXDEV", "ENOENT", "EPERM", "EACCES"), (name, outcome)
    assert not [p.name for p in (tree / "scratch").iterdir() if p.name.startswith("linked")]


def test_o_path_file_handles_and_mount_calls_lead_nowhere(runner):
    out = probe(runner, '''
fd = os.open("/data", os.O_PATH | os.O_DIRECTORY)
out["parent"] = attempt(lambda: sorted(os.listdir(os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd))))
out["root"] = attempt(lambda: sorted(os.listdir("/")))
out["reopen"] = attempt(lambda: os.readlink(f"/proc/self/fd/{fd}"))
handle = ctypes.create_string_buffer(8 + 128)
ctypes.memmove(handle, (128).to_bytes(4, "little"), 4)
mount_id = ctypes.c_int()
out["name_to_handle"] = attempt(lambda: c_call("name_to_handle_at", -100, b"/data/f.txt", handle,
                                               ctypes.byref(mount_id), 0))
out["open_by_handle"] = attempt(lambda: c_call("open_by_handle_at", fd, handle, 0))
out["bind"] = attempt(lambda: c_call("mount", b"/data", b"/mnt/scratch", None, 4096, None))
out["remount_rw"] = attempt(lambda: c_call("mount", None, b"/data", None, 32 | 4096, None))
out["umount"] = attempt(lambda: c_call("umount2", b"/data", 2))
out["write_after"] = attempt(lambda: write("/data/new"))
''')
    assert out["parent"] == out["root"], out   # the sandbox's root, never the host directory's parent
    assert out["open_by_handle"][0] != "ok", out
    for name in ("bind", "remount_rw", "umount"):
        assert out[name][0] in ("EPERM", "ENOSYS", "EACCES"), (name, out[name])
    assert out["write_after"][0] in ("EROFS", "EACCES")


def test_nothing_shows_the_hosts_path(runner, tree):
    """/proc/self/mounts, mountstats and fd links name the sandbox's paths only. mountinfo's
    root column is the mount's path inside its filesystem (the kernel's, for any bind
    mount): Landlock keeps /proc unreadable, so with it nothing there shows the host."""
    out = probe(runner, '''
for name in ("/proc/self/mountinfo", "/proc/self/mounts", "/proc/1/mountinfo", "/proc/self/mountstats"):
    out[name] = attempt(lambda: read(name))
out["fd_link"] = attempt(lambda: os.readlink(f"/proc/self/fd/{os.open('/data', os.O_RDONLY)}"))
''')
    if "landlock" in runner.layers() and not runner.layers()["landlock"]["active"]:
        out = {name: value for name, value in out.items() if not name.endswith("/mountinfo")}
        assert out["/proc/self/mounts"][0] == "ok" and " /data " in out["/proc/self/mounts"][1]
        assert out["fd_link"] == ["ok", "/data"]
    assert str(tree) not in json.dumps(out)


def test_a_directory_swapped_on_the_host_after_start_is_never_mounted(tmp_path):
    base = tmp_path.resolve()
    data = base / "data"
    data.mkdir()
    (data / "which").write_text("original")
    runner = SyncRunner(pool_size=0, mounts=(Mount(str(data), "/data"),))
    try:
        assert runner.run("result = open('/data/which').read()", restricted=False)["result"] == "original"
        data.rename(base / "moved")
        (base / "impostor").mkdir()
        (base / "impostor" / "which").write_text("impostor")
        (base / "impostor").rename(data)
        reply = runner.run("result = open('/data/which').read()", restricted=False)
        assert not reply["success"] and reply.get("result") != "impostor", reply
    finally:
        runner.close()
