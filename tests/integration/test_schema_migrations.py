"""The migrations registry: numbered 1 upwards without gaps, each applied in its own transaction."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from arena.server.authors import add_author, hash_token
from arena.server.sessions import SessionStore
from arena.store import Store, schema

LEGACY = Path(__file__).parents[1] / "data" / "main-2026-12-03.sqlite"  # schema version 8


def test_the_registry_numbers_every_migration_up_to_the_schema_version():
    assert sorted(schema.MIGRATIONS) == list(range(1, schema.SCHEMA_VERSION + 1))
    assert all(f.__doc__ for f in schema.MIGRATIONS.values())  # each says what it changes


def test_a_migration_out_of_order_is_refused():
    with pytest.raises(ValueError, match="without gaps"):
        schema.migration(schema.SCHEMA_VERSION + 2)(lambda store: None)
    with pytest.raises(ValueError, match="without gaps"):
        schema.migration(1)(lambda store: None)
    assert sorted(schema.MIGRATIONS) == list(range(1, schema.SCHEMA_VERSION + 1))


def test_a_failing_migration_leaves_the_database_at_the_version_before(tmp_path, monkeypatch):
    path = tmp_path / "a.db"
    Store(path).add_bot("x", "1")
    applied = []

    def add_column(store):
        store.db.conn.execute("alter table bots add column nickname text")
        applied.append("first half")
        raise RuntimeError("the disk is full")

    nxt = schema.SCHEMA_VERSION + 1
    monkeypatch.setitem(schema.MIGRATIONS, nxt, add_column)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", nxt)
    with pytest.raises(RuntimeError, match="disk is full"):
        Store(path)
    monkeypatch.undo()
    store = Store(path)  # the version before, as it was: it opens and holds its rows
    assert applied == ["first half"]
    assert store.db["meta"].get("schema_version")["value"] == str(schema.SCHEMA_VERSION)
    assert "nickname" not in store.db["bots"].columns_dict
    assert [r["name"] for r in store.db["bots"].rows] == ["x"]


def test_a_new_migration_is_applied_once_on_open(tmp_path, monkeypatch):
    path = tmp_path / "a.db"
    Store(path).db.conn.close()
    runs = []

    def add_column(store):
        runs.append(1)
        store.db.conn.execute("alter table bots add column nickname text")

    nxt = schema.SCHEMA_VERSION + 1
    monkeypatch.setitem(schema.MIGRATIONS, nxt, add_column)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", nxt)
    Store(path).db.conn.close()
    store = Store(path)
    assert runs == [1]
    assert store.db["meta"].get("schema_version")["value"] == str(nxt)
    assert "nickname" in store.db["bots"].columns_dict


def _tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}
    finally:
        conn.close()


def test_migration_11_adds_sessions_to_a_version_10_server_database_keeping_its_authors(
        tmp_path, monkeypatch):
    path = tmp_path / "v10.db"
    monkeypatch.delitem(schema.MIGRATIONS, 11)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 10)
    store = Store(path)  # a database as the Arena of schema 10 left it
    token = add_author(store, "alice")
    store.db.conn.close()
    monkeypatch.undo()
    assert "sessions" not in _tables(path)

    store = Store(path)
    assert store.db["meta"].get("schema_version")["value"] == "11"
    assert set(store.db["sessions"].columns_dict) == {
        "id_hash", "author_id", "token_hash", "created_at", "last_seen_at", "expires_at"}
    alice = store.author_named("alice")
    assert store.token_holder(hash_token(token))["author_id"] == alice["id"]  # the token still works
    store.db.conn.close()
    session_id, _ = SessionStore(path).open(alice["id"], hash_token(token))
    assert SessionStore(path).get(session_id).author_id == alice["id"]


def test_the_legacy_database_migrates_to_one_whose_sessions_outlive_a_server(tmp_path):
    path = tmp_path / "legacy.sqlite"
    shutil.copyfile(LEGACY, path)
    store = Store(path)  # schema 8: migrations 9, 10 and 11 run in turn
    token = add_author(store, "alice")
    alice = store.author_named("alice")["id"]
    store.db.conn.close()
    session_id, opened = SessionStore(path).open(alice, hash_token(token))
    again = SessionStore(path).get(session_id)  # another instance: nothing shared in memory
    assert again is not None and again.csrf == opened.csrf
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
        assert conn.execute("pragma foreign_key_check").fetchall() == []
    finally:
        conn.close()
