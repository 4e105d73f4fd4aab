"""The round-by-round driver: next_round → MatchSpecs → executor → store → standings, per stage.

The driver is a policy over a DriverSession (arena.session: lease, heartbeat, stops, the
buffered writer, the final status): it says which match to submit next and what an outcome does.
It is the only writer. A round's pairings are recorded before its matches start; each
finished match lands in one transaction (several short ones may share a transaction), so a
tournament stopped at any moment keeps every finished match, and a resumed run re-derives the same
rounds from the recorded results, checks them against the recorded pairings, and plays only what
is missing. A match that fails by a runner error (not a bot's fault) is recorded as `error` with
its traceback and retried; it never counts in standings or ratings.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena.config import TournamentConfig, load_config, shown
from arena.errors import (
    Cancelled,
    ConfigError,
    DuplicateRun,
    HostFault,
    MatchErrorLimit,
    StoreError,
)
from arena.events import EventPlan, StagePlan, keep_recorded_schedules, match_spec, plan_event
from arena.executors import Executor
from arena.match import MatchFailure, MatchResult, MatchSpec
from arena.players.base import BotSpec
from arena.ratings.defaults import DEFAULT_K, DEFAULT_RATING, DEFAULT_SAMPLES
from arena.registry import SNAPSHOT_ENV, Registry, guard_match
from arena.scheduling import History, MatchScore, Round
from arena.session import DriverPolicy, DriverSession, Listener, bot_isolation, open_executor
from arena.standings import deal_points, deal_scores, score_match, score_of_row
from arena.store import BOT_FIELDS, MatchRecord, Store, refuse_directory
from arena.store.writer import MatchWriter, games_recorded, stage_finished

FLUSH_MATCHES = 64  # finished matches buffered into one transaction at most
FLUSH_SECONDS = 0.25  # and never held longer than this before they are written


@dataclass
class TournamentRun:
    """What a run did: the tournament id, matches played now and before, and the final table."""

    tournament_id: int
    matches_total: int = 0
    matches_played: int = 0
    matches_skipped: int = 0
    games_played: int = 0
    ratings: list[dict] = field(default_factory=list)
    errors: int = 0  # runner errors retried during this run
    executor: str = ""
    executor_reason: str = ""


def run_tournament(
    config: TournamentConfig,
    bots: list[BotSpec],
    bot_rows: list[dict],
    store: Store,
    executor: Executor,
    resume: bool = False,
    listener: Listener | None = None,
    new: bool = False,
) -> TournamentRun:
    """Play (or resume) a tournament and store its games, standings data and Elo ratings.

    `new`: a deliberate second run of a config the store already holds a tournament of.
    """
    plan = plan_event(config, bots, bot_rows)  # every check before the first write
    return Driver(plan, store, executor, listener or Listener()).run(resume, new)


def run_config(
    config_path: str | Path,
    db: str | Path,
    *,
    executor: str = "auto",
    ray_address: str | None = None,
    workers: int | None = None,
    resume: bool = False,
    pin: bool | None = None,
    listener: Listener | None = None,
    new: bool = False,
) -> TournamentRun:
    """Load a config, choose an executor, and run (or resume) the tournament into the database `db`.

    A config the database holds a tournament of already is refused (DuplicateRun) unless `resume`
    (go on with it) or `new` (a deliberate second run) says which is meant.
    """
    listener = listener or Listener()
    if resume and new:
        raise ConfigError("give --resume (go on with the recorded tournament) or --new (a second "
                          "run), not both")
    loaded = load_config(config_path, registry=Registry(db))  # `bot = "name@v"`
    config = loaded.config
    bots = [e.spec if e.spec.in_process else replace(e.spec, user=config.bot_user)
            for e in loaded.entrants]
    rows = loaded.rows
    plan = plan_event(config, bots, rows)
    # Refused before the store is touched: plain mode as root with nothing to bound the bots.
    isolation = bot_isolation(config.sandbox, config.bot_user, config.allow_unconfined,
                              any(not b.in_process for b in bots))
    from arena.players.launch import check_readable
    from arena.players.process import check_runtime, resolve_command
    from arena.snapshots import snapshot_bots

    refuse_directory(db)  # before its snapshot folder is made beside it
    # Every subprocess bot runs from a snapshot of its folder (copied once per content): what
    # any node runs, and what a resume plays, is what was planned here.
    plan.bots, plan.rows = snapshot_bots(bots, rows, db)  # stages depend on names and games only
    bots = plan.bots
    for bot in bots:  # a program missing here is a typo in the config, said before any write
        if not bot.in_process:
            try:
                check_runtime(resolve_command(bot.command), bot.workdir, bot.name)
            except HostFault as exc:
                raise ConfigError(str(exc)) from None
    try:
        check_readable(bots, config.bot_user)
    except PermissionError as exc:
        raise ConfigError(str(exc)) from None
    store = Store(db)
    if not resume and not new:
        refuse_duplicate(store, plan)  # before an executor (a Ray cluster) is started
    with open_executor(executor, plan.planned_games(), listener, isolation,
                       ray_address=ray_address, workers=workers,
                       pin=config.pin_cpu if pin is None else pin) as (ex, name, reason):
        run = Driver(plan, store, ex, listener).run(resume, new)
    run.executor, run.executor_reason = name, reason
    return run


def refuse_duplicate(store: Store, plan: EventPlan) -> None:
    """DuplicateRun naming the recorded tournament of this very config (name and settings), if any.

    Its games are recorded once already: a second run by mistake would count them again in the
    pooled leaderboards, so it takes --new to say it is meant.
    """
    same = store.same_config(plan.name, plan.digest)
    if not same:
        return
    t = same[0]
    what = f"tournament {t['id']} ({plan.name!r}, {t['status']}) holds this config already"
    if t["status"] in ("finished", "cancelled"):
        raise DuplicateRun(f"{what}; to play it again as a second tournament use --new "
                           f"(--resume goes on only with an unfinished one)")
    raise DuplicateRun(f"{what}; go on with it with --resume, or start a deliberate second run "
                       f"with --new")


def ready_mismatch(manifest: tuple[str, str], ready: tuple[str, str]) -> str:
    """"" when a bot's `ready` (name, version) matches its manifest's, else one line saying how.

    A bot that leaves a field empty says nothing about it: only a different value counts.
    """
    (m_name, m_version), (r_name, r_version) = manifest, ready
    parts = []
    if r_name and r_name != m_name:
        parts.append(f"name {shown(r_name)}")  # the bot's words: look-alikes made visible
    if r_version and r_version != m_version:
        parts.append(f"version {shown(r_version)}")
    if not parts:
        return ""
    return (f"its ready message gives {' and '.join(parts)}, its manifest "
            f"{m_name!r} version {m_version!r} (is the manifest or the bot out of date?)")


class Driver(DriverPolicy):
    """A tournament's policy over its driver session: pair each stage round by round, keeping the
    executor busy; score, buffer or retry each outcome."""

    def __init__(self, plan: EventPlan, store: Store, executor: Executor, listener: Listener):
        self.plan = plan
        self.store = store
        self.executor = executor
        self.listener = listener
        self.session = DriverSession(store, executor, listener)
        self.tid = 0
        self.bot_ids: dict[str, int] = {}
        self.run_info: TournamentRun | None = None
        self.state: _StageState | None = None  # the stage being played
        # What each bot's `ready` should say (its manifest's name and version), by its name here;
        # a bot whose `ready` says otherwise is warned about once.
        self._expected_ready = {b.name: tuple(row["manifest_ref"])
                                for b, row in zip(plan.bots, plan.rows) if row.get("manifest_ref")}

    # -- lifecycle ------------------------------------------------------------------------------
    def run(self, resume: bool, new: bool = False) -> TournamentRun:
        """Create or resume the tournament, play every stage, and mark it finished.

        Without `resume` or `new`, a tournament of the same config already recorded is refused.
        """
        self.tid = self._open(resume, new)
        run = self.run_info = TournamentRun(self.tid)
        self.listener.started(self.tid, self.plan.planned_games(),
                              games_recorded(self.store, self.tid))
        status = self.session.run(self._play_stages, cancelled="cancelled", close=self._close)
        if status == "cancelled":
            raise Cancelled(f"tournament {self.tid} was cancelled; finished matches are kept")
        return run

    def _play_stages(self) -> str:
        for stage in self.plan.stages:
            self._run_stage(stage)
        return "finished"

    def _close(self, status: str) -> None:
        if status == "finished":
            self.run_info.ratings = self.store.ratings(self.tid,
                                                       stage=self.plan.stages[-1].number)

    def _hold(self, tid: int, created: bool) -> None:
        self.bot_ids = self.store.bot_ids(tid)
        writer = MatchWriter(self.store, tid, self.bot_ids, max_matches=FLUSH_MATCHES,
                             max_seconds=FLUSH_SECONDS, flush_before_wait=True)
        self.session.hold(tid, writer, created)

    def _open(self, resume: bool, new: bool = False) -> int:
        plan, store = self.plan, self.store
        full_config = {**plan.config.model_dump(mode="json"), "digest": plan.digest}
        if resume:
            existing = store.find_tournament(plan.name)
            if existing is None:
                raise ConfigError(f"nothing to resume: no tournament named {plan.name!r}")
            if json.loads(existing["config"]).get("digest") != plan.digest:
                raise ConfigError(
                    f"cannot resume tournament {existing['id']} ({plan.name!r}): its config differs")
            if existing["status"] in ("finished", "cancelled"):
                raise ConfigError(f"cannot resume tournament {existing['id']} ({plan.name!r}): "
                                  f"it is {existing['status']}")
            tid = existing["id"]
            keep_recorded_schedules(plan, store.stages(tid))
            self._replay_recorded(tid)
            self._hold(tid, created=False)
            return tid
        if not new:
            refuse_duplicate(store, plan)  # before anything is written
        records = [store.record_bot(**{k: v for k, v in row.items() if k in BOT_FIELDS})
                   for row in plan.rows]
        ids = [r.id for r in records]
        for spec, rec in zip(plan.bots, records):
            if rec.version != rec.asked:
                # Another program holds the name@version: this one is a version of its own, so
                # the two programs' games never merge.
                self.listener.notice(f"bot {spec.name!r}: another program than the recorded "
                                     f"{rec.asked_ref} ({rec.differs}); recorded as {rec.ref}")
        twice = {i for i in ids if ids.count(i) > 1}
        if twice:
            shared = [s.name for s, i in zip(plan.bots, ids) if i in twice]
            raise ConfigError(f"bots {', '.join(map(repr, shared))} are one program (same name, "
                              f"content and command); enter it once")
        first = plan.stages[0]
        games = ",".join(dict.fromkeys(s.config.game for s in plan.stages))
        stage_rows = [{
            "name": s.config.name, "game": s.config.game, "format": s.config.format,
            "seats": s.config.seats, "options": s.options,
            "config": s.stored_config(),
            "entrants": s.entrants, "left_out": s.left_out, "rounds": s.total_rounds,
        } for s in plan.stages]
        tid = store.create_tournament(
            plan.name, games, "event" if plan.config.event else first.config.format,
            first.config.seats, plan.config.seed, first.options, full_config, ids,
            stages=stage_rows, lease=self.session.lease, names=[b.name for b in plan.bots])
        self._hold(tid, created=True)
        return tid

    def _replay_recorded(self, tid: int) -> None:
        """On resume, a bot whose folder changed since the tournament began plays the snapshot
        recorded for it: a resumed tournament plays what was planned (and is said to)."""
        from arena.snapshots import snapshot_of

        recorded = self.store.entrant_rows(tid)
        if len(recorded) != len(self.plan.bots):
            return  # not this plan's entrants: the digest check said otherwise, nothing to map
        for i, (spec, rec) in enumerate(zip(self.plan.bots, recorded)):
            found = snapshot_of(spec)
            digest = rec["content_hash"]
            if found is None or not digest or found[0] == digest:
                continue
            if not Path(rec["workdir"]).is_dir():
                raise ConfigError(f"cannot resume tournament {tid}: bot {spec.name!r} changed since "
                                  f"it began (recorded {digest[:8]}, now {found[0][:8]}) and its "
                                  f"recorded snapshot {rec['workdir']} is gone")
            env = tuple((k, digest if k == SNAPSHOT_ENV else v) for k, v in spec.env)
            self.plan.bots[i] = replace(spec, command=tuple(rec["command"]),
                                        workdir=rec["workdir"], env=env)
            self.listener.notice(f"bot {spec.name!r} changed since tournament {tid} began "
                                 f"(now {found[0][:8]}): the resume plays its recorded snapshot "
                                 f"{digest[:8]}")

    # -- stages ---------------------------------------------------------------------------------
    def _run_stage(self, stage: StagePlan) -> None:
        store, tid = self.store, self.tid
        if stage_finished(store, tid, stage.number):
            return
        store.set_stage_status(tid, stage.number, "running")
        names = [self.plan.bots[e].name for e in stage.entrants]
        local = {n: i for i, n in enumerate(names)}
        recorded = store.rounds(tid, stage.number)
        scores = [score_of_row(m) for m in store.match_scores(tid, stage.number)]
        finished = store.recorded_matches(tid)
        rounds: list[Round] = []
        # Re-derive each recorded round from the results before it: pairings are a pure function
        # of (config, seed, results), so any difference means the database was changed.
        for stored in recorded:
            history = History(tuple(rounds), tuple(s for s in scores if s.round < stored["round"]))
            derived = stage.scheduler.next_round(stage.pairing, history)
            as_names = _round_names(derived, names) if derived else None
            if as_names != (stored["tables"], stored["byes"]):
                raise StoreError(
                    f"tournament {tid} stage {stage.number} round {stored['round']}: the recorded "
                    f"pairings differ from those its results give; the database was modified")
            rounds.append(derived)
        state = self.state = _StageState(stage, names, local, rounds, scores, finished)
        for rnd in rounds:  # matches of recorded rounds that did not finish: play them now
            state.queue_round(self, rnd, announce=False)
        self.session.pump(self)
        if state.failed:
            raise MatchErrorLimit(state.failed)
        self.session.writer.flush()
        self._update_ratings(stage)
        store.set_stage_status(tid, stage.number, "finished")

    def _next_round(self, state: _StageState) -> Round | None:
        stage = state.stage
        history = History(tuple(state.rounds), tuple(state.scores))
        rnd = stage.scheduler.next_round(stage.pairing, history)
        if rnd is None:
            return None
        if rnd.number != len(state.rounds) + 1:
            raise StoreError(f"scheduler {stage.config.format} numbered round {rnd.number}, "
                             f"expected {len(state.rounds) + 1}")
        self.session.writer.flush()  # results the round depends on land before the round itself
        tables = [[state.names[b] for b in t.bots] for t in rnd.tables]
        self.store.record_round(self.tid, stage.number, rnd.number, tables,
                                [state.names[b] for b in rnd.byes], stage.config.bye_points,
                                self.bot_ids)
        state.rounds.append(rnd)
        return rnd

    # -- the policy: what to submit next, what an outcome does -----------------------------------
    def capacity(self) -> int:
        """As many matches as the executor keeps busy."""
        return self.executor.capacity()

    def next_match(self) -> MatchSpec | None:
        """The stage's next queued match, pairing the next round when the queue is empty and the
        scheduler allows it; None once a match is out of attempts (no new round is paired, but
        what is queued still runs: its results are kept)."""
        state = self.state
        while not state.queue:
            if state.failed or state.exhausted or not state.may_plan():
                return None
            rnd = self._next_round(state)
            if rnd is None:
                state.exhausted = True
                return None
            state.queue_round(self, rnd)
        record, spec = state.queue.popleft()
        state.in_flight[spec.match_id] = (record, spec)
        # A registry bot whose snapshot changed since the tournament began fails to start.
        return guard_match(spec)

    def outcome(self, outcome: MatchResult | MatchFailure) -> None:
        """Score and buffer a finished match; record a failed one and queue it again."""
        state = self.state
        record, spec = state.in_flight.pop(outcome.match_id)
        if isinstance(outcome, MatchFailure):
            self._failed(state, record, spec, outcome)
        else:
            self._finished(state, record, outcome)

    def idle(self) -> str | None:
        """"stage over" once every round is played (or a match is out of attempts)."""
        state = self.state
        if state.queue:
            return None
        if state.failed or state.exhausted:
            return "stage over"
        if state.may_plan():
            return None
        raise StoreError("driver stalled: a round is unfinished with nothing to run")

    def _finished(self, state: _StageState, record: MatchRecord, result: MatchResult) -> None:
        score, deals = score_result(result, record.round, record.table, record.bots,
                                    state.local, state.names)
        record.result, record.score, record.deals = result, score, deals
        state.scores.append(score)
        state.open_matches[record.round] -= 1
        self.session.writer.add(record)
        run = self.run_info
        run.matches_played += 1
        run.games_played += len(result.games)
        self._check_ready(result)
        self.listener.match_done(result)

    def _check_ready(self, result: MatchResult) -> None:
        """Warn once per bot whose `ready` names another bot or version than its manifest."""
        for name, said in (getattr(result, "ready", None) or {}).items():
            expected = self._expected_ready.pop(name, None)  # looked at once, whatever it says
            if expected is not None:
                mismatch = ready_mismatch(expected, tuple(said))
                if mismatch:
                    self.listener.notice(f"bot {name!r}: {mismatch}")

    def _failed(self, state: _StageState, record: MatchRecord, spec: MatchSpec,
                failure: MatchFailure) -> None:
        self.session.record_failure(record, failure)
        self.run_info.errors += 1
        state.attempts[spec.match_id] = state.attempts.get(spec.match_id, 0) + 1
        if state.attempts[spec.match_id] < self.plan.config.match_attempts:
            state.queue.appendleft((record, spec))
        else:
            state.failed = (
                f"match {spec.match_id} failed {state.attempts[spec.match_id]} times by runner "
                f"errors ({failure.kind}), not counted against any bot; last error: "
                f"{_last_line(failure.error)}")

    def _update_ratings(self, stage: StagePlan) -> None:
        rating = self.plan.config.rating
        update_ratings(self.store, self.tid, stage.number, rating.k, rating.initial,
                       bots=[self.plan.bots[e].name for e in stage.entrants],
                       samples=rating.samples, seed=self.plan.config.seed, anchor=rating.anchor)


class _StageState:
    """The driver's working state for one stage: rounds so far, scores, queue, matches in flight."""

    def __init__(self, stage: StagePlan, names: list[str], local: dict[str, int],
                 rounds: list[Round], scores: list[MatchScore], finished: set[str]):
        self.stage = stage
        self.names = names
        self.local = local
        self.rounds = rounds
        self.scores = scores
        self.finished = finished
        self.queue: collections.deque[tuple[MatchRecord, MatchSpec]] = collections.deque()
        self.in_flight: dict[str, tuple[MatchRecord, MatchSpec]] = {}
        self.open_matches: dict[int, int] = {}
        self.attempts: dict[str, int] = {}
        self.exhausted = False
        self.failed = ""

    def may_plan(self) -> bool:
        """Whether the next round may be paired now: always, or once every round so far is done."""
        if not self.stage.scheduler.depends_on(self.stage.pairing):
            return True
        return all(n == 0 for n in self.open_matches.values())

    def queue_round(self, driver: Driver, rnd: Round, announce: bool = True) -> None:
        """Queue the round's matches that are not recorded yet."""
        stage = self.stage
        self.open_matches[rnd.number] = 0
        todo = 0
        for table in rnd.tables:
            spec = match_spec(driver.plan, stage, table, driver.tid)
            if spec.match_id in self.finished:
                driver.run_info.matches_skipped += 1
                continue
            record = MatchRecord(stage.number, table.round, table.number, stage.config.game,
                                 stage.options, names=[self.names[b] for b in table.bots],
                                 match_id=spec.match_id, bots=table.bots)
            self.queue.append((record, spec))
            self.open_matches[rnd.number] += 1
            todo += 1
        driver.run_info.matches_total += len(rnd.tables)
        if announce or todo:
            driver.listener.round_started(stage, rnd.number)


