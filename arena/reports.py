"""Reports on a stored tournament: standings, pairings, deals, progress and exports.

Each report is a pure function of a read model loaded once (`arena.store.views.TournamentView`,
`TournamentProgress`); only the export streams its games from the database. Nothing here writes
(the driver is the only writer), so reports may run while a tournament is being played. Bot
names, evidence and tracebacks come from untrusted bots and stay plain text: the renderers escape
them, CSV cells that a spreadsheet would run as a formula are neutralised.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import replace
from typing import TextIO

from arena.errors import ConfigError
from arena.scheduling.base import History, MatchScore, Round, Table
from arena.standings import (
    StandingRow,
    default_tiebreaks,
    overall_standings,
    pentanomial,
    score_match,
    score_of_row,
    standings,
)
from arena.store import Store, stored_json
from arena.store.queries import export_rows, forfeits_with_logs
from arena.store.views import TournamentProgress, TournamentView, parse_stamp, tournament_row

EXPORT_FORMATS = ("jsonl", "csv")
CSV_COLUMNS = ("game_id", "stage", "round", "table", "match_id", "game", "deal", "rotation", "seed",
               "seat", "bot", "team", "score", "rank", "termination", "culprit_bot")
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_STANDING_FIELDS = ("match_points", "game_points", "matches", "wins", "draws", "losses", "byes",
                    "buchholz", "buchholz_cut1", "sonneborn_berger", "direct_encounter")


# ---------------------------------------------------------------------------------------------
# Stages and their history


def stage_record(view: TournamentView, stage: int) -> dict:
    """A stage's stored row (format, entrants, config); ConfigError when the tournament has none."""
    for row in view.stages:
        if row["stage"] == stage:
            return row
    raise ConfigError(f"tournament {view.id} has no stage {stage}")


def _local_names(view: TournamentView, stage_row: dict) -> list[str]:
    return [view.names[e] for e in stage_row["entrants"]]


def stage_tiebreaks(stage_row: dict) -> tuple[str, ...]:
    """The tie-breaks a stage's standings use: its config's, else its format's default."""
    configured = (stage_row["config"] or {}).get("tiebreaks")
    return tuple(configured) if configured is not None else default_tiebreaks(stage_row["format"])


def _bye_points(stage_row: dict) -> float:
    return float((stage_row["config"] or {}).get("bye_points", 1.0))


def _unscored_matches(view: TournamentView, stage: int, local: dict[str, int],
                      scored: set[str]) -> list[MatchScore]:
    """Finished matches stored without per-match scores (record_match, schema 1), from their games."""
    out = []
    for m in view.matches.get(stage, []):
        if m["status"] != "finished" or m["id"] in scored:
            continue
        games: dict[str, list[dict]] = {}
        for s in view.unscored_seats.get(m["id"], []):
            games.setdefault(s["game_id"], []).append(
                {"entry": local[s["bot"]], "team": s["team"], "rank": s["rank"]})
        bots = [local[n] for n in stored_json(m["bots"], f"matches.bots of {m['id']}") if n in local]
        out.append(score_match(m["round"], m["table_no"], bots, list(games.values())))
    return out


def _rounds(view: TournamentView, stage: int) -> list[dict]:
    """The stage's rounds (tables as bot names), derived from its matches when none are recorded."""
    rounds = view.rounds.get(stage)
    if rounds:
        return rounds
    by_round: dict[int, list[list[str]]] = defaultdict(list)
    for m in view.matches.get(stage, []):
        by_round[m["round"]].append(stored_json(m["bots"], f"matches.bots of round {m['round']}"))
    return [{"round": r, "tables": tables, "byes": []} for r, tables in sorted(by_round.items())]


def _table_numbers(round_no: int, tables: list, numbers: dict[int, list[int]]) -> list[int]:
    # Recorded rounds number their tables from 1 in list order; derived ones keep the match's.
    return numbers.get(round_no) or list(range(1, len(tables) + 1))


