"""The ladder: a continuous competition of registry bots, with matchmaking that learns the ranking.

A ladder is stored as a tournament row of format "ladder" (so its matches, games, moves, logs,
failures, replays and exports are those of any tournament) with one stage per format (a game at a
seat count) and two tables of its own: `ladder_entries` (each bot version, when it joined or was
rejected and why, when it was retired) and `ladder_tables` (each table chosen, in order, before it
is played).

Determinism. Table k is chosen by the matchmaker after it has been fed the results of tables
0 … k − F in table order (F = tables in flight: the config's `in_flight`, else the capacity of
the executor the ladder started on, which its resumes keep; so a serial and a Ray ladder of one
config choose alike only when it sets `in_flight`) and the
entries and retirements recorded at ticks ≤ k — never anything that depends on which match
happened to finish first. So a resumed ladder replays its recorded history into a fresh
matchmaker, checks that it chooses the recorded tables again, and goes on making the choices an
uninterrupted run would have made; tables chosen but not finished are played again with the same
seeds (nothing lost, nothing doubled).

New versions. The registry is polled between tables: an active version that plays every game of
the ladder (and passes the entrant rule) plays a validation match against the random bot first
(`validate = false` skips it); it then enters at the current tick — with placement priority from
the matchmaker — or is recorded as rejected with the reason, which `arena bot show` prints. A
retired version (`arena bot remove`) gets no tables from the next tick on.

Running. The ladder is a policy over a DriverSession (arena.session), as the tournament driver
is: the session holds the lease, the heartbeat, the stops, the buffered writer and the final status;
the ladder says which table to submit next and what an outcome does.

Stopping. Ctrl-C or SIGTERM stop it cleanly (status "interrupted"), as do `arena ladder stop`
("stopped"), `--games N` and `--minutes M` ("paused"); `arena ladder resume` continues exactly.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena.cards import derive_seed
from arena.config import LadderConfig, time_control
from arena.errors import ConfigError, MatchErrorLimit, StoreError
from arena.events import config_digest, match_id, ordinal
from arena.executors import Executor
from arena.games import make_options
from arena.ladder_view import LADDER_FORMAT
from arena.leaderboards import LADDER_SCOPE, ladder_scope_id, leaderboard
from arena.match import GamePlan, MatchFailure, MatchResult, MatchSpec
from arena.players.base import BotSpec
from arena.players.limits import as_overrides, resolve_limits
from arena.refs import parse_ref
from arena.registry import BotVersion, Registry, guard_match
from arena.scheduling.matchmaking import Choice, Format, Matchmaker, MatchmakingConfig, TableResult
from arena.scheduling.seating import seatings
from arena.session import DriverPolicy, DriverSession, Listener, bot_isolation, open_executor
from arena.store import MatchRecord, Store, now
from arena.store.writer import LadderWriter, finished_tables, played_game
from arena.tournament import score_result

# Seconds between looks at the registry for new and retired versions: a new version waits for
# at most this after its table in flight (a look costs 2.4 ms with 200 versions: under 1 % of a core).
REGISTRY_POLL_S = 0.25
FLUSH_TABLES = 64  # finished tables written together (fewer transactions on a fast ladder)
FLUSH_SECONDS = 2.0
IDLE_WAIT_S = 0.5  # how long an idle ladder (too few bots) sleeps between registry polls


@dataclass
class LadderRun:
    """What one run of a ladder did."""

    tournament_id: int
    tables_played: int = 0
    games_played: int = 0
    status: str = "running"
    joined: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    retired: list[str] = field(default_factory=list)


def key_of(version: BotVersion) -> str:
    """How a version is named at a ladder's tables: `name@version`."""
    return f"{version.name}@{version.version}" if version.version else version.name


def matchmaking_config(config: LadderConfig) -> MatchmakingConfig:
    """The matchmaker's settings from a ladder config."""
    m = config.matchmaking
    return MatchmakingConfig(strategy=m.strategy, placement_games=m.placement_games,
                             min_share=m.min_share, window=m.window, top_k=m.top_k,
                             top_share=m.top_share)


