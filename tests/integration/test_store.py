"""The SQLite store: schema, refusal of foreign databases, one transaction per match."""

from __future__ import annotations

import sqlite3

import pytest

from arena.errors import StoreError
from arena.match import GameRecord, MatchResult, Move
from arena.store import Store


def result(match_id="m", game_id="g"):
    record = GameRecord(game_id, 0, 0, 0, 42, ["a", "b"], [[0], [1]], [10, 5], [1, 2], "normal",
                        None, "", "", 3.5, [Move(0, 0, {"type": "play", "card": "AS"}, 1.0)])
    return MatchResult(match_id, [record], {"a": "log line"}, 10.0)


def test_record_and_read_back(store):
    ids = {"a": store.add_bot("a", "1"), "b": store.add_bot("b", "1")}
    tid = store.create_tournament("t", "xeri", "round_robin", 2, 1, {}, {}, list(ids.values()))
    store.record_match(tid, 0, 0, "xeri", {"rounds": 2}, result(), ids)
    assert store.recorded_matches(tid) == {"m"}
    game = store.load_game("g")
    assert game["seed"] == 42 and game["options"] == {"rounds": 2}
    assert game["moves"][0]["action"] == {"type": "play", "card": "AS"}
    assert [s["rank"] for s in game["seats"]] == [1, 2]
    assert store.game_results(tid)[0]["seats"][0] == {"bot": "a", "team": 0, "score": 10, "rank": 1}


def test_a_failed_match_write_leaves_nothing_behind(store):
    ids = {"a": store.add_bot("a"), "b": store.add_bot("b")}
    tid = store.create_tournament("t", "xeri", "round_robin", 2, 1, {}, {}, list(ids.values()))
    store.record_match(tid, 0, 0, "xeri", {}, result(), ids)
    with pytest.raises(sqlite3.IntegrityError):
        store.record_match(tid, 0, 1, "xeri", {}, result("m2", "g"), ids)  # duplicate game id
    assert store.recorded_matches(tid) == {"m"}
    assert store.db["games"].count == 1


def test_bots_are_registered_once_per_version(store):
    assert store.add_bot("x", "1") == store.add_bot("x", "1") != store.add_bot("x", "2")


