"""What each page shows, as plain dicts: the HTML templates render them, the JSON API returns them.

Every function here only reads. The store they get is opened with `Store.open_readonly`, so a
write by mistake fails loudly instead of changing the database.
"""

from __future__ import annotations

import re
from collections import defaultdict
from urllib.parse import quote

from arena.errors import ArenaError, BadRequest, ConfigError, NotFound, StoreError
from arena.games import get_game
from arena.ladder_view import LADDER_FORMAT, ladder_status
from arena.leaderboards import GAME_SCOPE, LADDER_SCOPE, ladder_scope_id
from arena.leaderboards import leaderboard as fit_leaderboard
from arena.rating_reports import crosstable_report, head_to_head, tournament_ratings
from arena.reports import tournament_report, tournament_status
from arena.store import Store, lease_alive

METHODS = ("bt", "pl", "elo")
METHOD_LABELS = {"elo": "Elo", "bt": "Bradley–Terry", "pl": "Plackett–Luce"}
GAME_ID = re.compile(r"^[A-Za-z0-9._-]{1,200}$")
STDERR_TAIL = 2000  # characters of a bot's stderr shown beside a failure
RECENT = 20  # recent games listed on ladder and bot pages
TOURNAMENT_GAMES = 1000  # games listed per stage of a tournament page
OPPONENTS = 50  # head-to-head rows on a bot page


def bad_request(message: str) -> BadRequest:
    """A malformed request, naming what was wrong with it (the web app answers 400)."""
    return BadRequest(message)


def not_found(message: str) -> NotFound:
    """Something the request names that does not exist (the web app answers 404)."""
    return NotFound(message)


def parse_id(text: str, what: str) -> int:
    """A positive integer id from a path segment; BadRequest (a 400) otherwise."""
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        raise bad_request(f"{what} id must be a number, not {text[:40]!r}")
    return int(text)


def one(params, key: str) -> str | None:
    """The query parameter `key`, or None; BadRequest (a 400) when it is given more than once."""
    values = params.getlist(key)
    if len(values) > 1:  # which one was meant? Starlette would silently take the last
        raise bad_request(f"{key} given {len(values)} times: "
                          f"{', '.join(repr(v[:40]) for v in values[:5])}")
    return values[0] if values else None


def check_game_id(text: str) -> str:
    """A game id of the allowed characters; BadRequest (a 400) otherwise."""
    if not GAME_ID.fullmatch(text):  # match() with '$' would let a trailing newline through
        raise bad_request(f"bad game id {text[:40]!r}: a game id is 1-200 letters, digits, "
                          "'.', '_' or '-'")
    return text


def version_key(name: str, version: str) -> str:
    """`name@version`, or the name when the version is empty (as pooled leaderboards key them)."""
    return f"{name}@{version}" if version else name


def tail(text: str | None, chars: int = STDERR_TAIL) -> str:
    """The last `chars` characters of a log, marked when cut."""
    text = text or ""
    return text if len(text) <= chars else "…" + text[-chars:]


def _alive(store: Store, tid: int) -> bool:
    lease = store.lease(tid)
    return bool(lease and lease["alive"])


def _seats(store: Store, game_ids: list[str]) -> dict[str, list[dict]]:
    """Each game's seats (bot, version, team, score, rank) in seat order."""
    out: dict[str, list[dict]] = defaultdict(list)
    for i in range(0, len(game_ids), 500):  # stay under SQLite's bound-parameter limit
        chunk = game_ids[i:i + 500]
        for r in store.db.query(
            "select s.game_id, s.seat, s.bot, b.name, b.version, s.team, s.score, s.rank "
            "from game_seats s join bots b on b.id = s.bot_id "
            f"where s.game_id in ({', '.join('?' for _ in chunk)}) order by s.game_id, s.seat",
            chunk
        ):
            out[r["game_id"]].append({"bot": r["name"], "version": r["version"],
                                      "team": r["team"], "score": r["score"], "rank": r["rank"]})
    return out


