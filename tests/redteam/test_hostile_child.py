"""The parent trusts nothing the child says. With RestrictedPython off the snippet
is the child: it can find the request's nonce in its own frames and write any
bytes into the result pipe. Each family of a hostile child's replies is tried here
against the fork server directly, and the frame checks on their own:

* frames: a result frame bigger than the limits allow, or a small one whose
  header hides a nested-list bomb, is refused before it is decoded in full, fast,
  and the next execution runs normally;
* artifacts: paths outside out/, control and bidi characters, non-PNG images,
  sizes that do not add up; a failure while collecting artifacts is reported;
* lifetime: a forged early reply followed by a busy loop ends the snippet before
  the answer comes back; nothing of it is left running.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runner_harness import SyncRunner, descendants  # noqa: E402
from slowness import scaled  # noqa: E402

from sandbox.forkserver import child_report
from sandbox.wire import protocol

FORGE = r"""
import sys, os, json, struct
f = sys._getframe()
nonce = None
while f is not None and nonce is None:
    order = f.f_locals.get("order")       # the child's ChildOrder, read from its request
    nonce = getattr(order, "nonce", None)
    f = f.f_back
assert nonce, "no nonce found"
def frame(header, sections=b""):
    head = json.dumps(header).encode()
    body = struct.pack(">I", len(head)) + head + sections
    return struct.pack(">I", len(body)) + body
def send(data):
    view = memoryview(data)
    while view:
        view = view[os.write(4, view):]
