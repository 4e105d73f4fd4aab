"""Faults blamed on their cause: where a match ran is recorded, a node that keeps failing by host
faults is quarantined (said and recorded), and a retry goes to another node."""

from __future__ import annotations

from collections import deque

from starlette.testclient import TestClient
from typer.testing import CliRunner

from arena.cli import app
from arena.config import load_config
from arena.executors import Notice, RayExecutor, SerialExecutor, _Slot
from arena.match import MatchFailure, MatchResult
from arena.session import Listener
from arena.store import Store
from arena.tournament import run_tournament
from arena.web.app import create_app
from tests.support.config import write_config

runner = CliRunner()


class TwoNodes(SerialExecutor):
    """Plays serially, but says node "n-b" on host "beta" ran every match, except the first
    attempt of the first match, a host fault on node "n-a" ("alpha"), which is then quarantined."""

    def __init__(self):
        super().__init__(pin=False)
        self.failed: set[str] = set()
        self._told: list[Notice] = []

    def next_outcome(self):
        spec = self._queue[0]
        if not self.failed:
            self._queue.popleft()
            self.failed.add(spec.match_id)
            self._told.append(Notice("node alpha (n-a) quarantined: 3 host faults", "quarantined",
                                     "n-a", "alpha", "3 matches in a row failed there"))
            return MatchFailure(spec.match_id, "bot 'random': perl is not installed on host alpha",
                                "host", "alpha:1", "n-a", "alpha")
        outcome = super().next_outcome()
        outcome.node, outcome.host = "n-b", "beta"
        return outcome

    def notices(self):
        out, self._told = self._told, []
        return out


class Told(Listener):
    def __init__(self):
        self.lines: list[str] = []

    def notice(self, message: str) -> None:
        self.lines.append(message)


def test_where_each_match_ran_and_a_quarantine_are_recorded_and_shown(tmp_path):
    db = tmp_path / "a.db"
    config, bots, rows = load_config(write_config(tmp_path))
    told = Told()
    store = Store(db)
    run = run_tournament(config, bots, rows, store, TwoNodes(), listener=told)
    assert run.errors == 1
    hosts = {r[0] for r in store.db.execute(
        "select host || '/' || node from matches where status = 'finished'")}
    assert hosts == {"beta/n-b"}
    (error,) = store.db.execute("select kind, node, host from match_errors").fetchall()
    assert error == ("host", "n-a", "alpha")
    assert store.db.execute("select count(*) from games where culprit_bot is not null"
                            ).fetchone()[0] == 0  # a host fault is nobody's forfeit
    (event,) = store.node_events(run.tournament_id)
    assert (event["node"], event["host"], event["event"]) == ("n-a", "alpha", "quarantined")
    assert told.lines == ["node alpha (n-a) quarantined: 3 host faults"]
    # --wide: the "ran on" column is the one a narrow terminal folds first.
    out = runner.invoke(app, ["tournament", "show", "--wide", "--db", str(db)], terminal_width=200)
    assert out.exit_code == 0, out.output
    assert "ran on" in out.output and "beta (n-b)" in out.output
    assert "nodes taken out of the run" in out.output and "quarantined" in out.output
    with TestClient(create_app(db)) as client:
        page = client.get(f"/tournaments/{run.tournament_id}")
    assert page.status_code == 200
    assert "ran on" in page.text and "beta" in page.text and "Nodes taken out of the run" in page.text


# -- the Ray pool's own bookkeeping, without Ray -----------------------------------------------------

class _Remote:
    def __init__(self, sent: list):
        self.sent = sent

    def options(self, **_):
        return self

    def remote(self, batch, refs):
        self.sent.append([match_id for match_id, _ in batch])
        return object()


class _Actor:
    def __init__(self):
        self.sent: list = []
        self.run_batch = _Remote(self.sent)


def pool(nodes: list[str]) -> RayExecutor:
    """A RayExecutor's bookkeeping over fake actors on `nodes` (no Ray)."""
    ex = RayExecutor.__new__(RayExecutor)
    ex._slots = [_Slot(i, actor=_Actor(), info={"node": n, "ip": f"10.0.0.{i}", "worker": f"w{i}"})
                 for i, n in enumerate(nodes)]
    ex.quarantined, ex._host_faults, ex._avoid, ex._notices = {}, {}, {}, []
    ex._snapshots, ex._queue = {}, deque()
    ex._alive, ex._alive_at = set(nodes), float("-inf")
    return ex


def host_fault(match_id: str, node: str) -> MatchFailure:
    return MatchFailure(match_id, "perl is not installed on host", "host", "w", node, f"h-{node}")


def test_a_node_failing_by_host_faults_is_quarantined_while_another_is_trusted():
    ex = pool(["A", "B"])
    for i in range(2):
        ex._count(ex._slots[0], host_fault(f"m{i}", "A"))
    assert ex.quarantined == {}
    ex._count(ex._slots[0], MatchResult("ok", [], {}, 1.0))  # a success breaks the run of faults
    for i in range(3):
        ex._count(ex._slots[0], host_fault(f"n{i}", "A"))
    assert list(ex.quarantined) == ["A"]
    (notice,) = ex.notices()
    assert notice.event == "quarantined" and notice.host == "h-A" and "3 matches in a row" in notice.text
    assert ex.notices() == []


def test_the_last_trusted_node_is_never_quarantined():
    ex = pool(["A"])
    for i in range(5):
        ex._count(ex._slots[0], host_fault(f"m{i}", "A"))
    assert ex.quarantined == {} and ex.notices() == []


def test_a_retry_goes_to_another_node_while_one_is_trusted():
    ex = pool(["A", "B"])
    spec_a = type("Spec", (), {"match_id": "m1", "bots": ()})()
    spec_b = type("Spec", (), {"match_id": "m2", "bots": ()})()
    ex._count(ex._slots[0], host_fault("m1", "A"))
    ex._queue.extend([(spec_a, b""), (spec_b, b"")])
    ex._send(ex._slots[0], 2)  # node A: m1 failed there, so only m2
    assert ex._slots[0].actor.sent == [["m2"]]
    ex._send(ex._slots[1], 2)
    assert ex._slots[1].actor.sent == [["m1"]]
    # Failed everywhere: it may go anywhere rather than wait forever.
    ex._count(ex._slots[1], host_fault("m1", "B"))
    ex._queue.append((spec_a, b""))
    ex._send(ex._slots[0], 1)
    assert ex._slots[0].actor.sent[-1] == ["m1"]


def test_a_match_that_worked_is_forgotten():
    ex = pool(["A", "B"])
    ex._count(ex._slots[0], host_fault("m1", "A"))
    ex._count(ex._slots[1], MatchResult("m1", [], {}, 1.0))
    assert "m1" not in ex._avoid
