"""The answer as a model reads it, piece by piece: the head-and-tail cut (bytes as they
stream in, and the result's repr), the text block, the tool description."""

from __future__ import annotations

import pytest

from sandbox.mcp import content_blocks
from sandbox.namespaces import PROXY_URL
from sandbox.wire import cutting
from sandbox import network_allow as policy
from sandbox.wire.terminal_text import terminal_safe
from sandbox.config import Settings
from sandbox.mcp.descriptions import execute_description


def test_head_tail_keeps_both_ends_and_counts_the_rest():
    kept = cutting.HeadTail(260)  # 100 bytes kept, 160 for the marker
    for _ in range(1000):
        kept.feed(b"0123456789")
    text = kept.text()
    assert kept.truncated and kept.total == 10000 and len(text) <= 260
    assert text.startswith("0123456789" * 5) and text.endswith("0123456789" * 5)
    assert "[... 9,900 bytes left out here: print less" in text


def test_head_tail_small_output_is_untouched():
    kept = cutting.HeadTail(1000)
    kept.feed(b"hello\n")
    kept.feed(b"world\n")
    assert not kept.truncated and kept.text() == "hello\nworld\n"


def test_head_tail_never_splits_a_character():
    kept = cutting.HeadTail(171)  # 11 bytes kept
    kept.feed("é".encode() * 20)  # 2 bytes each: the cut falls inside one at both ends
    head, _, tail = kept.text().partition("\n[...")
    assert "\\x" not in head and "\\x" not in tail
    assert set(head) == {"é"} and set(tail.split("...]\n", 1)[1]) == {"é"}


def test_cut_text():
    assert cutting.cut_text("short", 10) == ("short", False)
    text, cut = cutting.cut_text("a" * 500 + "b" * 500, 180)
    assert cut and len(text) <= 180 and text.startswith("a" * 10) and text.endswith("b" * 10)
    assert "980 characters left out" in text


def test_a_cut_marker_names_out_only_where_the_run_has_it():
    for cut in (lambda out_dir: cutting.cut_text("x" * 5000, 500, out_dir)[0],
                lambda out_dir: _fed(cutting.HeadTail(500, out_dir=out_dir))):
        assert "out/" not in cut(False) and "return a smaller value" in cut(False)
        assert "under out/" in cut(True)


def _fed(kept) -> str:
    kept.feed(b"x" * 5000)
    return kept.text()


def text(**result):
    return content_blocks.execution_text({"success": True, **result}, max_timeout=300, max_memory=1 << 30)


def test_text_block_shapes():
    assert text(result=4) == "result: 4"
    assert text(stdout="hi\n", result={"a": [1, 2]}) == 'stdout:\nhi\nresult: {"a": [1, 2]}'
    assert text(result="two\nlines") == "result: \ntwo\nlines"
    assert text().startswith("ok (no output and no result")
    assert "1 figure returned" in text(images=[{"mime_type": "image/png"}])
    failure = content_blocks.execution_text({"success": False, "error_type": "memory_limit", "error": "MemoryError",
                                      "line": 2}, max_timeout=300, max_memory=1 << 30)
    assert failure == ("error (memory_limit, line 2): MemoryError\n"
                       "hint: use less memory (smaller data, generators), or pass a larger memory_limit (up to 1g)")


def test_the_text_block_shows_the_repr_and_a_whole_string_as_itself():
    def shown(value, repr_text):
        return content_blocks.execution_text({"success": True, "result": value}, repr_text, max_timeout=300, max_memory=1)
    assert shown([1, "a", None, [1, 2]], "(1, 'a', None, {1, 2})") == "result: (1, 'a', None, {1, 2})"
    assert shown("1.5", "Decimal('1.5')") == "result: Decimal('1.5')"
    assert shown("two\nlines", repr("two\nlines")) == "result: \ntwo\nlines"
    assert shown("'RR\n[... 9 characters left out here ...]\nRR'", "'RR\n[... 9 characters left out here ...]\nRR'") \
        .startswith("result: \n'RR")


