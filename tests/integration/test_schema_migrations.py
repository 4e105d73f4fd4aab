"""The migrations registry: numbered 1 upwards without gaps, each applied in its own transaction."""

from __future__ import annotations

import pytest

from arena.store import Store, schema


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
