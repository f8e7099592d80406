"""The snippet's `unittest` (a subset): test cases written as classes of the snippet's,
loaded from those classes or found among its names by unittest.main(), and run by a
TextTestRunner whose report shows the snippet's lines only.

The real module finds and runs tests by name, and that is where it is a door: a loader
imports the module a dotted test name names and calls what it finds there with no
arguments (loadTestsFromName('os.abort')), imports the test files of a directory
(discover: a file the snippet wrote would run as unrestricted Python) and walks a
module's names (loadTestsFromModule, main(module=...)); a suite runs the set-up and
tear-down functions of the module of each object it is given (setUpModule); a test
case calls whatever attribute its method name names. Here:
- TestCase takes a public method name, and addTypeEqualityFunc a function (or one of
  the names TestCase itself registers);
- TestLoader loads a class of the snippet's derived from TestCase, by its public method
  names: no names, modules or directories;
- TestSuite holds test cases of those classes, FunctionTestCases and suites only;
- TestSuite, TestLoader and TextTestRunner wrap a real one and list what they expose; the
  real classes behind them and behind TestCase, TestResult and TextTestResult (which a
  snippet's classes derive from) are hidden (stand_ins.hide);
- main() runs the snippet's own TestCase classes (by their names in sorted order, as the
  real one walks a module) or the ones `defaultTest` or `argv` names among them;
- the runner writes to the snippet's stderr through the sys subset's wrapper (never the
  file object), and a failure's traceback is the snippet's frames (snippet_traceback).
"""

from __future__ import annotations

import sys
import types
import unittest

from sandbox.restricted.subsets import snippet_logging
from sandbox.restricted.subsets import snippet_traceback
from sandbox.restricted import stand_ins
from sandbox.restricted.sealed import Sealed, seal
from sandbox.restricted.subsets.streams import StandardStream
from sandbox.restricted.subsets.subset import Subset

# the equality functions TestCase.__init__ registers by name (it calls addTypeEqualityFunc)
_OWN_ASSERTERS = frozenset({"assertDictEqual", "assertListEqual", "assertTupleEqual", "assertSetEqual",
                            "assertMultiLineEqual"})
# what unittest.main(argv=[...]) takes besides test names
_FLAGS = {"-v": ("verbosity", 2), "--verbose": ("verbosity", 2), "-q": ("verbosity", 0), "--quiet": ("verbosity", 0),
          "-f": ("failfast", True), "--failfast": ("failfast", True), "-b": ("buffer", True), "--buffer": ("buffer", True)}
_BY_NAME = ("tests are loaded from the snippet's own TestCase classes here: "
            "unittest.TestLoader().loadTestsFromTestCase(MyTests), or unittest.main() for all of them")


class _Watching:
    """A `with` block's context manager, and nothing else of it."""

    __slots__ = ("_context",)

    def __init__(self, context):
        object.__setattr__(self, "_context", context)

    def __enter__(self):
        return object.__getattribute__(self, "_context").__enter__()

    def __exit__(self, *exc):
        return object.__getattribute__(self, "_context").__exit__(*exc)


