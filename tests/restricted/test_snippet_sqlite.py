"""`import sqlite3` with RestrictedPython on (sandbox/restricted/subsets/snippet_sqlite.py): SQL over a
database in memory or in the snippet's directory works; SQL and calls that reach
another file, an extension, a virtual table or the authorizer itself are refused,
each with what to do instead. The tests run the policy in-process (the kernel layers
off) with the scratch directory pointed at a temporary one."""

from __future__ import annotations

import io
import sys

import pytest

from sandbox import profiles
from sandbox.restricted import run as restricted
from sandbox.restricted import snippet_files

BASIC = frozenset(profiles.allowed_modules(["basic"]))


def run(code, files=snippet_files.SCRATCH_FILES):
    return restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=io.StringIO(),
                              stderr=io.StringIO(), files=files)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A scratch directory inside tmp_path holding 'x', and what tmp_path holds besides."""
    inside = tmp_path / "scratch"
    inside.mkdir()
    (inside / "x").write_text("x")
    monkeypatch.setattr(snippet_files, "SCRATCH", str(inside))
    monkeypatch.chdir(inside)
    return inside


def test_sql_in_memory_and_in_the_scratch_directory(scratch):
    code = (
        "import sqlite3, datetime\n"
        "sqlite3.register_adapter(datetime.date, lambda d: d.isoformat())\n"
        "sqlite3.register_converter('day', lambda b: datetime.date.fromisoformat(b.decode()))\n"
        "mem = sqlite3.connect(':memory:', detect_types=sqlite3.PARSE_DECLTYPES)\n"
        "mem.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, born day)')\n"
        "mem.executemany('INSERT INTO t (name, born) VALUES (?, ?)', [('ann', datetime.date(2000, 1, 2)),\n"
        "                                                             ('bob', datetime.date(1990, 5, 6))])\n"
        "mem.create_function('initial', 1, lambda s: s[0].upper())\n"
        "mem.row_factory = sqlite3.Row\n"
        "rows = mem.execute('SELECT initial(name) AS i, born FROM t ORDER BY id').fetchall()\n"
        "cur = mem.cursor()\n"
        "cur.arraysize = 1\n"
        "cur.execute('SELECT name FROM t ORDER BY name')\n"
        "first = [tuple(r) for r in cur.fetchmany()]\n"
        "cur.fetchall()\n"
        "mem.commit()  # (a transaction or a statement left open keeps backup() waiting, as in CPython)\n"
        "with sqlite3.connect('data.db') as disk:\n"
        "    mem.backup(disk)\n"
        "    disk.execute('PRAGMA journal_mode=WAL')\n"
        "    count = disk.execute('SELECT count(*) FROM t').fetchone()[0]\n"
        "    schema = [c[1] for c in disk.execute('SELECT * FROM pragma_table_info(\"t\")')]\n"
        "disk.close()\n"
        "again = sqlite3.connect('data.db')\n"
        "dump = list(again.iterdump())\n"
        "result = [[(r['i'], r['born'].year) for r in rows], first, count, schema, dump[1],\n"
        "          isinstance(again, sqlite3.Connection), isinstance(cur, sqlite3.Cursor),\n"
        "          sqlite3.complete_statement('SELECT 1;'), again.in_transaction]")
    reply = run(code)
    assert reply["success"], reply
    assert reply["result"] == [[["A", 2000], ["B", 1990]], [["ann"]], 2, ["id", "name", "born"],
                               "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, born day);",
                               True, True, True, False], reply
    assert {"data.db", "x"} <= {p.name for p in scratch.iterdir()}


# What reaches outside the database, or into SQLite's least-tested code, and the
# advice each refusal gives.
REFUSED_SQL = {
    "ATTACH '../outside.db' AS o": "sqlite3.connect",
    "ATTACH DATABASE ':memory:' AS m": "sqlite3.connect",
    "DETACH DATABASE main": "sqlite3.connect",
    "VACUUM INTO '../outside.db'": "backup",
    "VACUUM main INTO 'inside.db'": "backup",
    "SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')": "create_function",
    "SELECT LOAD_EXTENSION('x', 'entry')": "create_function",
    "SELECT fts3_tokenizer('simple')": "LIKE",
    "CREATE VIRTUAL TABLE docs USING fts5(body)": "ordinary tables",
    "CREATE VIRTUAL TABLE docs USING fts4(body)": "ordinary tables",
    "CREATE VIRTUAL TABLE box USING rtree(id, x0, x1)": "ordinary tables",
    "CREATE VIRTUAL TABLE temp.docs USING fts3(body)": "ordinary tables",
    "PRAGMA writable_schema = ON": "table_info",
    "PRAGMA main.writable_schema = 1": "table_info",
    "PRAGMA trusted_schema = ON": "table_info",
    "PRAGMA cell_size_check = OFF": "table_info",
    "PRAGMA temp_store = FILE": "table_info",
    "PRAGMA temp_store_directory = '/var/tmp'": "table_info",
    "PRAGMA data_store_directory = '/var/tmp'": "table_info",
    "PRAGMA mmap_size = 268435456": "table_info",
    "PRAGMA threads = 4": "table_info",
    "PRAGMA schema_version = 1": "table_info",
    "SELECT * FROM pragma_schema_version": "table_info",
    "SELECT * FROM dbstat": "page_count",
    "SELECT name FROM DBSTAT": "page_count",
}


@pytest.mark.parametrize("how", ["conn.execute(SQL)", "conn.cursor().execute(SQL)", "conn.executescript(SQL)",
                                 "conn.cursor().executescript(SQL + ';')"])
@pytest.mark.parametrize("sql", list(REFUSED_SQL))
def test_sql_that_reaches_outside_the_database_is_refused(sql, how, scratch):
    code = f"import sqlite3\nconn = sqlite3.connect('inside.db')\nSQL = {sql!r}\n{how}"
    reply = run(code)
    assert reply["error_type"] == "security_violation" and "SQL refused" in reply["error"], reply
    assert REFUSED_SQL[sql] in reply["error"], reply
    assert reply["security_events"][0]["kind"] == "call_blocked"
    assert sorted(p.name for p in scratch.parent.iterdir()) == ["scratch"]
    assert sorted(p.name for p in scratch.iterdir()) == ["inside.db", "x"]


def test_a_view_or_trigger_calls_no_refused_function(scratch):
    """Functions named in a view's or trigger's body are authorized when a statement uses
    them, and SQLite refuses them before that with trusted_schema off."""
    for body in ("CREATE VIEW v AS SELECT load_extension('x') AS e; SELECT * FROM v",
                 "CREATE TABLE t(a); CREATE TRIGGER g AFTER INSERT ON t BEGIN SELECT load_extension('x'); END;"
                 " INSERT INTO t VALUES (1)"):
        reply = run(f"import sqlite3\nconn = sqlite3.connect(':memory:')\nconn.executescript({body!r})")
        assert not reply["success"] and "load_extension" in reply["error"], reply


LYING_PATH = ("class S(str):\n    def startswith(self, *a):\n        return True\n"
              "    def split(self, *a):\n        return ['inside.db']\n")


@pytest.mark.parametrize("code", [
    "sqlite3.connect('/etc/hostname')", "sqlite3.connect('../outside.db')", "sqlite3.connect(b'../outside.db')",
    "sqlite3.connect('x/../../outside.db')", "sqlite3.Connection('../outside.db')",
    "type(sqlite3.connect(':memory:'))('../outside.db')", "sqlite3.connect(database='/proc/self/environ')",
    LYING_PATH + "sqlite3.connect(S('../outside.db'))", "sqlite3.connect('')",
])
def test_a_database_file_is_in_the_scratch_directory(code, scratch):
    reply = run("import sqlite3\n" + code)
    assert reply["error_type"] == "security_violation", reply
    assert "scratch directory" in reply["error"] or "SQLite places itself" in reply["error"], reply
    assert sorted(p.name for p in scratch.parent.iterdir()) == ["scratch"]
    assert sorted(p.name for p in scratch.iterdir()) == ["x"]


@pytest.mark.parametrize("code", [
    "sqlite3.connect('file:../outside.db?mode=rwc', uri=True)", "sqlite3.connect('x.db', 5.0, 0, '', True, None, 128, True)",
    "sqlite3.connect(':memory:', factory=dict)", "sqlite3.connect(':memory:').cursor(factory=list)",
])
def test_uri_and_factories_are_refused(code, scratch):
    reply = run("import sqlite3\n" + code)
    assert reply["error_type"] == "security_violation", reply
    assert sorted(p.name for p in scratch.iterdir()) == ["x"]


def test_without_a_directory_only_memory():
    reply = run("import sqlite3\nresult = sqlite3.connect(':memory:').execute('SELECT 6 * 7').fetchone()[0]", files=None)
    assert reply["success"] and reply["result"] == 42, reply
    for database in ("'x.db'", "''"):
        reply = run(f"import sqlite3\nsqlite3.connect({database})", files=None)
        assert reply["error_type"] == "security_violation" and "':memory:'" in reply["error"], reply


@pytest.mark.parametrize("code", [
    # the authorizer, the limits and extensions, however the method is reached
    "conn.set_authorizer(None)", "conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 10)", "conn.setlimit(10, 10)",
    "conn.enable_load_extension(True)", "conn.load_extension('x')", "conn.deserialize(conn.serialize())",
    "conn.setconfig(1006, False)", "getattr(conn, 'set_' + 'authorizer')(None)",
    "import operator\noperator.methodcaller('set_authorizer', None)(conn)",
    "sqlite3.Connection.set_authorizer(conn, None)", "super(sqlite3.Connection, conn).set_authorizer(None)",
    "conn.set_authorizer", "conn.cursor().connection.set_authorizer(None)",
    # the real classes and module, and the registries of the real module
    # (mro() lists the sandbox's class, never the real one behind it)
    "[c for c in type(conn).mro() if c.__name__ == 'Connection' and c is not sqlite3.Connection][0]",
    "[c for c in sqlite3.Cursor.mro() if c.__name__ == 'Cursor' and c is not sqlite3.Cursor][0]",
    "type(conn.cursor()).mro()[1].execute", "sqlite3.adapters",
    "sqlite3.converters", "sqlite3.enable_callback_tracebacks(True)", "sqlite3.enable_shared_cache(True)",
    "sqlite3.dbapi2", "import sqlite3.dump", "from sqlite3 import dbapi2", "sqlite3.connect.__globals__",
    "sqlite3.connect.__wrapped__", "sqlite3.Connection.__init__", "sqlite3.Connection.__mro__",
    "type(conn).__bases__", "conn._Connection__refusal", "conn.cursor()._Cursor__x",
    # new state on the connection, and classes of the snippet's made from it
    "conn.anything = 1", "conn.execute = print", "class Mine(sqlite3.Connection):\n    pass",
    "class Mine(sqlite3.Cursor):\n    pass", "type('Mine', (sqlite3.Connection,), {})",
    "sqlite3.Cursor(object())",
])
def test_nothing_else_of_sqlite3(code, scratch):
    reply = run("import sqlite3\nconn = sqlite3.connect('inside.db')\n" + code)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error",
                                                            "compile_error"), reply
    assert {p.name for p in scratch.iterdir()} <= {"inside.db", "x"}


def test_what_stays_settable():
    reply = run("import sqlite3\nconn = sqlite3.connect(':memory:')\nconn.row_factory = sqlite3.Row\n"
                "conn.text_factory = str\nconn.isolation_level = None\ncur = conn.cursor()\ncur.arraysize = 5\n"
                "result = [conn.execute('SELECT 1 AS one').fetchone()['one'], conn.isolation_level, cur.arraysize]")
    assert reply["success"] and reply["result"] == [1, None, 5], reply


def test_refusals_the_snippet_can_act_on(scratch):
    reply = run("import sqlite3\nconn = sqlite3.connect(':memory:')\nconn.execute(\"ATTACH 'b.db' AS b\")")
    assert "open each one with its own sqlite3.connect('name.db')" in reply["error"], reply
    reply = run("import sqlite3\nsqlite3.connect('/var/tmp/a.db')")
    assert "use a plain name such as 'data.db', or ':memory:'" in reply["error"], reply


@pytest.mark.skipif(sys.version_info < (3, 12), reason="setconfig is 3.12's")
def test_the_connection_is_defensive():
    """3.12's SQLITE_DBCONFIG_DEFENSIVE (no writes that corrupt the file, shadow tables read-only)."""
    reply = run("import sqlite3\nconn = sqlite3.connect(':memory:')\n"
                "result = conn.getconfig(1010)", files=None)  # (SQLITE_DBCONFIG_DEFENSIVE)
    assert reply["success"] and reply["result"] is True, reply


def test_a_connection_kept_in_a_session_refuses_in_the_later_call(scratch):
    """A session keeps the connection and the guards' context: the later call's refusal is
    that call's security event."""
    session = restricted.SessionState()

    def call(code):
        return restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=io.StringIO(),
                                  stderr=io.StringIO(), files=snippet_files.SCRATCH_FILES, session=session)
    first = call("import sqlite3\nconn = sqlite3.connect('kept.db')\nconn.execute('CREATE TABLE t (a)')")
    second = call("conn.execute('INSERT INTO t VALUES (1)')\nconn.execute(\"ATTACH 'other.db' AS o\")")
    third = call("result = conn.execute('SELECT count(*) FROM t').fetchone()[0]")
    assert first["success"] and first["security_events"] == [], first
    assert second["error_type"] == "security_violation" and "SQL refused" in second["error"], second
    assert [event["kind"] for event in second["security_events"]] == ["call_blocked"], second
    assert third["success"] and third["result"] == 1 and third["security_events"] == [], third
    assert "other.db" not in {p.name for p in scratch.iterdir()}
