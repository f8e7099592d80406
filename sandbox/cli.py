"""Command line: `mcp-server-python-sandbox [serve] [--transport stdio|http]`, `run FILE`, `check`.

Exit codes: 0 fine, 1 the work failed (a snippet failed, required layers are
missing), 2 bad configuration or usage. Logs go to stderr; stdout carries only
MCP (serve over stdio) or the command's own answer (run, check).
"""

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from contextlib import contextmanager
from dataclasses import replace

from sandbox import __version__, profiles
from sandbox.config import MAX_MESSAGE_BYTES, MIN_TOKEN_LENGTH, ConfigError, Settings, load_settings, message_cap
from sandbox.egress import proxy as egress_proxy
from sandbox.forkserver.runner import LayerUnavailable, Runner, RunnerConfig
from sandbox.mcp.http_gate import HttpGate, allowed_hosts, is_loopback
from sandbox.wire import protocol
from sandbox.wire.terminal_text import terminal_safe

logger = logging.getLogger("sandbox")


def main(argv: list[str] | None = None) -> int:
    if not sys.platform.startswith("linux"):
        print(f"mcp-server-python-sandbox: this server needs Linux (namespaces, seccomp, Landlock); this is "
              f"{sys.platform}. Run it on a Linux host or in a Linux VM (WSL2 on Windows, a Linux VM on "
              "macOS) and point your MCP client there.", file=sys.stderr)
        return 2
    args = _parser().parse_args(argv)
    try:
        settings = load_settings(env_file=args.env_file)
    except ConfigError as exc:
        print(f"mcp-server-python-sandbox: configuration error: {exc}", file=sys.stderr)
        if args.command == "serve" and args.transport == "stdio":
            return _serve_config_failure(str(exc))
        return 2
    _setup_logging(settings.log_level)
    for warning in settings.warnings:
        logger.warning("%s", warning)
    if settings.env_file and settings.env_file != os.devnull:
        logger.info("read settings from %s", settings.env_file)
    for item in settings.weakening:
        logger.warning("%s=%s weakens isolation (%s); set by %s",
                       item["setting"], item["value"], item["opens"], item["source"])
    # SIGTERM takes the Ctrl-C path, so shutdown unwinds and the runner kills every child.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if args.command == "run":
            return _run_file(settings, args.file)
        if args.command == "check":
            return _check(settings, args.json)
        if args.transport == "http":
            return _serve_http(settings, args.host, args.port)
        return _serve_stdio(settings)
    except KeyboardInterrupt:
        return 130


def runner_config(settings: Settings) -> RunnerConfig:
    """What the fork server is started with, from the settings."""
    # Pre-importing the data-science stack in the fork server turns a 1-3 s import into a fork.
    # (but the libraries a snippet imports on demand, profiles.IMPORTED_ON_DEMAND)
    preload = (tuple(m for m in profiles.profile_modules_available("data_science")
                     if m.split(".")[0] not in profiles.IMPORTED_ON_DEMAND) if settings.enable_data_science else ())
    return RunnerConfig(
        max_timeout=settings.max_timeout,
        max_memory=settings.max_memory_limit,
        max_output=settings.max_output_size,
        network=settings.enable_network,
        network_policy=settings.network_policy,
        network_limits=egress_proxy.Limits(max_connections=settings.network_max_connections,
                                           max_bytes=settings.network_max_bytes),
        filesystem=settings.enable_filesystem,
        preload=tuple(preload),
        pool_size=settings.pool_size,
        require=settings.require,
        disabled_layers=settings.disabled_layers,
        restricted_python=settings.restricted_python,
        session_max_lifetime=settings.session_max_lifetime,
        mounts=settings.mounts,
        workspace_size=RunnerConfig.workspace_size + settings.max_input_size,   # the inputs, and room to work
        max_request=protocol.request_frame_cap(settings.max_code_size, settings.max_input_size),
        max_input=settings.max_input_size,
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-server-python-sandbox",
        description="An MCP server that runs untrusted Python in a hardened child process.",
        epilog="Settings come from SANDBOX_* variables and a file named by --env-file or "
               "SANDBOX_ENV_FILE (never ./.env on its own); see .env.example.",
    )
    parser.add_argument("--version", action="version", version=f"mcp-server-python-sandbox {__version__}")
    parser.add_argument("--env-file", metavar="FILE",
                        help="read SANDBOX_* settings from FILE (as SANDBOX_ENV_FILE; no file is read otherwise)")
    parser.set_defaults(command="serve", transport="stdio", host=None, port=None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve MCP (the default, over stdio)")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", help="HTTP bind address (default SANDBOX_HTTP_HOST, loopback only)")
    serve.add_argument("--port", type=int, help="HTTP port (default SANDBOX_HTTP_PORT)")

    run = commands.add_parser("run", help="run a file in the sandbox and print the JSON result")
    run.add_argument("file", help="a Python file, or - for standard input")

    check = commands.add_parser("check", help="show which isolation layers are active on this host")
    check.add_argument("--json", action="store_true", help="print the layers as JSON")
    return parser