def _round_names(rnd: Round, names: list[str]) -> tuple[list[list[str]], list[str]]:
    return [[names[b] for b in t.bots] for t in rnd.tables], [names[b] for b in rnd.byes]


def score_result(result: MatchResult, round_no: int, table_no: int, bots: tuple[int, ...],
                 local: dict[str, int], names: list[str]) -> tuple[MatchScore, list[dict]]:
    """A finished match's MatchScore (with per-deal points) and its deal rows for the store.

    `local` maps each bot's name to its entry; `names[entry]` is the name again.
    """
    games = [
        [{"entry": local[name], "team": _team_of(g.teams, seat), "rank": g.ranks[seat]}
         for seat, name in enumerate(g.seats)]
        for g in result.games
    ]
    per_deal = deal_scores([{"deal": g.deal, "seats": seats}
                            for g, seats in zip(result.games, games)])
    score = replace(score_match(round_no, table_no, bots, games), deals=deal_points(per_deal, bots))
    deals = [{"deal": d["deal"], "bot": names[d["entry"]], "points": d["points"],
              "games": d["games"]} for d in per_deal]
    return score, deals


def _team_of(teams: list[list[int]], seat: int) -> int:
    for t, members in enumerate(teams):
        if seat in members:
            return t
    return seat


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no traceback)"


