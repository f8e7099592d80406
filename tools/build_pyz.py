#!/usr/bin/env python3
"""Build dist/mcp-server-python-sandbox.pyz: one file that runs with the host's python3 (3.10+)
and carries its dependencies (mcp, RestrictedPython and theirs).

    python3 tools/build_pyz.py [--output dist/mcp-server-python-sandbox.pyz] [--python python3.11]

How it works: the dependencies are installed with pip into a staging directory,
the `sandbox` package is copied beside them, and the lot is stored under
`_bundle/site/` in a zipapp whose `__main__.py` (stdlib only) extracts it once
into a private per-user cache directory keyed by the archive's SHA-256, then
imports from there. Extraction is needed because compiled extensions
(pydantic_core, rpds, cryptography) cannot be imported from inside a zip.

Limitation: compiled dependencies are built for the Python that ran pip (its
version and platform). The archive records both and refuses, with a clear
message, to start under another CPython version; build one archive per target
Python with --python.

Dependency versions are pinned to those installed in the building Python when it
has them (so the archive carries what the tests ran against), else resolved from
pyproject's ranges.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipapp
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BOOTSTRAP = REPO_ROOT / "tools" / "pyz_main.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(REPO_ROOT / "dist" / "mcp-server-python-sandbox.pyz"))
    parser.add_argument("--python", default=sys.executable, help="interpreter whose pip installs the dependencies")
    parser.add_argument("--no-pin", action="store_true", help="resolve dependencies afresh instead of pinning")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="sandbox-pyz-") as work:
        work_dir = Path(work)
        site = work_dir / "app" / "_bundle" / "site"
        install_dependencies(args.python, site, pin=not args.no_pin, work_dir=work_dir)
        copy_package(site)
        target = probe_target(args.python)
        manifest = build_manifest(site, target)
        (site.parent / "manifest.json").write_text(json.dumps(manifest, indent=1))
        shutil.copyfile(BOOTSTRAP, work_dir / "app" / "__main__.py")
        output = Path(args.output)
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(output.name + ".partial")
        zipapp.create_archive(work_dir / "app", partial, interpreter="/usr/bin/env python3", compressed=True)
        os.replace(partial, output)
    size = output.stat().st_size
    print(f"built {output} ({size / 1e6:.1f} MB, {len(manifest['files'])} files, for {target['description']})")
    return 0


def install_dependencies(python: str, site: Path, *, pin: bool, work_dir: Path) -> None:
    command = [
        python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
        "--target", str(site), *runtime_requirements(),
    ]
    if pin:
        constraints = work_dir / "constraints.txt"
        constraints.write_text(installed_versions(python))
        command += ["--constraint", str(constraints)]
    subprocess.run(command, check=True)
    # Console scripts carry the staging path in their shebang: useless in the archive.
    shutil.rmtree(site / "bin", ignore_errors=True)


def runtime_requirements() -> list[str]:
    """[project].dependencies of pyproject.toml (read without tomllib, which 3.10 lacks)."""
    text = (REPO_ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.M | re.S)
    if not block:
        raise SystemExit("build_pyz: no [project] dependencies in pyproject.toml")
    return re.findall(r'"([^"]+)"', block.group(1))


def installed_versions(python: str) -> str:
    """name==version for every distribution the building Python has, as pip constraints."""
    script = (
        "import importlib.metadata as m\n"
        "seen = {}\n"
        "for d in m.distributions():\n"
        "    name = d.metadata['Name']\n"
        "    if name and name.lower() not in seen: seen[name.lower()] = f'{name}=={d.version}'\n"
        "print('\\n'.join(sorted(seen.values())))\n"
    )
    return subprocess.run([python, "-c", script], check=True, capture_output=True, text=True).stdout


def copy_package(site: Path) -> None:
    shutil.copytree(
        REPO_ROOT / "sandbox",
        site / "sandbox",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )


def probe_target(python: str) -> dict:
    script = (
        "import json, sys, sysconfig, platform\n"
        "print(json.dumps({'implementation': sys.implementation.name, "
        "'version': list(sys.version_info[:2]), 'platform': sysconfig.get_platform(), "
        "'machine': platform.machine()}))\n"
    )
    target = json.loads(subprocess.run([python, "-c", script], check=True, capture_output=True, text=True).stdout)
    target["description"] = f"{target['implementation']} {target['version'][0]}.{target['version'][1]} on {target['platform']}"
    return target


def build_manifest(site: Path, target: dict) -> dict:
    files = []
    compiled = []
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        relative = path.relative_to(site).as_posix()
        files.append({
            "path": relative,
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "executable": os.access(path, os.X_OK),
        })
        if path.suffix == ".so":
            compiled.append(relative)
    return {"format": 1, "target": target, "compiled": compiled, "files": files}


if __name__ == "__main__":
    sys.exit(main())