def stage_history(view: TournamentView, stage: int) -> tuple[History, list[str]]:
    """The stage's History (recorded rounds and finished matches) and its stage-local bot names."""
    row = stage_record(view, stage)
    names = _local_names(view, row)
    local = {n: i for i, n in enumerate(names)}
    recorded = view.match_scores(stage)
    scores = [score_of_row(m) for m in recorded]
    scores += _unscored_matches(view, stage, local, {m["match_id"] for m in recorded})
    scores.sort(key=lambda s: (s.round, s.table))
    rounds = tuple(
        Round(r["round"],
              tuple(Table(r["round"], i, tuple(local[n] for n in table if n in local))
                    for i, table in enumerate(r["tables"], 1)),
              tuple(local[n] for n in r["byes"] if n in local))
        for r in _rounds(view, stage))
    return History(rounds, tuple(scores)), names


def _standing_dict(row: StandingRow, bot: str) -> dict:
    return {"rank": row.rank, "entry": row.entry, "bot": bot,
            **{f: getattr(row, f) for f in _STANDING_FIELDS}}


def _standing_rows(view: TournamentView, stage_row: dict,
                   upto_round: int | None = None) -> tuple[list[StandingRow], list[str]]:
    history, names = stage_history(view, stage_row["stage"])
    rows = standings(len(names), history, stage_tiebreaks(stage_row), _bye_points(stage_row),
                     upto_round)
    return rows, names


def stage_standings(view: TournamentView, stage: int, upto_round: int | None = None) -> list[dict]:
    """A stage's standings (after `upto_round`, default all), best first, with every tie-break."""
    row = stage_record(view, stage)
    rows, names = _standing_rows(view, row, upto_round)
    return [_standing_dict(r, names[r.entry]) for r in rows]


def stage_weight(stage_row: dict) -> float:
    """A stage's weight in the event's overall standing: its config's, else 1."""
    return float((stage_row["config"] or {}).get("weight", 1.0))


def event_standings(view: TournamentView) -> list[dict]:
    """The overall standings over a tournament's stages: each bot's score and what each stage gave it."""
    names = view.names
    inputs = []
    for st in view.stages:
        played = bool(view.rounds.get(st["stage"]) or view.matches.get(st["stage"]))
        rows = None
        if played:
            local_rows, _ = _standing_rows(view, st)
            # overall_standings counts event entries; a stage ranks its own local indices.
            rows = [replace(r, entry=st["entrants"][r.entry]) for r in local_rows]
        inputs.append((st["name"], rows, st["left_out"], stage_weight(st), _bye_points(st)))
    overall = overall_standings(inputs, len(names))
    out = []
    for r in overall:
        per_stage = []
        for st, cell in zip(view.stages, r.stages):
            left_out = r.entry in st["left_out"]
            per_stage.append({"stage": st["stage"], "name": st["name"], "left_out": left_out,
                              "weight": stage_weight(st),
                              "rank": cell.rank if cell else None,
                              "points": cell.points if cell else None,
                              "maximum": cell.maximum if cell else None,
                              "share": cell.share if cell else None,
                              "contribution": cell.contribution if cell else None})
        out.append({"rank": r.rank, "entry": r.entry, "bot": names[r.entry], "score": r.score,
                    "stage_wins": r.stage_wins, "game_points": r.game_points,
                    "best_rank": r.best_rank, "stages": per_stage})
    return out


# ---------------------------------------------------------------------------------------------
# The full report


def _decoded(row: dict, *keys: str) -> dict:
    row = dict(row)
    for key in keys:
        if isinstance(row.get(key), str):
            try:
                row[key] = json.loads(row[key])
            except ValueError:
                pass  # not ours to repair: show what is stored
    return row


def _pairings(view: TournamentView, stage: int,
              upto: int | None) -> tuple[list[dict], dict[str, list[dict]]]:
    matches = {(m["round"], m["table_no"]): m for m in view.matches.get(stage, [])}
    bots: dict[str, list[dict]] = {m["id"]: view.match_bots[m["id"]]
                                   for m in matches.values() if m["id"] in view.match_bots}
    numbers: dict[int, list[int]] = defaultdict(list)
    if not view.rounds.get(stage):
        for rnd, table in sorted(matches):
            numbers[rnd].append(table)
    byes = defaultdict(dict)
    for b in view.byes.get(stage, []):
        byes[b["round"]][b["bot"]] = b["points"]
    out = []
    for r in _rounds(view, stage):
        if upto is not None and r["round"] > upto:
            continue
        tables = []
        for number, names in zip(_table_numbers(r["round"], r["tables"], numbers), r["tables"]):
            m = matches.get((r["round"], number))
            scored = {b["bot"]: b for b in bots.get(m["id"], [])} if m else {}
            tables.append({
                "table": number, "match_id": m["id"] if m else None,
                "status": m["status"] if m else "pending",
                "attempts": m["attempts"] if m else 0,
                "games": m["games"] if m else 0,
                # Where it ran: the Ray node id (none outside Ray) and the host's name.
                "node": m["node"] if m else None, "host": m["host"] if m else None,
                "bots": [{"bot": n,
                          "match_points": scored[n]["match_points"] if n in scored else None,
                          "game_points": scored[n]["game_points"] if n in scored else None}
                         for n in names],
            })
        out.append({"round": r["round"], "tables": tables,
                    "byes": [{"bot": n, "points": byes[r["round"]].get(n)} for n in r["byes"]]})
    return out, bots


