"""The stdio transport at its edges: input that ends before it starts."""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_client import server_command, server_env  # noqa: E402

CEILING = 600  # seconds: far past any start-up; only a server that never notices EOF reaches it


def test_stdin_at_dev_null_ends_the_server_cleanly():
    """epoll refuses /dev/null: the server reads its EOF another way and exits 0, with
    nothing on stdout (the MCP channel) and no traceback on stderr."""
    process = subprocess.run(server_command(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=server_env(), timeout=CEILING)
    assert process.returncode == 0, process.stderr.decode()[-2000:]
    assert process.stdout == b""
    assert b"Traceback" not in process.stderr, process.stderr.decode()[-2000:]
