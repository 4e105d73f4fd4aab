"""Battlefield Cribbage as text: the hands by slot, the line, the crib, the scores and the events."""

from __future__ import annotations

from arena.games.text import TextView, cards, new_entries, numbers


def _header(view: dict) -> list[str]:
    teams = view.get("teams") or []
    sides = " / ".join("+".join(map(str, t)) for t in teams)
    status = (f"game over ({view.get('end_reason')}, winners {view.get('winners')})"
              if view.get("game_over") else
              f"phase {view.get('phase')}, seat {view.get('to_act')} to act")
    lines = [
        f"Battlefield Cribbage — round {view.get('round')}, dealer seat {view.get('dealer')}, "
        f"{status}",
        f"scores {numbers(view.get('score_list', []))} (seats; "
        + (f"teams {sides}; " if view.get("team_mode") else "")
        + f"target {view.get('target')})",
        f"line (total {view.get('line_total', 0)}): {cards(view.get('line'))}",
    ]
    crib = view.get("crib") or {}
    extra = [f"draw pile {view.get('draw_pile_count', 0)}",
             f"crib {crib.get('face_down_count', 0)} face down"
             + (f", up {cards(crib.get('face_up'))}" if crib.get("face_up") else "")]
    if view.get("common_card"):
        extra.append(f"common {view['common_card']}")
    if view.get("out_of_play"):
        extra.append(f"out of play {cards(view['out_of_play'])}")
    if view.get("pending_drawn_card"):
        extra.append(f"drawn card {view['pending_drawn_card']}")
    if view.get("went_out") is not None:
        extra.append(f"seat {view['went_out']} went out")
    lines.append(" · ".join(extra))
    return lines


def _hand(slots: list[dict], face_up_key: bool = False) -> str:
    parts = []
    for e in slots:
        card = e.get("card")
        if card is None:
            parts.append(f"[{e.get('slot')}]??")
        elif face_up_key and not e.get("face_up", True):
            parts.append(f"[{e.get('slot')}]({card})")  # face down: known only to the full view
        else:
            parts.append(f"[{e.get('slot')}]{card}")
    return " ".join(parts) or "-"


def observation(obs: dict) -> list[str]:
    """A seat's view: every hand as far as it is face up, its own marked, the line and crib."""
    me = obs.get("seat")
    lines = _header(obs)
    for seat, slots in enumerate(obs.get("hands", [])):
        who = f"you (seat {seat})" if seat == me else f"seat {seat}"
        lines.append(f"{who}: {_hand(slots)}")
    return lines


def full(view: dict) -> list[str]:
    """Everything: each hand (face-down cards in brackets), the draw pile, the crib's cards."""
    lines = _header(view)
    for seat, slots in enumerate(view.get("hands_full") or view.get("hands", [])):
        lines.append(f"seat {seat}: {_hand(slots, face_up_key=True)}")
    lines.append(f"draw pile (top first): {cards(view.get('draw_pile_top_first'))}")
    lines.append(f"crib face down: {cards(view.get('crib_face_down'))}")
    return lines


def _event(e: dict) -> str:
    kind = e.get("event")
    seat = e.get("seat")
    if kind == "turn":
        source = e.get("source")
        if source == "line":
            text = f"seat {seat} takes {e.get('card_in')} from the line into slot {e.get('slot')}"
        elif source == "draw":
            text = (f"seat {seat} draws {e.get('card_in') or '??'}"
                    + (f" into slot {e.get('slot')}" if e.get("slot") is not None else ""))
        else:
            text = f"seat {seat} {source}s"
        if e.get("placed"):
            text += f", lays {e['placed']} on the line"
        text += f" (line {e.get('line_total')})"
        if e.get("points"):
            text += f": +{e['points']}"
        if e.get("reset"):
            text += ", line reset"
        return text
    if kind == "reveal":
        return (f"seat {seat} reveals slots {','.join(map(str, e.get('slots', [])))}: "
                f"{cards(e.get('cards'))}" + (" (auto)" if e.get("auto") else ""))
    rest = ", ".join(f"{k.replace('_', ' ')} {cards(v) if isinstance(v, list) else v}"
                     for k, v in e.items() if k not in ("event", "seat") and v not in (None, False))
    who = f"seat {seat} " if seat is not None else ""
    return f"{who}{str(kind).replace('_', ' ')}" + (f": {rest}" if rest else "")


def events(before: dict, after: dict) -> list[str]:
    """The events since `before` (turns, reveals, crib, shows, going out)."""
    return [_event(e) for e in new_entries(before.get("history"), after.get("history"))
            if isinstance(e, dict)]


def action(a) -> str:
    """One action in words."""
    if not isinstance(a, dict):
        return str(a)
    kind = a.get("type")
    words = {
        "draw": "draw from the pile",
        "flip_common": "flip the common card",
        "place_drawn": "place the drawn card on the line",
        "take_line": f"take the line's card into slot {a.get('replace_slot')}",
        "replace": f"put the drawn card into slot {a.get('slot')}",
        "reveal": f"reveal slots {','.join(map(str, a.get('slots', [])))}",
        "crib_discard": f"discard slot {a.get('slot')} to the crib",
    }
    return words.get(kind, str(kind))


TEXT = TextView(observation=observation, full=full, events=events, action=action)
