"""Hosts that restrict unprivileged user namespaces (Ubuntu 23.10+'s AppArmor): the
layer report names the setting and the way out. Simulated with a fake /proc/sys
tree, so the host's own settings are never touched."""

from __future__ import annotations

import os

import pytest

from sandbox import layers, namespaces


def fake_sysctl(tmp_path, **values):
    for name, value in values.items():
        path = tmp_path / name.replace(".", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{value}\n")
    return str(tmp_path)


def test_apparmor_restriction_is_recognised(tmp_path):
    root = fake_sysctl(tmp_path, **{"kernel.apparmor_restrict_unprivileged_userns": 1})
    why = namespaces.userns_restriction(root)
    assert "kernel.apparmor_restrict_unprivileged_userns=1" in why and "userns," in why and "root" in why


@pytest.mark.parametrize("setting,value,named", [
    ("kernel.unprivileged_userns_clone", 0, "kernel.unprivileged_userns_clone=0"),
    ("user.max_user_namespaces", 0, "user.max_user_namespaces=0"),
])
def test_other_switches_are_recognised(tmp_path, setting, value, named):
    assert named in namespaces.userns_restriction(fake_sysctl(tmp_path, **{setting: value}))


def test_permissive_hosts_report_nothing(tmp_path):
    root = fake_sysctl(tmp_path, **{"kernel.apparmor_restrict_unprivileged_userns": 0,
                                    "kernel.unprivileged_userns_clone": 1, "user.max_user_namespaces": 63000})
    assert namespaces.userns_restriction(root) is None
    assert namespaces.userns_restriction(str(tmp_path / "absent")) is None


def test_failed_namespaces_layer_names_the_setting(tmp_path, monkeypatch):
    root = fake_sysctl(tmp_path, **{"kernel.apparmor_restrict_unprivileged_userns": 1})
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # the restriction concerns ordinary users
    detail = layers.setup_failure_detail("namespaces", {"error": "PermissionError: [Errno 1] mount"}, root)
    assert detail.startswith("setup failed on this host: PermissionError")
    assert "apparmor_restrict_unprivileged_userns=1" in detail
    assert "AppArmor" not in layers.setup_failure_detail("seccomp", {"error": "x"}, root)
