"""The competition server's API (arena/server/) through Starlette's TestClient over a temp database:
tokens, permissions on every route, uploads durable before the answer, limits, body size, checks
and what a ladder sees of a checked version."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from arena.cli import app as cli_app
from arena.config import load_ladder_config
from arena.executors import SerialExecutor
from arena.ladder import Ladder
from arena.registry import Registry
from arena.server.app import ServerConfig, create_server_app
from arena.server.authors import add_author, hash_token
from arena.server.checks import CheckPool
from arena.server.submissions import AuthorLimits
from arena.store import Store
from arena.uploads import UploadLimits
from tests.support.config import ladder_toml
from tests.support.server import auth, bot_archive

runner = CliRunner()
GZ = {"Content-Type": "application/gzip"}
LADDER = ladder_toml(name="srv-lad")


@pytest.fixture
def server(tmp_path, monkeypatch):
    """(db path, tokens by author, a function making a client with a config)."""
    db = tmp_path / "arena.db"
    store = Store(db)
    tokens = {"alice": add_author(store, "alice"), "bob": add_author(store, "bob"),
              "root": add_author(store, "root", role="organiser")}
    store.db.conn.close()
    clients = []

    def client(config: ServerConfig | None = None, **kw) -> TestClient:
        c = TestClient(create_server_app(db, config), raise_server_exceptions=False, **kw)
        clients.append(c)
        return c
    yield db, tokens, client
    for c in clients:
        c.close()


def counts(db: Path) -> tuple:
    """What a refused request must leave as it was: submissions, bots rows, live tokens."""
    store = Store.open_readonly(db)
    q = store.db.conn.execute
    try:
        return (q("select count(*) from submissions").fetchone()[0],
                q("select count(*) from bots").fetchone()[0],
                q("select count(*), max(revoked_at) from author_tokens").fetchone())
    finally:
        store.db.conn.close()


def submit(client: TestClient, token: str | None, data: bytes, **kw):
    headers = {**GZ, **(auth(token) if token else {})}
    return client.post("/api/submissions", content=data, headers=headers, **kw)


def test_an_upload_is_registered_and_its_row_committed_before_the_201(server, tmp_path):
    db, tokens, client = server
    r = submit(client(), tokens["alice"], bot_archive(tmp_path, "rb", "1"))
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["bot"] == "rb" and body["version"] == "1" and body["status"] == "received"
    assert body["url"] == f"/api/submissions/{body['id']}"
    # A fresh connection (another process would see the same): the row and the version are there.
    store = Store.open_readonly(db)
    row = store.submission(body["id"])
    assert row["status"] == "received" and row["author"] == "alice" and row["unpacked_bytes"] > 0
    (version,) = Registry(store).versions("rb")
    assert version.status == "pending"  # no ladder plays it before its check
    assert version.extra["author_id"] == row["author_id"]
    assert (Registry(store).root / version.content_hash / "random_bot.py").is_file()


def test_every_route_refuses_no_wrong_or_revoked_token_with_401_and_changes_nothing(server,
                                                                                  tmp_path):
    db, tokens, client = server
    c = client()
    first = submit(c, tokens["alice"], bot_archive(tmp_path, "rb", "1")).json()
    runner.invoke(cli_app, ["author", "revoke", "bob", "--db", str(db)])
    before = counts(db)
    archive = bot_archive(tmp_path, "rb", "2")
    for token in (None, "wrong", "arena_" + "x" * 43, tokens["bob"], "x" * 10_000):
        headers = auth(token) if token else {}
        for method, url in (("POST", "/api/submissions"), ("GET", "/api/submissions"),
                            ("GET", f"/api/submissions/{first['id']}"), ("GET", "/api/me")):
            r = c.request(method, url, headers={**GZ, **headers},
                          content=archive if method == "POST" else None)
            assert r.status_code == 401, (token, method, url, r.text)
            assert r.headers["www-authenticate"] == "Bearer"
            assert set(r.json()) == {"error"} and "\n" not in r.json()["error"]
    # A token in the URL is no token.
    assert c.get(f"/api/me?token={tokens['alice']}").status_code == 401
    assert counts(db) == before


def test_another_authors_token_gets_403_and_changes_nothing(server, tmp_path):
    db, tokens, client = server
    c = client()
    mine = submit(c, tokens["alice"], bot_archive(tmp_path, "rb", "1")).json()
    before = counts(db)
    r = c.get(f"/api/submissions/{mine['id']}", headers=auth(tokens["bob"]))
    assert r.status_code == 403 and "another author" in r.json()["error"]
    # Bob may not add a version to alice's bot.
    r = submit(c, tokens["bob"], bot_archive(tmp_path, "rb", "2"))
    assert r.status_code == 403 and "'rb' belongs to another author" in r.json()["error"]
    assert c.get("/api/submissions", headers=auth(tokens["bob"])).json() == {"submissions": []}
    assert counts(db) == before
    # The organiser sees everything.
    assert c.get(f"/api/submissions/{mine['id']}", headers=auth(tokens["root"])).status_code == 200
    listed = c.get("/api/submissions", headers=auth(tokens["root"])).json()["submissions"]
    assert [s["id"] for s in listed] == [mine["id"]]


def test_me_and_own_submissions(server, tmp_path):
    db, tokens, client = server
    c = client()
    assert c.get("/api/me", headers=auth(tokens["root"])).json() == {"name": "root",
                                                                     "role": "organiser"}
    sub = submit(c, tokens["alice"], bot_archive(tmp_path, "rb", "1")).json()
    one = c.get(f"/api/submissions/{sub['id']}", headers=auth(tokens["alice"])).json()
    assert one["bot"] == "rb" and one["status"] == "received" and one["report"] is None
    listed = c.get("/api/submissions", headers=auth(tokens["alice"])).json()["submissions"]
    assert [(s["id"], s["bot"], s["version"], s["status"]) for s in listed] == [
        (sub["id"], "rb", "1", "received")]
    assert c.get("/api/submissions/999", headers=auth(tokens["alice"])).status_code == 404


def test_rotate_and_revoke_through_the_cli(server):
    db, tokens, client = server
    c = client()
    old = tokens["alice"]
    result = runner.invoke(cli_app, ["author", "rotate", "alice", "--db", str(db)])
    assert result.exit_code == 0, result.output
    new = result.stdout.strip().splitlines()[-1]
    assert new.startswith("arena_") and new != old
    assert c.get("/api/me", headers=auth(old)).status_code == 401  # rotated out
    assert c.get("/api/me", headers=auth(new)).json()["name"] == "alice"
    assert runner.invoke(cli_app, ["author", "revoke", "alice", "--db", str(db)]).exit_code == 0
    assert c.get("/api/me", headers=auth(new)).status_code == 401
    # Only hashes are stored.
    store = Store.open_readonly(db)
    stored = [r[0] for r in store.db.conn.execute("select token_hash from author_tokens")]
    assert new not in stored and hash_token(new) in stored
    bad = runner.invoke(cli_app, ["author", "rotate", "nobody", "--db", str(db)])
    assert bad.exit_code == 2 and "no author named 'nobody'" in bad.output


def test_author_add_prints_the_token_once_and_refuses_a_duplicate(tmp_path):
    db = tmp_path / "a.db"
    result = runner.invoke(cli_app, ["author", "add", "carol", "--email", "c@x.org", "--db",
                                     str(db)])
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[-1]
    again = runner.invoke(cli_app, ["author", "add", "carol", "--db", str(db)])
    assert again.exit_code == 2 and "exists already" in again.output
    listed = runner.invoke(cli_app, ["author", "list", "--db", str(db)])
    assert "carol" in listed.output and token not in listed.output


def test_limits_answer_429_naming_the_limit_and_store_nothing(server, tmp_path):
    db, tokens, client = server
    c = client(ServerConfig(limits=AuthorLimits(per_hour=1)))
    assert submit(c, tokens["alice"], bot_archive(tmp_path, "rb", "1")).status_code == 201
    before = counts(db)
    r = submit(c, tokens["alice"], bot_archive(tmp_path, "rb", "2"))
    assert r.status_code == 429 and "1 submissions per hour" in r.json()["error"]
    assert counts(db) == before
    # Organisers have no limits.
    assert submit(c, tokens["root"], bot_archive(tmp_path, "org", "1")).status_code == 201

    c = client(ServerConfig(limits=AuthorLimits(active_versions=1)))
    r = submit(c, tokens["alice"], bot_archive(tmp_path, "rb", "3"))
    assert r.status_code == 429 and "1 active versions" in r.json()["error"]

    c = client(ServerConfig(limits=AuthorLimits(storage_bytes=1000)))
    r = submit(c, tokens["bob"], bot_archive(tmp_path, "bb", "1"))
    assert r.status_code == 429 and "1,000 bytes of storage" in r.json()["error"]
    assert counts(db)[0] == before[0] + 1  # only the organiser's


def test_an_oversized_body_is_413_and_nothing_is_stored(server, tmp_path):
    db, tokens, client = server
    c = client(ServerConfig(archive_limits=UploadLimits(archive_bytes=2000)))
    before = counts(db)
    big = bot_archive(tmp_path, "rb", "1", extra=bytes(range(256)) * 64)
    assert len(big) > 2000
    r = submit(c, tokens["alice"], big)
    assert r.status_code == 413 and "2,000 bytes" in r.json()["error"]

    def chunks():  # no Content-Length: the limit holds while reading
        for i in range(0, len(big), 500):
            yield big[i:i + 500]
    r = c.post("/api/submissions", content=chunks(), headers={**GZ, **auth(tokens["alice"])})
    assert r.status_code == 413
    assert counts(db) == before


def test_a_bad_archive_or_type_is_400_in_one_line(server):
    db, tokens, client = server
    c = client()
    before = counts(db)
    r = submit(c, tokens["alice"], b"not an archive at all")
    assert r.status_code == 400 and "\n" not in r.json()["error"]
    r = c.post("/api/submissions", content=b"x", headers={**auth(tokens["alice"]),
                                                          "Content-Type": "text/plain"})
    assert r.status_code == 400 and "Content-Type" in r.json()["error"]
    assert counts(db) == before


def test_self_registration_is_off_by_default(server):
    db, tokens, client = server
    r = client().post("/api/authors", json={"name": "eve"})
    assert r.status_code == 403 and "off" in r.json()["error"]
    r = client(ServerConfig(registration=True)).post("/api/authors", json={"name": "eve"})
    assert r.status_code == 201 and r.json()["token"].startswith("arena_")


def test_the_read_only_web_app_is_mounted_and_root_path_prefixes_urls(server, tmp_path):
    db, tokens, client = server
    c = client(root_path="/arena")
    assert c.get("/arena/bots").status_code == 200
    assert c.get("/arena/api/bots").headers["content-type"].startswith("application/json")
    r = c.post("/arena/api/submissions", content=bot_archive(tmp_path, "rb", "1"),
               headers={**GZ, **auth(tokens["alice"])})
    assert r.status_code == 201 and r.json()["url"].startswith("/arena/api/submissions/")
    assert c.get("/arena/api/me", headers=auth(tokens["alice"])).json()["name"] == "alice"


def _ladder_candidates(db: Path) -> set[str]:
    """The versions a running ladder over `db` would enter at its next registry poll."""
    path = db.parent / "ladder.toml"
    path.write_text(LADDER)
    with SerialExecutor() as ex:
        ladder = Ladder(load_ladder_config(path), Store(db), Registry(db), ex)
        return {v.ref for v in ladder._pending_candidates()}


def test_a_clean_check_makes_the_version_eligible_and_a_failed_one_does_not(server, tmp_path):
    db, tokens, client = server
    c = client()
    good = submit(c, tokens["alice"], bot_archive(tmp_path, "good", "1")).json()
    bad = submit(c, tokens["bob"], bot_archive(tmp_path, "bad", "1")).json()
    assert _ladder_candidates(db) == set()  # neither is checked yet

    def check(db_path, name, version):
        if name == "good":
            return True, {"clean": True}, None
        return False, {"clean": False}, "xeri with 2 seats: crashed"
    pool = CheckPool(db, 1, check=check)
    assert pool.check_one(good["id"]) == "clean"
    assert pool.check_one(bad["id"]) == "failed"
    assert _ladder_candidates(db) == {"good@1"}
    got = c.get(f"/api/submissions/{bad['id']}", headers=auth(tokens["bob"])).json()
    assert got["status"] == "failed" and got["reason"] == "xeri with 2 seats: crashed"
    assert got["report"] == {"clean": False} and got["checked_at"]
    versions = {v.ref: v.status for v in Registry(Store.open_readonly(db)).versions()}
    assert versions == {"good@1": "active", "bad@1": "rejected"}


def test_a_check_that_raises_fails_the_submission_with_the_reason(server, tmp_path):
    db, tokens, client = server
    sub = submit(client(), tokens["alice"], bot_archive(tmp_path, "rb", "1")).json()

    def check(db_path, name, version):
        raise RuntimeError("no sandbox here")
    assert CheckPool(db, 1, check=check).check_one(sub["id"]) == "failed"
    row = Store.open_readonly(db).submission(sub["id"])
    assert row["reason"] == "the check could not run: no sandbox here"


def test_a_restart_redoes_a_check_in_progress(server, tmp_path):
    db, tokens, client = server
    c = client()
    subs = [submit(c, tokens["alice"], bot_archive(tmp_path, f"rb{i}", "1")).json()
            for i in range(2)]
    store = Store(db)
    store.start_check(subs[0]["id"])  # a server stopped mid-check: left "checking"
    store.db.conn.close()
    seen = []

    def check(db_path, name, version):
        seen.append(name)
        return True, {"clean": True}, None
    pool = CheckPool(db, 2, check=check)
    assert sorted(pool.start()) == sorted(s["id"] for s in subs)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # a wait, not a timed assertion
            statuses = [Store.open_readonly(db).submission(s["id"])["status"] for s in subs]
            if statuses == ["clean", "clean"]:
                break
            time.sleep(0.05)
    finally:
        pool.stop(10)
    assert statuses == ["clean", "clean"]
    assert sorted(seen) == ["rb0", "rb1"]


def test_the_check_report_is_the_bot_check_json(tmp_path):
    from arena.checker import CheckReport, Combo, Problem
    from arena.server.checks import failure_reason, report_json

    report = CheckReport("rb", combos=[Combo("xeri", 2, 2, 1, 10, 0.1)],
                         problems=[Problem("xeri", 2, "crash", "crashed", "exit 1\nboom", "", "g")])
    data = json.loads(json.dumps(report_json(report)))
    assert data["clean"] is False and data["problems"][0]["words"] == "crashed"
    assert failure_reason(report) == "xeri with 2 seats: crashed: exit 1 boom"


def test_concurrent_uploads_lose_nothing_and_double_nothing(server, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    db, tokens, client = server
    c = client()
    archives = [bot_archive(tmp_path, f"cc{i % 4}", "1") for i in range(12)]  # 4 contents, 3 times
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda a: submit(c, tokens["root"], a), archives))
    assert [r.status_code for r in answers] == [201] * 12, [r.text for r in answers]
    assert len({r.json()["id"] for r in answers}) == 12
    store = Store.open_readonly(db)
    assert len(store.submissions()) == 12
    assert sorted(v.ref for v in Registry(store).versions()) == [f"cc{i}@1" for i in range(4)]
    assert store.db.conn.execute("pragma integrity_check").fetchone()[0] == "ok"


def test_arena_serve_has_no_write_routes(server, tmp_path):
    from arena.web import create_app

    db, tokens, client = server
    with TestClient(create_app(db)) as c:
        r = c.post("/api/submissions", content=bot_archive(tmp_path, "rb", "1"),
                   headers={**GZ, **auth(tokens["root"])})
        assert r.status_code in (404, 405)
        assert c.get("/api/me", headers=auth(tokens["root"])).status_code == 404
    assert counts(db)[0] == 0


def test_the_server_command_refuses_a_bad_root_path_in_one_line(tmp_path):
    result = runner.invoke(cli_app, ["server", "--db", str(tmp_path / "s.db"), "--root-path",
                                     "arena/"])
    assert result.exit_code == 2 and "--root-path 'arena/'" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_tokens_are_found_by_digest_and_compared_in_constant_time(tmp_path, monkeypatch):
    # Timing cannot be asserted in a test; what makes it safe can: the token itself is never looked
    # up or compared, only its sha256 digest, and that through hmac.compare_digest.
    from arena.server import authors

    store = Store(tmp_path / "arena.db")
    token = add_author(store, "alice")
    looked_up, compared = [], []
    holder = store.token_holder
    monkeypatch.setattr(store, "token_holder", lambda digest: looked_up.append(digest) or holder(digest))
    real = authors.hmac.compare_digest
    monkeypatch.setattr(authors.hmac, "compare_digest",
                        lambda a, b: compared.append((a, b)) or real(a, b))
    assert authors.authenticate(store, token).name == "alice"
    assert looked_up == [hash_token(token)] and compared == [(hash_token(token),) * 2]
    looked_up.clear()
    near = token[:-1] + ("A" if token[-1] != "A" else "B")  # one character off
    assert authors.authenticate(store, near) is None
    assert looked_up == [hash_token(near)] and token not in looked_up