def _with_seats(store: Store, games: list[dict]) -> list[dict]:
    seats = _seats(store, [g["id"] for g in games])
    return [{**g, "seats": seats.get(g["id"], [])} for g in games]


# -- leaderboards -------------------------------------------------------------------------------


def leaderboards(store: Store) -> dict:
    """Every game that has recorded games (with its stored leaderboard methods), and the ladders."""
    stored = defaultdict(list)
    for scope_id, method in store.db.execute(
            "select distinct scope_id, method from pooled_ratings where scope_kind = 'game'"):
        stored[scope_id].append(method)
    games = [{"game": g, "games": n, "last_played": last,
              "methods": [m for m in METHODS if m in stored.get(g, [])]}
             for g, n, last in store.db.execute(
                 "select game, count(*), max(recorded_at) from games group by game order by game")]
    ladder_boards = [{"ladder_id": int(scope_id.split(":", 1)[0]), "game": scope_id.split(":", 1)[1],
                      "name": name}
                     for scope_id, name in store.db.execute(
                         "select distinct p.scope_id, t.name from pooled_ratings p "
                         "join tournaments t on t.id = cast(substr(p.scope_id, 1, "
                         "instr(p.scope_id, ':') - 1) as integer) "
                         "where p.scope_kind = 'ladder' order by p.scope_id")]
    return {"games": games, "ladders": ladder_boards}


def _ladder_row(store: Store, text: str) -> dict:
    lid = parse_id(text, "ladder")
    row = store.db.execute("select id, name, status from tournaments where id = ? and format = ?",
                           [lid, LADDER_FORMAT]).fetchone()
    if row is None:
        raise not_found(f"no ladder with id {lid}")
    return {"id": row[0], "name": row[1], "status": row[2]}


def _interval_scale(rows: list[dict]) -> list[float]:
    """The rating range every row's bar is drawn against (lowest lo to highest hi)."""
    values = [v for r in rows for v in (r.get("lo"), r.get("hi"), r.get("rating")) if v is not None]
    if not values:
        return [0.0, 1.0]
    lo, hi = min(values), max(values)
    return [lo, hi] if hi > lo else [lo - 1, hi + 1]


def leaderboard(store: Store, game: str, params) -> dict:
    """One game's leaderboard (optionally of one ladder): stored pooled ratings, else computed."""
    try:
        get_game(game)
    except ConfigError:
        raise not_found(f"no game named {game[:60]!r}") from None
    method = one(params, "method") or None
    if method is not None and method not in METHODS:
        raise bad_request(f"unknown method {method[:40]!r}: it must be one of "
                          f"{', '.join(METHODS)}")
    ladder_text = one(params, "ladder")
    ladder = _ladder_row(store, ladder_text) if ladder_text else None
    scope = ((GAME_SCOPE, game) if ladder is None
             else (LADDER_SCOPE, ladder_scope_id(ladder["id"], game)))
    stored = [m for m in METHODS if store.db.execute(
        "select 1 from pooled_ratings where scope_kind = ? and scope_id = ? and method = ? limit 1",
        [*scope, m]).fetchone()]
    chosen = method or (stored[0] if stored else None)
    if chosen in stored:
        rows = store.pooled_ratings(*scope, chosen)
        source, computed_at = "stored", rows[0]["computed_at"] if rows else None
    else:
        try:
            board = fit_leaderboard(store, game, chosen, samples=0, save=False,
                                    ladder_id=None if ladder is None else ladder["id"])
        except ConfigError as exc:
            raise not_found(str(exc)) from None
        rows, chosen, source, computed_at = board["rows"], board["method"], "computed", None
    keys = ("bot_id", "bot", "version", "rating", "lo", "hi", "games", "wins", "draws", "losses",
            "score_pct", "flag", "last_played")
    out = [{"rank": i, **{k: r.get(k) for k in keys}} for i, r in enumerate(rows, 1)]
    live = any(lease_alive(pid, host, ts, started) for pid, host, ts, started in store.db.execute(
        "select l.pid, l.host, l.heartbeat_ts, l.pid_start from leases l join tournaments t "
        "on t.id = l.tournament_id where t.status = 'running' and "
        + ("t.id = ?" if ladder else "(',' || t.game || ',') like ('%,' || ? || ',%')"),
        [ladder["id"] if ladder else game]))
    return {"game": game, "ladder": ladder, "method": chosen,
            "method_label": METHOD_LABELS.get(chosen, chosen), "methods_stored": stored,
            "source": source, "computed_at": computed_at, "rows": out,
            "scale": _interval_scale(out), "live": live,
            # A computed board changes with the games recorded, a stored one when it is refitted.
            "stamp": f"{source}|{computed_at}|{len(out)}|{sum(r['games'] or 0 for r in out)}"}