def values(refuse, snippet_names, stderr) -> dict:
    """The names SUBSET lists. `snippet_names()`: the running
    snippet's globals; `stderr()`: its sys.stderr as the sys subset hands it out."""

    def public_method_name(args, kwargs):
        name = args[0] if args else kwargs.get("methodName", "runTest")
        if type(name) is not str or name.startswith("_"):
            raise refuse(f"TestCase({name!r:.60}): a test case is made for one of its test methods, by a public "
                         "name (MyTests('test_add')); a loader makes them: "
                         "unittest.TestLoader().loadTestsFromTestCase(MyTests)")

    TestCase = stand_ins.stand_in(unittest.TestCase, check_arguments=public_method_name)

    def addTypeEqualityFunc(self, typeobj, function):
        if not callable(function) and function not in _OWN_ASSERTERS:
            raise refuse("addTypeEqualityFunc(type, function) takes a function of (first, second, msg=None)")
        unittest.TestCase.addTypeEqualityFunc(self, typeobj, function)
    TestCase.addTypeEqualityFunc = addTypeEqualityFunc

    def watching(method):
        """assertLogs / assertNoLogs: the context manager without its `logger` (the real
        logging.Logger, whose manager and handlers the logging subset keeps out of reach);
        a logger of the snippet's is named by its name."""
        def checked(self, logger=None, level=None):
            if isinstance(logger, snippet_logging.Logger):
                logger = logger.name
            return _Watching(method(self, logger, level))
        checked.__name__ = checked.__qualname__ = method.__name__
        checked.__doc__ = method.__doc__
        return checked
    for name in ("assertLogs", "assertNoLogs"):
        if hasattr(unittest.TestCase, name):   # (assertNoLogs: 3.10)
            setattr(TestCase, name, watching(getattr(unittest.TestCase, name)))

    def is_test_class(value) -> bool:
        # (by the MRO: the stand-in answers issubclass and isinstance as the real TestCase does)
        return isinstance(value, type) and TestCase in value.__mro__ and value is not TestCase

    class _Suite(unittest.TestSuite):
        """The suite's work, never handed out: test cases of the snippet's classes, FunctionTestCases
        and suites."""

        def addTest(self, test):
            if isinstance(test, TestSuite):
                test = object.__getattribute__(test, "_TestSuite__suite")
            if not (is_test_class(type(test)) or isinstance(test, (unittest.FunctionTestCase, _Suite))):
                raise refuse(f"a test suite holds test cases of the snippet's TestCase classes and suites, not "
                             f"{type(test).__name__}: {_BY_NAME}")
            super().addTest(test)

    def suite_of(real):
        made = object.__new__(TestSuite)
        object.__setattr__(made, "_TestSuite__suite", real)
        return made

    class TestSuite(Sealed):
        """unittest.TestSuite of the snippet's test cases (composed: a real suite runs any
        callable it holds, and the set-up functions of its module)."""
        __slots__ = ("__suite",)

        def __init__(self, tests=()):
            object.__setattr__(self, "_TestSuite__suite", _Suite())
            self.addTests(tests)

        def addTest(self, test):
            object.__getattribute__(self, "_TestSuite__suite").addTest(test)

        def addTests(self, tests):
            if isinstance(tests, str):
                raise TypeError("tests must be an iterable of tests, not a string")
            for test in tests:
                self.addTest(test)

        def run(self, result, debug=False):
            return object.__getattribute__(self, "_TestSuite__suite").run(result, debug)

        def __call__(self, *args, **kwargs):
            return self.run(*args, **kwargs)

        def debug(self):
            object.__getattribute__(self, "_TestSuite__suite").debug()

        def countTestCases(self):
            return object.__getattribute__(self, "_TestSuite__suite").countTestCases()

        def __iter__(self):
            for test in object.__getattribute__(self, "_TestSuite__suite"):
                yield suite_of(test) if isinstance(test, _Suite) else test

        def __eq__(self, other):
            return isinstance(other, TestSuite) and list(self) == list(other)

        __hash__ = None

        def __repr__(self):
            return f"<unittest.suite.TestSuite tests={list(self)!r}>"

    class _Loader(unittest.TestLoader):
        """The loader's work, never handed out: by public test method names, into the snippet's suites."""
        suiteClass = _Suite

        def getTestCaseNames(self, testCaseClass):
            return [name for name in super().getTestCaseNames(testCaseClass) if not name.startswith("_")]

    class TestLoader(Sealed):
        """unittest.TestLoader for the snippet's own TestCase classes (composed: the real
        loader's by-name, by-module and by-directory loading is not behind it)."""
        __slots__ = ("__loader",)

        def __init__(self):
            object.__setattr__(self, "_TestLoader__loader", _Loader())

        def loadTestsFromTestCase(self, testCaseClass):
            if not is_test_class(testCaseClass):
                raise refuse(f"loadTestsFromTestCase takes a class of the snippet's derived from unittest.TestCase, "
                             f"not {testCaseClass!r:.60}")
            return suite_of(object.__getattribute__(self, "_TestLoader__loader").loadTestsFromTestCase(testCaseClass))

        def getTestCaseNames(self, testCaseClass):
            if not is_test_class(testCaseClass):
                raise refuse(f"getTestCaseNames takes a class of the snippet's derived from unittest.TestCase, "
                             f"not {testCaseClass!r:.60}")
            return object.__getattribute__(self, "_TestLoader__loader").getTestCaseNames(testCaseClass)

        @property
        def testMethodPrefix(self):
            return object.__getattribute__(self, "_TestLoader__loader").testMethodPrefix

        @property
        def errors(self):
            return list(object.__getattribute__(self, "_TestLoader__loader").errors)

        suiteClass = TestSuite

        def loadTestsFromModule(self, *args, **kwargs):
            raise refuse(f"TestLoader.loadTestsFromModule: {_BY_NAME}")

        def loadTestsFromName(self, *args, **kwargs):
            raise refuse(f"TestLoader.loadTestsFromName: {_BY_NAME}")

        def loadTestsFromNames(self, *args, **kwargs):
            raise refuse(f"TestLoader.loadTestsFromNames: {_BY_NAME}")

        def discover(self, *args, **kwargs):
            raise refuse("TestLoader.discover imports test files as modules, which would run them as unrestricted "
                         f"Python: {_BY_NAME}")

    class TestResult(unittest.TestResult):
        __doc__ = unittest.TestResult.__doc__

        def _exc_info_to_string(self, err, test):
            return snippet_traceback.describe(err[1])   # (the real one shows the sandbox's frames and paths)

    def defaultTestResult(self):
        return TestResult()   # (test.run() without a result: the report of the snippet's lines)
    TestCase.defaultTestResult = defaultTestResult

    class TextTestResult(unittest.TextTestResult):
        __doc__ = unittest.TextTestResult.__doc__
        _exc_info_to_string = TestResult._exc_info_to_string

    class _Runner(unittest.TextTestRunner):
        """The runner's work, never handed out (its stream is the writer it was given)."""
        resultclass = TextTestResult

    class TextTestRunner(Sealed):
        """unittest.TextTestRunner writing to the snippet's stderr, or the stream it is given
        (composed: the real runner's stream and result class are not behind it)."""
        __slots__ = ("__runner",)

        def __init__(self, stream=None, descriptions=True, verbosity=1, failfast=False, buffer=False,
                     resultclass=None, warnings=None, *, tb_locals=False, **kwargs):
            if resultclass is not None and not (isinstance(resultclass, type) and issubclass(resultclass,
                                                                                             TextTestResult)):
                raise refuse("TextTestRunner(resultclass=...) takes unittest.TextTestResult or a class of the "
                             "snippet's derived from it")
            object.__setattr__(self, "_TextTestRunner__runner", _Runner(
                stderr() if stream is None else stream, descriptions, verbosity, failfast, buffer, resultclass,
                warnings, tb_locals=tb_locals, **kwargs))

        def run(self, test):
            """Run the given test case or test suite."""
            if isinstance(test, TestSuite):
                test = object.__getattribute__(test, "_TestSuite__suite")
            return object.__getattribute__(self, "_TextTestRunner__runner").run(test)

        def __getattr__(self, name):   # its settings, as the real runner has them
            if name in ("descriptions", "verbosity", "failfast", "buffer", "tb_locals", "warnings"):
                return getattr(object.__getattribute__(self, "_TextTestRunner__runner"), name)
            raise AttributeError(f"'TextTestRunner' object has no attribute {name!r:.60} here: it runs tests "
                                 "(runner.run(suite)) and writes to the stream it was given")

    def main(module="__main__", defaultTest=None, argv=None, testRunner=None, testLoader=None, exit=True,
             verbosity=1, failfast=None, catchbreak=None, buffer=None, warnings=None, *, tb_locals=False):
        """unittest.main(): runs the snippet's own TestCase classes."""
        if module not in ("__main__", None) or testLoader is not None or catchbreak:
            raise refuse("unittest.main() runs the snippet's own TestCase classes: call it as unittest.main() "
                         "(with argv, exit, verbosity, failfast, buffer or testRunner as usual); another module, "
                         "loader or catchbreak is not available")
        chosen = [defaultTest] if isinstance(defaultTest, str) else list(defaultTest or ())
        settings = {"verbosity": verbosity, "failfast": failfast, "buffer": buffer}
        for arg in list(argv or ())[1:]:
            if isinstance(arg, str) and arg in _FLAGS:
                name, value = _FLAGS[arg]
                settings[name] = value
            elif isinstance(arg, str) and not arg.startswith("-"):
                chosen.append(arg)
            else:
                raise refuse(f"unittest.main(argv=...): {arg!r:.40} is not taken here (-v, -q, -f, -b and test "
                             "names are)")
        names = snippet_names()
        loader, suite = TestLoader(), TestSuite()
        for name in chosen or sorted(name for name, value in names.items() if is_test_class(value)):
            class_name, _, method = str(name).partition(".")
            cls = names.get(class_name)
            if not is_test_class(cls):
                raise refuse(f"unittest.main: {name!r:.60} is not a TestCase class of the snippet's (name one, "
                             "'MyTests', or one of its tests, 'MyTests.test_add')")
            suite.addTest(cls(method) if method else loader.loadTestsFromTestCase(cls))
        runner = TextTestRunner if testRunner is None else testRunner
        if isinstance(runner, type):
            runner = runner(**settings, warnings=warnings, tb_locals=tb_locals)
        result = runner.run(suite)
        if exit:
            sys.exit(not result.wasSuccessful())
        return types.SimpleNamespace(result=result)

    for made in (TestSuite, TestLoader, TestResult, TextTestResult, TextTestRunner):
        made.__module__, made.__qualname__ = "unittest", made.__name__
    for made in (TestSuite, TestLoader, TestResult, TextTestResult, TextTestRunner):
        stand_ins.hide(getattr(unittest, made.__name__), made)   # (results stay derived: a snippet's may be)
    seal(TestSuite, TestLoader, TextTestRunner, advice="use it as it is: a suite of the snippet's test cases, a "
                                                       "loader of its TestCase classes, a runner given a stream "
                                                       "(TextTestRunner(stream=buf)) or a result class")
    return {"TestCase": TestCase, "TestSuite": TestSuite, "TestLoader": TestLoader, "TextTestRunner": TextTestRunner,
            "TextTestResult": TextTestResult, "TestResult": TestResult,
            "FunctionTestCase": unittest.FunctionTestCase, "main": main, "skip": unittest.skip,
            "skipIf": unittest.skipIf, "skipUnless": unittest.skipUnless, "expectedFailure": unittest.expectedFailure,
            "SkipTest": unittest.SkipTest}


SUBSET = Subset(
    # test cases of the snippet's own, loaded from their classes and run
    "unittest", ("TestCase", "TestSuite", "TestLoader", "TextTestRunner", "TextTestResult", "TestResult",
                 "FunctionTestCase", "main", "skip", "skipIf", "skipUnless", "expectedFailure", "SkipTest"),
    "the rest of unittest imports and runs tests by name, from other modules and from files (discover), and mock "
    "patches any object; here tests come from the snippet's own TestCase classes: unittest.main(), or "
    "TextTestRunner().run(TestLoader().loadTestsFromTestCase(MyTests))",
    lambda execution: values(execution.refuse, execution.snippet_names, lambda: StandardStream("stderr").get()))
