"""How this server was installed, and the command that adds libraries to that installation.

A message that names an install command names one that works where the server runs: the
package may come from a checkout, a wheel run by uvx or pipx, an installed wheel or the
single-file .pyz, and `pip install mcp-server-python-sandbox[...]` works only once the
package is on the public index. Every such command is written here.
"""

from __future__ import annotations

import importlib.metadata
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

NAME = "mcp-server-python-sandbox"
# tools/pyz_main.py leaves this file in the directory it extracts the .pyz's bundle into.
PYZ_MARKER = ".mcp-server-python-sandbox-complete"


@dataclass(frozen=True)
class Installation:
    kind: str    # checkout, pyz, uvx, uv-tool, pipx-run, pipx, pip
    source: str  # what it was installed from: a checkout or wheel path, a URL, or NAME (the index)
    python: str  # the interpreter that runs the server


def detect(package_dir: "Path | None" = None, prefix: "str | None" = None,
           python: "str | None" = None) -> Installation:
    """Where the `sandbox` package at package_dir (default: this one) comes from."""
    package_dir = Path(package_dir or Path(__file__).resolve().parent)
    prefix = Path(prefix or sys.prefix)
    python = python or sys.executable
    root = package_dir.parent
    if (root / "pyproject.toml").is_file() and (root / "Makefile").is_file():
        return Installation("checkout", str(root), python)
    if (root / PYZ_MARKER).exists():
        return Installation("pyz", "", python)
    source = _installed_from(root)
    if (prefix / "pipx_metadata.json").is_file():
        return Installation("pipx-run" if prefix.parent.name == ".cache" else "pipx", source, python)
    if (prefix / "uv-receipt.toml").is_file():
        return Installation("uv-tool", source, python)
    if _installer(root) == "uv":
        return Installation("uvx", source, python)
    return Installation("pip", source, python)


def with_extra(extra: str, installation: "Installation | None" = None) -> str:
    """What to do so that the server has the libraries of one of its extras (datascience)."""
    found = installation or detect()
    if found.kind == "checkout":
        return (f"install with: make -C {shlex.quote(found.source)} install-{extra} "
                f"(into the checkout's .venv, which bin/{NAME} runs)")
    if found.kind == "pyz":
        return ("the .pyz carries the server's own dependencies only: run the server from a checkout "
                f"(make install-{extra}, then bin/{NAME}) or from the wheel that make dist builds "
                f"(uvx --from {shlex.quote(f'dist/{wheel_name()}[{extra}]')} {NAME})")
    name, at, url = found.source.partition(" @ ")
    return _command(found, extra_spec=f"{name}[{extra}]{at}{url}")


def with_packages(packages: list[str], installation: "Installation | None" = None) -> str:
    """What to do so that the server's Python can import `packages` (module names)."""
    found = installation or detect()
    names = " ".join(shlex.quote(p) for p in packages)
    if found.kind == "pyz":
        return ("the .pyz carries the server's own dependencies only: run the server from a checkout "
                f"(make install, then .venv/bin/python -m pip install {names}; start bin/{NAME})")
    if found.kind in ("checkout", "pip"):
        return f"install with: {shlex.quote(found.python)} -m pip install {names}"
    return _command(found, packages=packages)


def _command(found: Installation, *, extra_spec: str = "", packages: "list[str] | None" = None) -> str:
    spec = shlex.quote(extra_spec or found.source)
    plain = shlex.quote(found.source)
    extras = "".join(f" --with {shlex.quote(p)}" for p in packages or ())
    if found.kind == "uvx":
        return f"start the server (in your client's config too) with: uvx --from {spec}{extras} {NAME}"
    if found.kind == "pipx-run":
        return f"start the server (in your client's config too) with: pipx run --spec {spec}{extras} {NAME}"
    if found.kind == "uv-tool":
        return f"install with: uv tool install --reinstall{extras} {spec}"
    if found.kind == "pipx":
        if packages:
            return f"install with: pipx inject {NAME} {' '.join(shlex.quote(p) for p in packages)}"
        return f"install with: pipx install --force {spec}"
    return f"install with: {shlex.quote(found.python)} -m pip install {spec if extra_spec else plain}"


def wheel_name() -> str:
    """The file name of the wheel that `make dist` builds."""
    from sandbox import __version__

    return f"{NAME.replace('-', '_')}-{__version__}-py3-none-any.whl"


def _distribution(root: Path) -> "importlib.metadata.Distribution | None":
    """The installed distribution whose files are beside this package (not another copy)."""
    for found in importlib.metadata.distributions(path=[str(root)]):
        if (found.metadata["Name"] or "").lower() == NAME:
            return found
    return None


def _installer(root: Path) -> str:
    found = _distribution(root)
    return ((found.read_text("INSTALLER") if found else None) or "").strip()


def _installed_from(root: Path) -> str:
    """The wheel, directory or URL the distribution was installed from (PEP 610's
    direct_url.json), else NAME: it came from a package index."""
    found = _distribution(root)
    text = found.read_text("direct_url.json") if found else None
    if not text:
        return NAME
    try:
        record = json.loads(text)
        url = record["url"]
    except (ValueError, KeyError, TypeError):
        return NAME
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if "vcs_info" in record:
        commit = record["vcs_info"].get("commit_id")
        return f"{NAME} @ {record['vcs_info'].get('vcs', 'git')}+{url}" + (f"@{commit}" if commit else "")
    return f"{NAME} @ {url}"