# -- tournaments --------------------------------------------------------------------------------


def tournaments(store: Store) -> dict:
    """Every tournament (ladders have their own list), newest first, with a live flag."""
    rows = [dict(r) for r in store.tournaments() if r["format"] != LADDER_FORMAT]
    for r in rows:
        r["live"] = r["status"] == "running" and _alive(store, r["id"])
    return {"tournaments": rows}


def tournament_failures(store: Store, tid: int) -> list[dict]:
    """Each forfeit of a tournament with its evidence and the culprit's stderr tail in that match."""
    rows = store.db.query(
        "select g.id game_id, g.match_id, g.stage, g.culprit_bot bot, g.termination reason, "
        "g.detail, g.evidence, l.stderr from games g left join bot_logs l "
        "on l.match_id = g.match_id and l.bot = g.culprit_bot "
        "where g.tournament_id = ? and g.termination != 'normal' order by g.ordinal, g.id", [tid])
    return [{**{k: v for k, v in r.items() if k != "stderr"}, "stderr_tail": tail(r["stderr"])}
            for r in rows]


def _stage_extras(store: Store, tid: int, stage: dict) -> None:
    number = stage["stage"]
    games = store.game_results(tid, number)
    stage["games_total"] = len(games)
    stage["games"] = games[-TOURNAMENT_GAMES:]
    by_deal: dict[tuple, list[str]] = defaultdict(list)
    for g in games:
        by_deal[(g["match_id"], g["deal"])].append(g["id"])
    for match in stage["deals"]:
        for deal in match["deals"]:
            deal["game_ids"] = by_deal.get((match["match_id"], deal["deal"]), [])
    try:
        stage["ratings"] = tournament_ratings(store, tid, number) if games else None
    except ArenaError as exc:  # a stage too small to rate says why instead of failing the page
        stage["ratings"] = {"error": str(exc)}
    rows = (stage["ratings"] or {}).get("rows") or []
    stage["rating_scale"] = _interval_scale(rows)
    stage["crosstable"] = crosstable_report(store, tid, number) if games else None


def tournament(store: Store, text: str) -> dict:
    """A tournament: report (standings, pairings, deals, forfeits, errors), ratings, progress."""
    tid = parse_id(text, "tournament")
    try:
        row = store.tournament(tid)
    except StoreError as exc:
        raise not_found(str(exc)) from None
    if row["format"] == LADDER_FORMAT:
        raise not_found(f"{tid} is a ladder: see /ladders/{tid}")
    report = tournament_report(store, tid)
    # The config holds local commands and folders: the page has no use for them.
    report["tournament"].pop("config", None)
    for stage in report["stages"]:
        _stage_extras(store, tid, stage)
    status = tournament_status(store, tid)
    live = status["status"] == "running" and bool(status["lease"] and status["lease"]["alive"])
    return {**report, "status": status, "failures": tournament_failures(store, tid), "live": live,
            "stamp": f"{status['status']}|{status['games_done']}|{live}"}


# -- ladders ------------------------------------------------------------------------------------


def ladders(store: Store) -> dict:
    """Every ladder, newest first, with its games and a live flag."""
    rows = [dict(r) for r in store.db.query(
        "select t.id, t.name, t.game, t.status, t.created_at, "
        "(select count(*) from games g where g.tournament_id = t.id) games, "
        "(select count(*) from ladder_entries e where e.tournament_id = t.id "
        " and e.status = 'active') bots from tournaments t where t.format = ? order by t.id desc",
        [LADDER_FORMAT])]
    for r in rows:
        r["live"] = r["status"] == "running" and _alive(store, r["id"])
    return {"ladders": rows}


