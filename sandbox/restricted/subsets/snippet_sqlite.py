"""The snippet's `sqlite3` (a subset): SQL over a database in memory or in the snippet's
directory, nowhere else.

A database is opened by this module's Connection only (sqlite3.connect is its
constructor; the real class and connect() are refused objects, library_policy): the
path is checked as open() checks it, `uri=` (whose query string names other files and
modes) is refused, and before the connection is handed out it gets an authorizer that
SQLite consults for every statement as it compiles it. The authorizer lets through the
statements of ordinary SQL and refuses what reaches outside the database or into
SQLite's least-tested code: ATTACH and VACUUM INTO (a second file, anywhere), virtual
tables (FTS and R-tree keep shadow tables whose corruption has been SQLite's
memory-safety bugs), loadable extensions, and every PRAGMA but those that read the
schema or tune the engine. The connection's own methods that would undo this
(set_authorizer, setlimit, setconfig, enable_load_extension, load_extension) are
refused attributes (library_policy.refused_attributes), and so is deserialize (SQLite
attaches the bytes, and ATTACH is refused).

SQLite's C engine itself is not audited by this layer: a memory-safety bug in it is
for the kernel layers to contain, as for any native module."""

from __future__ import annotations

import contextlib
import functools
import sqlite3

from sandbox.restricted import snippet_files
from sandbox.restricted import stand_ins
from sandbox.restricted.sealed import Sealed, seal
from sandbox.restricted.subsets.subset import Subset

MEMORY = ":memory:"

# What the snippet's SQL may do, as authorizer action codes (sqlite3.h); any other is refused.
_ACTIONS = frozenset(getattr(sqlite3, f"SQLITE_{name}") for name in (
    "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE", "CREATE_TEMP_TRIGGER",
    "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE", "DROP_INDEX", "DROP_TABLE", "DROP_TEMP_INDEX",
    "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER", "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW", "INSERT", "PRAGMA",
    "READ", "SELECT", "TRANSACTION", "UPDATE", "ALTER_TABLE", "REINDEX", "ANALYZE", "FUNCTION", "SAVEPOINT",
    "RECURSIVE"))
# PRAGMAs that read the schema or tune the engine inside the database (the table-valued
# pragma_table_info(...) is authorized as the PRAGMA too). Not here: writable_schema,
# trusted_schema and cell_size_check (set at connect), temp_store and its directory, mmap_size,
# threads (sorter threads), schema_version (its writes corrupt the database).
PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "foreign_key_check", "foreign_keys", "defer_foreign_keys", "user_version", "application_id", "data_version",
    "page_size", "page_count", "max_page_count", "freelist_count", "encoding", "journal_mode", "synchronous",
    "cache_size", "cache_spill", "busy_timeout", "auto_vacuum", "incremental_vacuum", "automatic_index",
    "case_sensitive_like", "recursive_triggers", "reverse_unordered_selects", "ignore_check_constraints",
    "legacy_alter_table", "query_only", "integrity_check", "quick_check", "optimize", "analysis_limit",
    "collation_list", "function_list", "module_list", "pragma_list", "database_list", "compile_options",
    "secure_delete", "locking_mode", "wal_checkpoint", "wal_autocheckpoint", "journal_size_limit",
    "shrink_memory", "soft_heap_limit",
})
# SQL functions refused by name: extensions are native code; fts3_tokenizer hands out
# and takes function pointers
_FUNCTIONS = {
    "load_extension": "extensions are native code and are not loaded in the sandbox: write the function in "
                      "Python and register it with conn.create_function(name, nargs, func)",
    "fts3_tokenizer": "full-text search is not available here: use LIKE, instr() or a Python function "
                      "registered with conn.create_function",
}
# eponymous virtual tables that read the database file's raw pages
_RAW_PAGES = frozenset({"dbstat", "sqlite_dbpage", "sqlite_dbdata", "sqlite_dbptr"})
_ATTACH = ("a second database file is not opened from SQL here (ATTACH, VACUUM INTO): open each one with its own "
           "sqlite3.connect('name.db'), and copy between them with conn.backup(other) or in Python")


