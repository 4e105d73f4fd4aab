// Xeri on the table: the opponent's hand at the top, the stock and the pile in the middle, the
// viewer's hand at the bottom; the last play is highlighted, a capture shows what it took.
// With four seats (the partnership form, partners opposite: seats 0 + 2 against 1 + 3) each side
// is drawn as one zone holding its two seats, the opponents' side at the top and the viewer's at
// the bottom: scores, round points, captured cards and xeris belong to the side (those lists are
// indexed by side, seat % 2), hands to the seats. A seat's view draws every other hand face down
// from `hand_counts`, the partner's too (it is as hidden as the opponents').
"use strict";

(function () {
  const CARDS_PER_HAND = 6;
  const PLAYS_PER_ROUND = 48;

  function render(root, frame, ctx) {
    const { el, add, card, back, stack, row, zone, seatName } = ctx.h;
    const v = frame.view;
    const full = ctx.seat === null;
    const me = full ? 0 : ctx.seat;
    const seats = full ? v.hands.length : (v.hand_counts ? v.hand_counts.length : 2);
    const teams = seats === 4;
    const lastSet = new Set(frame.moves.map((m) => m.action && m.action.card));
    const dealer = v.dealer;
    const sideOf = (seat) => seat % 2;
    const mySide = sideOf(me);
    const sideSeats = (side) => teams ? [side, side + 2] : [side];
    const sideLabel = (side) => "seats " + sideSeats(side).join(" + ");

    function hand(seat) {
      if (full) return v.hands[seat].map((c) => card(c));
      if (seat === me) return v.my_hand.map((c) => card(c));
      const count = teams ? v.hand_counts[seat] : v.opponent_hand_count;
      return Array.from({ length: count }, () => back());
    }

    function sideFacts(side) {
      return "round points " + v.round_points[side] + " · captured " + v.captured_counts[side];
    }

    // The xeri pairs and (full view) the captured pile of a side: a seat's own with two seats.
    function sidePiles(z, side) {
      const xeris = v.xeri.filter((x) => sideOf(x.seat) === side);
      if (xeris.length) {
        const xz = el("div", "card-groups");
        xz.appendChild(el("span", "muted", "xeri:"));
        for (const x of xeris) {
          const pair = row(x.cards.map((c) => card(c, { small: true, lastSet })), "card-group");
          pair.appendChild(el("span", "points", "+" + x.value));
          if (teams) pair.appendChild(el("span", "muted", "seat " + x.seat));
          xz.appendChild(pair);
        }
        z.appendChild(xz);
      }
      if (full && v.captured[side].length) {
        const cz = el("details", "captured");
        cz.appendChild(el("summary", null, "captured cards (" + v.captured[side].length + ")"));
        cz.appendChild(row(v.captured[side].map((c) => card(c, { small: true, lastSet }))));
        z.appendChild(cz);
      }
    }

    function seatZone(seat) {
      const partner = teams && seat !== me && sideOf(seat) === mySide;
      const role = seat === me ? " me" : partner ? " partner" : " opponent";
      const z = zone(null, "seat-zone" + role);
      z.dataset.seat = String(seat);
      if (frame.moves.some((m) => m.seat === seat)) z.classList.add("mover", "last-move");
      const head = add(el("div", "seat-head"), el("span", "seat-name", seatName(ctx, seat)));
      if (partner && !full) head.appendChild(el("span", "badge partner", "partner"));
      if (seat === dealer) head.appendChild(el("span", "badge dealer", "dealer"));
      if (frame.to_act.includes(seat)) head.appendChild(el("span", "badge to-act", "to play"));
      if (!teams) head.appendChild(el("span", "muted", sideFacts(seat)));
      z.appendChild(head);
      z.appendChild(row(hand(seat), "hand"));
      if (!teams) sidePiles(z, seat);
      return z;
    }

    // Four seats: one zone per partnership, its two seats side by side inside.
    function sideZone(side) {
      const z = zone(null, "seat-zone side-zone " + (side === mySide ? "me" : "opponent"));
      z.dataset.side = String(side);
      const head = add(el("div", "seat-head"),
        el("span", "seat-name", "partnership " + sideLabel(side)),
        el("span", "muted", "total " + v.scores[side] + " · " + sideFacts(side)));
      z.appendChild(head);
      const order = side === mySide ? [me, (me + 2) % 4] : [(me + 1) % 4, (me + 3) % 4];
      z.appendChild(add(el("div", "seats"), ...order.map(seatZone)));
      sidePiles(z, side);
      return z;
    }

    const deals = PLAYS_PER_ROUND / (CARDS_PER_HAND * seats);
    const totals = teams ? v.scores.map((s, side) => sideLabel(side) + ": " + s).join(" – ")
      : v.scores.join(" – ");
    const info = el("p", "table-info",
      "Round " + (v.round + 1) + (v.extra_round ? " (extra)" : "") + " · deal " +
      (v.deal_in_round + 1) + " of " + deals + " · totals " + totals);
    root.appendChild(info);
    root.appendChild(teams ? sideZone(1 - mySide) : seatZone(1 - me));

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
        seatName(ctx, lastPlay.seat) + (teams ? " for " + sideLabel(sideOf(lastPlay.seat)) : ""),
        "last-capture");
      cap.appendChild(row(lastPlay.captured.map((c) => card(c, { small: true, lastSet }))));
      middle.appendChild(cap);
    } else if (lastPlay && lastSet.has(lastPlay.card) && !v.pile.includes(lastPlay.card)) {
      // The round's last card, which took nothing: the pile went to the last capturer.
      const result = v.round_results[v.round_results.length - 1];
      const left = result && result.leftover;
      const cz = zone("last card of the round" + (left && left.count ? " · the pile (" +
        left.count + ") went to " + seatName(ctx, left.seat) +
        (teams ? " for " + sideLabel(sideOf(left.seat)) : "") : ""), "last-capture");
      cz.appendChild(row([card(lastPlay.card, { small: true, lastSet })]));
      middle.appendChild(cz);
    }
    if (v.redeals.length) {
      const rz = zone("rejected starting piles", "redeals");
      for (const p of v.redeals) rz.appendChild(row(p.map((c) => card(c, { small: true }))));
      middle.appendChild(rz);
    }
    root.appendChild(middle);
    root.appendChild(teams ? sideZone(mySide) : seatZone(me));

    if (full && v.stock.length) {
      const sz = el("details", "stock-order");
      sz.appendChild(el("summary", null, "stock in dealing order (" + v.stock.length + ")"));
      sz.appendChild(row(v.stock.map((c) => card(c, { small: true, down: true }))));
      root.appendChild(sz);
    }
    if (v.round_results.length) {
      const rr = zone("finished rounds", "round-results");
      const bySide = (list) => teams
        ? list.map((x, side) => sideLabel(side) + " " + x).join(" – ") : list.join(" – ");
      for (const r of v.round_results) {
        rr.appendChild(el("p", null, "Round " + (r.round + 1) + ": " + bySide(r.points) +
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
