"""`unittest` as the sandbox gives it to a restricted snippet (sandbox/restricted/subsets/snippet_unittest.py):
test cases of the snippet's own classes run as in plain CPython (fixtures and helpers with
private names included), the report shows the snippet's lines only, and the routes by
which the real module imports, walks or calls things by name stay closed. In this process,
with no kernel layer: the Python layer must hold alone."""

from __future__ import annotations

import contextlib
import io
import platform
import sys
import types
import uuid

import pytest

from sandbox import profiles
from sandbox.restricted import run as restricted

BASIC = frozenset(profiles.allowed_modules(["basic"]))


def run(code):
    out, err = io.StringIO(), io.StringIO()
    reply = restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=out, stderr=err)
    return reply, out.getvalue(), err.getvalue()


def plain(code, monkeypatch) -> str:
    """The code as a script: unittest.main() finds its tests in __main__, and reads sys.argv."""
    main = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setattr(sys, "argv", ["snippet"])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        exec(compile(code, "<plain>", "exec", dont_inherit=True), vars(main))
    return out.getvalue()


CALCULATOR = """
import unittest
class Calculator:
    def add(self, a, b):
        return a + b
    def div(self, a, b):
        if b == 0:
            raise ZeroDivisionError("division by zero")
        return a / b
"""

AGENT_SNIPPETS = [
    # fixtures, helpers with private names, subtests, expected exceptions, unittest.main
    CALCULATOR + """
class TestCalculator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._cases = [(1, 2, 3), (-1, 1, 0)]
    def setUp(self):
        self.calc = Calculator()
        self._log = []
    def _check(self, a, b, expected):
        self._log.append((a, b))
        self.assertEqual(self.calc.add(a, b), expected)
    def test_add(self):
        for a, b, expected in self._cases:
            with self.subTest(a=a, b=b):
                self._check(a, b, expected)
        self.assertEqual(len(self._log), 2)
    def test_div(self):
        self.assertAlmostEqual(self.calc.div(1, 3), 0.3333, places=3)
        with self.assertRaises(ZeroDivisionError) as cm:
            self.calc.div(1, 0)
        self.assertIn("zero", str(cm.exception))
    def test_wrong(self):
        self.assertEqual(self.calc.add(1, 1), 3, "one and one")
    @unittest.skip("not ready")
    def test_later(self):
        pass
    @unittest.expectedFailure
    def test_known_bug(self):
        self.assertEqual(1, 2)
program = unittest.main(argv=["tests"], exit=False, verbosity=0)
r = program.result
print(r.testsRun, len(r.failures), len(r.errors), len(r.skipped), len(r.expectedFailures), r.wasSuccessful())
print([test.id().split(".")[-1] for test, _ in r.failures])
print(r.failures[0][1].splitlines()[-1])
""",
    # a loader, a suite and a runner writing to a buffer
    CALCULATOR + """
import io
class A(unittest.TestCase):
    def test_one(self):
        self.assertTrue(Calculator().add(2, 2) == 4)
    def test_two(self):
        self.assertListEqual([1, 2], [1, 2])
class B(unittest.TestCase):
    def runTest(self):
        self.assertIsNone(None)
loader = unittest.TestLoader()
suite = unittest.TestSuite()
suite.addTests(loader.loadTestsFromTestCase(A))
suite.addTest(B())
suite.addTest(unittest.FunctionTestCase(lambda: None))
print(suite.countTestCases(), loader.getTestCaseNames(A))
stream = io.StringIO()
result = unittest.TextTestRunner(stream=stream, verbosity=2).run(suite)
print(result.testsRun, result.wasSuccessful(), "Ran 4 tests" in stream.getvalue())
""",
    # logs and warnings a test expects, with a logger of the snippet's or by name
    """
import logging, unittest, warnings
log = logging.getLogger("shop")
def checkout(total):
    if total > 100:
        log.warning("large order: %s", total)
    if total < 0:
        warnings.warn("negative total", UserWarning)
    return total
class TestCheckout(unittest.TestCase):
    def test_large(self):
        with self.assertLogs(log, level="WARNING") as cm:
            checkout(150)
        self.assertEqual(cm.output, ["WARNING:shop:large order: 150"])
        self.assertEqual(cm.records[0].getMessage(), "large order: 150")
    def test_quiet(self):
        with self.assertNoLogs("shop", level="WARNING"):
            checkout(5)
    def test_negative(self):
        with self.assertWarns(UserWarning) as w:
            checkout(-1)
        self.assertIn("negative", str(w.warning))
r = unittest.main(exit=False, verbosity=0).result
print(r.testsRun, r.wasSuccessful())
""",
    # unittest.main() by name, and one test of a class
    CALCULATOR + """
class C(unittest.TestCase):
    def test_a(self):
        pass
    def test_b(self):
        self.fail("b fails")
print(unittest.main(defaultTest="C.test_a", exit=False).result.wasSuccessful())
print(unittest.main(argv=["x", "C"], exit=False).result.testsRun)
""",
]