def _authorize(refusal: list, action, name, detail, _database, _trigger) -> int:
    """SQLite's authorizer: SQLITE_OK, or SQLITE_DENY with the reason kept in `refusal`
    for the error the snippet sees (the callback itself cannot raise into the snippet)."""
    why = None
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        why = _ATTACH
    elif action not in _ACTIONS:
        why = ("virtual tables (fts5, rtree) are not available here: use ordinary tables, and LIKE or instr() for "
               "text search" if action in (sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE)
               else f"this statement is not available here (SQLite action {action})")
    elif action == sqlite3.SQLITE_PRAGMA and str(name).lower() not in PRAGMAS:
        why = (f"PRAGMA {name!s:.40} is not available here: the pragmas that read the schema or tune the engine "
               "are (table_info, index_list, foreign_keys, journal_mode, user_version, ...)")
    elif action == sqlite3.SQLITE_FUNCTION and str(detail).lower() in _FUNCTIONS:
        why = f"{detail}(): {_FUNCTIONS[str(detail).lower()]}"
    elif action == sqlite3.SQLITE_READ and str(name).lower() in _RAW_PAGES:
        why = f"{name} reads the database file's raw pages: use PRAGMA page_count and PRAGMA page_size"
    if why is None:
        return sqlite3.SQLITE_OK
    refusal[0] = why
    return sqlite3.SQLITE_DENY


class _Policy:
    """The snippet's kind of directory and its run's refusal (the guards' context's, which a
    session keeps from call to call): set when a run makes the subset."""
    files: str | None = None
    refuse = staticmethod(PermissionError)


def _refuse(detail: str):
    return _Policy.refuse(detail)


def _database_path(database) -> str:
    """The path SQLite opens for `database`, checked as open() checks a path."""
    path = snippet_files.plain_path(database)
    if path == MEMORY:
        return path
    if _Policy.files is None:
        raise _refuse("sqlite3 here has no directory for a database file (the sandbox's mount namespace is off): "
                      "use sqlite3.connect(':memory:')")
    if _Policy.files == snippet_files.SCRATCH_FILES:
        if path == "":  # (a temporary database: a file SQLite places in a directory of its choosing)
            raise _refuse("sqlite3.connect(''): a temporary database is a file SQLite places itself: use "
                          "sqlite3.connect(':memory:'), or a plain name such as 'data.db'")
        real = snippet_files.in_scratch(path)
        if real is None:
            raise _refuse(f"sqlite3.connect({path!r:.100}): the database must be in the scratch directory "
                          f"{snippet_files.SCRATCH} (the current one is {snippet_files.WORKDIR}): use a plain name "
                          "such as 'data.db', or ':memory:'; SANDBOX_ENABLE_FILESYSTEM=true gives a workspace")
        return real
    return path


@contextlib.contextmanager
def _explained(refusal: list):
    """An authorizer's refusal raised with its reason (SQLite says only "not authorized",
    "authorization denied" or "access to t.c is prohibited")."""
    refusal[0] = None
    try:
        yield
    except sqlite3.DatabaseError:
        why = refusal[0]
        if why is None:
            raise
        raise _refuse(f"SQL refused: {why}") from None


