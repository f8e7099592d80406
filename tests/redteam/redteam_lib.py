"""The red-team suite's rules, in one place: which answers a corpus record
accepts, where canary markers may (never) appear, what a code generator may
use, and the checks every case goes through. test_corpus.py documents the
rules per category; this module implements them.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for path in (str(REPO), str(HERE.parent), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

import hostcanary  # noqa: E402
from sandbox.restricted.subsets import registry  # noqa: E402
from slowness import scaled  # noqa: E402

# the red-team servers' settings (conftest.py): modest limits keep the corpus quick
# (the longest case timeout, scaled by the machine's slowness, fits under the maximum)
MAX_TIMEOUT = math.ceil(scaled(10))
DEFAULT_TIMEOUT = 5
MAX_OUTPUT = 65536
MAX_CODE_SIZE = 1 << 20
MAX_MEMORY = 1 << 30
POOL_SIZE = 2


CARRIED_CORPUS = Path(__file__).resolve().parent / "corpus.json"  # a copy of shared/redteam/corpus.json
SHARED_CORPUS = REPO.parent / "shared" / "redteam" / "corpus.json"


def corpus_path() -> Path:
    """$SANDBOX_REDTEAM_CORPUS, else the copy the project carries (so that a clone without
    shared/ beside it still runs the red team; test_corpus checks the copy is current)."""
    env = os.environ.get("SANDBOX_REDTEAM_CORPUS")
    return Path(env) if env else CARRIED_CORPUS


# Modules the corpus treats as forbidden that the product's basic profile
# allows on purpose, as cleaned-up proxies whose gadgets
# (attrgetter, methodcaller, FunctionType, CodeType, new_class...) are refused:
# tests/restricted/test_rp_modules.py covers those. The sweep keeps its other probes.
BASIC_BY_DESIGN = {"PJ-008": ("operator", "types")}


def load_corpus() -> list:
    path = corpus_path()
    if not path.is_file():
        raise FileNotFoundError(f"red-team corpus not found at {path}: set SANDBOX_REDTEAM_CORPUS to its path")
    with open(path, encoding="utf-8") as handle:
        cases = json.load(handle)
    for case in cases:
        modules = BASIC_BY_DESIGN.get(case["id"], ())
        if modules:
            case["code"] = without_import_probes(case["code"], modules, strict=True)
    return cases


def without_import_probes(code: str, modules, strict: bool = False) -> str:
    """Drop the `try: import X [as m_X] ... except: pass` probes of an import sweep
    (PJ-008, PJ-036) for modules the profile under test allows by design."""
    for module in modules:
        alias = "m_" + module.replace(".", "_")
        probes = [f"try:\n    import {module}{suffix}\n    hits.append('{module}')\nexcept Exception:\n    pass\n"
                  for suffix in (f" as {alias}", "")]
        assert any(p in code for p in probes) or not strict, module
        for probe in probes:
            code = code.replace(probe, "")
    return code


# Modules importable everywhere as a small read-only subset (sandbox/restricted/subsets/registry.py:
# sys.stdout/stderr/version..., io.StringIO/BytesIO, os.path and the snippet's own directory,
# the sandbox's logging/warnings/traceback, asyncio without its loop): an import sweep's probe
# of them succeeds by design; what the subsets hand out is attacked in
# tests/restricted/test_module_subsets.py, test_snippet_stdlib.py and test_rp_*.py.
SUBSET_MODULES = tuple(registry.SUBSETS)


def load_variants() -> list:
    with open(HERE / "variants.json", encoding="utf-8") as handle:
        return json.load(handle)


ERROR_TYPES = {"syntax_error", "security_violation", "runtime_error", "timeout", "memory_limit",
               "output_limit", "internal_error", "invalid_argument", "isolation_unavailable"}

# expect.outcome -> the error types that satisfy it (None stands for success)
OUTCOME_ERROR_TYPES = {
    "compile_error": {"syntax_error", "security_violation"},
    "runtime_error": {"runtime_error", "security_violation", "memory_limit"},
    "limit_kill": {"timeout", "memory_limit", "output_limit"},
}

MAX_TEXT = 20_000 + 100        # sandbox/forkserver/child_report.py caps error texts at 20,000 characters (+ a note)
TIME_MARGIN = scaled(3.0)      # seconds an answer may take beyond the case's timeout
SERVER_RSS_LIMIT_KIB = 600 * 1024

MARKER = re.compile(r"ESCAPED:[\w.\-:/,=+]*")
HOST_DATA = ("HOSTCANARY-5d1e9b", "sbx-secret-7f3a9c")
HOST_TEMP_LITERAL = re.compile(r"""['"](/(?:tmp|var/tmp|dev/shm)/[^'"\\]+)['"]""")
RELATIVE_CANARY_LITERAL = re.compile(r"""['"](sbx_canary[^'"/\\]*)['"]""")
FIXTURE_PATHS = {hostcanary.CANARY_FILE, hostcanary.UNIX_PATH}   # this run's, as localize() writes them


# ---------------------------------------------------------------- expectations

def expected_outcomes(case: dict) -> list:
    expect = case.get("expect") or {}
    return [expect.get("outcome")] + list(expect.get("also_acceptable") or [])


def outcome_satisfied(outcome: str, data: dict) -> bool:
    error_type = data.get("error_type")
    if outcome == "contained":
        return True
    if outcome == "truncated":
        flagged = any(data.get(k) for k in ("stdout_truncated", "stderr_truncated", "result_truncated"))
        return (data.get("success") is True and flagged) or error_type == "output_limit"
    if outcome == "crash_reported":
        return (error_type == "runtime_error" and bool(data.get("signal"))) or error_type == "internal_error"
    if data.get("success"):
        return False
    return error_type in OUTCOME_ERROR_TYPES.get(outcome, set())


def request_over_limits(arguments: dict, max_timeout: float, max_code_size: int,
                        max_memory: int) -> bool:
    """Does the request itself exceed a configured maximum (so refusing it with
    invalid_argument before any child runs is a correct answer)?"""
    timeout = arguments.get("timeout")
    memory = arguments.get("memory_limit")
    code = arguments.get("code", "")
    if isinstance(timeout, (int, float)) and timeout > max_timeout:
        return True
    if isinstance(memory, int) and memory > max_memory:
        return True
    return len(code.encode("utf-8", "surrogatepass")) > max_code_size


def outcome_ok(case: dict, data: dict, over_limits: bool) -> bool:
    if over_limits and data.get("error_type") == "invalid_argument":
        return True
    return any(outcome_satisfied(o, data) for o in expected_outcomes(case))


def case_timeout(case: dict, call_args: dict) -> float:
    """The case's timeout: scaled where the case's work must finish inside it; a fixed
    3 s where any limit firing is a correct answer (a timeout among them)."""
    if "timeout" in call_args:
        return float(call_args["timeout"])
    expect = case.get("expect") or {}
    if case.get("danger") == "crash":
        return scaled(8.0)   # DOS-019 without RestrictedPython: ~4 s of deep recursion before the interpreter gives up
    if expect.get("outcome") == "limit_kill" or case.get("danger") == "resource_exhaustion":
        return 3.0
    return scaled(5.0)


def call_variants(case: dict) -> list:
    """The execute_code argument sets to try (call_args, or each of call_args.variants)."""
    args = case.get("call_args") or {}
    if "variants" in args:
        return [dict(v) for v in args["variants"]]
    return [dict(args)]


# ---------------------------------------------------------------- code generators

def codetype_snippet(expression: str, marker: str) -> str:
    """A snippet that rebuilds a code object evaluating `expression` with
    types.CodeType and runs it with types.FunctionType (3.11 field order)."""
    c = compile(expression, "s", "eval")
    fields = (c.co_argcount, c.co_posonlyargcount, c.co_kwonlyargcount, c.co_nlocals, c.co_stacksize,
              c.co_flags, c.co_code, c.co_consts, c.co_names, c.co_varnames, c.co_filename, c.co_name,
              c.co_qualname, c.co_firstlineno, c.co_linetable, c.co_exceptiontable, c.co_freevars,
              c.co_cellvars)
    return ("import types\n"
            "try:\n"
            f"    c = types.CodeType(*{fields!r})\n"
            "    f = types.FunctionType(c, {})\n"
            "    subs = f()\n"
            f"    print({marker + ':'!r} + str(len(subs)))\n"
            "except Exception as e:\n"
            "    print('blocked: ' + repr(e)[:200])\n")


GADGET_NAMES = sorted(set("""
sys os builtins bltns io re enum inspect types weakref warnings codecs platform subprocess functools operator
collections contextlib copy copyreg abc locale struct itertools random decimal datetime time math string json
tool decoder encoder scanner parser entities ElementTree etree reprlib linecache tokenize socket select signal
threading posix importlib pickle marshal gc ctypes shutil tempfile pathlib errno stat posixpath genericpath
binascii base64 zlib hashlib textwrap unicodedata pprint dataclasses heapq keyword ast dis opcode token
traceback uuid html xml urllib numbers fractions statistics bisect array calendar secrets hmac difflib typing
csv cmath sre_compile sre_parse sre_constants fnmatch glob ntpath nt atexit faulthandler runpy pkgutil
""".split()))


def gadget_walk_snippet(allowed: list) -> str:
    """Import every allowed module, then follow every name of GADGET_NAMES two
    levels deep; any real module outside the allow-list is a gadget. Submodules
    of an allowed whole package (numpy.random for numpy) are part of it, as the
    product's import policy says (sandbox/profiles.py WHOLE_PACKAGES)."""
    import sys
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from sandbox.profiles import WHOLE_PACKAGES
    whole = sorted(WHOLE_PACKAGES & set(allowed))
    imports = []
    for name in sorted(allowed):
        alias = "m_" + name.replace(".", "_")
        imports.append(f"try:\n    import {name} as {alias}\n    roots.append(({name!r}, {alias}))\n"
                       f"except Exception:\n    pass\n")
    return ("roots = []\n" + "".join(imports) +
            f"allowed = set({sorted(allowed)!r})\n"
            f"whole = set({whole!r})\n"
            f"names = {GADGET_NAMES!r}\n"
            "hits = []\n"
            "def module_name(v):\n"
            "    r = repr(v)\n"
            "    if r.startswith(\"<module '\"):\n"
            "        return r.split(\"'\")[1]\n"
            "    return None\n"
            "def probe(label, obj, depth):\n"
            "    for n in names:\n"
            "        try:\n"
            "            v = getattr(obj, n)\n"
            "        except Exception:\n"
            "            continue\n"
            "        m = module_name(v)\n"
            "        if m is not None and m not in allowed and m.split('.')[0] not in whole:\n"
            "            hits.append(label + '.' + n + '=' + m)\n"
            "        elif depth < 2 and m is not None:\n"
            "            probe(label + '.' + n, v, depth + 1)\n"
            "for label, mod in roots:\n"
            "    probe(label, mod, 1)\n"
            "if hits:\n"
            "    print('ESCAPED:module_gadget_walk:' + ','.join(sorted(set(hits))[:40]))\n"
            "print('roots: %d' % len(roots))\n")