def test_refuses_a_foreign_database(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("create table people (name text)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not an Arena database"):
        Store(path)


def test_file_database_uses_wal(tmp_path):
    store = Store(tmp_path / "a.db")
    assert store.db.execute("pragma journal_mode").fetchone()[0] == "wal"


def test_missing_tournament_is_a_store_error(store):
    with pytest.raises(StoreError, match="no tournament yet"):
        store.tournament()
    with pytest.raises(StoreError, match="no tournament with id 9"):
        store.tournament(9)


def test_a_version_1_database_migrates_in_place_keeping_its_records(tmp_path):
    import sqlite_utils

    from arena.store import schema as store_module

    path = tmp_path / "v1.db"
    old = Store.__new__(Store)  # the schema as version 1 wrote it
    old.db = sqlite_utils.Database(sqlite3.connect(path))
    store_module.MIGRATIONS[1](old)
    db = old.db
    db["meta"].insert({"key": "schema_version", "value": "1"})
    db["bots"].insert({"id": 1, "name": "a", "version": "1", "command": "[]", "workdir": "",
                       "language": "", "description": "", "added_at": ""})
    db["tournaments"].insert({"id": 1, "name": "t", "game": "xeri", "format": "round_robin",
                              "seats": 2, "seed": 1, "options": "{}", "config": "{}",
                              "status": "finished"})
    db["tournament_bots"].insert({"tournament_id": 1, "bot_id": 1, "entry": 0})
    db["ratings"].insert({"tournament_id": 1, "method": "elo", "bot": "a", "rating": 1510.0,
                          "games": 2, "wins": 1, "draws": 0, "losses": 1, "points": 1,
                          "score_pct": 50.0})
    db.conn.commit()
    db.conn.close()
    store = Store(path)
    assert store.db["meta"].get("schema_version")["value"] == str(store_module.SCHEMA_VERSION)
    assert store.ratings(1)[0]["rating"] == 1510.0  # now keyed by stage 1
    assert store.ratings(1)[0]["bot_id"] == 1 and store.ratings(1)[0]["lo"] is None  # v4
    assert [s["game"] for s in store.stages(1)] == ["xeri"]
    assert store.stages(1)[0]["entrants"] == [0]


def test_a_file_that_is_not_sqlite_is_refused_and_left_unchanged(tmp_path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an Arena database"):
        Store(path)
    assert path.read_bytes() == before


def test_read_only_open_never_writes_and_refuses_other_versions(tmp_path):
    path = tmp_path / "a b.db"  # a space: the URI must be quoted
    Store(path).add_bot("x", "1")
    before = path.read_bytes()
    ro = Store.open_readonly(path)
    assert ro.readonly and ro.db.execute("select name from bots").fetchall() == [("x",)]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.db.execute("insert into bots (name, version) values ('y', '1')")
    assert path.read_bytes() == before
    with pytest.raises(StoreError, match="no database"):
        Store.open_readonly(tmp_path / "missing.db")
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not an Arena database"):
        Store.open_readonly(notes)
    conn = sqlite3.connect(path)
    conn.execute("update meta set value = '1' where key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 1"):
        Store.open_readonly(path)


def test_a_refused_read_only_open_closes_its_connection(tmp_path, monkeypatch):
    """`arena serve` opens the file per request: a refusal must not leave a connection open."""
    opened = []

    class Tracked(sqlite3.Connection):
        closed = False

        def close(self):
            self.closed = True
            super().close()

    real_connect = sqlite3.connect

    def connect(target, *args, **kwargs):
        conn = real_connect(target, *args, factory=Tracked, **kwargs)
        if "mode=ro" in str(target):  # the read-only opens only
            opened.append(conn)
        return conn

    def write(path, sql):
        other = real_connect(path)
        other.execute(sql)
        other.commit()
        other.close()

    monkeypatch.setattr("arena.store.database.sqlite3.connect", connect)
    foreign = tmp_path / "foreign.db"
    write(foreign, "create table notes (text)")
    with pytest.raises(StoreError, match="not an Arena database"):
        Store.open_readonly(foreign)
    old = tmp_path / "old.db"
    Store(old).db.conn.close()
    write(old, "update meta set value = '1' where key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 1"):
        Store.open_readonly(old)
    assert len(opened) == 2 and all(c.closed for c in opened)


def test_version_5_moves_migrate_to_a_without_rowid_table_keeping_every_row(tmp_path):
    import sqlite_utils

    from arena.store import schema as store_module

    path = tmp_path / "v5.db"
    old = Store.__new__(Store)
    old.db = sqlite_utils.Database(sqlite3.connect(path))
    for number in range(1, 6):
        store_module.MIGRATIONS[number](old)
    db = old.db
    db["meta"].insert({"key": "schema_version", "value": "5"})
    db["tournaments"].insert({"id": 1, "name": "t", "game": "xeri", "format": "round_robin",
                              "seats": 2, "seed": 1, "options": "{}", "config": "{}",
                              "status": "finished"})
    db["matches"].insert({"id": "m", "tournament_id": 1, "round": 1, "table_no": 1, "bots": "[]",
                          "status": "finished"})
    db["games"].insert({"id": "g", "match_id": "m", "tournament_id": 1, "ordinal": 0,
                        "game": "xeri", "options": "{}", "num_seats": 2, "deal": 0,
                        "rotation": 0, "seed": 1, "termination": "normal"})
    rows = [{"game_id": "g", "ply": i, "step": i, "seat": i % 2, "action": f'"a{i}"', "ms": 0.5}
            for i in range(50)]
    db["moves"].insert_all(rows)
    db.conn.commit()
    db.conn.close()
    store = Store(path)
    ddl = store.db.execute("select sql from sqlite_master where name = 'moves'").fetchone()[0]
    assert "WITHOUT ROWID" in ddl
    assert [dict(r) for r in store.db["moves"].rows_where(order_by="ply")] == rows
    assert store.db.execute("select count(*) from sqlite_master where tbl_name = 'moves' "
                            "and type = 'index'").fetchone()[0] == 0  # the key is the table
