// Crossfire on the table: each seat's row of face-down slots, the neutral card between them, and
// the round just played as it was laid out after movement (dealer's spot, middle, opponent's spot).
"use strict";

(function () {
  const MOVEMENT = {
    none: "no movement",
    swap_players: "the players' cards swapped",
    swap_dealer_neutral: "dealer's card and neutral swapped",
    swap_neutral_opponent: "neutral and opponent's card swapped",
    slide: "all three slid right",
  };

  function render(root, frame, ctx) {
    const { el, add, card, back, stack, row, zone, seatName } = ctx.h;
    const v = frame.view;
    const full = ctx.seat === null;
    const me = full ? 0 : ctx.seat;
    const lastRound = frame.moves.length && v.history.length ? v.history[v.history.length - 1] : null;
    const lastSet = new Set(lastRound ? [lastRound.dealer_card, lastRound.opponent_card] : []);

    function slots(seat) {
      const out = [];
      if (full) {
        v.rows[seat].forEach((c, k) => out.push(c ? card(c, { down: true, label: "slot " + k })
          : el("span", "card empty")));
        return out;
      }
      const open = seat === me && v.my_row ? new Map(v.my_row.map((s) => [s.slot, s.card])) : null;
      const live = new Set(seat === me ? v.my_slots : v.opponent_slots);
      const width = Math.max(5, ...[...live].map((k) => k + 1));
      for (let k = 0; k < width; k++) {
        if (!live.has(k)) out.push(el("span", "card empty"));
        else if (open && open.has(k)) out.push(card(open.get(k), { down: true, label: "slot " + k }));
        else out.push(back({ label: "slot " + k }));
      }
      return out;
    }

    function seatZone(seat) {
      const z = zone(null, "seat-zone" + (seat === me ? " me" : " opponent"));
      if (frame.moves.some((m) => m.seat === seat)) z.classList.add("mover", "last-move");
      const head = add(el("div", "seat-head"), el("span", "seat-name", seatName(ctx, seat)));
      head.appendChild(el("span", "badge" + (seat === v.dealer ? " dealer" : ""),
        seat === v.dealer ? "dealer" : "opponent"));
      if (frame.to_act.includes(seat)) head.appendChild(el("span", "badge to-act", "to play"));
      head.appendChild(el("span", "points", v.scores[seat] + " points"));
      z.appendChild(head);
      z.appendChild(row(slots(seat), "row"));
      return z;
    }

    root.appendChild(el("p", "table-info", "Round " + v.round + " · deal " + v.deal_index +
      ", round " + v.round_in_deal + " of the deal" + (v.sudden_death ? " · sudden death" : "")));
    root.appendChild(seatZone(1 - me));

    const middle = zone(null, "middle");
    middle.appendChild(add(el("div", "stock-zone"), stack(v.stock_count, "stock")));
    const neutral = zone("neutral", "neutral");
    neutral.appendChild(v.neutral ? card(v.neutral) : el("span", "card empty"));
    middle.appendChild(neutral);
    if (lastRound) {
      const lay = lastRound.layout;
      const oppSeat = 1 - lastRound.dealer;
      const z = zone("round " + lastRound.round + ": " + (MOVEMENT[lastRound.movement] ||
        lastRound.movement), "last-round");
      const cells = [
        ["dealer's spot (" + seatName(ctx, lastRound.dealer) + ")", lay.dealer_pos],
        ["middle", lay.middle],
        ["opponent's spot (" + seatName(ctx, oppSeat) + ")", lay.opponent_pos],
      ];
      const line = el("div", "layout");
      for (const [label, c] of cells) {
        line.appendChild(add(el("figure", "spot"), card(c, { lastSet }), el("figcaption", null, label)));
      }
      z.appendChild(line);
      z.appendChild(el("p", "result", lastRound.scorer === null ? "nobody scores"
        : seatName(ctx, lastRound.scorer) + " scores"));
      middle.appendChild(z);
    }
    root.appendChild(middle);
    root.appendChild(seatZone(me));

    if (v.discards.length) {
      const d = zone("discards (" + v.discards.length + ")", "discards");
      d.appendChild(row(v.discards.map((c) => card(c, { small: true, lastSet }))));
      root.appendChild(d);
    }
    if (full && v.stock_top_first.length) {
      const s = el("details", "stock-order");
      s.appendChild(el("summary", null, "stock from the top (" + v.stock_top_first.length + ")"));
      s.appendChild(row(v.stock_top_first.map((c) => card(c, { small: true, down: true }))));
      root.appendChild(s);
    }
  }

  function describe(move) {
    const a = move.action || {};
    return a.type === "play_slot" ? "plays slot " + a.slot : JSON.stringify(a);
  }

  window.ArenaReplay.register("crossfire", { render, describe });
})();
