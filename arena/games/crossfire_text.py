"""Crossfire as text: the neutral card, the rows of slots, the points and each round's cards."""

from __future__ import annotations

from arena.games.text import TextView, cards, new_entries, numbers


def _header(view: dict) -> list[str]:
    state = "game over" if view.get("over") else (
        "sudden death" if view.get("sudden_death") else
        f"deal {view.get('deal_index')}, round {view.get('round_in_deal')} of the deal")
    return [
        f"Crossfire — round {view.get('round', 0)}, {state}, dealer seat {view.get('dealer')}",
        f"points {numbers(view.get('scores', []))} · neutral {view.get('neutral') or '-'}"
        f" · stock {view.get('stock_count', len(view.get('stock_top_first') or []))}",
    ]


def _last_round(view: dict) -> list[str]:
    history = view.get("history") or []
    if not history:
        return []
    return ["last round (the dealer's card, the neutral, the opponent's card):", "  " + _round_line(history[-1])]


def _round_line(entry: dict) -> str:
    scorer = entry.get("scorer")
    layout = entry.get("layout") or {}
    movement = str(entry.get("movement", "none")).replace("_", " ")
    return (f"round {entry.get('round')}: {entry.get('dealer_card')} {entry.get('neutral')} "
            f"{entry.get('opponent_card')}, {movement}: {layout.get('dealer_pos')} "
            f"{layout.get('middle')} {layout.get('opponent_pos')}, "
            + ("no point" if scorer is None else f"seat {scorer} scores"))


def observation(obs: dict) -> list[str]:
    """A seat's view: its slots (its cards under open rows), the other's slots, the last round."""
    me = obs.get("seat")
    lines = _header(obs)
    mine = obs.get("my_row")
    if mine is not None:
        row = " ".join(f"[{e['slot']}]{e['card']}" for e in mine) or "-"
    else:
        row = " ".join(f"[{k}]??" for k in obs.get("my_slots", [])) or "-"
    lines.append(f"you (seat {me}): {row}")
    lines.append(f"other seat: slots {' '.join(map(str, obs.get('opponent_slots', []))) or '-'}"
                 " (face down)")
    return lines + _last_round(obs)


def full(view: dict) -> list[str]:
    """Everything: both rows by slot, the stock's order, the last round."""
    lines = _header(view)
    for seat, row in enumerate(view.get("rows", [])):
        lines.append(f"seat {seat}: " + (" ".join(
            f"[{k}]{c}" for k, c in enumerate(row) if c is not None) or "-"))
    lines.append(f"stock (top first): {cards(view.get('stock_top_first'))}")
    return lines + _last_round(view)


def events(before: dict, after: dict) -> list[str]:
    """Each round played since `before`: the dealer's, the neutral and the opponent's card, the
    movement and the layout it made, and who scored."""
    return [_round_line(e) for e in new_entries(before.get("history"), after.get("history"))]


TEXT = TextView(observation=observation, full=full, events=events,
                action=lambda a: f"play slot {a.get('slot')}" if isinstance(a, dict) else str(a))
