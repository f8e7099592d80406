"""The result value on its way to the model: its JSON form and its repr, made in the
child, held to one cap with one marker, and checked by the parent before it is decoded."""

from __future__ import annotations

import json
import re

from sandbox.child import _result_frame
from sandbox.forkserver.child_report import check_execute_frame
from sandbox.restricted.json_value import reported_value
from sandbox.wire import cutting, protocol

CAP = 32 << 10
MARKER = re.compile(r"left out here|truncated")


def checked(value, cap: int = CAP, out_dir: bool = False) -> dict:
    """`value` as a run reports it, through the child's frame and the parent's check."""
    reply = {"kind": "result", "success": True, "error_type": None, **reported_value(value)}
    header, payload = protocol.split_sectioned(_result_frame(reply, [], [], cap, out_dir)[protocol.HEADER.size:])
    result = check_execute_frame(header, bytes(payload), cap)
    assert isinstance(result, dict), result
    return result


def test_the_repr_is_what_python_shows_and_the_result_stays_json():
    result = checked((1, "a", None, {1, 2}))
    assert result["result"] == [1, "a", None, [1, 2]]
    assert result["result_repr"] == "(1, 'a', None, {1, 2})"
    assert not result.get("result_truncated")


def test_a_ten_megabyte_string_is_cut_once_at_the_stated_cap():
    result = checked("S" * (10 << 20) + "END")
    assert result["result_truncated"]
    assert result["result"] == result["result_repr"]   # the repr stands for a value over the cap
    assert len(result["result"].encode()) <= CAP and len(result["result"]) > CAP - 200
    assert len(MARKER.findall(result["result"])) == 1
    assert result["result"].startswith("'SSS") and result["result"].endswith("END'")
    assert "10,4" in result["result"]   # about 10,4xx,xxx characters left out


def test_a_string_the_json_copy_would_cut_comes_whole_where_the_cap_allows():
    big = "é" * 150_000   # over the JSON copy's own string bound, within a 1 MiB cap
    result = checked(big, cap=1 << 20)
    assert result["result"] == repr(big) and not result.get("result_truncated")


def test_wide_characters_are_cut_to_bytes_not_characters():
    text, cut = cutting.fit_text("界" * 50_000, 4096)
    assert cut and len(text.encode()) <= 4096 and len(MARKER.findall(text)) == 1


def test_the_cut_marker_names_out_only_with_the_filesystem_profile():
    assert "out/" not in checked("x" * 100_000)["result"]
    assert "under out/" in checked("x" * 100_000, out_dir=True)["result"]


def _frame(sections: list[tuple[dict, bytes]]) -> tuple[dict, bytes]:
    header = {"kind": "result", "success": True, "sections": [s for s, _ in sections]}
    return header, b"".join(data for _, data in sections)


def test_the_parent_checks_the_repr_before_decoding_it():
    repr_of = lambda data: {"kind": "repr", "size": len(data)}  # noqa: E731
    assert "larger than the output limit" in check_execute_frame(*_frame([(repr_of(b"x" * 2000), b"x" * 2000)]), 1000)
    assert "more than one repr" in check_execute_frame(*_frame([(repr_of(b"a"), b"a"), (repr_of(b"b"), b"b")]))
    assert "not UTF-8" in check_execute_frame(*_frame([(repr_of(b"\xff\xfe"), b"\xff\xfe")]))
    ok = check_execute_frame(*_frame([({"kind": "result", "size": 1}, b"4"), (repr_of(b"4"), b"4")]))
    assert ok["result"] == 4 and ok["result_repr"] == "4"


def test_a_failing_repr_becomes_a_placeholder():
    class Bad:
        def __repr__(self):
            raise ValueError("no")
    assert reported_value(Bad())["result_repr"] == "<unrepresentable Bad: ValueError>"
    assert json.loads(json.dumps(reported_value([Bad()])["result"])) == ["<unrepresentable Bad: ValueError>"]