def update_ratings(store: Store, tournament_id: int, stage: int = 1, k: float = DEFAULT_K,
                   initial: float = DEFAULT_RATING, bots: list[str] | None = None,
                   samples: int = DEFAULT_SAMPLES, seed: int = 0,
                   anchor: str | None = None) -> list[dict]:
    """Recompute a stage's ratings from its stored games and store them; the Elo table.

    Two methods are kept: Elo (in ordinal order, for continuity) and the maximum-likelihood fit
    (Bradley–Terry for 2 sides, Plackett–Luce otherwise) with bootstrap intervals, which resample
    a duplicate deal's rotations together. Recomputing gives the same rows (fixed seed).
    """
    from arena.ratings import default_method, pool_flags, rate  # numpy and scipy: only when needed

    games = store.game_results(tournament_id, stage)
    ids = store.bot_ids(tournament_id)
    names = bots if bots is not None else list(ids)
    results = [rate(games, "elo", bots=names, k=k, initial=initial)]
    if games:
        # A named anchor holds only where it played (a stage it sits out keeps the average).
        fixed = (anchor, initial) if anchor and any(
            s["bot"] == anchor for g in games for s in g["seats"]) else None
        results.append(rate(games, default_method(games), bots=names, average=initial,
                            anchor=fixed, samples=samples, seed=seed))
    for result in results:
        rows = [{**row, "bot_id": ids.get(row["bot"])} for row in pool_flags(result).rows]
        store.save_ratings(tournament_id, result.method, rows, result.history, stage=stage)
    return results[0].rows
