"""The declared messages of wire/messages.py: a misspelt field fails where the message is
built, and decoding what a child sends checks every key, type and size before use."""

import pytest

from sandbox.wire import messages, protocol
from sandbox.wire.messages import ChildOrder, RunOrder, RunRequest

REQUEST = RunRequest(code="x = 1", timeout=2.5, memory_limit=64 << 20, allowed_modules=("math", "re"))
TOOL_CALL = {"kind": "tool_call", "nonce": "n" * 32, "call_id": 1, "server": "s", "tool": "t", "arguments": {}}


def test_a_misspelt_field_fails_at_construction():
    with pytest.raises(TypeError):
        RunRequest(code="", timeout=1, memory_limt=1, allowed_modules=())


def test_orders_cross_the_wire_unchanged():
    order = ChildOrder(op="execute", nonce="abc", session=True, request=REQUEST)
    frame = protocol.decode(protocol.dumps(order.to_frame()))
    assert ChildOrder.from_frame(frame) == order
    run = RunOrder(op="validate", id="r1", run=REQUEST, session="s1")
    assert RunOrder.from_frame(protocol.decode(protocol.dumps(run.to_frame()))) == run


def test_the_child_order_stays_one_flat_object():
    frame = ChildOrder(op="execute", nonce="abc", session=False, request=REQUEST).to_frame()
    assert frame == {"code": "x = 1", "timeout": 2.5, "memory_limit": 64 << 20, "allowed_modules": ["math", "re"],
                     "restricted": True, "capture_output": True, "max_output": 1 << 20,
                     "op": "execute", "nonce": "abc", "session": False}


@pytest.mark.parametrize("change", [
    {"timeuot": 3},                      # an unknown key
    {"timeout": "3"},                    # a number as text
    {"memory_limit": 1.5},               # a float where an int is declared
    {"memory_limit": True},              # a bool is not an int here
    {"allowed_modules": "math"},         # a string where a list of names is declared
    {"allowed_modules": ["math", 1]},
    {"files": []},
])
def test_a_request_with_a_wrong_field_is_refused(change):
    frame = {**REQUEST.to_frame(), **change}
    with pytest.raises(protocol.FrameError):
        RunRequest.from_frame(frame)


def test_a_request_lacking_a_required_field_is_refused():
    frame = REQUEST.to_frame()
    del frame["code"]
    with pytest.raises(protocol.FrameError, match="code"):
        RunRequest.from_frame(frame)


def test_the_childs_small_frames_are_checked_in_full():
    assert messages.child_frame({"kind": "ready"}) == messages.Ready()
    assert messages.child_frame(TOOL_CALL).server == "s"
    refused = [
        {"kind": "ready", "extra": 1},
        {"kind": "setup_error", "layer": "seccomp"},
        {"kind": "setup_error", "layer": "x" * 65, "error": ""},
        {**TOOL_CALL, "call_id": True},
        {**TOOL_CALL, "call_id": "1"},
        {**TOOL_CALL, "server": "s" * 201},
        {**TOOL_CALL, "arguments": []},
        {**TOOL_CALL, "sneaked": 1},
        {"kind": "nonsense"},
        [],
    ]
    for frame in refused:
        with pytest.raises(protocol.FrameError):
            messages.child_frame(frame) if isinstance(frame, dict) else messages.decode(messages.Ready, frame, "x")


def test_control_messages_are_decoded_by_their_op():
    assert messages.control_message({"op": "cancel", "id": "r1"}, messages.TO_FORK_SERVER) == messages.Cancel(id="r1")
    assert messages.control_message({"id": "r1", "result": {"ok": True}}, messages.TO_RUNNER) == \
        messages.Answer(id="r1", result={"ok": True})
    hello = messages.Hello(pid=7, layers={"seccomp": {"active": True}}, active=("seccomp",))
    assert messages.control_message(protocol.decode(protocol.dumps(hello.to_frame())), messages.TO_RUNNER) == hello
    for body, table in (({"op": "cancle", "id": "r1"}, messages.TO_FORK_SERVER),   # an op nobody declared
                        ({"op": "output", "id": "r1"}, messages.TO_RUNNER),       # a field missing
                        ({"op": "hello"}, messages.TO_FORK_SERVER),               # the other direction's op
                        ("hello", messages.TO_RUNNER)):
        with pytest.raises(protocol.FrameError):
            messages.control_message(body, table)


RESULT = {"kind": "result", "nonce": "n" * 32, "success": True, "variables": ["x"],
          "sections": [{"kind": "result", "size": 2}]}


def test_the_result_frame_is_a_declared_message():
    frame = messages.result_frame(RESULT, "execute")
    assert frame == messages.ExecuteResult(nonce="n" * 32, success=True, variables=("x",),
                                           sections=({"kind": "result", "size": 2},))
    assert messages.result_frame(frame.to_frame(), "execute") == frame
    report = {"kind": "result", "nonce": "n", "validation": {"valid": True}, "analysis": {}, "recommendations": ["a"]}
    assert messages.result_frame(report, "validate").recommendations == ("a",)


@pytest.mark.parametrize("change", [
    {"sneaked": 1},                       # an unknown key
    {"success": 1},                       # an int is not a bool
    {"line": True},                       # a bool is not an int here
    {"line": "3"},
    {"result_bytes": 1.5},
    {"variables": "x"},                   # a string where a list of names is declared
    {"variables": [["x"]]},
    {"security_events": [["kind"]]},      # events are objects
    {"sections": "nope"},
    {"files_refused": ["out/a"]},
    {"session_over": True},               # not a field of the frame
    {"nonce": "n" * 65},                  # longer than its cap
    {"error_type": "e" * 65},
    {"validation": {}},                   # a validation's field in an execution's frame
])
def test_a_result_frame_with_a_wrong_field_is_refused(change):
    with pytest.raises(protocol.FrameError):
        messages.result_frame({**RESULT, **change}, "execute")


def test_a_result_frame_lacking_success_is_refused():
    with pytest.raises(protocol.FrameError, match="success"):
        messages.result_frame({"kind": "result", "nonce": "n"}, "execute")
    with pytest.raises(protocol.FrameError):
        messages.result_frame({"kind": "result", "validation": [], "analysis": {}}, "validate")


def test_whether_a_session_ended_is_a_field_of_the_answer_not_of_the_result():
    answer = messages.Answer(id="r1", result={"success": True}, session_ended=True, session_end_reason="threads")
    frame = protocol.decode(protocol.dumps(answer.to_frame()))
    assert frame["result"] == {"success": True}
    assert messages.control_message(frame, messages.TO_RUNNER) == answer
    with pytest.raises(protocol.FrameError):
        messages.control_message({**frame, "session_ended": 1}, messages.TO_RUNNER)