class _TerminalSafeFormatter(logging.Formatter):
    """Log lines carry text from elsewhere (an upstream's error, why a session ended), and
    stderr is often a terminal or a client's log view: its controls are written as escapes."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


def _setup_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_TerminalSafeFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def _interrupt(signum, frame):
    raise KeyboardInterrupt


# ----------------------------------------------------------------------------- serve


def _serve_config_failure(message: str) -> int:
    """A client shows an MCP answer, not a server that exited: serve the problem over
    stdio until the client leaves, then exit 2 as a configuration error does."""
    from sandbox.mcp.config_failure import build_failed_server

    _setup_logging("info")
    status = _run_stdio(build_failed_server(message))
    return status if status else 2


def _serve_stdio(settings: Settings) -> int:
    from sandbox.mcp.server import build_server
    from sandbox.namespaces import PROXY_URL

    # The transport points fd 0/1 away from the wire while serving, and the runner
    # starts inside it, so the fork server never inherits the wire. A start that fails
    # (SANDBOX_REQUIRE naming a layer the host lacks, a fork server that dies) is served
    # to the client as the problem, as a bad configuration is, and the exit status is 1.
    failed = []
    server = build_server(settings, Runner(runner_config(settings)), proxy_url=PROXY_URL,
                          on_start_failure=lambda exc: failed.append(_startup_failure(exc)))
    status = _run_stdio(server, message_cap(settings))
    return status if status or not failed else failed[0]


def _run_stdio(server, max_line: int = MAX_MESSAGE_BYTES) -> int:
    """Serve `server` over stdio until the client leaves or a signal stops it.
    `max_line`: the longest message read (config.message_cap)."""
    from sandbox.mcp import stdio

    if not stdio.usable():  # stdin or stdout is a regular file: the SDK's threaded transport
        try:
            server.run("stdio")
        except BaseException as exc:
            return _startup_failure(exc)
        return 0

    async def serve() -> None:
        async with stdio.stdio_transport(max_line) as (read_stream, write_stream):
            lowlevel = server._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    try:
        signum = asyncio.run(_until_signalled(serve()))
        return 128 + signum if signum else 0
    except BaseException as exc:
        return _startup_failure(exc)


async def _until_signalled(work) -> int:
    """Run `work` until it ends or SIGINT/SIGTERM arrives; the signal that stopped it, or 0.
    Nothing blocks on stdin, so shutdown (which kills every sandbox process) is prompt
    even while the client keeps stdin open."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    signalled = []

    def stop(signum: int) -> None:
        signalled.append(signum)
        task.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop, signum)
    try:
        await task
    except asyncio.CancelledError:
        if not signalled:
            raise
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    if signalled:
        logger.info("stopped by %s", signal.Signals(signalled[0]).name)
    return signalled[0] if signalled else 0


def _serve_http(settings: Settings, host: str | None, port: int | None) -> int:
    import anyio
    import uvicorn

    from sandbox.mcp.server import build_server
    from sandbox.namespaces import PROXY_URL

    if not settings.api_token:
        print(
            f"mcp-server-python-sandbox: configuration error: SANDBOX_API_TOKEN is not set; the HTTP transport needs a "
            f"bearer token of at least {MIN_TOKEN_LENGTH} characters",
            file=sys.stderr,
        )
        return 2
    bind = host or settings.http_host
    if not is_loopback(bind):
        if host is None:
            print(
                f"mcp-server-python-sandbox: configuration error: SANDBOX_HTTP_HOST={bind!r} is not a loopback address; "
                "accepted: a loopback address, or pass --host explicitly to bind another one",
                file=sys.stderr,
            )
            return 2
        logger.warning("binding %s, which is not a loopback address: the sandbox is reachable from the network", bind)
    port = settings.http_port if port is None else port
    if not 0 <= port <= 65535:
        print(f"mcp-server-python-sandbox: --port {port} is invalid; accepted: 0 to 65535", file=sys.stderr)
        return 2

    failed = []

    def start_failed(exc: BaseException) -> None:
        failed.append(_startup_failure(exc))
        served.should_exit = True   # over HTTP a failed start stops the server

    server = build_server(settings, Runner(runner_config(settings)), proxy_url=PROXY_URL,
                          on_start_failure=start_failed)
    app = HttpGate(server.streamable_http_app(host=bind), settings.api_token,
                   allowed_hosts(bind, port, settings.http_allowed_hosts), max_body=message_cap(settings))
    config = uvicorn.Config(app, host=bind, port=port, log_config=None, log_level=settings.log_level,
                            ws="none")  # (the gate refuses WebSockets too)
    logger.info("serving MCP over HTTP at http://%s:%d/mcp", bind, port)
    served = uvicorn.Server(config)
    try:
        anyio.run(served.serve)
    except BaseException as exc:
        return _startup_failure(exc)
    return failed[0] if failed else 0


