"""Xeri as text: the pile, the hands, the sides' points and what each play took."""

from __future__ import annotations

from arena.games.text import TextView, cards, new_entries, numbers


def _sides(view: dict) -> str:
    seats = len(view.get("hand_counts") or view.get("hands") or [])
    return "sides 0+2 / 1+3" if seats == 4 else "seats 0 / 1"


def _table(view: dict) -> list[str]:
    round_no = view.get("round", 0) + 1
    extra = " (extra round)" if view.get("extra_round") else ""
    turn = view.get("to_act")
    lines = [
        f"Xeri — round {round_no}{extra}, dealer seat {view.get('round_dealer', view.get('dealer'))}, "
        f"stock {view.get('stock_count', 0)}"
        + (f", seat {turn} to play" if turn is not None else ", game over"),
        f"totals {numbers(view.get('scores', []))} · this round {numbers(view.get('round_points', []))}"
        f" · cards taken {numbers(view.get('captured_counts', []))} ({_sides(view)})",
        f"pile (top last): {cards(view.get('pile'))}",
    ]
    if view.get("xeri"):
        lines.append("xeri this round: " + ", ".join(
            f"seat {x.get('seat')} {cards(x.get('cards'))} ({x.get('value')})"
            if isinstance(x, dict) else str(x)
            for x in view["xeri"]))
    return lines


def observation(obs: dict) -> list[str]:
    """A seat's view: the table, the other hands' sizes and its own hand."""
    me = obs.get("seat")
    lines = _table(obs)
    counts = obs.get("hand_counts")
    if counts is None:
        counts = [obs.get("opponent_hand_count", 0)] * 2
        counts[me] = len(obs.get("my_hand", []))
    for seat, n in enumerate(counts):
        if seat != me:
            who = "partner" if obs.get("partner") == seat else "seat"
            lines.append(f"{who} {seat}: {n} card{'s' if n != 1 else ''}")
    lines.append(f"you (seat {me}): {cards(obs.get('my_hand'))}")
    return lines


def full(view: dict) -> list[str]:
    """Everything: every hand and the stock's order."""
    lines = _table(view)
    for seat, hand in enumerate(view.get("hands", [])):
        lines.append(f"seat {seat}: {cards(hand)}")
    lines.append(f"stock (next first): {cards(view.get('stock'))}")
    return lines


def events(before: dict, after: dict) -> list[str]:
    """Each capture since `before` (a plain play says no more than its action), a xeri, each
    round's scoring."""
    out = []
    for play in new_entries(before.get("history"), after.get("history")):
        taken = play.get("captured")
        if not taken:
            continue
        line = f"seat {play.get('seat')} takes {len(taken)} card{'s' if len(taken) != 1 else ''}"
        if play.get("xeri"):
            line += f" — XERI ({play['xeri']})"
        out.append(line)
    for result in new_entries(before.get("round_results"), after.get("round_results")):
        out.append(f"round {result.get('round', 0) + 1} scored: points "
                   f"{numbers(result.get('points', []))}, totals {numbers(result.get('totals', []))}")
    return out


TEXT = TextView(observation=observation, full=full, events=events,
                action=lambda a: f"play {a.get('card')}" if isinstance(a, dict) else str(a))
