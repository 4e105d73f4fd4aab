// Battlefield Cribbage on the table: every seat's five slots (face-down ones as backs, or marked
// cards in the full view), the line with its total, the draw pile, the crib and the common card;
// the cards the last move touched are highlighted.
"use strict";

(function () {
  // The cards named by the events the last step added to this round's history.
  function lastCards(frame, prev) {
    const v = frame.view;
    if (!frame.moves.length) return new Set();
    const sameRound = prev && prev.view.round === v.round;
    const fresh = sameRound ? v.history.slice(prev.view.history.length) : v.history;
    const out = new Set();
    for (const e of fresh) {
      for (const key of ["placed", "card_in", "card"]) if (e[key]) out.add(e[key]);
      if (Array.isArray(e.cards)) e.cards.forEach((c) => out.add(c));
    }
    if (v.pending_drawn_card) out.add(v.pending_drawn_card);
    return out;
  }

  function render(root, frame, ctx) {
    const { el, add, card, back, stack, row, zone, seatName } = ctx.h;
    const v = frame.view;
    const full = ctx.seat === null;
    const me = full ? null : ctx.seat;
    const lastSet = lastCards(frame, ctx.prev);
    const drawer = v.phase === "after_draw" ? v.to_act : null;

    root.appendChild(el("p", "table-info", "Round " + v.round + " · phase " + v.phase +
      " · target " + v.target + (v.team_mode ? " · teams " + v.teams.map((t) => t.join("+")).join(" v ") : "") +
      (v.went_out !== null ? " · " + seatName(ctx, v.went_out) + " went out" : "") +
      (v.standoff_forced ? " · forced (" + v.forced_reason + ")" : "")));

    function slotsOf(seat) {
      if (full) {
        return v.hands_full[seat].map((s) => card(s.card, { down: !s.face_up, lastSet,
          label: "slot " + s.slot }));
      }
      return v.hands[seat].map((s) => s.card ? card(s.card, { lastSet, label: "slot " + s.slot })
        : back({ label: "slot " + s.slot }));
    }

    function seatZone(seat) {
      const z = zone(null, "seat-zone" + (seat === me ? " me" : ""));
      if (frame.moves.some((m) => m.seat === seat)) z.classList.add("mover", "last-move");
      const head = add(el("div", "seat-head"), el("span", "seat-name", seatName(ctx, seat)));
      if (seat === v.dealer) head.appendChild(el("span", "badge dealer", "dealer"));
      if (frame.to_act.includes(seat)) head.appendChild(el("span", "badge to-act", "to act"));
      if (v.went_out === seat) head.appendChild(el("span", "badge", "went out"));
      head.appendChild(el("span", "points", v.score_list[seat] + " points"));
      z.appendChild(head);
      const hand = row(slotsOf(seat), "hand slots");
      if (drawer === seat) {
        const drawn = v.pending_drawn_card ? card(v.pending_drawn_card, { last: true, label: "drawn" })
          : back({ last: true, label: "drawn" });
        drawn.classList.add("drawn");
        hand.appendChild(drawn);
      }
      z.appendChild(hand);
      return z;
    }

    const order = [];
    for (let s = 0; s < v.num_players; s++) if (s !== me) order.push(s);
    const others = el("div", "seats");
    order.forEach((s) => others.appendChild(seatZone(s)));
    root.appendChild(others);

    const middle = zone(null, "middle");
    middle.appendChild(add(el("div", "stock-zone"), stack(v.draw_pile_count, "draw pile",
      { last: frame.moves.some((m) => m.action && m.action.type === "draw") })));
    const line = zone("line · total " + v.line_total, "line");
    line.appendChild(v.line.length ? row(v.line.map((c) => card(c, { lastSet })), "fan")
      : el("p", "muted", "empty"));
    middle.appendChild(line);
    const crib = zone("crib", "crib");
    const cribCards = [];
    if (full) v.crib_face_down.forEach((c) => cribCards.push(card(c, { down: true, small: true })));
    else for (let i = 0; i < v.crib.face_down_count; i++) cribCards.push(back({ small: true }));
    v.crib.face_up.forEach((c) => cribCards.push(card(c, { small: true, lastSet })));
    crib.appendChild(cribCards.length ? row(cribCards) : el("p", "muted", "empty"));
    middle.appendChild(crib);
    if (v.common_card) {
      const common = zone("common card", "common");
      common.appendChild(card(v.common_card, { lastSet }));
      middle.appendChild(common);
    }
    root.appendChild(middle);
    if (me !== null) root.appendChild(seatZone(me));

    if (v.out_of_play.length) {
      const o = zone("cleared lines", "out-of-play");
      o.appendChild(row(v.out_of_play.map((c) => card(c, { small: true }))));
      root.appendChild(o);
    }
    const shows = v.history.filter((e) => e.event === "show" || e.event === "crib");
    if (shows.length) {
      const s = zone("the show", "show");
      for (const e of shows) {
        const line = el("div", "show-line");
        line.appendChild(el("span", null, (e.event === "crib" ? "crib of " : "") +
          seatName(ctx, e.seat) + ": " + e.points + (e.killed ? " (killed)" : "")));
        line.appendChild(row(e.cards.map((c) => card(c, { small: true, lastSet }))));
        s.appendChild(line);
      }
      root.appendChild(s);
    }
    if (full && v.draw_pile_top_first.length) {
      const d = el("details", "stock-order");
      d.appendChild(el("summary", null, "draw pile from the top (" + v.draw_pile_top_first.length + ")"));
      d.appendChild(row(v.draw_pile_top_first.map((c) => card(c, { small: true, down: true }))));
      root.appendChild(d);
    }
    if (v.rounds.length) {
      const r = zone("finished rounds", "round-results");
      for (const rd of v.rounds) {
        r.appendChild(el("p", null, "Round " + rd.round + (rd.cease_fire ? " (cease-fire)" : "") +
          ": " + rd.points.join(" – ")));
      }
      root.appendChild(r);
    }
  }

  function describe(move) {
    const a = move.action || {};
    switch (a.type) {
      case "reveal": return "turns up slots " + a.slots.join(" and ");
      case "draw": return "draws from the pile";
      case "take_line": return "takes the line's last card into slot " + a.replace_slot;
      case "place_drawn": return "lays the drawn card on the line";
      case "replace": return "puts the drawn card in slot " + a.slot;
      case "flip_common": return "flips the common card";
      case "crib_discard": return "sends slot " + a.slot + " to the crib";
      default: return JSON.stringify(a);
    }
  }

  window.ArenaReplay.register("battlefield_cribbage", { render, describe });
})();
