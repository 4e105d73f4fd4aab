"""Read models: what the reports, the CLI and the web show of a tournament or a ladder, each
loaded in one go (a statement per table) so that rendering it is a pure function of the view.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from arena.errors import ConfigError, StoreError

# The package's own names, whichever of its modules defines them (its __init__ imports them
# before it re-exports anything of this module).
from arena.store import ENTRANT_NAME, stored_json
from arena.store.matches import collect_games
from arena.store.tournaments import scored_match

if TYPE_CHECKING:
    from arena.store import Store

ML_METHODS = ("bt", "pl")  # the maximum-likelihood methods a stage's rating table prefers
RATE_WINDOW_S = 60.0  # the pace of a live run is measured over its last minute
LADDER_FORMAT = "ladder"  # the tournaments row of a ladder has this format
LADDER_SCOPE = "ladder"  # pooled ratings of one ladder's games, id "<ladder id>:<game>"


def ladder_scope_id(ladder_id: int, game: str) -> str:
    """The pooled-ratings scope id of one game of a ladder."""
    return f"{ladder_id}:{game}"


def tournament_row(store: Store, tournament_id: int | None = None) -> dict:
    """A tournament row (the newest when no id is given); StoreError if there is none."""
    if tournament_id is None:
        row = next(store.db.query("select * from tournaments order by id desc limit 1"), None)
        if row is None:
            raise StoreError("the database holds no tournament yet")
        return row
    row = next(store.db.query("select * from tournaments where id = ?", [tournament_id]), None)
    if row is None:
        raise StoreError(f"no tournament with id {tournament_id}")
    return row


def _game_results(store: Store, tournament_id: int, stages: list[int]) -> dict[int, list[dict]]:
    """Per stage, its games in ordinal order with their seats (as `Store.game_results`)."""
    if not stages:
        return {}
    by_stage = _grouped(store.db.query(
        "select g.id, g.stage, g.ordinal, g.deal, g.match_id, g.termination, s.seat, s.bot, "
        "s.team, s.score, s.rank from games g join game_seats s on s.game_id = g.id "
        f"where g.tournament_id = ? and g.stage in ({', '.join('?' for _ in stages)}) "
        "order by g.ordinal, s.seat", [tournament_id, *stages]), "stage")
    return {s: collect_games(by_stage.get(s, [])) for s in stages}


def _grouped(rows, key: str) -> dict:
    grouped: dict = defaultdict(list)
    for r in rows:
        grouped[r[key]].append(r)
    return dict(grouped)


@dataclass(frozen=True)
class TournamentView:
    """A tournament as its reports see it: rows, stages, entrants, rounds, matches and results."""

    tournament: dict
    stages: list[dict]
    names: dict[int, str]  # entry -> the entrant's name in this tournament
    versions: dict[str, str]  # entrant name -> its bot's version
    rounds: dict[int, list[dict]]  # stage -> recorded rounds (tables and byes as bot names)
    matches: dict[int, list[dict]]  # stage -> matches, by round and table
    match_bots: dict[str, list[dict]]  # match id -> its bots' scores, by position
    deals: dict[str, list[dict]]  # match id -> its per-deal points, by deal
    byes: dict[int, list[dict]]  # stage -> byes
    forfeits: dict[int, list[dict]]  # stage -> games that ended in a forfeit, by ordinal
    errors: dict[int, list[dict]]  # stage -> runner errors, by round, table and attempt
    # match id -> seats of its games, of the finished matches stored without per-match scores
    # (schema 1): their scores are computed from the games
    unscored_seats: dict[str, list[dict]]
    ratings: dict[tuple[int, str], list[dict]]  # (stage, method) -> stored rating table
    node_events: list[dict]
    games: dict[int, list[dict]] = field(default_factory=dict)  # stage -> game results, where loaded

    @property
    def id(self) -> int:
        """The tournament's id."""
        return self.tournament["id"]

    @classmethod
    def load(cls, store: Store, tournament_id: int | None = None,
             games: bool = False) -> TournamentView:
        """Load a tournament (the newest when no id is given) with everything its reports show.

        Game results are loaded for every stage with `games`, else only for the stages whose
        rating table is computed from them (no maximum-likelihood table stored).
        """
        t = tournament_row(store, tournament_id)
        tid = t["id"]
        stages = store.stages(tid)
        names, versions = {}, {}
        for r in store.db.query(
            f"select t.entry, {ENTRANT_NAME} as name, b.version from tournament_bots t "
            "join bots b on b.id = t.bot_id where t.tournament_id = ? order by t.entry", [tid]
        ):
            names[r["entry"]] = r["name"]
            versions[r["name"]] = r["version"]
        rounds: dict[int, list[dict]] = defaultdict(list)
        for r in store.db.query("select stage, round, tables, byes from rounds "
                                "where tournament_id = ? order by stage, round", [tid]):
            rounds[r["stage"]].append({
                "round": r["round"],
                "tables": stored_json(r["tables"], f"rounds.tables of round {r['round']}"),
                "byes": stored_json(r["byes"], f"rounds.byes of round {r['round']}")})
        matches = _grouped(store.db.query(
            "select m.id, m.stage, m.round, m.table_no, m.bots, m.status, m.attempts, m.error, "
            "m.node, m.host, (select count(*) from games g where g.match_id = m.id) games "
            "from matches m where m.tournament_id = ? order by m.stage, m.round, m.table_no",
            [tid]), "stage")
        match_bots = _grouped(store.db.query(
            "select b.match_id, b.position, b.entry, b.bot, b.bot_id, b.game_points, "
            "b.match_points, b.partners from match_bots b join matches m on m.id = b.match_id "
            "where m.tournament_id = ? order by b.match_id, b.position", [tid]), "match_id")
        deals = _grouped(store.db.query(
            "select d.match_id, d.deal, d.bot, d.bot_id, d.points, d.games from deals d "
            "join matches m on m.id = d.match_id where m.tournament_id = ? "
            "order by d.match_id, d.deal, d.rowid", [tid]), "match_id")
        byes = _grouped(store.db.query("select stage, round, bot, points from byes "
                                  "where tournament_id = ?", [tid]), "stage")
        forfeits = _grouped(store.db.query(
            "select g.stage, g.id as game_id, g.match_id, m.round, m.table_no as [table], "
            "g.culprit_seat as seat, g.culprit_bot as bot, g.termination as reason, g.detail, "
            "g.evidence from games g join matches m on m.id = g.match_id "
            "where g.tournament_id = ? and g.termination != 'normal' order by g.ordinal", [tid]),
            "stage")
        errors = _grouped(store.db.query(
            "select m.stage, e.match_id, m.round, m.table_no as [table], e.attempt, e.kind, "
            "e.error, e.worker, e.node, e.host, e.recorded_at, m.status from match_errors e "
            "join matches m on m.id = e.match_id where m.tournament_id = ? "
            "order by m.round, m.table_no, e.attempt", [tid]), "stage")
        unscored = _grouped(store.db.query(
            "select g.match_id, s.game_id, s.bot, s.team, s.rank from game_seats s "
            "join games g on g.id = s.game_id join matches m on m.id = g.match_id "
            "where m.tournament_id = ? and m.status = 'finished' and not exists "
            "(select 1 from match_bots b where b.match_id = m.id) order by g.ordinal, s.seat",
            [tid]), "match_id")
        ratings: dict[tuple[int, str], list[dict]] = defaultdict(list)
        for r in store.db.query("select * from ratings where tournament_id = ? "
                                "order by stage, method, rating desc, bot", [tid]):
            ratings[(r["stage"], r["method"])].append(r)
        events = list(store.db.query("select node, host, event, detail, recorded_at from "
                                     "node_events where tournament_id = ? order by rowid", [tid]))
        rated = {s for s, m in ratings if m in ML_METHODS}
        wanted = [s["stage"] for s in stages if games or s["stage"] not in rated]
        return cls(t, stages, names, versions, dict(rounds), matches, match_bots, deals, byes,
                   forfeits, errors, unscored, dict(ratings), events,
                   _game_results(store, tid, wanted))

    def stage_games(self, stage: int) -> list[dict]:
        """A stage's game results in ordinal order; StoreError when the view was loaded without."""
        if stage not in self.games and any(s["stage"] == stage for s in self.stages):
            raise StoreError(f"tournament {self.id} stage {stage}: loaded without its games")
        return self.games.get(stage, [])

    def rating_methods(self, stage: int) -> list[str]:
        """The methods a stage has stored ratings for, in name order."""
        return sorted(m for s, m in self.ratings if s == stage)

    def match_scores(self, stage: int) -> list[dict]:
        """A stage's finished, scored matches (as `Store.match_scores`)."""
        return [scored_match(m, self.match_bots[m["id"]], self.deals.get(m["id"], []))
                for m in self.matches.get(stage, [])
                if m["status"] == "finished" and self.match_bots.get(m["id"])]


