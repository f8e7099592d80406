"""Messages that name an install command name one that works where the server was
installed from (sandbox/install_source.py): a checkout, the .pyz, a wheel run by uvx or
pipx, installed by uv, pipx or pip. tests/packaging/test_install.py runs the command a uvx run
names; these cover how each installation is told apart."""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path

import pytest

from mcp_client import REPO_ROOT
from sandbox import install_source
from sandbox.install_source import NAME, Installation, detect, with_extra, with_packages

WHEEL = "/opt/dist/mcp_server_python_sandbox-0.1.0-py3-none-any.whl"


def installed_copy(prefix: Path, installer: str, direct_url: "dict | None") -> Path:
    """An environment at prefix whose site-packages holds a `sandbox` package and its
    distribution's metadata."""
    site = prefix / "lib" / "python3" / "site-packages"
    (site / "sandbox").mkdir(parents=True)
    info = site / "mcp_server_python_sandbox-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: {NAME}\nVersion: 0.1.0\n")
    (info / "INSTALLER").write_text(installer + "\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    return site / "sandbox"


def test_a_checkout_is_told_to_use_its_makefile():
    found = detect(REPO_ROOT / "sandbox")
    assert found.kind == "checkout" and found.source == str(REPO_ROOT)
    advice = with_extra("datascience", found)
    assert f"make -C {shlex.quote(str(REPO_ROOT))} install-datascience" in advice
    assert "pip install 'mcp-server-python-sandbox" not in advice


def test_the_pyz_is_known_by_the_marker_its_bootstrap_leaves(tmp_path):
    spec = importlib.util.spec_from_file_location("pyz_main", REPO_ROOT / "tools" / "pyz_main.py")
    pyz_main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pyz_main)
    assert pyz_main.MARKER == install_source.PYZ_MARKER
    (tmp_path / "sandbox").mkdir()
    (tmp_path / pyz_main.MARKER).write_text("")
    found = detect(tmp_path / "sandbox")
    assert found.kind == "pyz"
    advice = with_extra("datascience", found)
    assert "make install-datascience" in advice and f"uvx --from 'dist/{install_source.wheel_name()}[datascience]'" in advice


@pytest.mark.parametrize("marker, installer, kind", [
    (None, "uv", "uvx"),
    ("uv-receipt.toml", "uv", "uv-tool"),
    ("pipx_metadata.json", "uv", "pipx"),
    ("pipx_metadata.json", "pip", "pipx"),
    (None, "pip", "pip"),
])
def test_a_wheel_install_is_told_apart_by_its_environment(tmp_path, marker, installer, kind):
    package = installed_copy(tmp_path / "prefix", installer, {"url": f"file://{WHEEL}", "archive_info": {}})
    prefix = tmp_path / "prefix"
    if marker:
        (prefix / marker).write_text("")
    found = detect(package, prefix=str(prefix), python="/env/bin/python")
    assert found == Installation(kind, WHEEL, "/env/bin/python")


def test_pipx_run_is_its_temporary_environment(tmp_path):
    prefix = tmp_path / "pipx" / ".cache" / "0123abcd"
    package = installed_copy(prefix, "uv", {"url": f"file://{WHEEL}", "archive_info": {}})
    (prefix / "pipx_metadata.json").write_text("{}")
    assert detect(package, prefix=str(prefix)).kind == "pipx-run"


def test_without_a_direct_url_the_package_came_from_the_index(tmp_path):
    package = installed_copy(tmp_path / "prefix", "pip", None)
    assert detect(package, prefix=str(tmp_path / "prefix")).source == NAME


@pytest.mark.parametrize("kind, extra, packages", [
    ("uvx", f"uvx --from '{WHEEL}[datascience]' {NAME}", f"uvx --from {WHEEL} --with tabulate {NAME}"),
    ("pipx-run", f"pipx run --spec '{WHEEL}[datascience]' {NAME}", f"pipx run --spec {WHEEL} --with tabulate {NAME}"),
    ("uv-tool", f"uv tool install --reinstall '{WHEEL}[datascience]'", f"uv tool install --reinstall --with tabulate {WHEEL}"),
    ("pipx", f"pipx install --force '{WHEEL}[datascience]'", f"pipx inject {NAME} tabulate"),
    ("pip", f"/env/bin/python -m pip install '{WHEEL}[datascience]'", "/env/bin/python -m pip install tabulate"),
])
def test_each_installation_gets_its_own_command(kind, extra, packages):
    found = Installation(kind, WHEEL, "/env/bin/python")
    assert with_extra("datascience", found).endswith(extra)
    assert with_packages(["tabulate"], found).endswith(packages)


def test_an_index_install_with_a_url_keeps_the_extra_on_the_name():
    found = Installation("pip", f"{NAME} @ https://example.org/x.whl", sys.executable)
    assert f"'{NAME}[datascience] @ https://example.org/x.whl'" in with_extra("datascience", found)
