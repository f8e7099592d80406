"""`import sys`, `import io` and `import os` without their profiles
(sandbox/restricted/subsets/registry.py): the everyday part works, the file functions stay in the
snippet's directory, and nothing else of the modules is reachable through the
subset, its values or their types."""

from __future__ import annotations

import io
import os

import pytest

from sandbox import profiles
from sandbox.restricted import run as restricted
from sandbox.restricted import snippet_files

BASIC = frozenset(profiles.allowed_modules(["basic"]))


def run(code):
    out, err = io.StringIO(), io.StringIO()
    return restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=out, stderr=err), out, err


def test_what_agents_use_works():
    reply, out, err = run("import sys, io\nprint('to stderr', file=sys.stderr)\nsys.stdout.write('to stdout\\n')\n"
                          "buf = io.StringIO()\nprint('a', 'b', file=buf)\nraw = io.BytesIO(b'xyz')\nraw.seek(1)\n"
                          "result = [buf.getvalue(), raw.read(), sys.version_info >= (3, 10), sys.argv,\n"
                          "          sys.maxsize > 2**31, sys.getrecursionlimit() > 100, sys.float_info.max > 1,\n"
                          "          sys.getsizeof([1, 2, 3]) > sys.getsizeof([])]")
    assert reply["success"] and reply["result"] == ["a b\n", "b'yz'", True, [], True, True, True, True], reply
    assert err.getvalue() == "to stderr\n" and out.getvalue() == "to stdout\n"


@pytest.mark.parametrize("code", [
    "import sys\nsys.modules", "import sys\nsys.path", "import sys\nsys.settrace", "import sys\nsys.setprofile(None)",
    "import sys\nsys._getframe", "import sys\nsys.meta_path", "import sys\nsys.__dict__",
    "from sys import modules", "import sys\nsys.stdout.buffer", "import sys\nsys.stdout.fileno()",
    "import sys\nsys.stdout._Stream__stream", "import sys\nsys.stderr.__class__.__mro__", "import sys\nsys.version = 'x'",
    "import sys\ndel sys.argv", "import sys\nsys.implementation._multiarch", "import io\nio.open('/etc/passwd')",
    "import io\nio.FileIO(4, 'w')", "from io import FileIO", "import io\nio.TextIOWrapper", "import io\nio.open_code",
    "import io\nio.StringIO.__init__.__globals__", "import sys\ngetattr(sys, 'modules')",
    "import sys\nvars(sys)", "import sys.monitoring", "import sys\ngetattr(sys, '__class__')",
    "import io\ngetattr(io, '__class__')", "import sys\ngetattr(sys, '_ModuleSubset__values')",
])
def test_nothing_else_of_sys_or_io(code):
    reply, out, err = run(code)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


def test_exc_info_gives_the_exception_without_its_traceback_object():
    reply, _, _ = run("import sys, traceback\nbefore = sys.exc_info()\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
                      "    kind, value, tb = sys.exc_info()\n    text = traceback.format_exception(*sys.exc_info())\n"
                      "result = [before, kind.__name__, str(value), tb, text[-1]]")
    assert reply["success"] and reply["result"] == [[None, None, None], "ZeroDivisionError", "division by zero",
                                                    None, "ZeroDivisionError: division by zero\n"], reply


@pytest.mark.parametrize("code", [
    "import sys\ntry:\n    1 / 0\nexcept Exception:\n    sys.exc_info()[1].__traceback__.tb_next.tb_frame",
    "import sys\ntry:\n    1 / 0\nexcept Exception:\n    sys.exc_info()[1].__traceback__.tb_frame",
    "import sys\ntry:\n    1 / 0\nexcept Exception:\n    getattr(sys.exc_info()[1].with_traceback(None), '__traceback__').tb_frame",
    "import sys\nsys.exc_info.__globals__", "import sys\nsys.exc_info.__code__",
])
def test_exc_info_reaches_no_frame(code):
    reply, out, err = run(code)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


@pytest.mark.parametrize("code", [
    "import sys\nS = type(sys)\nm = S('sys', {'modules': 1})",      # the class, reached by type(x) or x.__class__
    "import sys\nS = sys.__class__\nm = S('os', {})",
    "import os\nS = type(os.path)\nm = S()",
    "import sys, copy\ncopy.copy(sys)", "import sys, copy\ncopy.deepcopy(sys)", "import os, copy\ncopy.copy(os.path)",
])
def test_a_subset_is_made_by_an_import_only(code):
    reply, _, _ = run(code)
    assert not reply["success"] and reply["error_type"] == "runtime_error", reply
    assert "modules cannot be" in reply["error"], reply


def test_the_streams_type_reaches_nothing():
    """type(sys.stdout) is the subset's own writer: making one only writes through
    the object it is given."""
    reply, _, _ = run("import sys\nT = type(sys.stdout)\nclass Sink:\n    def __init__(self):\n        self.got = []\n"
                      "    def write(self, t):\n        self.got.append(t)\n        return len(t)\n"
                      "    def flush(self):\n        pass\ns = Sink()\nT(s).write('x')\nresult = s.got")
    assert reply["success"] and reply["result"] == ["x"], reply


def test_the_standard_streams_are_read_at_each_use_and_settable_as_in_python():
    reply, out, err = run("import sys, io, contextlib\nbuf = io.StringIO()\n"
                          "with contextlib.redirect_stdout(buf):\n    sys.stdout.write('inside ')\n    print('printed')\n"
                          "old = sys.stdout\nmine = io.StringIO()\nsys.stdout = mine\nprint('captured')\n"
                          "is_mine = sys.stdout is mine\nsys.stdout = old\nprint('after')\n"
                          "sys.stderr = io.StringIO()\nprint('hidden', file=sys.stderr)\n"
                          "result = [buf.getvalue(), mine.getvalue(), is_mine]")
    assert reply["success"] and reply["result"] == ["inside printed\n", "captured\n", True], reply
    assert out.getvalue() == "after\n" and err.getvalue() == "", (out.getvalue(), err.getvalue())


