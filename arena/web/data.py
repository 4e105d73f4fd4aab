"""What each page shows, as plain dicts: the HTML templates render them, the JSON API returns them.

Every function here only reads: it loads the read models and rows of `arena.store.views` and
`arena.store.queries` and shapes them for the page. The store they get is opened with
`Store.open_readonly`, so a write by mistake fails loudly instead of changing the database.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from urllib.parse import quote

from arena.errors import ArenaError, BadRequest, ConfigError, NotFound, StoreError
from arena.games import get_game
from arena.ladder_view import ladder_status
from arena.leaderboards import GAME_SCOPE, LADDER_SCOPE, ladder_scope_id
from arena.leaderboards import leaderboard as fit_leaderboard
from arena.rating_reports import crosstable_report, head_to_head, tournament_ratings
from arena.ratings.bounds import open_ends
from arena.reports import tournament_report, tournament_status
from arena.store import Store, lease_alive
from arena.store.queries import (
    LeaderboardIndex,
    VersionActivity,
    bot_names,
    bot_versions,
    forfeits_with_logs,
    ladder_by_id,
    opponents,
    pooled_methods,
    recent_games,
    running_leases,
    seats_by_game,
)
from arena.store.queries import ladders as ladder_rows
from arena.store.views import (
    LADDER_FORMAT,
    LadderView,
    TournamentProgress,
    TournamentView,
    tournament_row,
)

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


def _with_seats(store: Store, games: list[dict]) -> list[dict]:
    seats = seats_by_game(store, [g["id"] for g in games])
    return [{**g, "seats": seats.get(g["id"], [])} for g in games]


# -- leaderboards -------------------------------------------------------------------------------


def leaderboards(store: Store) -> dict:
    """Every game that has recorded games (with its stored leaderboard methods), and the ladders."""
    index = LeaderboardIndex.load(store)
    stored = defaultdict(list)
    for scope_id, method in index.stored:
        stored[scope_id].append(method)
    games = [{"game": g, "games": n, "last_played": last,
              "methods": [m for m in METHODS if m in stored.get(g, [])]}
             for g, n, last in index.games]
    ladder_boards = [{"ladder_id": int(scope_id.split(":", 1)[0]), "game": scope_id.split(":", 1)[1],
                      "name": name}
                     for scope_id, name in index.ladder_boards]
    return {"games": games, "ladders": ladder_boards}


def _ladder_row(store: Store, text: str) -> dict:
    lid = parse_id(text, "ladder")
    row = ladder_by_id(store, lid)
    if row is None:
        raise not_found(f"no ladder with id {lid}")
    return row


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
    have = pooled_methods(store, *scope)
    stored = [m for m in METHODS if m in have]
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
    out = [{"rank": i, **open_ends({k: r.get(k) for k in keys})} for i, r in enumerate(rows, 1)]
    live = any(lease_alive(pid, host, ts, started) for pid, host, ts, started in (
        running_leases(store, ladder_id=ladder["id"]) if ladder else running_leases(store, game=game)))
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
    return [{**{k: v for k, v in r.items() if k != "stderr"}, "stderr_tail": tail(r["stderr"])}
            for r in forfeits_with_logs(store, tid)]


def _stage_extras(view: TournamentView, stage: dict) -> None:
    number = stage["stage"]
    games = view.stage_games(number)
    stage["games_total"] = len(games)
    stage["games"] = games[-TOURNAMENT_GAMES:]
    by_deal: dict[tuple, list[str]] = defaultdict(list)
    for g in games:
        by_deal[(g["match_id"], g["deal"])].append(g["id"])
    for match in stage["deals"]:
        for deal in match["deals"]:
            deal["game_ids"] = by_deal.get((match["match_id"], deal["deal"]), [])
    try:
        stage["ratings"] = tournament_ratings(view, number) if games else None
    except ArenaError as exc:  # a stage too small to rate says why instead of failing the page
        stage["ratings"] = {"error": str(exc)}
    rows = (stage["ratings"] or {}).get("rows") or []
    stage["rating_scale"] = _interval_scale(rows)
    stage["crosstable"] = crosstable_report(view, number) if games else None


def tournament(store: Store, text: str) -> dict:
    """A tournament: report (standings, pairings, deals, forfeits, errors), ratings, progress."""
    tid = parse_id(text, "tournament")
    try:
        row = tournament_row(store, tid)
    except StoreError as exc:
        raise not_found(str(exc)) from None
    if row["format"] == LADDER_FORMAT:
        raise not_found(f"{tid} is a ladder: see /ladders/{tid}")
    view = TournamentView.load(store, tid, games=True)
    report = tournament_report(view)
    # The config holds local commands and folders: the page has no use for them.
    report["tournament"].pop("config", None)
    for stage in report["stages"]:
        _stage_extras(view, stage)
    status = tournament_status(TournamentProgress.load(store, tid))
    live = status["status"] == "running" and bool(status["lease"] and status["lease"]["alive"])
    return {**report, "status": status, "failures": tournament_failures(store, tid), "live": live,
            "stamp": f"{status['status']}|{status['games_done']}|{live}"}


# -- ladders ------------------------------------------------------------------------------------


def ladders(store: Store) -> dict:
    """Every ladder, newest first, with its games and a live flag."""
    rows = ladder_rows(store)
    for r in rows:
        r["live"] = r["status"] == "running" and _alive(store, r["id"])
    return {"ladders": rows}


def ladder(store: Store, text: str) -> dict:
    """A ladder: status, its live leaderboards, games per minute, recent games."""
    lid = _ladder_row(store, text)["id"]
    status = ladder_status(LadderView.load(store, lid, top=100))
    boards = {}
    for game, board in status["leaderboards"].items():
        rows = [{"rank": i, **open_ends(r)} for i, r in enumerate(board["rows"], 1)]
        boards[game] = {"method": board["method"],
                        "method_label": METHOD_LABELS.get(board["method"], board["method"]),
                        "rows": rows, "scale": _interval_scale(rows)}
    recent = _with_seats(store, recent_games(store, lid, RECENT))
    live = status["status"] == "running" and bool(status["driver"] and status["driver"]["alive"])
    return {**status, "leaderboards": boards, "games_per_minute": status["games_last_minute"],
            "recent_games": recent, "live": live,
            "stamp": f"{status['status']}|{status['games_played']}|{live}"}


# -- bots ---------------------------------------------------------------------------------------


def bots(store: Store) -> dict:
    """Every bot name with its number of versions, games and newest version."""
    return {"bots": bot_names(store)}


def _history(activity: VersionActivity) -> list[dict]:
    """Rating series of a version: per tournament stage and method (by game), per ladder scope."""
    series: dict[tuple, dict] = {}
    for r in activity.history:
        s = series.setdefault((r["tournament_id"], r["stage"], r["method"]), {
            "kind": "tournament", "label": f"{r['name']} (#{r['tournament_id']}"
            + (f", stage {r['stage']}" if r["stage"] != 1 else "") + f") · {r['method']}",
            "x": "game", "points": []})
        s["points"].append([len(s["points"]) + 1, r["after"], None, None])
    for r in activity.snapshots:
        s = series.setdefault(("ladder", r["scope_id"], r["method"]), {
            "kind": "ladder", "label": f"ladder {r['scope_id']} · {r['method']}",
            "x": "tables", "points": []})
        s["points"].append([r["tables"], r["rating"], r["lo"], r["hi"]])
    return list(series.values())


def _head_to_head(store: Store, bot_id: int, ref: str) -> list[dict]:
    out = []
    for name, version, _ in opponents(store, bot_id, OPPONENTS):
        try:
            h2h = head_to_head(store, ref, version_key(name, version)).as_dict()
        except ArenaError:
            continue  # e.g. a name with '@' that reads as another reference
        out.append({**h2h, "bot": name, "version": version})
    return out


def _version(store: Store, v: dict) -> dict:
    vid, ref = v["id"], version_key(v["name"], v["version"])
    activity = VersionActivity.load(store, vid, v["name"], RECENT)
    per_game = activity.per_game
    failures = [{**{k: x for k, x in f.items() if k != "stderr"}, "stderr_tail": tail(f["stderr"])}
                for f in activity.failures]
    recent = _with_seats(store, activity.recent)
    keep = ("id", "name", "version", "status", "language", "author", "description", "added_at",
            "content_hash")
    return {**{k: v.get(k) for k in keep}, "ref": ref, "games_played": sum(g["games"] for g in per_game),
            "per_game": per_game, "tournaments": activity.tournaments,
            "ratings": [open_ends(r) for r in activity.ratings],
            "pooled_ratings": [open_ends(r) for r in activity.pooled], "history": _history(activity),
            "head_to_head": _head_to_head(store, vid, ref), "failures": failures,
            "recent_games": recent}


def bot(store: Store, name: str, params) -> dict:
    """A bot's versions (or one, with `?version=`): games, ratings, history, head to head, failures."""
    rows = bot_versions(store, name)
    if not rows:
        base, at, wanted = name.rpartition("@")
        # NAME@VERSION is how the CLI names a version; here the version is a query parameter.
        if at and base and bot_versions(store, base):
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
            "all_versions": [r["version"] for r in reversed(bot_versions(store, name))]}