def host_tree_snippet(ctx: dict) -> str:
    repo = ctx["repo"]
    home = ctx["home"]
    probes = [f"{repo}/pyproject.toml", f"{repo}/.git/HEAD", f"{repo}/tests/mcp_client.py", f"{repo}/.env",
              f"{repo}/sandbox/../pyproject.toml", f"{home}/.bash_history", f"{home}/.ssh/id_rsa",
              "/etc/passwd", "/etc/shadow", "/etc/hostname", "/tmp/SANDBOX_HOST_CANARY.txt",
              "/proc/1/root/etc/passwd", "/proc/1/cwd/etc/passwd", "/proc/self/cwd/../../etc/passwd",
              f"/proc/1/root{repo}/pyproject.toml", "/var/tmp", "/dev/shm", "/home", "/srv", "/boot",
              "/sys/class/net", "/run", "/var/run/docker.sock", "/run/systemd"]
    return ("import os\n"
            f"probes = {probes!r}\n"
            "visible = []\n"
            "for p in probes:\n"
            "    try:\n"
            "        if os.path.isdir(p):\n"
            "            os.listdir(p)\n"
            "            visible.append(p)\n"
            "        else:\n"
            "            with open(p, 'rb') as f:\n"
            "                f.read(64)\n"
            "            visible.append(p)\n"
            "    except Exception:\n"
            "        pass\n"
            "if visible:\n"
            "    print('ESCAPED:host_tree_visible:' + ','.join(visible))\n"
            "print('root: ' + ','.join(sorted(os.listdir('/'))))\n")