@pytest.mark.parametrize("code", AGENT_SNIPPETS)
def test_what_agents_write_with_unittest_gives_cpythons_output(code, monkeypatch):
    reply, out, err = run(code)
    assert reply["success"], reply
    assert out == plain(code, monkeypatch)
    assert "sandbox/" not in err and "site-packages" not in err, err   # (the report: the snippet's lines only)


def test_a_failures_report_shows_the_snippets_lines_only():
    reply, out, err = run(CALCULATOR + "class T(unittest.TestCase):\n    def test_x(self):\n"
                                       "        self.assertEqual(Calculator().add(1, 2), 4)\n"
                                       "unittest.main(exit=False)")
    assert reply["success"], reply
    assert 'File "<snippet>", line 12, in test_x' in err and "AssertionError: 3 != 4" in err, err
    assert "/" not in err.replace("\n", " ").split("Traceback")[1].split("AssertionError")[0], err


def test_a_test_run_without_a_result_reports_the_snippets_lines_only():
    reply, out, err = run("import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n"
                          "        self.assertEqual(1, 2)\nresult = T('test_x').run().failures[0][1]")
    assert reply["success"] and 'File "<snippet>", line 4, in test_x' in reply["result"], reply
    assert "/" not in reply["result"] and "rp_guards" not in reply["result"], reply


def test_unittest_main_ends_the_run_as_a_script_would():
    reply, out, err = run("import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n"
                          "        self.fail('no')\nunittest.main()")
    assert not reply["success"] and "SystemExit: True" in reply["error"], reply
    reply, out, err = run("import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n"
                          "        pass\nunittest.main()\nprint('not reached')")
    assert reply["success"] and out == "" and "OK" in err, reply


@pytest.mark.parametrize("code", [
    # by name: imports the module a name names and calls what it finds with no arguments
    "unittest.TestLoader().loadTestsFromName('os.getcwd')",
    "unittest.TestLoader().loadTestsFromNames(['json.dumps'])",
    "unittest.TestLoader().loadTestsFromModule(unittest)",
    # a directory's test files imported as modules: unrestricted Python
    "unittest.TestLoader().discover('.')",
    "unittest.main(module='json', exit=False)", "unittest.main(testLoader=unittest.TestLoader(), exit=False)",
    "unittest.main(argv=['', 'os.abort'], exit=False)", "unittest.main(defaultTest='json.dumps', exit=False)",
    "unittest.main(argv=['', '--locals'], exit=False)", "unittest.main(catchbreak=True, exit=False)",
    # what a loader, a suite or a test case takes
    "unittest.TestLoader().loadTestsFromTestCase(unittest.FunctionTestCase)",
    "T('__reduce__')", "T(methodName='_callSetUp')", "T(123)",
    "unittest.TestSuite([print])", "unittest.TestSuite().addTest(unittest.TestLoader())",
    "T('test_a').addTypeEqualityFunc(int, '__init__')",
    # the rest of the module
    "unittest.mock", "unittest.case", "unittest.defaultTestLoader", "unittest.installHandler",
    "unittest.IsolatedAsyncioTestCase", "from unittest import mock", "import unittest.mock",
    "import unittest.case", "getattr(unittest.TestCase.__init__, '__glob' + 'als__')",
    # a test case's private state is unittest's; the snippet's own private names are its
    "T('test_a')._testMethodName", "T('test_a')._outcome", "getattr(T('test_a'), '_cleanups')",
    "setattr(T('test_a'), '_testMethodName', '__reduce__')", "T._classSetupFailed = True",
    "setattr(T, '_class_cleanups', [])", "class U(unittest.TestCase):\n    _testMethodName = 'x'",
    "class V(unittest.TestCase):\n    def _callTestMethod(self, method):\n        pass",
    "vars(T('test_a'))", "T.__mro__", "unittest.TestResult()._original_stdout",
    "super(unittest.TestCase, T('test_a')).__init__('__reduce__')",
    # assertLogs' context manager without the real logging.Logger it holds
    "import logging\nctx = T('test_a').assertLogs('x')\nwith ctx:\n    logging.getLogger('x').warning('w')\nctx.logger",
    "import logging\nctx = T('test_a').assertLogs('x')\nwith ctx:\n    logging.getLogger('x').warning('w')\n"
    "ctx.logger.manager", "ctx = T('test_a').assertLogs('x')\nctx._context",
    "ctx = T('test_a').assertNoLogs('x')\ngetattr(ctx, '_context')",
    # the runner's stream is the snippet's stderr wrapper, never the file object
    "unittest.TextTestRunner().stream.stream.buffer",
])
def test_closed_routes(code):
    reply, out, err = run("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n" + code)
    assert not reply["success"], reply
    assert reply["error_type"] == "security_violation" or reply["error"].startswith("AttributeError"), reply