class Connection(Sealed, sqlite3.Connection):
    """sqlite3.Connection for the snippet: its database checked, its authorizer set."""

    __slots__ = ("__refusal",)

    def __init__(self, database, timeout=5.0, detect_types=0, isolation_level="", check_same_thread=True,
                 factory=None, cached_statements=128, uri=False, **kwargs):
        if uri:
            raise _refuse("sqlite3.connect(uri=True) is not available here: a URI's options name other files and "
                          "modes; pass a plain name ('data.db') or ':memory:'")
        if factory not in (None, Connection):
            raise _refuse("sqlite3.connect(factory=...) is not available here: wrap the connection in a class of "
                          "your own")
        super().__init__(_database_path(database), timeout=timeout, detect_types=detect_types,
                         isolation_level=isolation_level, check_same_thread=check_same_thread,
                         cached_statements=cached_statements, **kwargs)
        self.__refusal = [None]
        for setting in ("temp_store = MEMORY", "trusted_schema = OFF", "cell_size_check = ON"):
            sqlite3.Connection.execute(self, f"PRAGMA {setting}")
        if hasattr(sqlite3, "SQLITE_LIMIT_ATTACHED"):  # (3.11: ATTACH refused by SQLite too)
            sqlite3.Connection.setlimit(self, sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        if hasattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE"):  # (3.12: no writes that corrupt the file)
            sqlite3.Connection.setconfig(self, sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
        sqlite3.Connection.set_authorizer(self, functools.partial(_authorize, self.__refusal))

    def cursor(self, factory=None):
        if factory not in (None, Cursor):
            raise _refuse("conn.cursor(factory=...) is not available here: use conn.cursor() and wrap it")
        return super().cursor(Cursor)

    # (as the C methods do, but with this module's cursor: theirs make a plain one)
    def execute(self, sql, parameters=(), /):
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql, parameters, /):
        return self.cursor().executemany(sql, parameters)

    def executescript(self, script, /):
        return self.cursor().executescript(script)


class Cursor(Sealed, sqlite3.Cursor):
    """sqlite3.Cursor for the snippet: an authorizer's refusal comes with its reason."""

    __slots__ = ()

    def __init__(self, connection, /):
        if not isinstance(connection, Connection):
            raise TypeError("a cursor is made by conn.cursor()")
        super().__init__(connection)

    def execute(self, sql, parameters=(), /):
        with _explained(self.connection._Connection__refusal):
            return super().execute(sql, parameters)

    def executemany(self, sql, parameters, /):
        with _explained(self.connection._Connection__refusal):
            return super().executemany(sql, parameters)

    def executescript(self, script, /):
        with _explained(self.connection._Connection__refusal):
            return super().executescript(script)


for _cls in (Connection, Cursor):
    _cls.__module__ = "sqlite3"
seal(Connection, Cursor)
stand_ins.hide(sqlite3.Connection, Connection)   # (mro() and type() hand out these, never the real ones)
stand_ins.hide(sqlite3.Cursor, Cursor)


def connect(database, *args, **kwargs):
    return Connection(database, *args, **kwargs)


connect.__doc__ = sqlite3.connect.__doc__  # (not functools.wraps: its __wrapped__ would be the real one)


def values(files: str | None, refuse) -> dict:
    """The names SUBSET lists, for a run: `files` (snippet_files' kind of directory,
    or None) and `refuse(detail)`, the run's refusal."""
    _Policy.files, _Policy.refuse = files, staticmethod(refuse)
    own = {"connect": connect, "Connection": Connection, "Cursor": Cursor}
    return dict(vars(sqlite3), **own)


SUBSET = Subset(
    # SQL over a database in memory or in the snippet's directory (an authorizer refuses ATTACH,
    # virtual tables, extensions and the pragmas that reach files)
    "sqlite3", ("connect", "Connection", "Cursor", "Row", "Error", "Warning", "InterfaceError", "DatabaseError",
                "DataError", "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
                "NotSupportedError", "PARSE_DECLTYPES", "PARSE_COLNAMES", "register_adapter", "register_converter",
                "complete_statement", "sqlite_version", "sqlite_version_info", "apilevel", "paramstyle",
                "threadsafety", "Binary", "Date", "Time", "Timestamp", "DateFromTicks", "TimeFromTicks",
                "TimestampFromTicks"),
    "the rest of sqlite3 opens databases by URI, loads extensions and replaces the authorizer; here "
    "connect() opens ':memory:' or a file in the snippet's directory",
    lambda execution: values(execution.files, execution.refuse))