def signal_host_snippet(ctx: dict) -> str:
    return ("import os, signal\n"
            f"targets = {{'sleeper': {int(ctx['sleeper_pid'])}, 'server': {int(ctx['server_pid'])}, "
            f"'fork_server': {int(ctx['fork_server_pid'])}}}\n"
            "for label, pid in targets.items():\n"
            "    for how, fn in (('kill0', lambda p: os.kill(p, 0)), ('term', lambda p: os.kill(p, signal.SIGTERM)),\n"
            "                    ('killpg', lambda p: os.killpg(p, signal.SIGTERM)), ('kill9', lambda p: os.kill(p, signal.SIGKILL))):\n"
            "        try:\n"
            "            fn(pid)\n"
            "            print('ESCAPED:signalled_host:%s:%s' % (label, how))\n"
            "        except Exception as e:\n"
            "            print('blocked %s %s: %s' % (label, how, type(e).__name__))\n"
            "try:\n"
            "    os.kill(-1, signal.SIGKILL)\n"
            "    print('kill(-1) returned')\n"
            "except Exception as e:\n"
            "    print('kill(-1) blocked: ' + type(e).__name__)\n")


def materialize(case: dict, ctx: dict) -> str:
    """The code to send: code_generator evaluated (full size), else code."""
    generator = case.get("code_generator")
    if not generator:
        return case["code"]
    namespace = {"CODE": case["code"], "ctx": ctx, "codetype_snippet": codetype_snippet,
                 "gadget_walk_snippet": gadget_walk_snippet, "host_tree_snippet": host_tree_snippet,
                 "signal_host_snippet": signal_host_snippet}
    return eval(generator, namespace)  # noqa: S307 - the corpus's own generator expressions, trusted


