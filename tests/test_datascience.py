"""The data-science profile: numpy, pandas and matplotlib under
RestrictedPython's guards and the memory limit, figures returned as PNG.
Needs the optional extra (`make install-datascience`); skipped without it."""

from __future__ import annotations

import base64

import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from runner_harness import MiB, SyncRunner  # noqa: E402

from sandbox import profiles  # noqa: E402

ALLOWED = profiles.allowed_modules(["basic", "data_science"])


@pytest.fixture(scope="module")
def ds():
    runner = SyncRunner(preload=tuple(profiles.profile_modules_available("data_science")), max_memory=1024 * MiB)
    yield runner
    runner.close()


def test_pandas_numpy_idioms_under_the_guards(ds):
    r = ds.run("import pandas as pd\nimport numpy as np\n"
               "df = pd.DataFrame({'x': np.arange(5), 'y': np.arange(5) ** 2})\n"
               "df['z'] = df['x'] + df['y']\n"
               "arr = np.arange(3)\narr += 1\n"
               "sub = df[df['z'] > 2].loc[:, ['x', 'z']].reset_index(drop=True)\n"
               "result = {'z': df['z'].tolist(), 'arr': arr.tolist(), 'sub': sub.to_dict('list'),"
               " 'mean': float(df['y'].mean())}", allowed=ALLOWED, timeout=30)
    assert r["success"], r
    assert r["result"] == {"z": [0, 2, 6, 12, 20], "arr": [1, 2, 3],
                           "sub": {"x": [2, 3, 4], "z": [6, 12, 20]}, "mean": 6.0}


def test_a_figure_comes_back_as_png(ds):
    r = ds.run("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3], [1, 4, 9])\n"
               "fig2 = plt.figure()\nresult = 'plotted'", allowed=ALLOWED, timeout=30)
    assert r["success"], r
    assert len(r["images"]) == 2
    for image in r["images"]:
        assert image["mime_type"] == "image/png"
        assert base64.b64decode(image["base64"]).startswith(b"\x89PNG\r\n\x1a\n")


def test_100_mb_array_fits_the_default_limit_and_not_a_small_one(ds):
    code = "import numpy as np\na = np.ones(100 * 1024 * 1024 // 8)\nresult = int(a.nbytes)"
    r = ds.run(code, allowed=ALLOWED, memory=128 * MiB, timeout=30)
    assert r["success"] and r["result"] == 100 * MiB, r
    r = ds.run(code, allowed=ALLOWED, memory=32 * MiB, timeout=30)
    assert r["error_type"] == "memory_limit", r


def test_data_science_modules_are_no_door_to_os(ds):
    for code in ("import numpy as np\nresult = np.os.getpid()",
                 "import pandas as pd\nresult = pd.io.common.os.getcwd()",
                 "import numpy as np\nresult = np.ctypeslib.ctypes",
                 "import matplotlib\nresult = matplotlib.os.environ"):
        r = ds.run(code, allowed=ALLOWED, timeout=30)
        assert not r["success"] and r["error_type"] in ("security_violation", "runtime_error"), (code, r)