HIDDEN_LOG = "(hidden: only the bot's author sees its logs)"


def hide_logs(page: dict, visible: Callable[[str], bool]) -> dict:
    """The page with the stderr of every bot `visible` refuses taken out (a copy: `page` may be
    shared): failures' stderr tails on bot and tournament pages. `arena serve` never calls it."""
    def failures(rows: list[dict], bot: str | None = None) -> list[dict]:
        return [r if visible(bot or r.get("bot") or "")
                else {**r, "stderr_tail": HIDDEN_LOG, "hidden": True} for r in rows]
    out = dict(page)
    if isinstance(page.get("versions"), list):  # a bot page
        out["versions"] = [{**v, "failures": failures(v.get("failures", []), v["name"])}
                           for v in page["versions"]]
    if isinstance(page.get("failures"), list):  # a tournament page
        out["failures"] = failures(page["failures"])
    return out


def hide_move_logs(moves: dict, visible: Callable[[str], bool]) -> dict:
    """A game's move list (arena.web.replay.move_list) without the log lines of the bots
    `visible` refuses (a copy: the move list may be cached)."""
    keep = lambda lines: [x for x in lines if visible(x.get("bot") or "")]  # noqa: E731
    out = {**moves, "moves": [{**m, "logs": keep(m["logs"])} for m in moves["moves"]],
           "after": keep(moves["after"])}
    hidden = sum(1 for m in moves["moves"] for x in m["logs"]
                 if not x.get("dropped") and not visible(x.get("bot") or ""))
    hidden += sum(1 for x in moves["after"] if not x.get("dropped") and not visible(x.get("bot") or ""))
    out["lines"], out["hidden_logs"] = moves["lines"] - hidden, hidden
    return out