# ---------------------------------------------------------------- scanning answers

def strip_echo(text: str, code: str) -> str:
    """Remove verbatim copies of source lines (tracebacks and SyntaxErrors may
    quote the snippet, which holds its own markers as string literals)."""
    for line in sorted({ln.strip() for ln in code.splitlines()}, key=len, reverse=True):
        if len(line) >= 8:
            text = text.replace(line, "<src>")
    return text


def answer_fields(data: dict) -> dict:
    """Every text of an answer, by field."""
    fields = {}
    for key in ("stdout", "stderr", "error", "traceback"):
        if isinstance(data.get(key), str):
            fields[key] = data[key]
    for key in ("result", "variables", "security_events", "validation", "analysis", "recommendations"):
        if key in data:
            fields[key] = json.dumps(data[key], ensure_ascii=False, default=str)
    return fields


OWN_INIT_LINE = re.compile(r"^ESCAPED:(?:foreign_pids_visible:((?:parent )?1 (?:ok|EPERM))(?:,(?:parent )?1 (?:ok|EPERM))*"
                           r"|can_signal_parent:1)$")


def drop_own_init_lines(text: str) -> str:
    """PROC-004/LEAK-003 say: if the sandbox runs its own init inside the pid
    namespace, exclude that pid. Lines that only report pid 1 (the sandbox's
    init, the snippet's parent) are not escapes."""
    return "\n".join(line for line in text.split("\n") if not OWN_INIT_LINE.match(line.strip()))


def markers_in(data: dict, code: str, raw_text: str = "", own_init_ok: bool = False) -> list:
    """(field, marker) for every ESCAPED marker in the answer that is not an
    echo of the snippet's own source."""
    found = []
    fields = answer_fields(data)
    if raw_text:
        fields["raw"] = raw_text
    for key, text in fields.items():
        text = strip_echo(text, code)
        if own_init_ok:
            text = drop_own_init_lines(text.replace("\\n", "\n"))
        for token in MARKER.findall(text):
            found.append((key, token))
    return found


def host_data_in(data: dict, code: str, raw_text: str = "") -> list:
    found = []
    fields = answer_fields(data)
    if raw_text:
        fields["raw"] = raw_text
    for key, text in fields.items():
        text = strip_echo(text, code)
        for secret in HOST_DATA:
            if secret in text:
                found.append((key, secret))
    return found