def _deal_results(view: TournamentView, stage: int, upto: int | None,
                  bots: dict[str, list[dict]]) -> list[dict]:
    out = []
    for m in view.matches.get(stage, []):
        deals = view.deals.get(m["id"])
        if m["status"] != "finished" or not deals or (upto is not None and m["round"] > upto):
            continue
        pair = [b["bot"] for b in bots.get(m["id"], [])]
        if len(pair) != 2:
            continue  # the pentanomial describes a pair of bots; tables of more have no such line
        first, second = pair
        per_deal: dict[int, dict] = {}
        for d in deals:
            cell = per_deal.setdefault(d["deal"], {"deal": d["deal"], "points": [None, None],
                                                   "games": d["games"]})
            cell["points"][0 if d["bot"] == first else 1] = d["points"]
        first_rows = [{"deal": d["deal"], "entry": 0, "points": d["points"], "games": d["games"]}
                      for d in deals if d["bot"] == first]
        try:
            penta = list(pentanomial(first_rows))
        except ValueError:  # deals of other than 2 games (no duplicate rotation) have none
            penta = None
        out.append({"match_id": m["id"], "round": m["round"], "table": m["table_no"],
                    "bots": pair, "pentanomial": penta,
                    "points": [sum(d["points"] for d in deals if d["bot"] == b) for b in pair],
                    "deals": [per_deal[k] for k in sorted(per_deal)]})
    return out


def _forfeits(view: TournamentView, stage: int, upto: int | None) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "stage"} for r in view.forfeits.get(stage, [])
            if upto is None or r["round"] <= upto]


def _runner_errors(view: TournamentView, stage: int, upto: int | None) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "stage"} for r in view.errors.get(stage, [])
            if upto is None or r["round"] <= upto]


