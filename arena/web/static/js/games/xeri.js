// Xeri on the table: the opponent's hand at the top, the stock and the pile in the middle, the
// viewer's hand at the bottom; the last play is highlighted, a capture shows what it took.
"use strict";

(function () {
  function render(root, frame, ctx) {
    const { el, add, card, back, stack, row, zone, seatName } = ctx.h;
    const v = frame.view;
    const full = ctx.seat === null;
    const me = full ? 0 : ctx.seat;
    const lastSet = new Set(frame.moves.map((m) => m.action && m.action.card));
    const dealer = v.dealer;

    function seatZone(seat) {
      const z = zone(null, "seat-zone" + (seat === me ? " me" : " opponent"));
      if (frame.moves.some((m) => m.seat === seat)) z.classList.add("mover", "last-move");
      const head = add(el("div", "seat-head"), el("span", "seat-name", seatName(ctx, seat)));
      if (seat === dealer) head.appendChild(el("span", "badge dealer", "dealer"));
      if (frame.to_act.includes(seat)) head.appendChild(el("span", "badge to-act", "to play"));
      head.appendChild(el("span", "muted", "round points " + v.round_points[seat] +
        " · captured " + v.captured_counts[seat]));
      z.appendChild(head);
      let hand;
      if (full) hand = v.hands[seat].map((c) => card(c));
      else if (seat === me) hand = v.my_hand.map((c) => card(c));
      else hand = Array.from({ length: v.opponent_hand_count }, () => back());
      z.appendChild(row(hand, "hand"));
      const xeris = v.xeri.filter((x) => x.seat === seat);
      if (xeris.length) {
        const xz = el("div", "xeri-piles");
        xz.appendChild(el("span", "muted", "xeri:"));
        for (const x of xeris) {
          const pair = row(x.cards.map((c) => card(c, { small: true, lastSet })), "xeri-pair");
          pair.appendChild(el("span", "points", "+" + x.value));
          xz.appendChild(pair);
        }
        z.appendChild(xz);
      }
      if (full && v.captured[seat].length) {
        const cz = el("details", "captured");
        cz.appendChild(el("summary", null, "captured cards (" + v.captured[seat].length + ")"));
        cz.appendChild(row(v.captured[seat].map((c) => card(c, { small: true, lastSet }))));
        z.appendChild(cz);
      }
      return z;
    }

    const info = el("p", "table-info",
      "Round " + (v.round + 1) + (v.extra_round ? " (extra)" : "") + " · deal " +
      (v.deal_in_round + 1) + " of 4 · totals " + v.scores.join(" – "));
    root.appendChild(info);
    root.appendChild(seatZone(1 - me));

    const middle = zone(null, "middle");
    const stockZone = add(el("div", "stock-zone"), stack(v.stock_count, "stock"));
    middle.appendChild(stockZone);
    const pile = zone("pile", "pile");
    pile.appendChild(v.pile.length ? row(v.pile.map((c, i) =>
      card(c, { lastSet, label: i === v.pile.length - 1 ? "top" : undefined })), "fan")
      : el("p", "muted", "empty"));
    middle.appendChild(pile);
    const lastPlay = v.history.length ? v.history[v.history.length - 1] : null;
    if (lastPlay && lastPlay.captured && lastSet.has(lastPlay.card)) {
      const cap = zone((lastPlay.xeri ? "xeri! +" + lastPlay.xeri + " · " : "") + "captured by " +
        seatName(ctx, lastPlay.seat), "last-capture");
      cap.appendChild(row(lastPlay.captured.map((c) => card(c, { small: true, lastSet }))));
      middle.appendChild(cap);
    }
    if (v.redeals.length) {
      const rz = zone("rejected starting piles", "redeals");
      for (const p of v.redeals) rz.appendChild(row(p.map((c) => card(c, { small: true }))));
      middle.appendChild(rz);
    }
    root.appendChild(middle);
    root.appendChild(seatZone(me));

    if (full && v.stock.length) {
      const sz = el("details", "stock-order");
      sz.appendChild(el("summary", null, "stock in dealing order (" + v.stock.length + ")"));
      sz.appendChild(row(v.stock.map((c) => card(c, { small: true, down: true }))));
      root.appendChild(sz);
    }
    if (v.round_results.length) {
      const rr = zone("finished rounds", "round-results");
      for (const r of v.round_results) {
        rr.appendChild(el("p", null, "Round " + (r.round + 1) + ": " + r.points.join(" – ") +
          " (cards " + r.captured_counts.join("/") + ", xeris " + r.xeri_counts.join("/") + ")"));
      }
      root.appendChild(rr);
    }
  }

  function describe(move) {
    const a = move.action || {};
    return a.type === "play" ? "plays " + a.card : JSON.stringify(a);
  }

  window.ArenaReplay.register("xeri", { render, describe });
})();
