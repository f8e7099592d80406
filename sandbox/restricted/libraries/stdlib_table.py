"""The standard library's doors (and those of the test runner and the network profile's
requests): unpickling, programs, files opened by descriptor or read from the host on the
way to the network, sqlite3's real classes, and the library objects whose attributes a
snippet may set."""

from __future__ import annotations

from sandbox.restricted.libraries.table import TEST_RUNNER_ADVICE, Table

_SQLITE_OWN = ("the real class would open a database without the sandbox's checks: use sqlite3.connect('data.db') "
               "or sqlite3.connect(':memory:'), and conn.cursor()")
_TASK_STACK = "a task's stack is the sandbox's frames; use traceback.format_exc() in an except block"
_NO_FILE_URLS = ("the network profile reaches the network only: file:// URLs are refused; read files with "
                 "open() (the filesystem profile gives a workspace)")
_UNPICKLING = ("unpickling runs code (any function the bytes name): keep data in json, numpy.save/load "
               "without pickle, or pandas' to_csv/read_csv and to_parquet")


def table(policy) -> Table:
    return Table(
        # (the subset's own Connection and Cursor are what a snippet opens and holds: snippet_sqlite)
        refused_objects=dict.fromkeys(("sqlite3.connect", "sqlite3.Connection", "sqlite3.Cursor"), _SQLITE_OWN),
        # Library bases whose subclasses keep private state of the snippet's own (self._data in a
        # test case's setUp, a helper method _make): the private names the base's package uses
        # anywhere in its code stay the library's, to read and to write (package_private_names).
        open_bases={"unittest.case.TestCase": "unittest"},
        writable_types={
            "sandbox.restricted.subsets.snippet_logging.Logger":
                "logger.propagate = False: the wrapper's one settable attribute",
            # the C Element has tag, text, tail and attrib and no other attribute (attrib must be a dict);
            # what it holds reaches only the serializer, which takes strings
            "xml.etree.ElementTree.Element": "el.text = 'hi' is how an XML tree is built (el.set() writes attrib "
                                             "anyway)",
        },
        writable_families={
            # node.name = 'renamed' in a NodeTransformer: a tree is data here (snippet_ast), compiled by
            # nothing the snippet can call; its private names (_fields) stay read-only
            "ast.AST": "a parsed tree's nodes are changed by setting their fields",
        },
        # the C connection's and cursor's setters check the value (a callable, a level name)
        writable_attributes={
            "sqlite3.Connection": ({"row_factory", "text_factory", "isolation_level", "autocommit"},
                                   "conn.row_factory = sqlite3.Row is how rows by name are asked for"),
            "sqlite3.Cursor": ({"row_factory", "arraysize"}, "cur.arraysize = 100 is fetchmany's default size"),
        },
        refused_attributes={
            **dict.fromkeys(("set_authorizer", "setlimit", "setconfig", "enable_load_extension", "load_extension"),
                            (("sqlite3.Connection",), "the sandbox's authorizer and limits keep SQL inside the "
                                                      "database, and extensions are native code: register Python "
                                                      "functions with conn.create_function(name, nargs, func)")),
            # (SQLite attaches the bytes as a database, and ATTACH is refused)
            "deserialize": (("sqlite3.Connection",), "to copy a database use source.backup(target), or write the "
                                                     "bytes to a file and sqlite3.connect() it"),
            # (eval_str=True evaluates annotation text, the snippet's included, as unrestricted Python)
            **dict.fromkeys(("from_callable", "from_function"),
                            (("inspect.Signature",), "a signature is inspect.signature(f), whose annotations stay "
                                                     "as they are")),
            # (it opens each name with the library's own open(), which reaches past the snippet's)
            "read": (("configparser.RawConfigParser",), "it opens files by name itself: open the file and hand it "
                                                        "over, with open('settings.ini') as f: parser.read_file(f) "
                                                        "(or parser.read_string(text))"),
            "print_stack": (("asyncio.Task",), _TASK_STACK),
            "get_stack": (("asyncio.Task",), _TASK_STACK),
        },
        switched_off={
            # every unpickler, whoever calls it: numpy's NpzFile(allow_pickle=True) and pandas'
            # pickle_compat.loads reach it with the snippet's bytes (a class is replaced by a
            # subclass whose load refuses, so that a library may still derive from it)
            **dict.fromkeys(("pickle.load", "pickle.loads", "pickle._load", "pickle._loads", "pickle._Unpickler.load",
                             "pickle._Unpickler", "pickle.Unpickler", "_pickle.load", "_pickle.loads",
                             "_pickle.Unpickler"), _UNPICKLING),
            "_pytest.config.main": TEST_RUNNER_ADVICE,   # (pytest.main, however a library reaches it)
            # urllib's local files (urlopen("file:///..."), urlretrieve, the legacy URLopener)
            "urllib.request.FileHandler.file_open": _NO_FILE_URLS,
            "urllib.request.URLopener.open_file": _NO_FILE_URLS,
            "urllib.request.URLopener.open_local_file": _NO_FILE_URLS,
            "urllib.request.URLopener.retrieve": "the legacy URLopener writes files with the real open(): use "
                                                 "urllib.request.urlretrieve(url, 'name') or urlopen",
        },
        # Library code that starts programs, whoever calls it: sympy's autowrap and ufuncify compile
        # the C code they generate and load it, matplotlib's usetex runs latex, pyperclip its
        # helpers, scipy's workers=2 starts multiprocessing's forkserver (a whole Python that
        # unpickles what it is sent) through _posixsubprocess directly. While a restricted snippet
        # runs, each refuses with PermissionError (an OSError, as the kernel's refusal would be:
        # libraries that probe for a program catch it).
        no_programs=("subprocess.Popen._execute_child", "os.system", "os.popen", "os.fork", "os.forkpty",
                     "os.execv", "os.execve", "os.execl", "os.execle", "os.execlp", "os.execlpe", "os.execvp",
                     "os.execvpe", "os.posix_spawn", "os.posix_spawnp", "os.spawnv", "os.spawnve", "os.spawnvp",
                     "os.spawnvpe", "os.spawnl", "os.spawnle", "os.spawnlp", "os.spawnlpe", "pty.fork", "pty.spawn",
                     "_posixsubprocess.fork_exec"),
        # library helpers that read the host's files on the way to the network (requests sends the
        # ~/.netrc credentials it finds for a host, and unpacks zip members named by a path)
        neutral_while_running={
            "requests.utils.get_netrc_auth": lambda url, raise_errors=False: None,
            "requests.sessions.get_netrc_auth": lambda url, raise_errors=False: None,
            "requests.utils.extract_zipped_paths": lambda path: path,
            "requests.adapters.extract_zipped_paths": lambda path: path,
        },
        # the file name a function writes to with the real open(): the snippet's version opens that
        # name with the snippet's open() first (the profile's policy: the scratch directory, the
        # workspace, or no file) and passes on the path that open() resolved
        writes_named_file={"urllib.request.urlretrieve": (1, "filename")},
        # open()-like functions that library code calls with the file the snippet names
        # (tarfile.open(name=4), and gzip through it): a descriptor number (3 and 4 are the
        # sandbox's request and result pipes) is refused
        by_path_only=("builtins.open", "tarfile.bltn_open"),
    )