ok = {"kind": "result", "nonce": nonce, "success": True, "error_type": None, "variables": []}
"""


@pytest.fixture(scope="module")
def runner():
    r = SyncRunner(filesystem=True, max_output=64 << 10, max_timeout=300)
    yield r
    r.close()


def forged(runner, body: str, **kw) -> tuple[dict, float]:
    started = time.monotonic()
    answer = runner.run(FORGE + body, restricted=False, **kw)
    return answer, time.monotonic() - started


def still_fine(runner):
    answer = runner.run("result = 6 * 7")
    assert answer["success"] and answer["result"] == 42, answer


# ---------------------------------------------------------------- frames

def test_oversized_result_section_is_refused_before_decoding(runner):
    # 32 MB of nested lists, declared honestly: over the frame cap (about 24.3 MiB for a
    # 64 KiB output limit: header, result, images and files together)
    body = ("bomb = b'[' + b'[0,[1,[2]]],' * ((32 << 20) // 12) + b'0]'\n"
            "send(frame({**ok, 'sections': [{'kind': 'result', 'size': len(bomb)}]}, bomb))\n"
            "os._exit(0)\n")
    answer, elapsed = forged(runner, body, timeout=scaled(20))
    assert answer["error_type"] == "internal_error" and "cap" in answer["error"], answer
    assert len(json.dumps(answer)) < 100_000
    assert elapsed < scaled(10), elapsed  # refused on its declared size, not parsed
    still_fine(runner)


@pytest.mark.parametrize("count", ["40000", "(21 << 20) // 2"])
def test_result_section_over_the_output_limit_is_refused(runner, count):
    body = (f"big = b'[' + b'0,' * ({count}) + b'0]'\n"  # 80 KB or 21 MB of JSON, output limit 64 KiB
            "send(frame({**ok, 'sections': [{'kind': 'result', 'size': len(big)}]}, big))\n"
            "os._exit(0)\n")
    answer, _ = forged(runner, body)
    assert answer["error_type"] == "internal_error" and "output limit" in answer["error"], answer["error"]
    still_fine(runner)


def test_bomb_in_the_header_is_refused(runner):
    body = ("send(frame({**ok, 'variables': [[[[0]]]] * 200000, 'sections': []}))\nos._exit(0)\n")
    answer, elapsed = forged(runner, body, timeout=scaled(20))
    assert answer["error_type"] == "internal_error", answer
    assert elapsed < scaled(10)
    still_fine(runner)


def test_deeply_nested_result_within_the_cap_is_refused(runner):
    body = ("deep = b'[' * 5000 + b']' * 5000\n"
            "send(frame({**ok, 'sections': [{'kind': 'result', 'size': len(deep)}]}, deep))\nos._exit(0)\n")
    answer, _ = forged(runner, body)
    assert answer["error_type"] == "internal_error", answer
    still_fine(runner)


def test_sizes_that_do_not_add_up_are_refused(runner):
    body = ("send(frame({**ok, 'sections': [{'kind': 'result', 'size': 1}]}, b'42'))\nos._exit(0)\n")
    answer, _ = forged(runner, body)
    assert answer["error_type"] == "internal_error" and "add up" in answer["error"], answer
    still_fine(runner)


def test_a_header_off_its_declared_type_is_refused(runner):
    """The result frame's header is a declared message: an unknown key, or a bool where
    an int is declared, is refused whole (the child is killed for it)."""
    for change in ("'sneaked': 1", "'line': True"):
        body = f"send(frame({{**ok, {change}, 'sections': [{{'kind': 'result', 'size': 2}}]}}, b'42'))\nos._exit(0)\n"
        answer, _ = forged(runner, body)
        assert answer["error_type"] == "internal_error" and "result frame" in answer["error"], answer
        assert answer["result"] is None, answer
    still_fine(runner)


def test_honest_result_frame_of_a_forger_is_only_what_the_child_says(runner):
    body = ("send(frame({**ok, 'sections': [{'kind': 'result', 'size': 4}]}, b'1234'))\nos._exit(0)\n")
    answer, _ = forged(runner, body)
    assert answer["success"] and answer["result"] == 1234, answer


# ---------------------------------------------------------------- lifetime

def cpu_ticks(pids) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total


def test_forged_early_reply_does_not_outlive_its_answer(runner):
    """A forged result followed by a busy loop: the answer comes only once the
    snippet is gone, so a concurrency slot is never freed while it still runs."""
    body = ("send(frame({**ok, 'sections': [{'kind': 'result', 'size': 2}]}, b'17'))\n"
            "while True:\n    pass\n")
    for _ in range(4):
        answer, elapsed = forged(runner, body, timeout=scaled(20))
        assert answer["success"] and answer["result"] == 17, answer
        assert elapsed < scaled(5), elapsed  # killed when the result arrived, not at the timeout
    fork_server = runner.runner.fork_server_pid()
    pids = descendants(fork_server)
    before = cpu_ticks(pids)
    time.sleep(1.0)
    spent = cpu_ticks(pids) - before
    assert spent <= 10, f"sandbox processes still burn CPU after their answers: {spent} ticks in 1 s"


def test_garbage_kills_the_writer_at_once(runner):
    answer, elapsed = forged(runner, "os.write(4, b'\\xff' * 64)\nwhile True:\n    pass\n", timeout=scaled(20))
    assert answer["error_type"] == "internal_error", answer
    assert elapsed < scaled(5), elapsed


# ---------------------------------------------------------------- artifacts

@pytest.mark.parametrize("path", ["../etc/passwd", "/etc/passwd", "out/../../x", "out/a\u202egnp.exe",
                                  "out/a\x00b", "out/a\nb", "out//x", "out/./x", "x.csv", "out/" + "a" * 300,
                                  "out/a\\..\\b"])
def test_forged_file_paths_are_refused(runner, path):
    body = (f"data = b'hello'\nsend(frame({{**ok, 'sections': [{{'kind': 'result', 'size': 4}}, "
            f"{{'kind': 'file', 'path': {path!r}, 'size': 5}}]}}, b'null' + data))\nos._exit(0)\n")
    answer, _ = forged(runner, body)
    assert answer["error_type"] == "internal_error" and "path" in answer["error"], answer
    assert not answer.get("files")


def test_forged_images_must_be_png(runner):
    svg = "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"
    for mime, data in (("image/svg+xml", svg), ("image/png", svg)):
        body = (f"data = {data!r}.encode()\nsend(frame({{**ok, 'sections': [{{'kind': 'result', 'size': 4}}, "
                f"{{'kind': 'image', 'mime_type': {mime!r}, 'size': len(data)}}]}}, b'null' + data))\nos._exit(0)\n")
        answer, _ = forged(runner, body)
        assert answer["error_type"] == "internal_error" and "PNG" in answer["error"], answer


def test_child_security_events_are_labelled_as_the_sandboxs(runner):
    body = ("ev = [{'kind': 'seccomp_kill', 'detail': 'forged'}]\n"
            "send(frame({**ok, 'security_events': ev, 'sections': [{'kind': 'result', 'size': 4}]}, b'null'))\n"
            "os._exit(0)\n")
    answer, _ = forged(runner, body)
    assert answer["security_events"] == [{"kind": "seccomp_kill", "detail": "forged", "source": "sandbox"}]


def test_failure_while_collecting_artifacts_is_reported(runner):
    """A directory tree under out/ too deep to walk: the result stands, and the
    answer says why no files came back (never a silent drop)."""
    code = ("import os\nos.makedirs('out', exist_ok=True)\nos.chdir('out')\n"
            "for _ in range(1200):\n    os.mkdir('d')\n    os.chdir('d')\n"
            "open('f.txt', 'w').write('x')\nos.chdir('/workspace')\nresult = 5\n")
    answer = runner.run(code, restricted=False, timeout=20)
    assert answer["success"] and answer["result"] == 5, answer
    assert answer.get("artifacts_error"), answer


def test_real_files_and_figures_come_back_base64_encoded_by_the_parent(runner):
    code = ("import os\nos.makedirs('out/sub', exist_ok=True)\n"
            "open('out/sub/a.csv', 'w').write('x,y\\n1,2\\n')\nresult = 1\n")
    answer = runner.run(code, restricted=False)
    assert answer["success"], answer
    assert answer["files"] == [{"path": "out/sub/a.csv", "size": 8,
                                "base64": base64.b64encode(b"x,y\n1,2\n").decode()}]  # the runner's view


# ---------------------------------------------------------------- the checks on their own

def header(**extra):
    return {"kind": "result", "success": True, "error_type": None, **extra}


def png_header(width: int, height: int) -> bytes:
    """A PNG's signature and IHDR chunk (the CRC is not checked: nothing here decodes)."""
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 6, 0, 0, 0])
    return child_report.PNG_SIGNATURE + (13).to_bytes(4, "big") + b"IHDR" + ihdr + b"\0\0\0\0"