def parse_stamp(stamp: str | None) -> datetime | None:
    """A stored timestamp as a datetime; None when it is empty or not ISO 8601."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None


def _stamp(moment: datetime) -> str:
    # The format of Store.now(), so stored stamps compare as strings in SQL.
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class TournamentProgress:
    """A tournament's progress at `now`: its lease, per-stage counts and the games behind its pace."""

    tournament: dict
    now: datetime
    lease: dict | None
    stages: list[dict]
    match_counts: dict[int, dict[str, int]]  # stage -> match status -> matches
    games: dict[int, int]  # stage -> games recorded
    rounds: dict[int, int]  # stage -> rounds recorded
    window: tuple[datetime, int] | None  # a live run: (start of its last minute, games since)
    run: tuple[datetime, int] | None  # a live run: (its start, games since)
    recorded: tuple[str | None, str | None, int]  # first and last game stamps, games

    @classmethod
    def load(cls, store: Store, tournament_id: int | None = None,
             now: datetime | None = None) -> TournamentProgress:
        """Load a tournament's progress (the newest tournament when no id is given)."""
        t = tournament_row(store, tournament_id)
        tid = t["id"]
        now = now or datetime.now(timezone.utc)
        lease = store.lease(tid)
        counts: dict[int, dict[str, int]] = defaultdict(dict)
        for stage, status, n in store.db.execute(
                "select stage, status, count(*) from matches where tournament_id = ? "
                "group by stage, status", [tid]):
            counts[stage][status] = n
        games = dict(store.db.execute("select stage, count(*) from games where tournament_id = ? "
                                      "group by stage", [tid]).fetchall())
        rounds = dict(store.db.execute("select stage, count(*) from rounds where "
                                       "tournament_id = ? group by stage", [tid]).fetchall())
        window = run = None
        run_start = parse_stamp(lease["started_at"]) if lease is not None and lease["alive"] else None
        if run_start is not None:
            # A run that began less than a minute ago is measured from its start, not diluted.
            since = max(now - timedelta(seconds=RATE_WINDOW_S), run_start)
            window = (since, _count_since(store, tid, since))
            run = (run_start, _count_since(store, tid, run_start))
        first, last, n = store.db.execute(
            "select min(recorded_at), max(recorded_at), count(*) from games "
            "where tournament_id = ?", [tid]).fetchone()
        return cls(t, now, lease, store.stages(tid), dict(counts), games, rounds, window,
                   run, (first, last, n))


