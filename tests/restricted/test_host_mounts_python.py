"""The Python layer sees the operator's mounts (SANDBOX_MOUNTS) with their mode: open(),
os, os.path and pathlib read a read-only mount and refuse to write it, with a message
naming the mount (the filesystem profile hands out pathlib and io whole, and the kernel
refuses there); a read-write one is written with the filesystem profile; everything else
keeps the profile's reach."""

from __future__ import annotations

import pytest
from runner_harness import SyncRunner

from sandbox import profiles
from sandbox.host_mounts import Mount

HOST_SECRET = "host-secret-beside-the-mount"
BASIC = frozenset(profiles.allowed_modules(["basic"]))
FILESYSTEM = frozenset(profiles.allowed_modules(["basic", "filesystem"]))


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    base = tmp_path_factory.mktemp("mounts").resolve()
    (base / "data").mkdir()
    (base / "scratch").mkdir()
    (base / "scratch").chmod(0o1777)   # as root the sandbox writes as an unprivileged uid
    (base / "data" / "f.txt").write_text("hello")
    (base / "secret").write_text(HOST_SECRET)
    (base / "data" / "absolute").symlink_to(base / "secret")
    return base


@pytest.fixture(scope="module")
def scratch_profile(tree):
    runner = SyncRunner(mounts=(Mount(str(tree / "data"), "/data"),))
    yield lambda code: runner.run(code, allowed=BASIC)
    runner.close()


@pytest.fixture(scope="module")
def filesystem_profile(tree):
    runner = SyncRunner(filesystem=True, mounts=(Mount(str(tree / "data"), "/data"),
                                                 Mount(str(tree / "scratch"), "/mnt/scratch", True)))
    yield lambda code: runner.run(code, allowed=FILESYSTEM)
    runner.close()


READS = [
    "result = open('/data/f.txt').read()",
    "import os\nresult = [n for n in os.listdir('/data') if n == 'f.txt'][0] and open('/data/f.txt').read()",
    "import os\nresult = 'hello' if os.path.isfile('/data/f.txt') and os.stat('/data/f.txt').st_size == 5 else 'no'",
    "from pathlib import Path\nresult = Path('/data/f.txt').read_text()",
]
WRITES = [
    "open('/data/new.txt', 'w')",
    "open('/data/f.txt', 'a')",
    "open('/data/f.txt', 'r+')",
    "import os\nos.remove('/data/f.txt')",
    "import os\nos.mkdir('/data/d')",
    "import os\nos.rename('/data/f.txt', 'here.txt')",
    "from pathlib import Path\nPath('/data/new.txt').write_text('x')",
]


@pytest.mark.parametrize("code", READS)
def test_a_read_only_mount_is_read_without_the_filesystem_profile(scratch_profile, code):
    reply = scratch_profile(code)
    assert reply["success"] and reply["result"] == "hello", reply


@pytest.mark.parametrize("code", WRITES)
def test_a_read_only_mount_is_never_written(scratch_profile, filesystem_profile, tree, code):
    reply = scratch_profile(code)
    assert not reply["success"], reply
    assert "read-only mount" in reply["error"] and "/data" in reply["error"], reply["error"]
    # the filesystem profile hands out pathlib and io whole: the kernel's read-only mount answers there
    reply = filesystem_profile(code)
    assert not reply["success"], reply
    assert "read-only mount" in reply["error"] or "Read-only file system" in reply["error"], reply["error"]
    assert sorted(p.name for p in (tree / "data").iterdir()) == ["absolute", "f.txt"]


def test_outside_the_scratch_directory_and_the_mounts_nothing_opens(scratch_profile, tree):
    reply = scratch_profile("result = open('/etc/passwd').read()")
    assert not reply["success"] and "/data" in reply["error"]
    reply = scratch_profile("result = open('/data/absolute').read()")   # a link to the host's file
    assert not reply["success"] and HOST_SECRET not in str(reply)


def test_a_read_write_mount_is_written_with_the_filesystem_profile(filesystem_profile, tree):
    reply = filesystem_profile("from pathlib import Path\nPath('/mnt/scratch/out.txt').write_text('made')\n"
                               "result = open('/data/f.txt').read()")
    assert reply["success"] and reply["result"] == "hello", reply
    assert (tree / "scratch" / "out.txt").read_text() == "made"
