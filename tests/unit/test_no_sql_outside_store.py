"""No SQL outside arena/store/: no query text and no database calls in any other module of arena/.

Every module of arena/ outside the store package is parsed; a string that reads as SQL, a call of
`.execute(`, `.executemany(`, `.executescript(`, `.query(`, `.table(` or `.rows_where(`, or a
sqlite-utils table lookup `db[...]` fails the test, naming the file, the line and what was found.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parents[2] / "arena"
STORE = ARENA / "store"

DB_CALLS = {"execute", "executemany", "executescript", "query", "table", "rows_where"}

_LEADING = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.S)
# A statement: the text starts with one (after whitespace and comments).
_STATEMENT = re.compile(
    r"""(?ix)
    select\s+(?:distinct\s+)?(?:\*|\w+\s*\(|[\w.\[\]"]+\s*(?:,|\bas\b|\bfrom\b))
    | insert\s+(?:or\s+\w+\s+)?into\s
    | replace\s+into\s
    | update\s+[\w\[\]"]+\s+set\s
    | delete\s+from\s
    | create\s+(?:temp(?:orary)?\s+)?(?:unique\s+)?(?:table|index|view|trigger|virtual\s+table)\s
    | alter\s+table\s
    | drop\s+(?:table|index|view|trigger)\s
    | pragma\s+\w+
    | with\s+(?:recursive\s+)?\w+(?:\s*\([^)]*\))?\s+as\s*\(
    | (?:begin(?:\s+(?:immediate|exclusive|deferred))?|commit|rollback|vacuum)\s*;?\s*\Z
    """)
# SQL anywhere in the text: a clause of a query built from pieces.
_CLAUSE = re.compile(
    r"""(?ix)
    \binsert\s+(?:or\s+\w+\s+)?into\s+[\w\["]
    | \bdelete\s+from\s+[\w\["]
    | \bfrom\s+[\w\["]+(?:\s+\w+)?\s+(?:where|join|left\s+join|order\s+by|group\s+by)\b
    | \bjoin\s+[\w\["]+(?:\s+\w+)?\s+on\s+[\w.]+\s*=
    | \border\s+by\s+[\w.]+(?:\s+(?:asc|desc))?\s*(?:,\s*[\w.]+|limit\s+\d)
    | [\w.\]]\s*(?:=|!=|<>|>=|<=|\blike|\bin)\s*\(?\?
    """)


def sql_text(text: str) -> bool:
    """Whether a string reads as SQL: a statement, or a clause of one."""
    body = _LEADING.sub("", text, count=1)
    return bool(_STATEMENT.match(body) or _CLAUSE.search(text))


def _text_of(node: ast.AST) -> str | None:
    """A string constant's text, or an f-string's with each placeholder as `x`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
    return None


def findings(path: Path, root: Path = ARENA.parent) -> list[str]:
    """`file:line: what` (the file relative to `root`) for each SQL string and database call in
    the module at `path`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    rel = path.relative_to(root).as_posix()
    # Docstrings and other bare strings are never run; the parts of an f-string are checked whole.
    skip = {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and _text_of(n.value) is not None}
    skip |= {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        text = _text_of(node)
        if text is not None and sql_text(text):
            shown = " ".join(text.split())
            out.append(f"{rel}:{node.lineno}: SQL text {shown[:80]!r}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in DB_CALLS):
            out.append(f"{rel}:{node.lineno}: database call .{node.func.attr}(…)")
        elif isinstance(node, ast.Subscript) and (
                (isinstance(node.value, ast.Name) and node.value.id == "db")
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "db")):
            out.append(f"{rel}:{node.lineno}: table lookup db[…]")
    return sorted(out, key=lambda f: (f.split(":")[0], int(f.split(":")[1])))


def modules() -> list[Path]:
    """Every module of arena/ outside the store package."""
    return sorted(p for p in ARENA.rglob("*.py") if not p.is_relative_to(STORE))


def test_no_module_outside_the_store_holds_sql():
    found = [f for p in modules() for f in findings(p)]
    assert not found, "SQL outside arena/store/ (move it into the store package):\n" + "\n".join(
        found)


@pytest.mark.parametrize("text", [
    "select id, name from bots where name = ?",
    "SELECT * FROM games",
    "  -- the newest first\n  select count(*) from tournaments",
    "select x as name, b.id from tournament_bots t join bots b on b.id = t.bot_id",
    "insert or replace into meta (key, value) values ('schema_version', ?)",
    "update bots set status = 'retired' where id = ?",
    "update bots set ",
    "delete from leases where tournament_id = ?",
    "create table [moves] ([game_id] TEXT)",
    "alter table bots add column games text",
    "drop table moves",
    "PRAGMA foreign_keys = ON",
    "with recent as (select * from games) select * from recent",
    "BEGIN IMMEDIATE",
    " and g.stage = ?",
    "from games g join game_seats s on s.game_id = g.id where g.id = ?",
    "order by g.recorded_at desc, g.ordinal desc limit 5",
])
def test_sql_reads_as_sql(text):
    assert sql_text(text)


@pytest.mark.parametrize("text", [
    "select a bot from the registry first",
    "Select the game to play",
    "update the config and run it again",
    "create a bot folder with `arena bot new`",
    "drop the --resume flag to start over",
    "delete it from the registry folder by hand",
    "with the seed from the config",
    "the bot was taken from its folder; order by rating",
    "no tournament with id 9",
    "tournament {id} is being run by pid {pid} on {host}",
    "commit your changes first",
    "name = value",
    "rounds = 2 (default: ⌈log2 N⌉+1)",
])
def test_english_does_not(text):
    assert not sql_text(text)


def test_the_check_finds_real_queries(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text(
        "def f(store, db, name):\n"
        "    \'\'\'Select the rows from bots where name = ?: a docstring, never run.\'\'\'\n"
        "    store.db.execute(\'select id from bots where name = ?\', [name])\n"
        "    rows = store.db.query(f\'select {name} from bots order by id\', [])\n"
        "    db[\'bots\'].insert({})\n"
        "    return \'no bot named \' + name + str(rows)\n")
    assert findings(module, tmp_path) == [
        "probe.py:3: database call .execute(…)",
        "probe.py:3: SQL text 'select id from bots where name = ?'",
        "probe.py:4: database call .query(…)",
        "probe.py:4: SQL text 'select x from bots order by id'",
        "probe.py:5: table lookup db[…]",
    ]