def formats_of(config: LadderConfig) -> list[Format]:
    """The matchmaker's formats; a 4-seat format whose options set team_mode is a team format."""
    return [Format(f.game, f.seats, f.weight, teams=bool(f.options.get("team_mode")) and f.seats == 4)
            for f in config.formats]


class Ladder(DriverPolicy):
    """A ladder's policy over its driver session: the matchmaker's next table, new versions
    validated and entered between tables; runs (or resumes) until stopped or its budget is spent."""

    def __init__(self, config: LadderConfig, store: Store, registry: Registry, executor: Executor,
                 listener: Listener | None = None, games: int | None = None,
                 minutes: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.store = store
        self.registry = registry
        self.executor = executor
        self.listener = listener or Listener()
        self.session = DriverSession(store, executor, self.listener)
        self.games_budget = games
        self.deadline = None if minutes is None else clock() + 60 * minutes
        self.clock = clock
        self.in_flight_limit = config.in_flight or max(1, executor.capacity())
        self.formats = formats_of(config)
        self.options = [make_options(f.game, f.options).model_dump(mode="json")
                        for f in config.formats]
        self.seatings = [seatings(f.seats, config.deals, True) for f in config.formats]
        self.time = time_control(config)
        self.tid = 0
        self.matchmaker = Matchmaker(self.formats, matchmaking_config(config), config.seed)
        self.entries: dict[str, dict] = {}  # key -> ladder_entries row
        self.specs: dict[str, BotSpec] = {}
        self.bot_ids: dict[str, int] = {}
        # Chosen tables not yet fed to the matchmaker, by number (those fed are dropped: a ladder
        # runs on and on, and its memory must not grow with the tables it has played).
        self.tables: dict[int, dict] = {}
        self.table_count = 0  # tables chosen so far (the next table's number, the current tick)
        self.results: dict[int, TableResult] = {}  # finished, not yet fed to the matchmaker
        self.fed = 0  # tables 0 … fed-1 have been fed
        self.in_flight: dict[str, tuple[int, MatchSpec]] = {}
        # Submitted before any new table is chosen: (number, spec, what to submit) of tables
        # recorded but unfinished on resume, and of runner errors to retry.
        self.todo: deque[tuple[int, MatchSpec, MatchSpec]] = deque()
        self.last_poll = -1e9
        self.since_refit = 0
        self.run_info: LadderRun | None = None

    # -- the run ----------------------------------------------------------------------------------
    def run(self, resume: bool = False) -> LadderRun:
        """Open, replay what is recorded, then play until stopped; the run's summary."""
        self.tid = self._open(resume)
        run = self.run_info = LadderRun(self.tid)
        self._replay()
        self.listener.ladder_started(self.tid, resume, self.table_count)
        self.session.run(lambda: self.session.pump(self), cancelled="stopped", close=self._close)
        return run

    def _close(self, status: str) -> None:
        self.run_info.status = status
        self._publish()

    def _hold(self, tid: int, created: bool) -> int:
        writer = LadderWriter(self.store, tid, self.bot_ids, max_matches=FLUSH_TABLES,
                              max_seconds=FLUSH_SECONDS)
        self.session.hold(tid, writer, created)
        return tid

    def _open(self, resume: bool) -> int:
        config, store = self.config, self.store
        digest = config_digest(config)
        existing = store.find_tournament(config.name)
        if existing is not None and existing["format"] != LADDER_FORMAT:
            raise ConfigError(f"{config.name!r} is the name of a tournament, not a ladder")
        if not resume:
            if existing is not None:
                raise ConfigError(f"ladder {config.name!r} exists (id {existing['id']}); "
                                  f"continue it with `arena ladder resume`")
            stages = [{"name": f"{f.game}-{f.seats}p", "game": f.game, "format": LADDER_FORMAT,
                       "seats": f.seats, "options": self.options[i],
                       "config": f.model_dump(mode="json"), "entrants": [], "left_out": [],
                       "rounds": 0} for i, f in enumerate(config.formats)]
            tid = store.create_tournament(
                config.name, ",".join(config.games), LADDER_FORMAT,
                max(f.seats for f in config.formats), config.seed, {},
                {**config.model_dump(mode="json", by_alias=True), "digest": digest,
                 "tables_in_flight": self.in_flight_limit}, [],
                stages=stages, lease=self.session.lease)
            return self._hold(tid, created=True)
        if existing is None:
            raise ConfigError(f"nothing to resume: no ladder named {config.name!r}")
        stored = json.loads(existing["config"])
        if stored.get("digest") != digest:
            raise ConfigError(f"cannot resume ladder {config.name!r}: its config differs")
        # F decides which results each choice rests on, so a resume keeps the F the ladder started
        # with, whatever executor it runs on now (serial then Ray, another core count): otherwise
        # the replay chooses other tables than those recorded and the resume is refused.
        self.in_flight_limit = stored.get("tables_in_flight", self.in_flight_limit)
        return self._hold(existing["id"], created=False)

    def _replay(self) -> None:
        """Feed the recorded history into the matchmaker, checking it chooses the same tables."""
        entries = self.store.ladder_entries(self.tid)
        tables = self.store.ladder_tables(self.tid)
        results = self.store.ladder_results(self.tid)
        by_id = {v.id: v for v in self.registry.versions()}
        for e in entries:
            self.entries[e["key"]] = e
            if e["status"] in ("active", "retired"):
                self._load_spec(by_id[e["bot_id"]])
        joins = sorted((e["joined_tick"], i, e) for i, e in enumerate(entries)
                       if e["status"] in ("active", "retired"))
        retires = sorted((e["retired_tick"], i, e) for i, e in enumerate(entries)
                         if e["status"] == "retired")
        for row in tables:
            k = row["number"]
            self._events_until(k, joins, retires)
            self._feed_until(k, tables, results)
            choice = self.matchmaker.choose(k)
            if choice is None or (choice.format, list(choice.bots)) != (row["format"], row["bots"]):
                raise StoreError(
                    f"ladder {self.tid} table {k}: the recorded table differs from the one its "
                    f"history gives; the database was modified")
            self.tables[k] = row
            self.table_count = k + 1
            if k in results:
                self.results[k] = self._table_result(row, results[k])
        self._events_until(len(tables), joins, retires)
        for row in tables:
            if row["status"] != "finished":
                spec = self._spec(row)
                # A version whose snapshot changed since it entered fails to start: its forfeit.
                self.todo.append((row["number"], spec, guard_match(spec)))

    def _events_until(self, tick: int, joins: list, retires: list) -> None:
        while joins and joins[0][0] <= tick:
            self.matchmaker.join(joins.pop(0)[2]["key"])
        while retires and retires[0][0] <= tick:
            self.matchmaker.retire(retires.pop(0)[2]["key"])

    def _feed_until(self, k: int, tables: list[dict], results: dict) -> None:
        """Feed tables fed … k − F (they finished before table k was chosen)."""
        while self.fed <= k - self.in_flight_limit:
            row = tables[self.fed]
            if self.fed not in results:
                raise StoreError(f"ladder {self.tid} table {self.fed} was not finished before "
                                 f"table {k} was chosen; the database was modified")
            self.matchmaker.add_result(self._table_result(row, results[self.fed]))
            self.results.pop(self.fed, None)
            self.tables.pop(self.fed, None)
            self.fed += 1

    @staticmethod
    def _table_result(row: dict, games: list[list[int]]) -> TableResult:
        return TableResult(row["number"], row["format"], tuple(row["bots"]),
                           tuple(tuple(g) for g in games))

    # -- the policy: what to submit next, what an outcome does -------------------------------------
    def capacity(self) -> int:
        """F tables in flight (the config's `in_flight`, else the first executor's capacity)."""
        return self.in_flight_limit

    def prepare(self) -> None:
        """Look at the registry for new and retired versions (not once the budget is spent)."""
        if not self._budget_spent():
            self._poll_registry()

    def next_match(self) -> MatchSpec | None:
        """A table to play again first, else the matchmaker's next choice once the tables it rests
        on are in; None when the budget is spent or the matchmaker has too few bots."""
        if self.todo:
            number, spec, submitted = self.todo.popleft()
            self.in_flight[spec.match_id] = (number, spec)
            return submitted
        if self._budget_spent():
            return None  # what is in flight finishes: nothing half-played is left
        k = self.table_count
        # Table k may be chosen only once every table up to k − F is in.
        wait = k - self.in_flight_limit
        if wait >= 0 and not self._finished_through(wait):
            return None
        self._feed_ready(k)
        choice = self.matchmaker.choose(k)
        if choice is None:
            return None
        return self._choose(choice)

    def outcome(self, outcome: MatchResult | MatchFailure) -> None:
        """Record a finished table; record a failed one and play it again."""
        self._take(outcome)

    def idle(self) -> str | None:
        """"paused" when the budget is spent (or cannot be reached); else wait for the registry."""
        if self._budget_spent():
            return "paused"
        self.session.writer.flush()
        self.session.check_stop()
        # Nothing to play: too few active bots. Wait for the registry (or the budget's end).
        if self.deadline is None and self.games_budget is not None and not self._can_grow():
            return "paused"
        time.sleep(IDLE_WAIT_S)
        if self.deadline is not None and self.clock() >= self.deadline:
            return "paused"
        return None

    def _can_grow(self) -> bool:
        """Whether waiting could help: the registry may still bring bots (it is polled)."""
        return bool(self._pending_candidates())

    def _budget_spent(self) -> bool:
        run = self.run_info
        if self.games_budget is not None and run.games_played + self._in_flight_games() >= self.games_budget:
            return True
        return self.deadline is not None and self.clock() >= self.deadline

    def _in_flight_games(self) -> int:
        return sum(len(spec.games) for _, spec in self.in_flight.values())

    def _finished_through(self, number: int) -> bool:
        return all(self.tables[j]["status"] == "finished" for j in range(self.fed, number + 1))

    def _feed_ready(self, k: int) -> None:
        while self.fed <= k - self.in_flight_limit:
            self.matchmaker.add_result(self.results.pop(self.fed))
            del self.tables[self.fed]
            self.fed += 1

    # -- tables -----------------------------------------------------------------------------------
    def _choose(self, choice: Choice) -> MatchSpec:
        # The choice is written with the next flush, in one transaction with every result
        # buffered by then, which includes those it rests on (tables up to number − F are
        # finished before it is made): so it never lands before them, or a crash in between
        # would leave a history that a resume cannot replay. A choice lost in a crash is made
        # again, alike, by the resume (its history is the same). One transaction per table
        # chosen was most of a fast ladder's time (a commit each, ~1 ms on disk).
        mid = match_id(self.tid, choice.format + 1, choice.number, 1)
        row = {"number": choice.number, "format": choice.format, "bots": list(choice.bots),
               "match_id": mid, "status": "pending", "reason": choice.reason}
        self.session.writer.choose({**row, "chosen_at": now()})
        self.tables[choice.number] = row
        self.table_count = choice.number + 1
        spec = self._spec(row)
        self.in_flight[spec.match_id] = (row["number"], spec)
        # A version whose snapshot changed since it entered fails to start: its forfeit, not ours.
        return guard_match(spec)

    def _spec(self, row: dict) -> MatchSpec:
        fmt = self.config.formats[row["format"]]
        stage, number = row["format"] + 1, row["number"]
        mid = match_id(self.tid, stage, number, 1)
        names = tuple(row["bots"])
        games = tuple(
            GamePlan(game_id=f"{mid}-d{deal}-s{rot}", ordinal=ordinal(stage, number, 1, i),
                     deal=deal, rotation=rot,
                     # Seeds depend on the config and the table, not on timing or the database.
                     seed=derive_seed(self.config.seed, fmt.game, stage, number, names, deal),
                     seating=seating)
            for i, (deal, rot, seating) in enumerate(self.seatings[row["format"]]))
        return MatchSpec(match_id=mid, game=fmt.game, options=self.options[row["format"]],
                         bots=tuple(self.specs[k] for k in names), games=games, time=self.time,
                         max_failures=self.config.max_failures)

    def _take(self, outcome: MatchResult | MatchFailure) -> None:
        number, spec = self.in_flight.pop(outcome.match_id)
        row = self.tables[number]
        if isinstance(outcome, MatchFailure):
            record = MatchRecord(row["format"] + 1, number, 1, spec.game, spec.options,
                                 match_id=spec.match_id)
            attempts = self.session.record_failure(record, outcome)
            if attempts >= self.config.match_attempts:
                raise MatchErrorLimit(f"ladder table {number} ({spec.match_id}) failed {attempts} "
                                      f"times by runner errors; resume to retry it")
            self.todo.appendleft((number, spec, spec))
            return
        result: MatchResult = outcome
        self._record(row, spec, result)
        self.listener.table_done(number, result)

    def _record(self, row: dict, spec: MatchSpec, result: MatchResult) -> None:
        names = list(row["bots"])
        local = {n: i for i, n in enumerate(names)}
        bots = tuple(range(len(names)))
        score, deals = score_result(result, row["number"], 1, bots, local, names)
        record = MatchRecord(row["format"] + 1, row["number"], 1, spec.game, spec.options,
                             result=result, score=score, names=names, match_id=spec.match_id,
                             bots=bots, deals=deals)
        self.session.writer.add((row["number"], record))
        row["status"] = "finished"
        ranks = []
        for g in result.games:
            by_position = [0] * len(names)
            for seat, name in enumerate(g.seats):
                by_position[local[name]] = g.ranks[seat]
            ranks.append(tuple(by_position))
        self.results[row["number"]] = TableResult(row["number"], row["format"], tuple(names),
                                                  tuple(ranks))
        run = self.run_info
        run.tables_played += 1
        run.games_played += len(result.games)
        self.since_refit += 1
        if self.since_refit >= self.config.leaderboard.every_tables:
            self.session.writer.flush()
            self._publish()

    # -- entrants ---------------------------------------------------------------------------------
    def _eligible(self) -> list[BotVersion]:
        """Active registry versions that the entrant rule admits and that play every game."""
        rule = self.config.entrants
        wanted = [parse_ref(b) for b in rule.bots]
        versions = [v for v in self.registry.versions() if v.status == "active"
                    and (not v.games or all(g in v.games for g in self.config.games))]
        if wanted:
            versions = [v for v in versions
                        if any(v.name == n and (ver is None or v.version == ver) for n, ver in wanted)]
        if rule.versions == "latest":
            # A version named outright (`x@2`) plays beside x's latest: two versions of one bot
            # meet as x@2 and x@3. The rest: each name's newest.
            named = {(n, ver) for n, ver in wanted if ver is not None}
            bare = {n for n, ver in wanted if ver is None}
            latest: dict[str, BotVersion] = {}
            for v in versions:  # oldest first: the last one seen is the newest
                latest[v.name] = v
            # A name given only with versions (`x@2`) brings no "latest" of its own.
            versions = [v for v in versions if (v.name, v.version) in named
                        or (v is latest[v.name] and (not wanted or v.name in bare))]
        return versions

    def _pending_candidates(self) -> list[BotVersion]:
        return [v for v in self._eligible() if key_of(v) not in self.entries]

    def _poll_registry(self) -> None:
        now = self.clock()
        if now - self.last_poll < REGISTRY_POLL_S:
            return
        self.last_poll = now
        tick = self.table_count
        eligible = self._eligible()
        keys = {key_of(v) for v in eligible}
        for key, entry in list(self.entries.items()):
            if entry["status"] == "active" and key not in keys:
                # Retired in the registry, or superseded by a newer version under "latest".
                self.session.writer.flush()  # the tables before its tick land first (a resume replays by tick)
                self.store.ladder_retire(self.tid, entry["bot_id"], tick)
                entry["status"], entry["retired_tick"] = "retired", tick
                self.matchmaker.retire(key)
                self.run_info.retired.append(key)
        for version in eligible:
            key = key_of(version)
            if key in self.entries:
                continue
            # Each validation plays a game: a stop asked for while many new versions wait (a
            # burst of uploads) is honoured between two of them, not after them all.
            self.session.check_stop()
            status, reason = self._validate(version)
            self.session.writer.flush()  # the tables before its tick land first (a resume replays by tick)
            self.store.ladder_entry(self.tid, version.id, key, status, reason, tick)
            self.entries[key] = {"key": key, "bot_id": version.id, "status": status,
                                 "reason": reason, "joined_tick": tick, "retired_tick": None}
            self.listener.entered(key, status, reason)
            if status == "active":
                self.matchmaker.join(key)
                self.run_info.joined.append(key)
            else:
                self.run_info.rejected[key] = reason

    def _load_spec(self, version: BotVersion) -> BotSpec:
        key = key_of(version)
        spec = self.registry.spec(version, name=key, sandbox=self.config.sandbox)
        spec = replace(spec, limits=resolve_limits(self.config.limits, as_overrides(spec.limits)),
                       user=self.config.bot_user)
        self.specs[key] = spec
        self.bot_ids[key] = version.id
        return spec

    def _validate(self, version: BotVersion) -> tuple[str, str]:
        """("active", "") or ("rejected", why): a validation match against the random bot."""
        try:
            spec = self._load_spec(version)
        except ConfigError as exc:
            return "rejected", str(exc)
        if not self.config.validate_bots:
            return "active", ""
        from arena.checker import check_vouched

        fmt = self.config.formats[0]
        # the ladder's own table: its seat count and options, not every set `bot check` tries
        report = check_vouched(spec, [fmt.game], game=fmt.game, time=self.time, deals=1,
                           seed=self.config.seed + 1, options=dict(fmt.options), seats=fmt.seats)
        if report.clean:
            return "active", ""
        problem = report.problems[0]
        why = f"validation game failed: {problem.words}"
        if problem.evidence:
            why += f" ({problem.evidence[:200]})"
        return "rejected", why

    # -- leaderboard ------------------------------------------------------------------------------
    def _publish(self) -> None:
        """Refit the published leaderboard of every game of the ladder (ML with intervals)."""
        self.since_refit = 0
        publish_leaderboards(self.store, self.tid, self.config.leaderboard.samples,
                             self.config.seed)


def publish_leaderboards(store: Store, tid: int, samples: int, seed: int = 0) -> dict[str, dict]:
    """Fit and store each game's ladder leaderboard (scope "ladder", id "<ladder id>:<game>"),
    with a snapshot of it: {game: {method, rows}} for the games the ladder has played."""
    tables = finished_tables(store, tid)
    out = {}
    for game in store.tournament(tid)["game"].split(","):
        if not played_game(store, tid, game):
            continue
        board = leaderboard(store, game, samples=samples, seed=seed, ladder_id=tid)
        store.save_rating_snapshot(LADDER_SCOPE, ladder_scope_id(tid, game), board["method"],
                                   tables, board["rows"])
        out[game] = {"method": board["method"], "rows": board["rows"]}
    return out


def run_ladder(config_path: str | Path, db: str | Path, *, executor: str = "auto",
               ray_address: str | None = None, workers: int | None = None, resume: bool = False,
               games: int | None = None, minutes: float | None = None, pin: bool | None = None,
               listener: Listener | None = None) -> LadderRun:
    """Load a ladder config, choose an executor, and run (or resume) it over the database `db`."""
    from arena.config import load_ladder_config

    config = load_ladder_config(config_path)
    listener = listener or Listener()
    # Refused before the store is touched: plain mode as root with nothing to bound the bots.
    isolation = bot_isolation(config.sandbox, config.bot_user, config.allow_unconfined)
    store = Store(db)
    # A ladder runs on and on: unless bounded to a few games, Ray's start-up pays off.
    with open_executor(executor, games if games is not None else 10**6, listener, isolation,
                       ray_address=ray_address, workers=workers,
                       pin=config.pin_cpu if pin is None else pin) as (ex, _, _):
        return Ladder(config, store, Registry(db), ex, listener, games, minutes).run(resume)
