"""`logging`, `warnings` and `traceback` as the sandbox gives them to a restricted snippet
(sandbox/restricted/subsets/snippet_logging.py, snippet_warnings.py, snippet_traceback.py): the everyday
use works and writes to the snippet's stderr, and the routes by which the real modules
read files, walk frames or format fields unguarded stay closed. The attacks run in this
process, with no kernel layer (the Python layer must hold alone); what must work runs in
a real child, whose logging and warnings state is its own."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runner_harness import SyncRunner  # noqa: E402

from sandbox import profiles
from sandbox.restricted import run as restricted

BASIC = frozenset(profiles.allowed_modules(["basic"]))
SECRET_FILE_LINE = "root:"   # the first line of /etc/passwd on this machine


def run(code):
    out, err = io.StringIO(), io.StringIO()
    reply = restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=out, stderr=err)
    return reply, out.getvalue(), err.getvalue()


def seen(reply, out, err) -> str:
    return f"{reply}{out}{err}"


@pytest.fixture(scope="module")
def child():
    runner = SyncRunner()
    yield lambda code: (lambda r: (r, r["stdout"], r["stderr"]))(runner.run(code))
    runner.close()


def test_logging_as_agents_write_it(child):
    reply, out, err = child(
        "import logging, io\nlogging.basicConfig(level=logging.INFO, format='%(levelname)s %(name)s:%(lineno)d %(message)s')\n"
        "log = logging.getLogger(__name__)\nlog.info('loaded %d rows', 3)\nlog.debug('not shown')\n"
        "buf = io.StringIO()\nh = logging.StreamHandler(buf)\nh.setFormatter(logging.Formatter('[{levelname}] {message}', style='{'))\n"
        "log.addHandler(h)\nlog.propagate = False\nlog.warning('to %s', 'buffer')\nlogging.info('root %s', 1)\n"
        "result = [buf.getvalue(), log.getEffectiveLevel(), log.isEnabledFor(logging.DEBUG), log.name]")
    assert reply["success"], reply
    assert reply["result"] == ["[WARNING] to buffer\n", 20, False, "__main__"]
    assert err == "INFO __main__:4 loaded 3 rows\nINFO root:12 root 1\n"


def test_a_handler_of_the_snippets_own_sees_a_plain_record(child):
    reply, _, _ = child(
        "import logging\nclass Keep(logging.Handler):\n    def __init__(self):\n        super().__init__()\n"
        "        self.lines = []\n    def emit(self, record):\n"
        "        self.lines.append((record.levelname, record.getMessage(), self.format(record), record.lineno))\n"
        "k = Keep()\nk.setFormatter(logging.Formatter('%(levelname)s|%(message)s'))\nlog = logging.getLogger('k')\n"
        "log.addHandler(k)\nlog.error('x=%s', 5)\nresult = k.lines")
    assert reply["success"] and reply["result"] == [["ERROR", "x=5", "ERROR|x=5", 12]], reply


def test_exceptions_in_logs_and_tracebacks_show_the_snippets_frames_only(child):
    reply, out, err = child(
        "import logging, traceback, json\nlogging.basicConfig()\ndef parse(s):\n    return json.loads(s)\n"
        "try:\n    parse('{bad')\nexcept ValueError as e:\n    logging.exception('parse failed')\n"
        "    text = traceback.format_exc()\n    lines = traceback.format_exception(e)\n    traceback.print_exc()\n"
        "result = [text.splitlines()[-1].split(':')[0], ''.join(lines) == text, 'line 4, in parse' in text]")
    assert reply["success"] and reply["result"] == ["JSONDecodeError", True, True], reply
    assert ".py" not in err and "site-packages" not in err and "parse failed" in err


def test_warnings_as_agents_write_them(child):
    reply, _, err = child(
        "import warnings\nwarnings.warn('old api', DeprecationWarning)\nwarnings.filterwarnings('ignore', category=UserWarning)\n"
        "warnings.warn('quiet')\nwith warnings.catch_warnings(record=True) as caught:\n    warnings.simplefilter('always')\n"
        "    warnings.warn('kept', RuntimeWarning)\nresult = [(str(w.message), w.category.__name__, w.lineno) for w in caught]")
    assert reply["success"] and reply["result"] == [["kept", "RuntimeWarning", 7]], reply
    assert err == "<snippet>:2: DeprecationWarning: old api\n"


@pytest.mark.parametrize("code", [
    # a made-up traceback would make the real formatter read any file through linecache
    "import logging, types\nns = lambda **kw: types.SimpleNamespace(**kw)\n"
    "code = ns(**{'co_filename': '/etc/passwd', 'co_name': 'x', 'co_qualname': 'x', "
    "'co_positions': lambda: iter([(1, 1, 0, 1)])})\n"
    "f = ns(**{'f_code': code, 'f_globals': {}, 'f_lineno': 1, 'f_locals': {}})\n"
    "t = ns(**{'tb_frame': f, 'tb_lineno': 1, 'tb_next': None, 'tb_lasti': 0})\n"
    "import io\nbuf = io.StringIO()\nlg = logging.getLogger('t')\nlg.propagate = False\n"
    "lg.addHandler(logging.StreamHandler(buf))\nlg.error('x', exc_info=(ValueError, ValueError('v'), t))\nprint(buf.getvalue())",
    "import traceback, types\nns = lambda **kw: types.SimpleNamespace(**kw)\n"
    "code = ns(**{'co_filename': '/etc/passwd', 'co_name': 'x', 'co_qualname': 'x', "
    "'co_positions': lambda: iter([(1, 1, 0, 1)])})\n"
    "f = ns(**{'f_code': code, 'f_globals': {}, 'f_lineno': 1, 'f_locals': {}})\n"
    "t = ns(**{'tb_frame': f, 'tb_lineno': 1, 'tb_next': None, 'tb_lasti': 0})\n"
    "print(traceback.format_exception(ValueError, ValueError('v'), t))",
    "import traceback\ntraceback.format_exception(object())",
    "import traceback\ntraceback.print_exception('/etc/passwd')",
    "import warnings\nwarnings.warn_explicit('m', UserWarning, '/etc/passwd', 1)",
    "import warnings\nwarnings.formatwarning('m', UserWarning, '/etc/passwd', 1)",
    "import warnings\nwarnings.showwarning",
    "import warnings\nwarnings.filters",
    "import warnings\nwarnings.catch_warnings(module=warnings)",
    "import warnings\nwarnings.warn('m', object)",
    "import warnings\nwarnings.simplefilter('print')",
    "import traceback\ntraceback.extract_stack()",
    "import traceback\ntraceback.walk_stack(None)",
    "import traceback\ntraceback.print_stack()",
    "import traceback\ntraceback.TracebackException",
    "import logging\nlogging.getLogger().manager",
    "import logging\nlogging.getLogger().handlers",
    "import logging\nlogging.getLogger()._Logger__real",
    "import logging\nlogging.root",
    "import logging\nlogging.LogRecord",
    "import logging\nlogging.makeLogRecord({})",
    "import logging\nlogging.FileHandler('/tmp/x')",
    "import logging\nlogging.basicConfig(filename='/etc/x')",
    "import logging\nlogging.setLoggerClass(object)",
    "import logging\nclass H(logging.StreamHandler):\n    pass",
    "import logging\nclass L(type(logging.getLogger())):\n    pass",
    "import logging\nclass F(logging.Formatter):\n    pass",
    "import logging\nh = logging.StreamHandler()\nh._WrappedHandler__real",
    "import logging\nlogging.StreamHandler(3)",
    "import logging\nlogging.getLogger().addHandler(object())",
    "import logging\nlogging.Formatter('%(message)s', style='!')",
    "import logging\nlogging.getLogger().name = 'x'",
    "import logging\nlogging.getLogger().debug.__func__",
    "import logging\nclass K(logging.Handler):\n    def emit(self, r):\n        r.getMessage.__globals__\nlg = logging.getLogger('k')\n"
    "lg.addHandler(K())\nlg.propagate = False\nlogging.raiseExceptions = False\nlg.error('x')\nraise SystemError('no door')",
])
def test_the_real_modules_stay_out_of_reach(code):
    reply, out, err = run(code)
    assert not reply["success"] or not reply["result"], reply
    assert SECRET_FILE_LINE not in seen(reply, out, err) and "/etc/passwd\"" not in err


def test_brace_style_fields_go_through_the_guards():
    reply, out, err = run(
        "import logging, io\nbuf = io.StringIO()\nh = logging.StreamHandler(buf)\n"
        "h.setFormatter(logging.Formatter('{args[0].__class__.__mro__} {msg.__class__}', style='{'))\n"
        "lg = logging.getLogger('b')\nlg.addHandler(h)\nlg.propagate = False\nlg.error('%s', 1)\nresult = buf.getvalue()")
    assert "object" not in seen(reply, out, err).replace("<object", ""), (reply, err)
    assert reply["security_events"], reply


def test_a_failing_stream_reports_in_the_snippets_terms():
    reply, _, err = run(
        "import logging\nclass Bad:\n    def write(self, s):\n        raise OSError('disk full')\n"
        "lg = logging.getLogger('bad')\nlg.addHandler(logging.StreamHandler(Bad()))\nlg.propagate = False\n"
        "lg.error('x')\nresult = 1")
    assert reply["success"] and "--- Logging error ---" in err and "disk full" in err and ".py" not in err, err


# ------------------------------------------------------------------ xml.etree.ElementTree
# Its functions take a file name and open it with the real open(); the snippet's open them
# with its own open() (no file at all in this process, which has no private directory).

@pytest.mark.parametrize("code", [
    "result = ET.parse(PATH).getroot().text",
    "result = [e.text for _, e in ET.iterparse(PATH)]",
    "result = ET.ElementTree().parse(PATH).text",
    "result = ET.ElementTree(file=PATH).getroot().text",
    "class T(ET.ElementTree):\n    def load(self, p):\n        return super().parse(p)\nresult = T().load(PATH).text",
    "result = ET.ElementTree.parse(ET.ElementTree(), PATH).text",
])
def test_element_tree_reads_no_file_past_open(tmp_path, code):
    secret = tmp_path / "host.xml"
    secret.write_text("<secret>HOST-ONLY</secret>")
    reply, out, err = run("import xml.etree.ElementTree as ET\n" + code.replace("PATH", repr(str(secret))))
    assert not reply["success"] and "HOST-ONLY" not in seen(reply, out, err), reply
    assert "open()" in reply["error"] or "ET.parse" in reply["error"] or ".parse(path)" in reply["error"], reply


@pytest.mark.parametrize("code", [
    "ET.ElementTree(ET.Element('a')).write(PATH)",
    "ET.ElementTree(ET.Element('a')).write(PATH, encoding='unicode')",
    "ET.ElementTree.write(ET.ElementTree(ET.Element('a')), file_or_filename=PATH)",
])
def test_element_tree_writes_no_file_past_open(tmp_path, code):
    target = tmp_path / "written.xml"
    reply, _out, _err = run("import xml.etree.ElementTree as ET\n" + code.replace("PATH", repr(str(target))))
    assert not reply["success"] and not target.exists(), reply


def test_element_tree_files_work_where_open_does(child):
    reply, out, _err = child(
        "import xml.etree.ElementTree as ET, io\n"
        "t = ET.ElementTree(ET.fromstring('<a><b>1</b></a>'))\n"
        "t.write('out.xml')\nt.write('text.xml', encoding='unicode')\nb = io.BytesIO()\nt.write(b)\n"
        "result = [ET.parse('out.xml').getroot().find('b').text, ET.tostring(ET.parse('text.xml').getroot()).decode(),\n"
        "          [e.tag for _, e in ET.iterparse('out.xml')], isinstance(t, ET.ElementTree), b.getvalue().decode()]")
    assert reply["success"] and reply["result"] == ["1", "<a><b>1</b></a>", ["b", "a"], True, "<a><b>1</b></a>"], reply