def _count_since(store: Store, tid: int, since: datetime) -> int:
    return store.db.execute("select count(*) from games where tournament_id = ? and "
                            "recorded_at >= ?", [tid, _stamp(since)]).fetchone()[0]


def find_ladder(store: Store, ref: str | int | None) -> dict:
    """A ladder's tournament row by name or id (the newest ladder when None); ConfigError if none."""
    rows = list(store.db.query("select * from tournaments where format = ? order by id desc",
                               [LADDER_FORMAT]))
    if not rows:
        raise ConfigError("no ladder in this database" if ref is None
                          else f"no ladder named {ref!r}: this database has none")
    if ref is None:
        return rows[0]
    for r in rows:
        if str(r["id"]) == str(ref) or r["name"] == ref:
            return r
    raise ConfigError(f"no ladder named {ref!r} (ladders: {', '.join(r['name'] for r in rows)})")


@dataclass(frozen=True)
class LadderView:
    """A ladder as its status shows it: tables, entries, game counts, lease and top of each board."""

    tournament: dict
    tables: list[dict]
    entries: list[dict]
    games: tuple[int, str | None, str | None]  # games, first and last recorded
    games_last_minute: int
    lease: dict | None
    boards: dict[str, dict]  # game -> {method, rows}: the first stored of bt, pl (top rows)

    @classmethod
    def load(cls, store: Store, ref: str | int | None = None, top: int = 10) -> LadderView:
        """Load a ladder by name or id (the newest when None) with its boards' `top` rows."""
        t = find_ladder(store, ref)
        tid = t["id"]
        games = store.db.execute("select count(*), min(recorded_at), max(recorded_at) from games "
                                 "where tournament_id = ?", [tid]).fetchone()
        recent = store.db.execute(
            "select count(*) from games where tournament_id = ? and recorded_at >= "
            "strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now', '-1 minutes')", [tid]).fetchone()[0]
        boards = {}
        for game in t["game"].split(","):
            for method in ML_METHODS:
                rows = store.pooled_ratings(LADDER_SCOPE, ladder_scope_id(tid, game), method)
                if rows:
                    boards[game] = {"method": method, "rows": rows[:top]}
                    break
        return cls(t, store.ladder_tables(tid), store.ladder_entries(tid), tuple(games), recent,
                   store.lease(tid), boards)