def ladder(store: Store, text: str) -> dict:
    """A ladder: status, its live leaderboards, games per minute, recent games."""
    lid = _ladder_row(store, text)["id"]
    status = ladder_status(store, lid, top=100)
    boards = {}
    for game, board in status["leaderboards"].items():
        rows = [{"rank": i, **r} for i, r in enumerate(board["rows"], 1)]
        boards[game] = {"method": board["method"],
                        "method_label": METHOD_LABELS.get(board["method"], board["method"]),
                        "rows": rows, "scale": _interval_scale(rows)}
    recent = _with_seats(store, [dict(r) for r in store.db.query(
        "select id, game, num_seats, termination, recorded_at from games "
        "where tournament_id = ? order by recorded_at desc, ordinal desc limit ?", [lid, RECENT])])
    live = status["status"] == "running" and bool(status["driver"] and status["driver"]["alive"])
    return {**status, "leaderboards": boards, "games_per_minute": status["games_last_minute"],
            "recent_games": recent, "live": live,
            "stamp": f"{status['status']}|{status['games_played']}|{live}"}


# -- bots ---------------------------------------------------------------------------------------


def bots(store: Store) -> dict:
    """Every bot name with its number of versions, games and newest version."""
    rows = [dict(r) for r in store.db.query(
        "select b.name, count(*) versions, max(b.added_at) added_at, "
        "coalesce(sum(n.games), 0) games from bots b left join "
        "(select bot_id, count(*) games from game_seats group by bot_id) n on n.bot_id = b.id "
        "group by b.name order by b.name")]
    return {"bots": rows}


def _history(store: Store, bot_id: int, name: str) -> list[dict]:
    """Rating series of a version: per tournament stage and method (by game), per ladder scope."""
    series: dict[tuple, dict] = {}
    for r in store.db.query(
        "select h.tournament_id, t.name, h.stage, h.method, h.ordinal, h.after "
        "from rating_history h join tournaments t on t.id = h.tournament_id "
        "join tournament_bots tb on tb.tournament_id = h.tournament_id and tb.bot_id = ? "
        # The version's name in that tournament (name@version, or a name of the config's own).
        "where h.bot = coalesce(tb.name, ?) "
        "order by h.tournament_id, h.stage, h.method, h.ordinal", [bot_id, name]
    ):
        s = series.setdefault((r["tournament_id"], r["stage"], r["method"]), {
            "kind": "tournament", "label": f"{r['name']} (#{r['tournament_id']}"
            + (f", stage {r['stage']}" if r["stage"] != 1 else "") + f") · {r['method']}",
            "x": "game", "points": []})
        s["points"].append([len(s["points"]) + 1, r["after"], None, None])
    for r in store.db.query(
        "select scope_id, method, tables, rating, lo, hi from rating_snapshots "
        "where bot_id = ? and scope_kind = 'ladder' order by computed_at, tables", [bot_id]
    ):
        s = series.setdefault(("ladder", r["scope_id"], r["method"]), {
            "kind": "ladder", "label": f"ladder {r['scope_id']} · {r['method']}",
            "x": "tables", "points": []})
        s["points"].append([r["tables"], r["rating"], r["lo"], r["hi"]])
    return list(series.values())


def _head_to_head(store: Store, bot_id: int, ref: str) -> list[dict]:
    opponents = store.db.execute(
        "select ob.name, ob.version, count(distinct s.game_id) n from game_seats s "
        "join game_seats o on o.game_id = s.game_id and o.team != s.team "
        "join bots ob on ob.id = o.bot_id where s.bot_id = ? and ob.id != s.bot_id "
        "group by ob.id order by n desc, ob.name limit ?", [bot_id, OPPONENTS]).fetchall()
    out = []
    for name, version, _ in opponents:
        try:
            h2h = head_to_head(store, ref, version_key(name, version)).as_dict()
        except ArenaError:
            continue  # e.g. a name with '@' that reads as another reference
        out.append({**h2h, "bot": name, "version": version})
    return out


