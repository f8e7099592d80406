"""`import sys` and `import io` without their profiles (sandbox/module_subsets.py):
the everyday part works, and nothing else of either module is reachable through
the subset, its values or their types."""

from __future__ import annotations

import io

import pytest

from sandbox import profiles, restricted

BASIC = frozenset(profiles.allowed_modules(["basic"]))


def run(code):
    out, err = io.StringIO(), io.StringIO()
    return restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=out, stderr=err), out, err


def test_what_agents_use_works():
    reply, out, err = run("import sys, io\nprint('to stderr', file=sys.stderr)\nsys.stdout.write('to stdout\\n')\n"
                          "buf = io.StringIO()\nprint('a', 'b', file=buf)\nraw = io.BytesIO(b'xyz')\nraw.seek(1)\n"
                          "result = [buf.getvalue(), raw.read(), sys.version_info >= (3, 10), sys.argv,\n"
                          "          sys.maxsize > 2**31, sys.getrecursionlimit() > 100, sys.float_info.max > 1]")
    assert reply["success"] and reply["result"] == ["a b\n", "b'yz'", True, [], True, True, True], reply
    assert err.getvalue() == "to stderr\n" and out.getvalue() == "to stdout\n"


@pytest.mark.parametrize("code", [
    "import sys\nsys.modules", "import sys\nsys.path", "import sys\nsys.settrace", "import sys\nsys.setrecursionlimit(5)",
    "import sys\nsys._getframe", "import sys\nsys.exc_info", "import sys\nsys.meta_path", "import sys\nsys.__dict__",
    "from sys import modules", "import sys\nsys.stdout.buffer", "import sys\nsys.stdout.fileno()",
    "import sys\nsys.stdout._Stream__stream", "import sys\nsys.stderr.__class__", "import sys\nsys.stdout = None",
    "import sys\ndel sys.argv", "import sys\nsys.implementation._multiarch", "import io\nio.open('/etc/passwd')",
    "import io\nio.FileIO(4, 'w')", "from io import FileIO", "import io\nio.TextIOWrapper", "import io\nio.open_code",
    "import io\nio.StringIO.__init__.__globals__", "import sys\ngetattr(sys, 'modules')",
    "import sys\nvars(sys)", "import sys.monitoring", "import sys\ngetattr(sys, '__class__')",
    "import io\ngetattr(io, '__class__')", "import sys\ngetattr(sys, '_ModuleSubset__values')",
])
def test_nothing_else_of_sys_or_io(code):
    reply, out, err = run(code)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


def test_the_streams_type_reaches_nothing():
    """type(sys.stdout) is the subset's own writer: making one only writes through
    the object it is given."""
    reply, _, _ = run("import sys\nT = type(sys.stdout)\nclass Sink:\n    def __init__(self):\n        self.got = []\n"
                      "    def write(self, t):\n        self.got.append(t)\n        return len(t)\n"
                      "    def flush(self):\n        pass\ns = Sink()\nT(s).write('x')\nresult = s.got")
    assert reply["success"] and reply["result"] == ["x"], reply