@pytest.mark.parametrize("code", [
    "import sys\nsys.stdout.buffer", "import sys\nsys.stdout = sys.stdout\nsys.stdout.fileno()",
    "import sys\nsys.stdout = sys.stderr\nsys.stdout.buffer",
    "import sys, io, contextlib\nwith contextlib.redirect_stdout(io.StringIO()):\n    pass\nsys.stdout.buffer",
])
def test_a_standard_stream_read_back_is_never_the_file_object(code):
    reply, _, _ = run(code)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


def test_a_standard_stream_set_by_the_snippet_is_put_back_when_the_run_ends():
    import sys
    before = sys.stdout
    reply, _, _ = run("import sys, io\nsys.stdout = io.StringIO()\nsys.stderr = None")
    assert reply["success"] and sys.stdout is before and sys.stderr is not None, reply


def test_compression_and_time_zones_work_on_data_and_names():
    reply, _, _ = run("import gzip, bz2, lzma, datetime\nfrom zoneinfo import ZoneInfo, available_timezones\n"
                      "data = b'sandbox ' * 100\n"
                      "packed = [gzip.compress(data), bz2.compress(data), lzma.compress(data)]\n"
                      "paris = datetime.datetime(2024, 7, 1, 12, tzinfo=ZoneInfo('Europe/Paris'))\n"
                      "result = [gzip.decompress(packed[0]) == data, bz2.decompress(packed[1]) == data,\n"
                      "          lzma.decompress(packed[2]) == data, paris.isoformat(), 'UTC' in available_timezones()]")
    assert reply["success"] and reply["result"] == [True, True, True, "2024-07-01T12:00:00+02:00", True], reply


@pytest.mark.parametrize("code", [
    "import gzip\ngzip.open('/etc/passwd')", "import gzip\ngzip.GzipFile('/etc/passwd')", "from bz2 import open",
    "import lzma\nlzma.LZMAFile('/etc/passwd')", "import zoneinfo\nzoneinfo.reset_tzpath(['/etc'])",
    "import zoneinfo\nzoneinfo.TZPATH", "from zoneinfo import ZoneInfo\nZoneInfo('/etc/passwd')",
    "from zoneinfo import ZoneInfo\nZoneInfo('../../etc/passwd')", "from zoneinfo import ZoneInfo\nZoneInfo('UTC')._file_path",
    "import gzip\ngzip.builtins", "import zoneinfo\nzoneinfo._tzpath",
])
def test_the_subsets_reach_no_file_by_name(code):
    reply, _, _ = run(code)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


def test_platform_says_which_python_and_system():
    import platform
    reply, _, _ = run("import platform\nfrom platform import python_version\n"
                      "result = [python_version(), platform.python_implementation(), platform.system(),\n"
                      "          platform.machine(), platform.python_version_tuple()[0]]")
    assert reply["success"] and reply["result"] == [platform.python_version(), platform.python_implementation(),
                                                    "Linux", platform.machine(), "3"], reply


@pytest.mark.parametrize("code", [
    "import platform\nplatform.processor()",            # runs uname -p
    "import platform\nplatform.architecture()",         # runs file on the interpreter
    "import platform\nplatform.platform()", "import platform\nplatform.libc_ver()",  # read the interpreter's file
    "import platform\nplatform.uname()", "import platform\nplatform.node()", "import platform\nplatform.release()",
    "import platform\nplatform.os", "import platform\nplatform.subprocess", "import platform\nplatform._syscmd_file",
    "import platform\nplatform.system.__globals__", "from platform import uname",
])
def test_platform_is_a_subset_that_runs_and_reads_nothing(code):
    reply, _, _ = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply


def test_literals_command_lines_codecs_and_mime_types_give_cpythons_values():
    import ast
    import codecs
    import mimetypes
    import shlex
    reply, _, _ = run("import ast, shlex, codecs, mimetypes\nfrom ast import literal_eval\n"
                      "result = [literal_eval(\"{'a': [1, (2, 3)], 'b': None}\"), shlex.split('a \"b c\" d'),\n"
                      "          shlex.quote(\"it's\"), shlex.join(['x y', 'z']), codecs.encode('abc', 'rot13'),\n"
                      "          codecs.decode(b'616263', 'hex'), mimetypes.guess_type('a.tar.gz'),\n"
                      "          mimetypes.guess_extension('text/csv')]")
    expected = [ast.literal_eval("{'a': [1, (2, 3)], 'b': None}"), shlex.split('a "b c" d'), shlex.quote("it's"),
                shlex.join(["x y", "z"]), codecs.encode("abc", "rot13"), repr(codecs.decode(b"616263", "hex")),
                list(mimetypes.guess_type("a.tar.gz")), mimetypes.guess_extension("text/csv")]
    expected[0]["a"][1] = [2, 3]   # (the result comes back as JSON)
    assert reply["success"] and reply["result"] == expected, reply


@pytest.mark.parametrize("code", [
    "import ast\nast.literal_eval.__globals__", "import ast\nast.compile", "from ast import PyCF_ONLY_AST", "import shlex\nshlex.shlex('a', '/etc/passwd')", "from shlex import shlex",
    "import shlex\nshlex.split.__globals__['shlex']", "import codecs\ncodecs.open('/etc/passwd')",
    "import codecs\ncodecs.register(print)", "import codecs\ncodecs.register_error('x', print)",
    "import codecs\ncodecs.lookup('utf-8')", "import codecs\ncodecs.EncodedFile", "from codecs import StreamReader",
    "import mimetypes\nmimetypes.init(['/etc/passwd'])", "import mimetypes\nmimetypes.read_mime_types('/etc/passwd')",
    "import mimetypes\nmimetypes.add_type('a/b', '.x')", "import mimetypes\nmimetypes.types_map",
    "import mimetypes\nmimetypes.knownfiles", "import mimetypes\nmimetypes.MimeTypes",
    "import mimetypes\nmimetypes.guess_type.__self__",
])
def test_the_small_subsets_hand_out_nothing_else(code):
    reply, _, _ = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply


def test_gc_collects_and_hands_out_nothing_of_the_collector():
    reply, _, _ = run("import gc\nfrom gc import collect\nresult = [gc.collect() >= 0, collect(2) >= 0]")
    assert reply["success"] and reply["result"] == [True, True], reply
    for code in ("import gc\ngc.get_objects()", "import gc\ngc.get_referrers(1)", "import gc\ngc.disable()",
                 "import gc\ngc.freeze()", "import gc\ngc.callbacks", "import gc\ngc.garbage",
                 "import gc\ngc.set_threshold(1)", "from gc import get_referents", "import gc\ngc.collect.__self__"):
        reply, _, _ = run(code)
        assert not reply["success"] and reply["error_type"] == "security_violation", (code, reply)


@pytest.mark.parametrize("text", [
    "__import__('os').system('false')", "(lambda: 1)()", "[x for x in (1,)]", "f'{1}'", "print(1)", "a.b",
])
def test_literal_eval_runs_no_code(text):
    reply, out, _ = run(f"import ast\nast.literal_eval({text!r})")
    assert not reply["success"] and reply["error"].startswith("ValueError: malformed node or string"), reply
    assert out.getvalue() == ""


def test_literal_eval_of_a_str_subclass_still_only_parses():
    """literal_eval calls lstrip on what it is given: a subclass's answer is parsed too, never run."""
    reply, out, _ = run("import ast\nclass S(str):\n    def lstrip(self, chars=None):\n"
                        "        return \"print('ran')\"\nast.literal_eval(S('1'))")
    assert not reply["success"] and "malformed node" in reply["error"] and out.getvalue() == "", reply


def test_mime_types_come_from_pythons_table_not_the_hosts_files(tmp_path, monkeypatch):
    """The module's own guess_type would read mimetypes.knownfiles first (the host's
    /etc/mime.types); the subset's table is Python's defaults, and the module is left as it was."""
    import mimetypes
    types_file = tmp_path / "mime.types"
    types_file.write_text("application/x-sandbox-test sbxt\n")
    monkeypatch.setattr(mimetypes, "knownfiles", [str(types_file)])
    monkeypatch.setattr(mimetypes, "inited", False)
    monkeypatch.setattr(mimetypes, "_db", None)
    reply, _, _ = run("import mimetypes\nresult = [mimetypes.guess_type('a.sbxt'), mimetypes.guess_type('a.png')]")
    assert reply["success"] and reply["result"] == [[None, None], ["image/png", None]], reply
    assert mimetypes.inited is False and mimetypes._db is None


def test_the_http_package_is_its_status_codes_not_its_submodules():
    import http.client  # noqa: F401 - loaded in this process, so an attribute of the package
    reply, _, _ = run("from http import HTTPStatus\nresult = [HTTPStatus(404).phrase, HTTPStatus.OK == 200]")
    assert reply["success"] and reply["result"] == ["Not Found", True], reply
    for code in ("import http\nhttp.client", "import http\nstr(http.client)", "from http import client",
                 "import http.client", "import http.server"):
        reply, _, _ = run(code)
        assert not reply["success"] and reply["error_type"] == "security_violation", (code, reply)


def run_in(code, files, scratch=None, monkeypatch=None):
    if scratch is not None:
        monkeypatch.setattr(snippet_files, "SCRATCH", str(scratch))
        monkeypatch.chdir(scratch)
    out, err = io.StringIO(), io.StringIO()
    return restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=out, stderr=err, files=files)


def test_os_path_arithmetic_and_the_environment_work_everywhere():
    reply, _, _ = run("import os\nimport os.path as osp\nfrom os.path import splitext\n"
                      "result = [os.path.join('a', 'b'), osp.basename('/x/y.z'), splitext('a.csv'), os.sep,\n"
                      "          os.getcwd() != '', isinstance(os.environ.get('PATH', ''), str), os.cpu_count() > 0]")
    assert reply["success"] and reply["result"] == ["a/b", "y.z", ["a", ".csv"], "/", True, True, True], reply


def test_without_a_directory_there_are_no_file_functions():
    for code in ("import os\nos.listdir('.')", "from os import makedirs", "import os\nos.path.exists('x')"):
        reply, _, _ = run(code)
        assert reply["error_type"] == "security_violation" and "os" in reply["error"], reply
    reply, _, _ = run("open('notes.txt', 'w')")
    assert "needs the filesystem profile" in reply["error"] and "io.StringIO" in reply["error"], reply