def test_description_says_what_runs_what_is_refused_where_files_go_and_the_limits():
    basic = execute_description(Settings(), proxy_url=PROXY_URL)
    assert "fresh process" in basic and "create_session" in basic and "data science:" not in basic
    assert "keep 32k" in basic and "max 300" in basic and "No network." in basic
    assert "scratch directory" in basic and "Refused (write instead)" in basic and "__init_subclass__" in basic
    assert "get_sandbox_info" in basic
    with_ds = execute_description(Settings(enable_data_science=True, enable_filesystem=True), proxy_url=PROXY_URL)
    if "numpy" in with_ds and "pandas" in with_ds:  # the libraries are installed here
        assert "data science: " in with_ds and "matplotlib" in with_ds
    assert "under out/" in with_ds and "`files`" in with_ds and "scratch directory" not in with_ds
    assert "Refused" not in execute_description(Settings(restricted_python=False), proxy_url=PROXY_URL)
    without_mounts = execute_description(Settings(), scratch=False, proxy_url=PROXY_URL)   # no mount namespace: no private /tmp
    assert "scratch directory" not in without_mounts
    assert "open() is refused" in without_mounts and "io.StringIO" in without_mounts
    assert "session_id" not in execute_description(Settings(max_sessions=0), proxy_url=PROXY_URL)


EVERY_PROFILE = dict(enable_data_science=True, enable_network=True, enable_filesystem=True)


@pytest.mark.parametrize("settings", [
    Settings(), Settings(**EVERY_PROFILE), Settings(restricted_python=False),
    Settings(**EVERY_PROFILE, extra_imports=("seaborn", "sklearn"),
             network_policy=policy.parse(",".join(f"host{n}.example.com" for n in range(40)))),
    # the longest lists still named in full, and the largest numbers the settings accept
    Settings(**EVERY_PROFILE, extra_imports=("seaborn", "sklearn", "statsmodels", "plotly", "bokeh", "tqdm"),
             network_policy=policy.parse("a.example.com,b.example.com,.example.org"),
             timeout=86400, max_timeout=86400, file_ttl=86400, network_max_connections=10000,
             max_memory_limit=1 << 40, default_memory_limit=1 << 40),
], ids=["basic", "every-profile", "python-layer-off", "long-lists", "longest-in-full"])
def test_the_description_is_at_most_1200_characters(settings):
    description = execute_description(settings, proxy_url=PROXY_URL)
    assert len(description) <= 1200, (len(description), description)
    assert description == description.strip() and "  " not in description and "\n" not in description


def test_a_long_allow_list_is_named_by_its_setting_in_the_description():
    hosts = ",".join(f"host{n}.example.com" for n in range(40))
    description = execute_description(Settings(enable_network=True, network_policy=policy.parse(hosts)), proxy_url=PROXY_URL)
    assert "host39" not in description and "SANDBOX_NETWORK_ALLOW" in description


def test_a_runtime_error_gets_a_hint_where_one_is_known():
    def failure(error, **extra):
        return content_blocks.execution_text({"success": False, "error_type": "runtime_error", "error": error, **extra},
                                      max_timeout=300, max_memory=1 << 30)
    assert "each call starts fresh" in failure("NameError: name 'df' is not defined")
    assert "each call starts fresh" not in failure("NameError: name 'df' is not defined", session_id="sess_x")
    assert "sys.exit(0) or reaching the end is success" in failure("SystemExit: 3")
    assert "hint" not in failure("ZeroDivisionError: division by zero")


def test_every_error_type_but_runtime_error_has_a_hint():
    from sandbox.wire import protocol
    assert set(content_blocks.HINTS) == set(protocol.ERROR_TYPES) - {"runtime_error"}


