"""The bind-mount sources on their own: opened without following a symlink
anywhere in the path (the child opens them as host uid 0 when the server runs
as root), and the read-only view built from them."""

from __future__ import annotations

import os

import pytest

from sandbox import mounts


def test_a_path_swapped_for_a_symlink_is_refused(tmp_path):
    tmp_path = tmp_path.resolve()  # the sources are realpaths
    real = tmp_path / "real" / "lib"
    real.mkdir(parents=True)
    (tmp_path / "swapped").symlink_to(tmp_path / "real")
    fds = mounts.open_sources([str(real)])
    try:
        assert str(real) in fds
    finally:
        for fd in fds.values():
            os.close(fd)
    with pytest.raises(OSError) as refused:
        mounts.open_sources([str(real), str(tmp_path / "swapped" / "lib")])
    assert "symbolic links" in str(refused.value) or refused.value.errno == 40


def test_the_real_sources_open_and_include_the_devices():
    fds = mounts.open_sources(mounts.readable_paths(network=False))
    try:
        assert "/dev/null" in fds and len(fds) > len(mounts.DEVICES)
    finally:
        for fd in fds.values():
            os.close(fd)