def test_check_execute_frame_unit():
    png = png_header(640, 480) + b"rest"
    good = child_report.check_execute_frame(
        header(sections=[{"kind": "result", "size": 2}, {"kind": "image", "mime_type": "image/png", "size": len(png)},
                         {"kind": "file", "path": "out/a.csv", "size": 3}]), b"42" + png + b"a,b", 100)
    assert good["result"] == 42 and good["images"][0]["base64"] == base64.b64encode(png).decode()
    assert good["files"] == [{"path": "out/a.csv", "size": 3, "base64": base64.b64encode(b"a,b").decode()}]
    bad = [
        (header(sections=[{"kind": "result", "size": 2}, {"kind": "result", "size": 2}]), b"4242"),
        (header(sections=[{"kind": "result", "size": True}]), b"4"),
        (header(sections=[{"kind": "exec", "size": 0}]), b""),
        (header(sections=[{"kind": "file", "path": "out/a", "size": 1}] * 2), b"ab"),
        (header(sections=[{"kind": "file", "path": f"out/{i}", "size": 0} for i in range(21)]), b""),
        (header(sections=[{"kind": "image", "mime_type": "image/png", "size": 1}] * 9), b"x" * 9),
        (header(sections=[{"kind": "result", "size": 3}]), b"\xff\xfe\x00"),
        (header(sections="nope"), b""),
        # a PNG that declares more pixels than a client may decode (a decompression bomb)
        (header(sections=[{"kind": "image", "mime_type": "image/png", "size": 33}]), png_header(30000, 30000)),
        (header(sections=[{"kind": "image", "mime_type": "image/png", "size": 33}]), png_header(10001, 1)),
        (header(sections=[{"kind": "image", "mime_type": "image/png", "size": 33}]), png_header(0, 10)),
    ]
    for frame, payload in bad:
        assert isinstance(child_report.check_execute_frame(frame, payload, 100), str), frame


def test_split_sectioned_refuses_bad_headers():
    with pytest.raises(protocol.FrameError):
        protocol.split_sectioned(b"\x00\x00")
    with pytest.raises(protocol.FrameError):
        protocol.split_sectioned(struct.pack(">I", 10) + b"{}")
    with pytest.raises(protocol.FrameError):
        protocol.split_sectioned(struct.pack(">I", protocol.MAX_RESULT_HEADER + 1) + b"x" * (300 << 10))
    with pytest.raises(protocol.FrameError):
        protocol.split_sectioned(struct.pack(">I", 2) + b"[]")
    assert protocol.split_sectioned(struct.pack(">I", 2) + b"{}" + b"rest")[0] == {}
