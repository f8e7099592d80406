"""A synchronous wrapper around the asyncio Runner, for tests that talk to
the fork server directly (no MCP in between)."""

from __future__ import annotations

import asyncio
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from sandbox import profiles  # noqa: E402
from sandbox.forkserver.runner import ExecRequest, Runner, RunnerConfig  # noqa: E402
from slowness import scaled  # noqa: E402

BASIC = profiles.allowed_modules(["basic"])
MiB = 1 << 20


class SyncRunner:
    def __init__(self, **config):
        config.setdefault("max_timeout", max(30, math.ceil(scaled(30))))
        config.setdefault("max_memory", 512 * MiB)
        # `make test` runs the suites with the warm pool on (default) and off
        config.setdefault("pool_size", int(os.environ.get("SANDBOX_TEST_POOL_SIZE", "2")))
        self.loop = asyncio.new_event_loop()
        self.runner = Runner(RunnerConfig(**config))
        self.loop.run_until_complete(self.runner.start())

    def run(self, code: str, *, timeout: "float | None" = None, memory: int = 128 * MiB, restricted: bool = True,
            allowed=BASIC, capture_output: bool = True, strict: bool = False) -> dict:
        """One execution; without a timeout, 10 s scaled by the machine's slowness (work that
        must finish). A test that proves a timeout fires passes its own, short one."""
        request = ExecRequest(code=code, timeout=scaled(10) if timeout is None else timeout, memory_limit=memory,
                              allowed_modules=frozenset(allowed), restricted=restricted,
                              capture_output=capture_output, strict=strict)
        return self.loop.run_until_complete(self.runner.execute(request))

    def validate(self, code: str, *, restricted: bool = True, allowed=BASIC) -> dict:
        return self.loop.run_until_complete(
            self.runner.validate(code, allowed_modules=frozenset(allowed), restricted=restricted))

    def layers(self) -> dict:
        return self.runner.layers()

    def close(self) -> None:
        self.loop.run_until_complete(self.runner.aclose())
        self.loop.close()


def only_layers(*keep: str) -> frozenset:
    """The disabled_layers setting that leaves only `keep` among the kernel layers."""
    from sandbox.layer_names import KERNEL_LAYERS
    return frozenset(name for name in KERNEL_LAYERS if name not in keep)


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (reads /proc; children files need 3.5+ kernels)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/task/{current}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        found += kids
        todo += kids
    return found
