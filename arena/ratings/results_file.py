"""Games from a JSONL results file, one finished table per line.

    {"players": ["A", "B", "C"], "ranks": [1, 2, 2]}
    {"players": ["A", "B", "C", "D"], "teams": [["A", "C"], ["B", "D"]], "ranks": [2, 1]}

`ranks` are 1 = best, a shared rank is a tie; with `teams`, ranks are given per team and every
player belongs to exactly one team. Optional `id` (a string) and `group` (a string or integer:
tables that belong together for resampling, such as the seat rotations of one duplicate deal) are
kept. Blank lines are skipped. The games come out in the store's format with ordinal = line number.
Any bad line raises ConfigError with a one-line message naming the file, the line and the problem.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from arena.errors import ConfigError

KEYS = {"players", "ranks", "teams", "id", "group"}


def read_results(path: str | Path) -> list[dict]:
    """Games from a JSONL results file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read results ({e})") from None
    return parse_results(text.splitlines(), name=path.name)


def parse_results(lines: Iterable[str], name: str = "results.jsonl") -> list[dict]:
    """Games from JSONL lines; `name` is the file named in error messages."""
    games = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            games.append(_game(line, number))
        except _BadLine as e:
            raise ConfigError(f"{name} line {number}: {e}") from None
    return games


class _BadLine(Exception):
    """What is wrong with one line."""


def _game(line: str, number: int) -> dict:
    """One game from one line."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise _BadLine(f"not valid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(record, dict):
        raise _BadLine(f"expected a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - KEYS)
    if unknown:
        raise _BadLine(f"unknown key {unknown[0]!r} (expected {', '.join(sorted(KEYS))})")
    players = record.get("players")
    if players is None:
        raise _BadLine('missing "players"')
    if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players):
        raise _BadLine('"players" must be a list of non-empty names')
    duplicate = next((p for i, p in enumerate(players) if p in players[:i]), None)
    if duplicate is not None:
        raise _BadLine(f'"players" lists {duplicate!r} twice')
    ranks = record.get("ranks")
    if ranks is None:
        raise _BadLine('missing "ranks"')
    if not isinstance(ranks, list) or not all(
            isinstance(r, int) and not isinstance(r, bool) and r >= 1 for r in ranks):
        raise _BadLine('"ranks" must be a list of whole numbers from 1')
    teams = record.get("teams")
    if teams is None:
        sides = [[p] for p in players]
        what = "players"
    else:
        sides = _teams(teams, players)
        what = "teams"
    if len(ranks) != len(sides):
        raise _BadLine(f'"ranks" has {len(ranks)} entries for {len(sides)} {what}')
    if len(sides) < 2:
        raise _BadLine(f"a table needs at least 2 {what}, got {len(sides)}")
    seats = [{"bot": p, "team": team, "rank": ranks[team]}
             for team, members in enumerate(sides) for p in members]
    order = {p: i for i, p in enumerate(players)}
    seats.sort(key=lambda s: order[s["bot"]])
    game_id = record.get("id", f"line{number}")
    if not isinstance(game_id, str):
        raise _BadLine('"id" must be a string')
    game = {"id": game_id, "ordinal": number, "seats": seats}
    if "group" in record:
        group = record["group"]
        if not isinstance(group, (str, int)) or isinstance(group, bool):
            raise _BadLine('"group" must be a string or an integer')
        game["group"] = group
    return game


def _teams(teams: object, players: list[str]) -> list[list[str]]:
    """Validated teams: lists of players, each player in exactly one."""
    if not isinstance(teams, list) or not all(
            isinstance(t, list) and t and all(isinstance(p, str) for p in t) for t in teams):
        raise _BadLine('"teams" must be a list of non-empty lists of player names')
    seen: set[str] = set()
    for t in teams:
        for p in t:
            if p not in players:
                raise _BadLine(f'team member {p!r} is not in "players"')
            if p in seen:
                raise _BadLine(f"{p!r} is in more than one team")
            seen.add(p)
    missing = [p for p in players if p not in seen]
    if missing:
        raise _BadLine(f"player {missing[0]!r} is in no team")
    return teams
