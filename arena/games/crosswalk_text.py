"""Crosswalk as text: the pawns on their track, the hands, the totals and each match's cards."""

from __future__ import annotations

from arena.games.text import TextView, cards, numbers


def _header(view: dict) -> list[str]:
    over = view.get("over")
    where = "game over" if over else (
        f"round {view.get('round', 0) + 1} of {view.get('rounds')}, cycle {view.get('cycle')}, "
        f"match {view.get('match_in_cycle', 0) + 1}")
    owners = view.get("colour_owner") or {}
    pawns = view.get("pawns") or {}
    return [
        f"Crosswalk — {where}, dealer seat {view.get('dealer')}",
        "pawns " + "  ".join(f"{c}:{pawns.get(c)} (seat {owners.get(c)})" for c in pawns),
        f"totals {numbers(view.get('totals', []))} · cards in hand "
        f"{numbers(view.get('hand_counts', []))} · stock {view.get('stock_count', 0)}, "
        f"discard {view.get('discard_count', 0)}",
    ]


def _match_line(match: dict | None) -> list[str]:
    if not match:
        return []
    played = ", ".join(f"seat {s} {c}" for s, c in sorted(match.get("cards", {}).items()))
    moves = " ".join(f"{c}→{n}" for c, n in (match.get("moves") or {}).items())
    return [f"match: {played}; lead {match.get('lead')}; pawns {moves}"]


def observation(obs: dict) -> list[str]:
    """A seat's view: pawns, totals, its colours and hand, the last match."""
    lines = _header(obs)
    lines.append(f"you (seat {obs.get('seat')}, colours {' '.join(obs.get('my_colours', []))}): "
                 f"{cards(obs.get('my_hand'))}")
    return lines + _match_line(obs.get("last_match"))


def full(view: dict) -> list[str]:
    """Everything: every hand, with each seat's colours."""
    lines = _header(view)
    colours = view.get("seat_colours") or []
    for seat, hand in enumerate(view.get("hands", [])):
        own = f" ({' '.join(colours[seat])})" if seat < len(colours) else ""
        lines.append(f"seat {seat}{own}: {cards(hand)}")
    return lines + _match_line(view.get("last_match"))


def events(before: dict, after: dict) -> list[str]:
    """The match just played (the cards revealed, the pawns' moves) and a round's scores."""
    out = []
    played_before = len(before.get("played_this_round") or [])
    played_after = len(after.get("played_this_round") or [])
    new_round = len(after.get("round_scores") or []) > len(before.get("round_scores") or [])
    if played_after != played_before or new_round:
        out += _match_line(after.get("last_match"))
    if new_round:
        out.append(f"round {len(after['round_scores'])} scored: "
                   f"{numbers(after['round_scores'][-1])}; totals {numbers(after.get('totals', []))}")
    return out


TEXT = TextView(observation=observation, full=full, events=events,
                action=lambda a: f"play {a.get('card')}" if isinstance(a, dict) else str(a))