def forfeit_summary(report: dict) -> list[dict]:
    """A tournament report's forfeits counted per bot and reason over its stages: bot, reason,
    games; the most first (then by bot and reason)."""
    counts: dict[tuple[str, str], int] = {}
    for stage in report["stages"]:
        for forfeit in stage["forfeits"]:
            key = (forfeit["bot"] or "", forfeit["reason"])
            counts[key] = counts.get(key, 0) + 1
    return [{"bot": bot, "reason": reason, "games": n}
            for (bot, reason), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def tournament_report(view: TournamentView, round_no: int | None = None,
                      stage: int | None = None) -> dict:
    """Everything `arena tournament show` prints: standings, pairings, deals, forfeits, errors."""
    t = _decoded(view.tournament, "options", "config")
    tid = t["id"]
    if stage is not None:
        chosen = [s for s in view.stages if s["stage"] == stage]
        if not chosen:
            raise ConfigError(f"tournament {tid} has no stage {stage}")
    else:
        chosen = view.stages
    if round_no is not None:
        recorded = sorted({r["round"] for s in chosen for r in _rounds(view, s["stage"])})
        if not recorded:
            raise ConfigError(f"round {round_no}: tournament {tid} has no round recorded yet")
        if not recorded[0] <= round_no <= recorded[-1]:
            raise ConfigError(f"round {round_no}: tournament {tid} has rounds "
                              f"{recorded[0]}..{recorded[-1]} recorded")
    names = view.names
    stages = []
    for st in chosen:
        number = st["stage"]
        recorded = [r["round"] for r in _rounds(view, number)]
        rows, local = _standing_rows(view, st, round_no)
        pairings, bots = _pairings(view, number, round_no)
        stages.append({
            "stage": number, "name": st["name"], "game": st["game"], "format": st["format"],
            "seats": st["seats"], "status": st["status"], "options": st["options"],
            "rounds": st["rounds"], "rounds_recorded": len(recorded),
            "tiebreaks": list(stage_tiebreaks(st)), "bye_points": _bye_points(st),
            "entrants": local, "left_out": [names[e] for e in st["left_out"] if e in names],
            "standings": [_standing_dict(r, local[r.entry]) for r in rows],
            "pairings": pairings,
            "deals": _deal_results(view, number, round_no, bots),
            "forfeits": _forfeits(view, number, round_no),
            "errors": _runner_errors(view, number, round_no),
        })
    event = t["format"] == "event"
    return {"tournament": t, "event": event, "round": round_no, "stages": stages,
            "overall": event_standings(view) if event else None,
            "node_events": [dict(e) for e in view.node_events]}


# ---------------------------------------------------------------------------------------------
# Progress


def tournament_status(progress: TournamentProgress) -> dict:
    """A tournament's progress: status, lease holder, rounds, matches, games, rate and ETA."""
    t = progress.tournament
    tid = t["id"]
    now = progress.now
    lease = progress.lease
    holder = None
    if lease is not None:
        beat = parse_stamp(lease["heartbeat_at"])
        holder = {"pid": lease["pid"], "host": lease["host"], "started_at": lease["started_at"],
                  "heartbeat_at": lease["heartbeat_at"],
                  "heartbeat_age_s": (now - beat).total_seconds() if beat else None,
                  "alive": bool(lease["alive"]),
                  "cancel_requested": bool(lease["cancel_requested"])}
    stages = []
    for st in progress.stages:
        counts = progress.match_counts.get(st["stage"], {})
        planned = (st["config"] or {}).get("planned_games")
        stages.append({"stage": st["stage"], "name": st["name"], "game": st["game"],
                       "format": st["format"], "status": st["status"],
                       "rounds_recorded": progress.rounds.get(st["stage"], 0),
                       "rounds_total": st["rounds"],
                       "matches_finished": counts.get("finished", 0),
                       "matches_error": counts.get("error", 0),
                       "games_done": progress.games.get(st["stage"], 0), "games_planned": planned})
    done = sum(s["games_done"] for s in stages)
    planned = (None if not stages or any(s["games_planned"] is None for s in stages)
               else sum(s["games_planned"] for s in stages))
    rate, basis = _rate(progress)
    running = t["status"] == "running" and holder is not None and holder["alive"]
    if t["status"] == "finished":
        eta = 0.0
    elif running and planned is not None and rate:
        eta = max(0, planned - done) / rate
    else:
        eta = None  # nothing is playing, or no pace to go by yet
    return {"id": tid, "name": t["name"], "game": t["game"], "format": t["format"],
            "status": t["status"], "created_at": t["created_at"], "finished_at": t["finished_at"],
            "lease": holder, "stages": stages, "games_done": done, "games_planned": planned,
            "rate": rate, "rate_basis": basis, "eta_s": eta}


def _rate(progress: TournamentProgress) -> tuple[float | None, str | None]:
    """Games per second: over the last minute of a live run, else over its run (or the records)."""
    now = progress.now
    if progress.window is not None and progress.run is not None:
        since, recent = progress.window
        span = (now - since).total_seconds()
        if recent and span > 0:
            return recent / span, f"last {round(span)} s"
        run_start, played = progress.run
        span = (now - run_start).total_seconds()
        return (played / span if played and span > 0 else None), "this run"
    first, last, n = progress.recorded
    start, end = parse_stamp(first), parse_stamp(last)
    if n and start and end and end > start:
        return n / (end - start).total_seconds(), "recorded games"
    return None, None


# ---------------------------------------------------------------------------------------------
# Export


def safe_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: formulas and their lookalikes get a leading quote;
    booleans are written as JSON writes them (`true`/`false`, not Python's `True`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value


def export_tournament(store: Store, tournament_id: int, fmt: str, out: TextIO) -> int:
    """Write a tournament's games to `out` as JSON lines (one per game) or CSV (one row per seat)."""
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {fmt!r} (choose {', '.join(EXPORT_FORMATS)})")
    tid = tournament_row(store, tournament_id)["id"]
    written = 0
    if fmt == "jsonl":
        for g, seats, moves in export_rows(store, tid):
            record = {
                "id": g[0], "tournament_id": g[1], "stage": g[2], "round": g[3], "table": g[4],
                "match_id": g[5], "game": g[6],
                "options": stored_json(g[7], f"games.options of {g[0]}") if g[7] else {},
                "seed": g[8], "deal": g[9], "rotation": g[10], "termination": g[11],
                "culprit_bot": g[12], "detail": g[13], "evidence": g[14],
                "seats": [{"seat": s[1], "bot": s[2], "team": s[3], "score": s[4], "rank": s[5]}
                          for s in seats],
                "moves": [{"ply": m[1], "step": m[2], "seat": m[3],
                           "action": stored_json(m[4], f"moves.action of {g[0]} ply {m[1]}"),
                           "ms": m[5]} for m in moves],
            }
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            written += 1
        return written
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for g, seats, _ in export_rows(store, tid):
        for s in seats:
            writer.writerow([safe_cell(v) for v in (
                g[0], g[2], g[3], g[4], g[5], g[6], g[9], g[10], g[8], s[1], s[2], s[3], s[4],
                s[5], g[11], g[12])])
            written += 1
    return written


# ---------------------------------------------------------------------------------------------
# Bots that never started


def never_started(starts: list[dict]) -> list[dict]:
    """The bots of a tournament that never got past start-up, with their first startup failure.

    `starts`: the tournament's `arena.store.queries.bot_starts`. A bot never started when it was
    the culprit of a startup_failure and nothing shows it ever running: no game of it ended
    normally, it never made a move, and it never failed in a way only a running bot can (its other
    forfeits are startup failures or the failure budget they lead to).
    Rows: bot, games (it was seated in), detail and evidence of its first startup failure.
    """
    return [{"bot": r["bot"], "games": r["games"], "detail": r["detail"] or "",
             "evidence": r["evidence"] or ""}
            for r in starts if r["startup_failures"] and not r["ran"] and not r["moved"]]


FAILURE_FIELDS = ("game", "match", "bot", "reason", "detail", "evidence", "stderr_tail", "hint")
TAIL_LINES = 5  # lines of the culprit's stderr shown beside a forfeit
TAIL_CHARS = 500  # at most this many characters of them: the last ones, nearest the failure


def stderr_tail(text: str | None, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The last `lines` lines of a bot's stderr, at most `chars` characters (cut at the front)."""
    if not text:
        return ""
    tail = "\n".join(text.rstrip().splitlines()[-lines:])
    return tail if len(tail) <= chars else "…" + tail[-chars:]


def failure_rows(store: Store, tournament_id: int) -> list[dict]:
    """Each forfeit of a tournament, in game order, with the culprit's stderr tail in that game
    and the usual mistake behind it (arena.hints, as `arena bot check` says it).

    A game recorded before per-game logs has only its match's log (every process the bot ran in
    the match, one after the other): its tail is that of the bot's last process in the match.
    """
    return [{"game": r["game_id"], "match": r["match_id"], "bot": r["bot"], "reason": r["reason"],
             "detail": r["detail"], "evidence": r["evidence"],
             "stderr_tail": stderr_tail(r["stderr"]), "hint": forfeit_hint(store, r)}
            for r in forfeits_with_logs(store, tournament_id)]


def forfeit_hint(store: Store, forfeit: dict) -> str:
    """The usual mistake behind one forfeit; for an illegal action, the legal action nearest to
    what the bot sent (the game replayed from its stored moves to the culprit's turn)."""
    from arena.hints import hint

    legal = None
    if forfeit["reason"] == "illegal_action":
        legal = _legal_at_failure(store, forfeit["game_id"])
    return hint(forfeit["reason"], forfeit["detail"] or "", forfeit["evidence"] or "", legal) or ""


def _legal_at_failure(store: Store, game_id: str) -> list | None:
    """The legal actions the culprit of a stored game was offered when it failed."""
    from itertools import groupby

    from arena.games import new_game

    game = store.load_game(game_id)
    seat = game.get("culprit_seat")
    if seat is None:
        return None
    try:
        state = new_game(game["game"], game["options"], game["num_seats"], game["seed"])
        for _step, moves in groupby(game["moves"], key=lambda m: m["step"]):
            state.apply_validated({m["seat"]: m["action"] for m in moves})
        return state.legal_actions(seat)
    except Exception:  # noqa: BLE001 - a hint is a nicety: a game that does not replay has none
        return None