def marker_pid(token: str, code: str) -> "int | None":
    """The pid a python-layer marker reports, when the snippet prints a pid."""
    match = re.search(r":(\d+)$", token)
    if not match or "getpid" not in code:
        return None
    label = token[: match.start() + 1]
    for line in code.splitlines():
        if label in line and "len(" in line:
            return None
    return int(match.group(1))


# The sockets the network profile opens (the doors modes): inside the sandbox's own network
# namespace, whose only way out is the egress proxy. Netlink, raw and packet stay refused.
NETWORK_PROFILE_SOCKETS = {"AF_UNIX/STREAM", "AF_INET/STREAM", "AF_INET6/STREAM", "AF_INET/DGRAM"}


def network_profile_marker(case: dict, token: str) -> bool:
    """With the network profile on: a case whose premise is the profile being off
    (network_profile_door says why), or NET-001 with only the families the
    profile opens."""
    if case.get("network_profile_door"):
        return True
    if case.get("id") != "NET-001" or not token.startswith("ESCAPED:socket_created:"):
        return False
    families = token.split(":", 2)[2].split(",")
    return bool(families) and set(families) <= NETWORK_PROFILE_SOCKETS


def norp_marker_tolerated(case: dict, token: str, code: str, sandbox_pid: int) -> "tuple[bool, str]":
    """With RestrictedPython off, may this marker appear? Only when it merely
    proves a Python-level bypass that still runs inside the kernel sandbox."""
    layer = case.get("layer")
    if case.get("id") == "NET-001" and token.startswith("ESCAPED:socket_created:"):
        families = token.split(":", 2)[2].split(",")
        if families and all(f == "AF_UNIX/STREAM" for f in families):
            return True, "AF_UNIX sockets are allowed by design (seccomp AF_UNIX only, empty net/mount namespaces)"
        return False, "a non-AF_UNIX socket family was created"
    if layer == "python" or (layer == "chained" and token.startswith("ESCAPED:python_guard_bypassed")):
        pid = marker_pid(token, code)
        if pid is not None and pid != sandbox_pid:
            return False, f"the marker reports pid {pid}, not the sandbox pid {sandbox_pid}: no pid namespace?"
        return True, "Python-level bypass inside the kernel sandbox"
    return False, f"a {layer}-layer marker: the kernel layers must stop this attack"


def host_paths_named(case: dict, code: str, server_cwd: str) -> list:
    """Host paths the snippet tries to create, from its string literals and the
    record's host_paths_absent (which may say {server_cwd})."""
    paths = set(HOST_TEMP_LITERAL.findall(code))
    paths |= {os.path.join(server_cwd, p) for p in RELATIVE_CANARY_LITERAL.findall(code)}
    for p in case.get("host_paths_absent") or ():
        paths.add(p.replace("{server_cwd}", server_cwd))
    return sorted(p for p in paths if p not in FIXTURE_PATHS and "%" not in p)


def host_hostname() -> str:
    return socket.gethostname()


def host_paths_in_text(text: str) -> list:
    """Host paths an error or traceback must not reveal (LEAK-009)."""
    found = []
    home = os.path.expanduser("~")
    for needle in ("/site-packages/", str(REPO), "RestrictedPython"):
        if needle in text:
            found.append(needle)
    if home not in ("/", "") and (home + "/") in text:
        found.append(home)
    return found


@dataclass
class CaseReport:
    """Everything one case produced, for the assertion message."""
    case_id: str
    mode: str
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    answers: list = field(default_factory=list)

    def fail(self, message: str) -> None:
        self.problems.append(message)

    def render(self) -> str:
        out = [f"{self.case_id} [{self.mode}]:"] + [f"  - {p}" for p in self.problems]
        for label, data, elapsed in self.answers:
            shown = {k: (v[:600] + "..." if isinstance(v, str) and len(v) > 600 else v)
                     for k, v in (data or {}).items() if k not in ("variables",)}
            out.append(f"  {label} ({elapsed:.2f}s): {json.dumps(shown, default=str)[:2500]}")
        return "\n".join(out)