def _startup_failure(exc: BaseException) -> int:
    """Turn a refused start (required layers missing) into a message; re-raise anything else."""
    found = _find(exc, LayerUnavailable)
    if found is not None:
        missing = "; ".join(f"{layer} ({reason})" for layer, reason in getattr(found, "missing", []))
        logger.error("refusing to start: layers named in SANDBOX_REQUIRE are not active here: %s", missing)
        return 1
    if _find(exc, KeyboardInterrupt) is not None:
        return 130
    if isinstance(exc, Exception):
        # e.g. the fork server could not start: one clear line, the traceback at debug level.
        logger.debug("start-up failure", exc_info=exc)
        logger.error("mcp-server-python-sandbox stopped: %s", exc)
        return 1
    raise exc


def _find(exc: BaseException, kind: type) -> BaseException | None:
    """Find an exception of `kind` in exc, its exception groups and its causes."""
    seen = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        stack.extend(getattr(current, "exceptions", ()) or ())
        stack.extend((current.__cause__, current.__context__))
    return None


# ----------------------------------------------------------------------------- run and check


@contextmanager
def _stdio_kept_from_children():
    """While the runner lives, fd 1 points at stderr and fd 0 at /dev/null, so nothing a
    child inherits can write into our answer or read our input. Yields the real stdout."""
    sys.stdout.flush()
    saved_out, saved_in = os.dup(1), os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(2, 1)
        os.dup2(devnull, 0)
        yield
    finally:
        os.dup2(saved_out, 1)
        os.dup2(saved_in, 0)
        for fd in (saved_out, saved_in, devnull):
            os.close(fd)


def _run_file(settings: Settings, path: str) -> int:
    try:
        if path == "-":
            code = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                code = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"mcp-server-python-sandbox: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    with _stdio_kept_from_children():
        try:
            result = asyncio.run(_execute_once(settings, code))
        except BaseException as exc:
            return _startup_failure(exc)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0 if result.get("success") else 1


async def _execute_once(settings: Settings, code: str) -> dict:
    from sandbox.mcp.audit import AuditLog
    from sandbox.limits_parse import format_size
    from sandbox.mcp.tool_handlers import SandboxTools
    from sandbox.namespaces import PROXY_URL

    runner = Runner(runner_config(settings))
    await runner.start()
    try:
        tools = SandboxTools(settings, runner, AuditLog(settings.audit_log), proxy_url=PROXY_URL)
        answer = await tools.execute(
            code, settings.timeout, True, [], format_size(settings.default_memory_limit), False
        )
        return answer.structured_content
    finally:
        await runner.aclose()


def _mounts_listed(settings: Settings) -> list[dict]:
    return [{"host": m.host, "sandbox": m.sandbox, "mode": m.mode} for m in settings.mounts]


def _check(settings: Settings, as_json: bool) -> int:
    async def probe() -> dict:
        # Started without `require`, so that missing layers are reported rather than fatal.
        runner = Runner(replace(runner_config(settings), require=frozenset()))
        await runner.start()
        try:
            return runner.layers()
        finally:
            await runner.aclose()

    with _stdio_kept_from_children():
        layers = asyncio.run(probe())
    missing = sorted(name for name in settings.require if not layers.get(name, {}).get("active"))
    claim = profiles.python_layer_claim(settings.enabled_profiles, settings.restricted_python,
                               settings.extra_imports)
    if as_json:
        print(json.dumps({"layers": layers, "required": sorted(settings.require), "missing_required": missing,
                          "python_layer": claim, "weakened_by": list(settings.weakening),
                          "mounts": _mounts_listed(settings)}, indent=2))
    else:
        width = max(map(len, layers), default=10)
        for name, info in layers.items():
            state = "active" if info.get("active") else "INACTIVE"
            print(f"{name:<{width}}  {state:<8}  {info.get('detail', '')}")
        print(f"python layer: {claim}")
        for mount in _mounts_listed(settings):
            print(f"mount {mount['sandbox']} ({mount['mode']}) from the host's {mount['host']}")
        for item in settings.weakening:
            print(f"weakened by {item['setting']}={item['value']} ({item['opens']}; set by {item['source']})")
        if settings.require:
            print(f"required (SANDBOX_REQUIRE): {', '.join(sorted(settings.require))}"
                  + (f"; MISSING: {', '.join(missing)}" if missing else "; all active"))
    return 1 if missing else 0