def test_file_functions_work_inside_the_scratch_directory(tmp_path, monkeypatch):
    code = ("import os\nos.makedirs('out/sub', exist_ok=True)\nopen('out/a.txt', 'w').write('hi')\n"
            "os.rename('out/a.txt', 'out/b.txt')\n"
            "result = [sorted(os.listdir('out')), os.path.isfile('out/b.txt'), os.path.getsize('out/b.txt'),\n"
            "          [w[0] for w in os.walk('.')], os.stat('out/b.txt').st_size]\nos.remove('out/b.txt')\n"
            "os.rmdir('out/sub')")
    reply = run_in(code, snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    assert reply["success"], reply
    assert reply["result"] == [["b.txt", "sub"], True, 2, [".", "./out", "./out/sub"], 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("code", [
    "import os\nos.listdir('/')", "import os\nos.listdir('..')", "import os\nos.makedirs('../escape')",
    "import os\nos.remove('/etc/hostname')", "import os\nos.rename('x', '/tmp/../x')", "import os\nlist(os.walk('/'))",
    "import os\nos.path.exists('/etc/passwd')", "import os\nos.path.getsize('../')", "open('../outside', 'w')",
    "import os\nos.replace('x', '../x')", "open('/proc/self/environ')", "import os\nos.stat('/etc/passwd')",
    "import os\nos.stat('..')",
])
def test_file_functions_refuse_paths_outside_the_scratch_directory(code, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "x").write_text("x")
    reply = run_in(code, snippet_files.SCRATCH_FILES, scratch, monkeypatch)
    assert reply["error_type"] == "security_violation" and "outside the scratch directory" in reply["error"], reply
    assert reply["security_events"][0]["kind"] == "call_blocked"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scratch"] and (scratch / "x").exists()


@pytest.mark.parametrize("code", [
    "import os\nos.system('id')", "import os\nos.fork", "import os\nos.open", "from os import execv",
    "import os\nos.path.os", "import os.path\nos.path.os.system", "import os\nos.listdir.__globals__",
    "import os\nos.listdir.__closure__", "import os\ngetattr(os.walk, '__wrapped__')", "import os\nos.environ.__class__.__subclasses__()",
    "import os\nos.chdir('/')", "import os\nos.listdir(0)", "import os\nos.walk(3)", "import os\nos.path.exists(4)",
    "import os\nos.getcwd.__self__", "import os\nos.path.realpath('/')", "import os\nos.symlink('/', 'root')",
    "import os\nos.link", "import os\nos.scandir(0)", "import os\nos.scandir('/')", "import os\nos.environ = {}",
])
def test_nothing_else_of_os(code, tmp_path, monkeypatch):
    reply = run_in(code, snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


# ---- pathlib without the filesystem profile (snippet_pathlib.py): Path over the scratch directory
def test_pathlib_works_inside_the_scratch_directory(tmp_path, monkeypatch):
    code = ("from pathlib import Path\nPath('d/e').mkdir(parents=True)\nPath('d/e').mkdir(exist_ok=True)\n"
            "(Path('d') / 'f.txt').write_text('one')\n(Path('d/e') / 'g.csv').write_bytes(b'a,b')\n"
            "Path('d/.hidden').touch()\nmoved = Path('d/f.txt').rename('d/h.txt')\n"
            "result = [sorted(str(p) for p in Path('d').rglob('*')), sorted(str(p) for p in Path('.').glob('d/*.txt')),\n"
            "          sorted(str(p) for p in Path('d').glob('**')), sorted(p.name for p in Path('d').iterdir()),\n"
            "          moved.read_text(), moved.stat().st_size, Path('d/e/g.csv').read_bytes(), Path('d').is_dir(),\n"
            "          Path('d/h.txt').is_file(), Path('d/f.txt').exists(), Path.cwd() == Path('.').resolve(),\n"
            "          Path('a/b.txt').with_suffix('.csv').as_posix(), Path('a/b').parent.name]\n"
            "moved.unlink()\nmoved.unlink(missing_ok=True)\nPath('d/.hidden').unlink()\n"
            "Path('d/e/g.csv').unlink()\nPath('d/e').rmdir()\nPath('d').rmdir()")
    reply = run_in(code, snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    assert reply["success"], reply
    # (as plain CPython gives it, tuples and bytes as the result's JSON shows them)
    assert reply["result"] == [["d/.hidden", "d/e", "d/e/g.csv", "d/h.txt"], ["d/h.txt"], ["d", "d/e"],
                               [".hidden", "e", "h.txt"], "one", 3, "b'a,b'", True, True, False, True, "a/b.csv",
                               "a"], reply
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("code", [
    "Path('/etc/passwd').read_text()", "Path('/proc/self/environ').read_bytes()", "list(Path('/').iterdir())",
    "list(Path('..').iterdir())", "Path('../escape').mkdir()", "Path('../escape/a').mkdir(parents=True)",
    "Path('../y').write_text('a')", "Path('x').rename('../x')", "Path('x').replace('/x')",
    "Path('/tmp/../etc').exists()", "Path('..').stat()", "Path('../x').touch()", "Path('../x').unlink()",
    "list(Path('.').glob('../*'))", "list(Path('.').glob('/etc/*'))", "list(Path('.').glob('a/../../*'))",
    "list(Path('.').rglob('../x'))", "list(Path('/').glob('*'))", "Path('..').resolve(strict=True)",
    "Path('x').open('rb').close()\nPath('../x').open('w')",
])
def test_pathlib_refuses_paths_outside_the_scratch_directory(code, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "x").write_text("x")
    reply = run_in("from pathlib import Path\n" + code, snippet_files.SCRATCH_FILES, scratch, monkeypatch)
    assert reply["error_type"] == "security_violation", reply
    assert "outside the scratch directory" in reply["error"] or "stays below it" in reply["error"], reply
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scratch"] and (scratch / "x").read_text() == "x"


@pytest.mark.parametrize("code", [
    "import pathlib\nclass P(pathlib.Path):\n    pass", "from pathlib import Path\nPath.home()",
    "from pathlib import Path\nPath('x').expanduser()", "from pathlib import Path\nPath('y').symlink_to('/etc')",
    "from pathlib import Path\nPath('y').hardlink_to('x')", "from pathlib import Path\nPath('x').chmod(0o777)",
    "from pathlib import Path\nPath('x').owner()", "from pathlib import Path\nPath('x').readlink()",
    "from pathlib import Path\np = Path('x')\np._str = '/etc/passwd'", "from pathlib import WindowsPath",
    "import pathlib\npathlib.os", "import pathlib\npathlib.Path.__init_subclass__",
    "import pathlib\ntype(pathlib.Path('x')).__mro__", "import pathlib\npathlib.Path('x').open.__globals__",
    "import pathlib\npathlib.Path.glob.__closure__", "import pathlib\npathlib.Path('x').open.__func__",
    "import pathlib\ngetattr(pathlib.Path, '_Path__x')", "import pathlib\npathlib.Path('x').lstat()",
])
def test_nothing_else_of_pathlib(code, tmp_path, monkeypatch):
    (tmp_path / "x").write_text("x")
    reply = run_in(code, snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x"]


def test_pathlib_without_a_directory_is_path_arithmetic_only():
    reply, _, _ = run("from pathlib import Path, PurePath\n"
                      "result = [str(Path('a') / 'b.txt'), Path('a/b.txt').suffix, isinstance(Path('a'), PurePath)]")
    assert reply["success"] and reply["result"] == ["a/b.txt", ".txt", True], reply
    for code in ("Path('x').write_text('a')", "Path('x').exists()", "list(Path('.').iterdir())"):
        reply, _, _ = run("from pathlib import Path\n" + code)
        assert not reply["success"] and "io.StringIO" in reply["error"], reply


GLOB_TREE = ("import glob, os\nos.makedirs('d/e')\n"
             "for name in ('a.py', 'b.txt', '.h.py', 'd/c.py', 'd/e/f.py'):\n    open(name, 'w').close()\n")


def test_glob_works_inside_the_scratch_directory(tmp_path, monkeypatch):
    code = GLOB_TREE + (
        "result = [glob.glob('*.py'), glob.glob('**/*.py'), sorted(glob.glob('**/*.py', recursive=True)),\n"
        "          glob.glob('d'), glob.glob('nope'), sorted(glob.glob('**', recursive=True)), glob.glob('./*.txt'),\n"
        "          sorted(glob.glob('*', include_hidden=True)), glob.glob('*.py', root_dir='d'),\n"
        "          sorted(glob.glob('d/**/*.py', recursive=True)), list(glob.iglob('*.txt')), glob.escape('a[1]')]")
    reply = run_in(code, snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    # (what plain CPython gives for the same tree)
    assert reply["success"] and reply["result"] == [
        ["a.py"], ["d/c.py"], ["a.py", "d/c.py", "d/e/f.py"], ["d"], [], ["a.py", "b.txt", "d", "d/c.py", "d/e",
                                                                          "d/e/f.py"],
        ["./b.txt"], [".h.py", "a.py", "b.txt", "d"], ["c.py"], ["d/c.py", "d/e/f.py"], ["b.txt"], "a[[]1]"], reply


@pytest.mark.parametrize("pattern", ["d/**", "d/**/", "**", "**/", "d/*/", "d/e/", "*/", "d/**/*.py", "d/e/*"])
def test_glob_gives_what_cpython_gives(pattern, tmp_path, monkeypatch):
    """A trailing "/" keeps the directories (each with its "/"), and "d/**" gives "d/" itself."""
    reply = run_in(GLOB_TREE + f"result = [sorted(glob.glob({pattern!r}, recursive=r)) for r in (True, False)]",
                   snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    import glob
    assert reply["success"] and reply["result"] == [sorted(glob.glob(pattern, recursive=r)) for r in (True, False)], \
        reply


@pytest.mark.parametrize("code", [
    "glob.glob('/etc/*')", "glob.glob('../../*')", "glob.glob('*', root_dir='/')", "glob.glob('/etc/passwd')",
    "glob.glob('d/../../*')", "glob.glob('**/../../*', recursive=True)", "list(glob.iglob('/proc/*/environ'))",
    "glob.glob('*', dir_fd=0)",
])
def test_glob_refuses_paths_outside_the_scratch_directory(code, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    reply = run_in(GLOB_TREE + code, snippet_files.SCRATCH_FILES, scratch, monkeypatch)
    assert reply["error_type"] == "security_violation", reply


@pytest.mark.parametrize("code", [
    "import glob\nglob.os", "import glob\nglob.glob1", "import glob\nglob.glob.__closure__",
    "import glob\nglob.glob.__globals__", "from glob import has_magic", "import glob\nglob._iglob",
])
def test_nothing_else_of_glob(code, tmp_path, monkeypatch):
    reply = run_in(code, snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


def test_shutil_and_tempfile_work_inside_the_scratch_directory(tmp_path, monkeypatch):
    code = ("import os, shutil, tempfile\nos.makedirs('a/b')\nopen('a/f.txt', 'w').write('1')\n"
            "open('a/b/g.txt', 'w').write('2')\nshutil.copy('a/f.txt', 'a/b')\nshutil.copyfile('a/f.txt', 'a/h.txt')\n"
            "shutil.copytree('a', 'c', ignore=shutil.ignore_patterns('h.*'))\nshutil.move('c', 'd')\n"
            "tree = sorted((top, sorted(names)) for top, _, names in os.walk('d'))\nshutil.rmtree('d')\n"
            "with tempfile.TemporaryDirectory(prefix='job') as work:\n"
            "    open(os.path.join(work, 'x'), 'w').write('x')\n    made = os.path.basename(work).startswith('job')\n"
            "with tempfile.TemporaryDirectory(delete=False) as kept_dir:\n    pass\n"
            "made = made and os.path.isdir(kept_dir)\nshutil.rmtree(kept_dir)\n"
            "with tempfile.NamedTemporaryFile('w+', suffix='.csv', delete=False) as f:\n    f.write('a,b')\n"
            "    name = f.name\nwith tempfile.TemporaryFile() as t:\n    t.write(b'xyz')\n    t.seek(0)\n"
            "    back = t.read()\nkept = open(name).read()\nos.remove(name)\n"
            "result = [tree, made, os.path.exists(work), kept, back, os.path.exists('d'), tempfile.gettempdir() != '']")
    reply = run_in(code, snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    assert reply["success"] and reply["result"] == [
        [["d", ["f.txt"]], ["d/b", ["f.txt", "g.txt"]]], True, False, "a,b", "b'xyz'", False, True], reply
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


@pytest.mark.parametrize("code", [
    "import shutil\nshutil.copy('/etc/passwd', 'x')", "import shutil\nshutil.copy('x', '/var/tmp/x')",
    "import shutil\nshutil.copyfile('x', '../x')", "import shutil\nshutil.copytree('/usr', 'u')",
    "import shutil\nshutil.copytree('.', '../copy')", "import shutil\nshutil.move('x', '..')",
    "import shutil\nshutil.rmtree('..')", "import shutil\nshutil.rmtree('.')", "import shutil\nshutil.rmtree('/etc')",
    "import tempfile\ntempfile.mkdtemp(dir='/etc')", "import tempfile\ntempfile.NamedTemporaryFile(dir='..')",
    "import tempfile\ntempfile.TemporaryDirectory(prefix='../../x')",
    "import tempfile\ntempfile.NamedTemporaryFile(suffix='/../../../x')",
])
def test_shutil_and_tempfile_refuse_paths_outside_the_scratch_directory(code, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "x").write_text("x")
    reply = run_in(code, snippet_files.SCRATCH_FILES, scratch, monkeypatch)
    assert reply["error_type"] == "security_violation", reply
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scratch"] and (scratch / "x").read_text() == "x"


@pytest.mark.parametrize("code", [
    "import shutil\nshutil.which('ls')", "import shutil\nshutil.os", "import shutil\nshutil.disk_usage('/')",
    "import shutil\nshutil.make_archive('x', 'zip')", "import tempfile\ntempfile.mkstemp()",
    "import tempfile\ntempfile.tempdir = '/etc'", "import tempfile\ntempfile._os",
    "import tempfile\nclass T(tempfile.TemporaryDirectory):\n    pass",
    "import tempfile\nclass F(tempfile.NamedTemporaryFile):\n    pass",
    "import tempfile\nt = tempfile.TemporaryDirectory()\nt.name = '/etc'",
    "import tempfile\nf = tempfile.NamedTemporaryFile()\nf.name = '/etc/passwd'",
    "import tempfile\nf = tempfile.NamedTemporaryFile()\nf._NamedTemporaryFile__x",
    "import tempfile\nf = tempfile.NamedTemporaryFile()\nf.file._CHUNK_SIZE",
    "import shutil\nshutil.copy.__closure__", "import tempfile\ntempfile.mkdtemp.__globals__",
])
def test_nothing_else_of_shutil_or_tempfile(code, tmp_path, monkeypatch):
    reply = run_in(code, snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply


# A str subclass whose own methods answer os.path.realpath's questions otherwise than the
# kernel reads the name (isabs, then partition on 3.10-3.12; split on 3.13).
LYING_PATH = ("class S(str):\n    def startswith(self, *args):\n        return False\n"
              "    def partition(self, sep):\n        return ('inside', '', '')\n"
              "    def split(self, *args):\n        return ['inside']\n")


@pytest.mark.parametrize("code", [
    "open(S('/etc/hostname')).read()", "import os\nos.listdir(S('/etc'))", "import os\nos.path.exists(S('/etc'))",
    "import os\nos.stat(S('/etc/hostname'))", "import os\nlist(os.walk(S('/etc')))",
    "from pathlib import Path\nlist(Path(S('/etc')).iterdir())", "import glob\nglob.glob(S('/etc/*'))",
    "import glob\nglob.glob('*', root_dir=S('/etc'))", "import shutil\nshutil.copy(S('/etc/hostname'), 'h')",
    "import shutil\nshutil.copytree(S('/etc'), 'e')", "import tempfile\ntempfile.mkdtemp(dir=S('/var/tmp'))",
])
def test_a_str_subclass_names_the_path_it_holds(code, tmp_path, monkeypatch):
    """Every path is checked and used as an exact str (snippet_files.plain_path): a
    subclass's own methods answered realpath's check for `inside` while the kernel read
    /etc (os.listdir on 3.13 listed it)."""
    scratch = tmp_path / "scratch"
    (scratch / "inside").mkdir(parents=True)
    reply = run_in(LYING_PATH + code, snippet_files.SCRATCH_FILES, scratch, monkeypatch)
    assert reply["error_type"] == "security_violation" and "outside the scratch directory" in reply["error"], reply
    assert sorted(p.name for p in scratch.iterdir()) == ["inside"]


def test_a_time_zone_key_is_read_as_the_str_it_holds():
    """ZoneInfo checks a key with the key's own methods, then opens the file it names: a
    str subclass made it open /etc/passwd as a time zone file (3.10)."""
    reply, _, _ = run("class S(str):\n    def startswith(self, *a):\n        return False if a[0] == '/' else True\n"
                      "    def split(self, *a):\n        return ['UTC']\n    def __len__(self):\n        return 3\n"
                      "from zoneinfo import ZoneInfo\ntry:\n    ZoneInfo(S('../../../../../../etc/passwd'))\n"
                      "    result = 'made'\nexcept Exception as e:\n    result = str(e)\n"
                      "same = ZoneInfo('UTC') is ZoneInfo('UTC') and isinstance(ZoneInfo('UTC'), ZoneInfo)")
    assert reply["success"] and "ZoneInfo keys must" in reply["result"], reply


def test_timeit_times_a_function():
    reply, _, _ = run("import timeit\ncalls = []\nt = timeit.timeit(lambda: calls.append(1), number=50)\n"
                      "r = timeit.repeat(lambda: None, setup=lambda: calls.append(0), repeat=3, number=5)\n"
                      "result = [t >= 0, len(calls), len(r), timeit.default_timer() > 0]")
    assert reply["success"] and reply["result"] == [True, 53, 3, True], reply


@pytest.mark.parametrize("code", [
    "import timeit\ntimeit.timeit('sum(range(10))', number=1)",
    "import timeit\ntimeit.timeit(lambda: 1, setup='import os', number=1)",
    "import timeit\ntimeit.repeat(\"__import__('os').getpid()\", number=1)", "import timeit\ntimeit.Timer",
    "from timeit import Timer", "import timeit\ntimeit.main", "import timeit\ntimeit.timeit.__closure__",
])
def test_timeit_runs_no_string(code):
    reply, _, _ = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply


def test_the_environment_is_a_copy(tmp_path, monkeypatch):
    reply = run_in("import os\nos.environ['SANDBOX_PROBE'] = '1'\nresult = os.getenv('SANDBOX_PROBE')",
                   snippet_files.SCRATCH_FILES, tmp_path, monkeypatch)
    assert reply["success"] and reply["result"] is None and "SANDBOX_PROBE" not in os.environ, reply


# ---- sys.setrecursionlimit: in the snippet's frames, at most MAX_SNIPPET_RECURSION, and
# in the child (the C stack it takes is the child's)
RECURSE = {
    "function": "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nresult = f(DEPTH)",
    "lambda": "f = lambda n: 0 if n == 0 else 1 + f(n - 1)\nresult = f(DEPTH)",
    "dfs": ("def dfs(node, seen):\n    seen.add(node)\n    for nxt in (node + 1,):\n"
            "        if nxt <= DEPTH and nxt not in seen:\n            dfs(nxt, seen)\n    return len(seen) - 1\n"
            "result = dfs(0, set())"),
    "method": ("class T:\n    def walk(self, n):\n        return 0 if n == 0 else 1 + self.walk(n - 1)\n"
               "result = T().walk(DEPTH)"),
}


@pytest.fixture(scope="module")
def child():
    from runner_harness import SyncRunner
    runner = SyncRunner()
    yield runner
    runner.close()


@pytest.mark.parametrize("shape", sorted(RECURSE))
def test_a_deep_recursion_asked_for_runs_in_the_child(child, shape):
    from sandbox.restricted.subsets.stdlib_subsets import MAX_SNIPPET_RECURSION
    # (3.13 stops nested method calls a little below the cap itself; a lambda's call takes
    # three frames under the guards, not two)
    depth = (MAX_SNIPPET_RECURSION * 2 // 3 if shape == "lambda" else MAX_SNIPPET_RECURSION) - 300
    code = "import sys\nsys.setrecursionlimit(10 ** 6)\n" + RECURSE[shape].replace("DEPTH", str(depth))
    reply = child.run(code, timeout=20)
    assert reply["success"] and reply["result"] == depth, reply
    reply = child.run("import sys\nsys.setrecursionlimit(10 ** 6)\n"
                      + RECURSE[shape].replace("DEPTH", str(3 * MAX_SNIPPET_RECURSION)), timeout=20)
    assert reply["error_type"] == "runtime_error" and reply["error"].startswith("RecursionError"), reply


def test_the_recursion_limit_reads_back_in_the_snippets_frames_and_ends_with_the_run():
    from sandbox.restricted.subsets.stdlib_subsets import MAX_SNIPPET_RECURSION
    reply, _, _ = run("import sys\nbefore = sys.getrecursionlimit()\nsys.setrecursionlimit(3000)\nmiddle = "
                      "sys.getrecursionlimit()\nsys.setrecursionlimit(10 ** 9)\nhigh = sys.getrecursionlimit()\n"
                      "sys.setrecursionlimit(1)\nresult = [before, middle, high, sys.getrecursionlimit()]")
    assert reply["success"] and reply["result"] == [1000, 3000, MAX_SNIPPET_RECURSION, 100], reply
    import sys
    assert sys.getrecursionlimit() < 2 * MAX_SNIPPET_RECURSION   # put back after the run
    for bad, error in (("'10'", "TypeError"), ("True", "TypeError"), ("0", "ValueError"), ("2.5", "TypeError")):
        reply, _, _ = run(f"import sys\nsys.setrecursionlimit({bad})")
        assert reply["error"].startswith(error), (bad, reply)


@pytest.mark.skipif(not hasattr(__import__("sys"), "set_int_max_str_digits"), reason="Python without the limit")
def test_the_int_digit_limit_can_be_raised_as_cpythons_error_says():
    """str(10 ** 5000) fails with "Exceeds the limit (4300 digits) ...; use
    sys.set_int_max_str_digits() to increase the limit", which the sys subset refused.
    It affects only this run's own conversions (a result's big int travels as a summary)."""
    import sys
    kept = sys.get_int_max_str_digits()   # (the snippet runs in this process here)
    try:
        reply, _, _ = run("import sys\ntry:\n    str(10 ** 5000)\nexcept ValueError as e:\n    said = str(e)\n"
                          "before = sys.get_int_max_str_digits()\nsys.set_int_max_str_digits(0)\n"
                          "result = [said.endswith('use sys.set_int_max_str_digits() to increase the limit'), "
                          "before, len(str(10 ** 5000))]")
    finally:
        sys.set_int_max_str_digits(kept)
    assert reply["success"] and reply["result"] == [True, 4300, 5001], reply


def test_the_full_rules_name_every_subset_and_their_examples_exist():
    """The rules in full (get_sandbox_info's `rules`): each subset it names, and each
    module.name it gives as an example, is real."""
    import re

    from sandbox.mcp import descriptions
    from sandbox.restricted.subsets import registry
    note = descriptions.rules_detail()
    for name in registry.SUBSETS:
        if "." not in name:
            assert re.search(rf"\b{name}\b", note), name
    examples = re.findall(r"\b(sys|io|os|logging|warnings|traceback|asyncio|gzip|bz2|lzma|zoneinfo|platform|"
                          r"pathlib|glob|shutil|tempfile)\.([a-zA-Z_]+)", note)
    assert len(examples) >= 8, examples
    for module, attr in examples:
        reply, _, _ = run(f"import {module}\nresult = callable({module}.{attr}) or {module}.{attr} is not None")
        assert reply["success"] and reply["result"] is True, (module, attr, reply)


INSPECT_USE = '''import inspect, functools
def typed(a: int, b: 'str' = 'x', *rest, key=None, **extra) -> bool:
    """Check."""
    return True
def deco(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner
async def co():
    pass
sig = inspect.signature(deco(typed))
bound = sig.bind(1, key=2)
bound.apply_defaults()
result = [str(sig), [p.kind.name for p in sig.parameters.values()], sig.parameters['b'].annotation,
          sig.parameters['a'].annotation is int, sig.return_annotation is bool, dict(bound.arguments),
          sig.parameters['key'].default is None, inspect.Parameter.empty is sig.parameters['rest'].default,
          inspect.getdoc(typed), inspect.cleandoc('  a\\n    b'), inspect.isfunction(typed),
          inspect.iscoroutinefunction(co), inspect.isclass(int), inspect.ismethod(typed),
          str(inspect.signature(typed, follow_wrapped=False))]
'''


def test_inspect_gives_signatures_and_predicates_as_cpython_does():
    import json
    reply, _, _ = run(INSPECT_USE)
    plain = {}
    exec(compile(INSPECT_USE, "<plain>", "exec", dont_inherit=True), plain)   # (not this module's future import)
    assert reply["success"], reply["error"]
    assert reply["result"] == json.loads(json.dumps(plain["result"])), (reply["result"], plain["result"])


@pytest.mark.parametrize("code", [
    "import inspect\ninspect.stack()", "import inspect\ninspect.currentframe()", "import inspect\ninspect.getsource(len)",
    "import inspect\ninspect.getmembers(1)", "import inspect\ninspect.unwrap(len)", "import inspect\ninspect.getmodule(len)",
    "import inspect\ninspect.get_annotations(len)", "import inspect\ninspect.getattr_static(1, 'real')",
    "import inspect\ninspect.getclosurevars(len)", "from inspect import getsourcefile",
    "import inspect\ndef f(x: 'print(1)'):\n    pass\ninspect.signature(f, eval_str=True)",
    "import inspect\ndef f(x: 'print(1)'):\n    pass\ninspect.signature(f, globals={}, locals={})",
    "import inspect\ndef f(x: 'print(1)'):\n    pass\ninspect.Signature.from_callable(f, eval_str=True)",
    "import inspect\ndef f(x: 'print(1)'):\n    pass\ntype(inspect.signature(f)).from_callable(f, eval_str=True)",
    "import inspect\ndef f(x: 'print(1)'):\n    pass\ninspect.signature(f).from_callable(f)",
    "import inspect\ninspect.signature.__globals__",
])
def test_inspect_hands_out_no_frame_source_or_evaluation(code):
    reply, out, _ = run(code)
    assert not reply["success"] and reply["error_type"] == "security_violation", reply
    assert out.getvalue() == "", out.getvalue()   # (no annotation text was evaluated)


SEES_ITS_OWN_LINES = {
    "a test run with tb_locals": "import io, unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                                 "        secret = 'mine'\n        with self.subTest(i=1):\n            self.fail('no')\n"
                                 "s = io.StringIO()\nunittest.TextTestRunner(stream=s, tb_locals=True).run("
                                 "unittest.TestLoader().loadTestsFromTestCase(T))\nprint(s.getvalue())\n"
                                 "unittest.main(exit=False, tb_locals=True)",
    "a log record's fields": "import logging, sys\nh = logging.StreamHandler(sys.stdout)\nh.setFormatter(logging.Formatter("
                             "'%(pathname)s %(filename)s %(module)s %(funcName)s %(lineno)d %(message)s'))\n"
                             "log = logging.getLogger('app')\nlog.addHandler(h)\ndef f():\n"
                             "    log.warning('w', stack_info=True)\n    try:\n        int('x')\n    except ValueError:\n"
                             "        log.exception('e')\nf()",
    "a logger's caller": "import logging\nlogging.getLogger('app').findCaller(True)",
    "a warning's place": "import warnings\ndef f():\n    warnings.warn('careful', stacklevel=2)\nf()\n"
                         "warnings.warn('here')",
    "an error raised in library code": "import json, traceback\ntry:\n    json.loads('{x')\nexcept ValueError:\n"
                                       "    print(traceback.format_exc())\njson.loads('{x')",
    "a failing test's report without a result": "import unittest\nclass T(unittest.TestCase):\n"
                                                "    def test_a(self):\n        self.fail('no')\n"
                                                "print(T('test_a').run().failures[0][1])",
}


@pytest.mark.parametrize("code", SEES_ITS_OWN_LINES.values(), ids=list(SEES_ITS_OWN_LINES))
def test_what_the_snippet_sees_names_its_own_lines_only(code):
    """No install path, sandbox frame or module, host kernel release in what a snippet is shown."""
    import platform
    reply, out, err = run(code)
    shown = out.getvalue() + err.getvalue() + str(reply.get("error")) + str(reply.get("traceback"))
    for internal in ("/", "sandbox", "rp_guards", "restricted", "site-packages", "unittest/", "logging/",
                     platform.release()):
        assert internal not in shown.replace("__sandbox__", ""), (internal, shown)