def test_a_test_files_of_the_snippets_own_are_never_imported(tmp_path, monkeypatch):
    """discover would import a .py file the snippet wrote as a module, unrestricted."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "test_evil.py").write_text("import os\nprint('imported as a module', os.getpid())\n")
    reply, out, err = run("import unittest\nunittest.TestLoader().discover('.', pattern='test_*.py')")
    assert not reply["success"] and reply["error_type"] == "security_violation", reply
    assert "imported as a module" not in out + err


# The real classes behind the subset, reached without naming them: each would run a method
# the subset refuses (or hands out what it keeps back) in its real form.
_REAL = "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
HIDDEN_BASE_ATTACKS = {
    "mro of the loader": "Real = unittest.TestLoader.mro()[1]\nReal.loadTestsFromName(Real(), 'os.uname')",
    "super of the loader": "print(super(unittest.TestLoader, unittest.TestLoader()).loadTestsFromName)",
    "super of the loader, discover": "super(unittest.TestLoader, unittest.TestLoader()).discover('.')",
    "mro of the runner": "print(unittest.TextTestRunner.mro()[1]().stream.stream)",
    "mro of a test case": "import logging\nReal = T.mro()[2]\nctx = Real.assertLogs(T('test_a'), 'x')\nwith ctx:\n"
                          "    logging.getLogger('x').warning('w')\n"
                          "print(ctx.logger.manager.loggerDict)",
    "mro of FunctionTestCase": "Real = unittest.FunctionTestCase.mro()[1]\nReal('__reduce__')",
    "type of a plain test case": "import logging\nReal = type(unittest.TestCase())\n"
                                 "ctx = Real.assertLogs(T('test_a'), 'x')\nwith ctx:\n"
                                 "    logging.getLogger('x').warning('w')\nprint(ctx.logger.manager)",
    "a real test case's own private method name": "class U(T.mro()[2]):\n    pass\nU('__reduce__')",
    "a real loader's dunder prefix": "class L(unittest.TestLoader.mro()[1]):\n    testMethodPrefix = '__'\n"
                                      "print(L().getTestCaseNames(T))",
    "a real runner with tb_locals": "import io\nRunner = unittest.TextTestRunner.mro()[1]\n"
                                    "class F(unittest.TestCase):\n    def test_f(self):\n        self.fail('x')\n"
                                    "s = io.StringIO()\nRunner(stream=s, tb_locals=True).run(unittest.TestLoader()"
                                    ".loadTestsFromTestCase(F))\nprint(s.getvalue())",
    "a subtest's real test case": "import logging\nclass S(unittest.TestCase):\n    def test_s(self):\n"
                                  "        with self.subTest(i=1):\n            self.fail('x')\n"
                                  "r = unittest.TestResult()\nunittest.TestLoader().loadTestsFromTestCase(S).run(r)\n"
                                  "ctx = r.failures[0][0].assertLogs('x')\nwith ctx:\n"
                                  "    logging.getLogger('x').warning('w')\nprint(ctx.logger.manager)",
    "a FunctionTestCase's real test case": "import logging\nctx = unittest.FunctionTestCase(print).assertLogs('x')\n"
                                          "with ctx:\n    logging.getLogger('x').warning('w')\n"
                                          "print(ctx.logger.manager)",
    "a plain test case's equality function by name": "t = unittest.TestCase()\n"
                                                     "t.addTypeEqualityFunc(int, '__init__')",
    "super of the suite": "s = unittest.TestSuite()\nsuper(unittest.TestSuite, s).addTest(print)\nprint(list(s))",
    "mro of the suite": "s = unittest.TestSuite()\nunittest.TestSuite.mro()[1].addTest(s, print)\nprint(list(s))",
    "the subset's method in its real form": "real = unittest.TestLoader.mro()[1].discover\n"
                                             "real(unittest.TestLoader(), '.', top_level_dir='.')",
}


@pytest.mark.parametrize("code", HIDDEN_BASE_ATTACKS.values(), ids=list(HIDDEN_BASE_ATTACKS))
def test_the_real_classes_behind_the_subset_are_out_of_reach(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # (a name of its own: a module imported once is not imported again)
    (tmp_path / f"test_{uuid.uuid4().hex}.py").write_text("open('imported', 'w').close()\n")
    reply, out, err = run(_REAL + code)
    assert not reply["success"], (reply, out, err)   # (mro() shows no real class: [TestLoader, object])
    assert not (tmp_path / "imported").exists()
    shown = out + err + str(reply.get("error"))
    for leak in ( "Logger", platform.release(), "FileIO", "_io.", "sandbox/", "rp_guards"):
        assert leak not in shown, (leak, shown)


def test_mro_lists_the_classes_a_snippet_holds_as_cpython_shows_them(monkeypatch):
    code = ("import collections, unittest\nclass T(unittest.TestCase):\n    pass\nclass A:\n    pass\n"
            "class B(A, collections.OrderedDict):\n    pass\nimport enum, collections.abc\n"
            "class Color(enum.IntEnum):\n    RED = 1\nclass M(collections.abc.Mapping):\n    pass\n"
            "print(Color.mro(), [c.__name__ for c in M.mro()])\n"
            "print([c.__name__ for c in T.mro()], [c.__name__ for c in type.mro(B)], bool.mro(), KeyError.mro())\n"
            "print([c.__name__ for c in unittest.TestLoader.mro()], collections.Counter.mro())\n")
    reply, out, err = run(code)
    assert reply["success"], reply
    assert out == plain(code, monkeypatch), out