def test_terminal_controls_in_the_text_block_are_written_as_escapes():
    """A CLI client prints the text block in the user's terminal: a snippet's ESC sequences
    (window title, OSC 52 clipboard write, screen clear) and bidi overrides must not act
    there. They are written as escapes the model can still read; newlines and tabs stay."""
    printed = "\x1b]0;pwned\x07\x1b[31mred\u202eevil\x1b]52;c;ZWNobyBwd25lZA==\x07\r\nnext\tcolumn\rover\x9b"
    text = terminal_safe(printed)
    assert text == ("\\x1b]0;pwned\\x07\\x1b[31mred\\u202eevil\\x1b]52;c;ZWNobyBwd25lZA==\\x07\nnext\tcolumn"
                    "\\rover\\x9b")
    assert terminal_safe("é 中 א ✓\n") == "é 中 א ✓\n"


def test_the_servers_text_blocks_go_through_it():
    from sandbox.mcp.content_blocks import tool_result
    result = tool_result({"stdout": "\x1b[2J"}, text="stdout:\n\x1b[2J\u2066")
    assert result.content[0].text == "stdout:\n\\x1b[2J\\u2066"
    assert result.structured_content == {"stdout": "\x1b[2J"}        # the data stays as it was
    assert "\x1b" not in tool_result({"note": "\x1b]52;c;x\x07"}).content[0].text


def test_the_sandbox_summary_stays_within_1500_characters_whatever_the_configuration():
    """get_sandbox_info's text: the first lines, the modules in the room left, the rest
    while it fits, and always the pointer to detail=true."""
    from sandbox.mcp import info_summary
    many = [f"package{n}.module{n}" for n in range(400)]
    info = {
        "server": {"name": "mcp-server-python-sandbox", "version": "9" * 40},
        "restricted_python": True,
        "profiles": {name: {"enabled": False, "switch": f"SANDBOX_ENABLE_{name.upper()}" * 3, "detail": "x" * 900}
                     for name in ("data_science", "network", "filesystem")} | {"basic": {"enabled": True}},
        "layers": {f"layer{n}": {"active": n % 2 == 0, "detail": "why " * 100} for n in range(12)},
        "limits": {"timeout": {"default": 86400, "max": 86400}, "memory_limit": {"default": "1t", "max": "1t"},
                   "max_output_size": 64 << 20, "max_code_size": 16 << 20, "max_concurrency": 512},
        "sessions": {"open": 100, "max_sessions": 100},
        "allowed_modules": many,
        "module_subsets": {name: [] for name in many[:100]},
        "weakened_by": [{"setting": f"SANDBOX_{n}", "value": "v" * 50} for n in range(20)],
        "tool_stubs": [f"tools.server{n}.tool{n}(argument: str)" for n in range(200)],
    }
    text = info_summary.summary(info)
    assert len(text) <= 1500, len(text)
    assert "importable: package0.module0" in text and " more" in text and text.endswith(info_summary.POINTER)
    small = info_summary.summary({**info, "allowed_modules": ["json", "math"], "module_subsets": {},
                                  "weakened_by": [], "tool_stubs": []})
    assert "importable: json, math\n" in small
    mounted = info_summary.summary({**info, "allowed_modules": ["json"], "module_subsets": {}, "weakened_by": [],
                                    "tool_stubs": [], "mounts": [{"path": "/data", "mode": "ro"}]})
    assert "mounted host directories: /data (ro)\n" in mounted


def test_a_sessions_memory_and_kept_state_are_said_at_a_glance():
    memory = {"resident_bytes": 160 << 20, "headroom_bytes": 120 << 20}
    kept = {"success": False, "error_type": "timeout", "error": "interrupted", "session_id": "sess_x",
            "session_memory": memory}
    text = content_blocks.execution_text(kept, max_timeout=60, max_memory=1 << 30)
    assert "session memory: 160 MiB, 120 MiB left before its limit" in text
    assert content_blocks.SESSION_KEPT in text and content_blocks.SESSION_ENDED not in text
    ended = {**kept, "session_ended": True, "session_memory": None}
    text = content_blocks.execution_text(ended, max_timeout=60, max_memory=1 << 30)
    assert content_blocks.SESSION_ENDED in text and "session memory" not in text
    unlimited = content_blocks.session_memory_line({"resident_bytes": 5 << 20, "headroom_bytes": None})
    assert unlimited == "session memory: 5 MiB"