def _version(store: Store, v: dict) -> dict:
    vid, ref = v["id"], version_key(v["name"], v["version"])
    per_game = [dict(r) for r in store.db.query(
        "select g.game, count(*) games, sum(s.rank = 1) firsts, max(g.recorded_at) last_played "
        "from game_seats s join games g on g.id = s.game_id where s.bot_id = ? "
        "group by g.game order by g.game", [vid])]
    tournaments_of = [dict(r) for r in store.db.query(
        "select t.id, t.name, t.game, t.format, t.status from tournament_bots tb "
        "join tournaments t on t.id = tb.tournament_id where tb.bot_id = ? order by t.id desc",
        [vid])]
    ratings = [dict(r) for r in store.db.query(
        "select r.tournament_id, t.name tournament, r.stage, r.method, r.rating, r.lo, r.hi, "
        "r.games from ratings r join tournaments t on t.id = r.tournament_id "
        "where r.bot_id = ? order by r.tournament_id desc, r.stage, r.method", [vid])]
    pooled = [dict(r) for r in store.db.query(
        "select scope_kind, scope_id, method, rating, lo, hi, games, score_pct, computed_at "
        "from pooled_ratings where bot_id = ? order by scope_kind, scope_id, method", [vid])]
    failures = [dict(r) for r in store.db.query(
        "select g.id game_id, g.tournament_id, g.termination reason, g.detail, g.evidence, "
        "g.recorded_at, l.stderr from games g "
        "join game_seats s on s.game_id = g.id and s.seat = g.culprit_seat "
        "left join bot_logs l on l.match_id = g.match_id and l.bot = s.bot "
        "where s.bot_id = ? and g.termination != 'normal' "
        "order by g.recorded_at desc, g.ordinal desc limit 10", [vid])]
    for f in failures:
        f["stderr_tail"] = tail(f.pop("stderr"))
    recent = _with_seats(store, [dict(r) for r in store.db.query(
        "select g.id, g.tournament_id, g.game, g.termination, g.recorded_at, s.seat, s.rank, "
        "s.score from game_seats s join games g on g.id = s.game_id where s.bot_id = ? "
        "order by g.recorded_at desc, g.ordinal desc limit ?", [vid, RECENT])])
    keep = ("id", "name", "version", "status", "language", "author", "description", "added_at",
            "content_hash")
    return {**{k: v.get(k) for k in keep}, "ref": ref, "games_played": sum(g["games"] for g in per_game),
            "per_game": per_game, "tournaments": tournaments_of, "ratings": ratings,
            "pooled_ratings": pooled, "history": _history(store, vid, v["name"]),
            "head_to_head": _head_to_head(store, vid, ref), "failures": failures,
            "recent_games": recent}


def bot(store: Store, name: str, params) -> dict:
    """A bot's versions (or one, with `?version=`): games, ratings, history, head to head, failures."""
    rows = [dict(r) for r in store.db.query("select * from bots where name = ? order by id", [name])]
    if not rows:
        base, at, wanted = name.rpartition("@")
        # NAME@VERSION is how the CLI names a version; here the version is a query parameter.
        if at and base and store.db.execute("select 1 from bots where name = ?",
                                            [base]).fetchone():
            raise not_found(f"no bot named {name[:80]!r}; for version {wanted[:40]!r} of "
                            f"{base[:80]!r} see /bots/{quote(base, safe='')}"
                            f"?version={quote(wanted, safe='')}")
        raise not_found(f"no bot named {name[:80]!r}")
    version = one(params, "version")
    if version is not None:
        rows = [r for r in rows if r["version"] == version]
        if not rows:
            raise not_found(f"bot {name[:80]!r} has no version {version[:40]!r}")
    versions = [_version(store, r) for r in reversed(rows)]
    return {"name": name, "version": version, "versions": versions,
            "all_versions": [r["version"] for r in store.db.query(
                "select version from bots where name = ? order by id desc", [name])]}
