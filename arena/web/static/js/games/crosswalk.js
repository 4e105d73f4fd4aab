// Crosswalk on the table: the track (one lane of spaces 1-10 per colour, its pawn on its space),
// the cards of the match just revealed, and every seat's hand (face down unless it is the
// viewer's, or the full view).
"use strict";

(function () {
  const NAMES = { R: "red", B: "blue", G: "green", Y: "yellow" };

  function render(root, frame, ctx) {
    const { el, add, card, back, stack, row, zone, seatName } = ctx.h;
    const v = frame.view;
    const full = ctx.seat === null;
    const me = full ? null : ctx.seat;
    const lastMatch = frame.moves.length ? v.last_match : null;
    const lastSet = new Set(frame.moves.map((m) => m.action && m.action.card));
    const moved = new Set(lastMatch ? Object.keys(lastMatch.moves || {}) : []);
    const coloursOf = (seat) => full ? v.seat_colours[seat].split("")
      : Object.keys(v.colour_owner).filter((c) => v.colour_owner[c] === seat);

    root.appendChild(el("p", "table-info", "Round " + (v.round + 1) + " of " + v.rounds +
      " · cycle " + (v.cycle + 1) + ", match " + (v.match_in_cycle + 1) + " · stock " +
      v.stock_count + " · discard pile " + v.discard_count));

    const track = zone("track", "track");
    for (const colour of v.colours.split("")) {
      if (!(colour in v.pawns)) continue;
      const lane = el("div", "lane colour-" + NAMES[colour]);
      lane.appendChild(el("span", "lane-name", NAMES[colour] + " · " +
        seatName(ctx, v.colour_owner[colour])));
      for (let space = 1; space <= 10; space++) {
        const cell = el("span", "space", space);
        if (v.pawns[colour] === space) {
          const pawn = el("span", "pawn colour-" + NAMES[colour], colour);
          pawn.title = NAMES[colour] + " pawn on " + space;
          if (moved.has(colour)) pawn.classList.add("last-move");
          cell.appendChild(pawn);
          cell.classList.add("occupied");
        }
        lane.appendChild(cell);
      }
      track.appendChild(lane);
    }
    root.appendChild(track);

    if (lastMatch) {
      const z = zone("match just revealed · highest " + lastMatch.lead, "last-match");
      const line = el("div", "layout");
      for (const [seat, c] of Object.entries(lastMatch.cards)) {
        const fig = add(el("figure", "spot"), card(c, { lastSet }),
          el("figcaption", null, seatName(ctx, Number(seat)) +
            ((lastMatch.leaders || []).includes(Number(seat)) ? " leads" : "")));
        line.appendChild(fig);
      }
      z.appendChild(line);
      root.appendChild(z);
    }

    const order = [];
    for (let s = 0; s < v.num_players; s++) if (s !== me) order.push(s);
    if (me !== null) order.push(me);
    const seats = el("div", "seats");
    for (const seat of order) {
      const z = zone(null, "seat-zone" + (seat === me ? " me" : ""));
      if (frame.moves.some((m) => m.seat === seat)) z.classList.add("mover", "last-move");
      const head = add(el("div", "seat-head"), el("span", "seat-name", seatName(ctx, seat)),
        el("span", "muted", coloursOf(seat).map((c) => NAMES[c]).join(" + ")));
      if (seat === v.dealer) head.appendChild(el("span", "badge dealer", "dealer"));
      if (frame.to_act.includes(seat)) head.appendChild(el("span", "badge to-act", "to play"));
      if (v.finished[seat]) head.appendChild(el("span", "badge", "finished"));
      head.appendChild(el("span", "points", "total " + v.totals[seat]));
      z.appendChild(head);
      let hand;
      if (full) hand = v.hands[seat].map((c) => card(c));
      else if (seat === me) hand = v.my_hand.map((c) => card(c));
      else hand = Array.from({ length: v.hand_counts[seat] }, () => back());
      z.appendChild(row(hand, "hand"));
      seats.appendChild(z);
    }
    root.appendChild(seats);

    const piles = zone(null, "middle");
    piles.appendChild(stack(v.stock_count, "stock"));
    piles.appendChild(stack(v.discard_count, "discard pile"));
    root.appendChild(piles);

    if (v.played_this_round.length) {
      const p = zone("played this round (" + v.played_this_round.length + ")", "played");
      p.appendChild(row(v.played_this_round.map((c) => card(c, { small: true }))));
      root.appendChild(p);
    }
    if (!full && v.my_discards_this_round.length) {
      const d = zone("your discards this round", "my-discards");
      d.appendChild(row(v.my_discards_this_round.map((c) => card(c, { small: true }))));
      root.appendChild(d);
    }
    if (full && (v.stock.length || v.discard.length)) {
      const s = el("details", "stock-order");
      s.appendChild(el("summary", null, "stock and discard pile"));
      s.appendChild(row(v.stock.map((c) => card(c, { small: true, down: true }))));
      s.appendChild(row(v.discard.map((c) => card(c, { small: true, down: true }))));
      root.appendChild(s);
    }
    if (v.round_scores.length) {
      const r = zone("finished rounds", "round-results");
      v.round_scores.forEach((pts, i) => r.appendChild(el("p", null,
        "Round " + (i + 1) + ": " + pts.join(" – "))));
      root.appendChild(r);
    }
  }

  function describe(move) {
    const a = move.action || {};
    return a.type === "play" ? "plays " + a.card : JSON.stringify(a);
  }

  window.ArenaReplay.register("crosswalk", { render, describe });
})();
