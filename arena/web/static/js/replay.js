// The replay viewer of `arena serve`: steps through a stored game frame by frame.
//
// Page data comes from <script type="application/json" id="replay-meta"> (the CSP forbids inline
// scripts) and from GET /api/games/{id}/replay?view=... . Each game draws its table with a
// renderer in /static/js/games/<game>.js, registered through ArenaReplay.register.
// Every piece of stored text (bot names, actions) reaches the page through textContent only.
// The server draws the final position and the move list with the bots' log lines (the page reads
// without JavaScript); this script shows the controls, steps through the game, marks the current
// step's rows in that list and copies their log lines beside the table.
"use strict";

(function () {
  const renderers = {};
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const COLOUR_NAMES = { R: "red", B: "blue", G: "green", Y: "yellow" };

  // -- helpers shared by the game renderers ---------------------------------------------------
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function add(parent, ...children) {
    for (const child of children) if (child) parent.appendChild(child);
    return parent;
  }

  // A face-up card. `code` is the engine's card string ("TD", "JK", "R10"); `opts.last` marks the
  // card of the move just applied; `opts.down` marks a card that lies face down at the table
  // (drawn face up only in the full view); `opts.small` for piles and histories.
  function card(code, opts) {
    opts = opts || {};
    const node = el("span", "card");
    node.dataset.card = code;
    const parsed = parseCard(code);
    node.classList.add(parsed.cls);
    node.title = parsed.title;
    add(node, el("span", "rank", parsed.rank), el("span", "suit", parsed.suit));
    if (opts.small) node.classList.add("small");
    if (opts.down) node.classList.add("face-down-known");
    if (opts.last || (opts.lastSet && opts.lastSet.has(code))) node.classList.add("last-move");
    if (opts.label !== undefined) node.appendChild(el("span", "slot-label", opts.label));
    return node;
  }

  function parseCard(code) {
    code = String(code);
    if (code === "JK") return { rank: "★", suit: "Joker", cls: "joker", title: "joker" };
    const colour = code[0];
    if (COLOUR_NAMES[colour] && /^\d+$/.test(code.slice(1))) {
      return { rank: code.slice(1), suit: "", cls: "colour-" + COLOUR_NAMES[colour],
               title: COLOUR_NAMES[colour] + " " + code.slice(1) };
    }
    const rank = code.slice(0, -1) === "T" ? "10" : code.slice(0, -1);
    const suit = code.slice(-1);
    const red = suit === "H" || suit === "D";
    return { rank: rank, suit: SUITS[suit] || suit, cls: red ? "red" : "black", title: code };
  }

  // A face-down card: its identity is not on the page at all.
  function back(opts) {
    opts = opts || {};
    const node = el("span", "card back");
    if (opts.small) node.classList.add("small");
    if (opts.last) node.classList.add("last-move");
    if (opts.label !== undefined) node.appendChild(el("span", "slot-label", opts.label));
    return node;
  }

  // A face-down pile drawn as one back with its size.
  function stack(count, label, opts) {
    opts = opts || {};
    const node = el("div", "stack");
    node.appendChild(count > 0 ? back(opts) : el("span", "card empty"));
    node.appendChild(el("span", "stack-count", (label ? label + " " : "") + count));
    return node;
  }

  function row(cards, cls) {
    return add(el("div", "cards " + (cls || "")), ...cards);
  }

  function zone(title, cls) {
    const node = el("section", "zone " + (cls || ""));
    if (title) node.appendChild(el("h3", "zone-title", title));
    return node;
  }

  function seatName(ctx, seat) {
    const s = ctx.meta.seats[seat];
    return "seat " + seat + (s ? " · " + s.bot : "");
  }

  const helpers = { el, add, card, back, stack, row, zone, seatName, parseCard };

  // -- the viewer -----------------------------------------------------------------------------
  function register(game, renderer) {
    renderers[game] = renderer;
  }

  function start() {
    const metaNode = document.getElementById("replay-meta");
    if (!metaNode) return;
    const meta = JSON.parse(metaNode.textContent);
    // The path the server is mounted at behind a proxy (--root-path), from the page's data.
    const pageNode = document.getElementById("page-data");
    let root = "";
    try { root = (pageNode && JSON.parse(pageNode.textContent).root) || ""; } catch (e) { root = ""; }
    const $ = (id) => document.getElementById(id);
    const ui = {
      table: $("table"), counter: $("counter"), slider: $("step"), view: $("view"),
      play: $("play"), status: $("status"), scores: $("scores"), moves: $("last-moves"),
      logs: $("step-logs"), list: $("move-list"),
    };
    $("replay-controls").hidden = false;
    if ($("replay-keys")) $("replay-keys").hidden = false;
    const rows = ui.list ? Array.from(ui.list.querySelectorAll("tr.move-row")) : [];
    for (const tr of rows) {
      tr.addEventListener("click", () => { pause(); show(Number(tr.dataset.step)); });
    }
    const renderer = renderers[meta.game];
    const cache = {};
    // `view` is the view whose frames `data` holds (what is drawn); `wanted`, the one chosen
    // last, which may still be loading: a step shown meanwhile draws the old view's frames.
    const state = { data: null, step: 0, timer: null, view: "full", wanted: "full" };

    for (const view of meta.views) {
      const seat = view === "full" ? null : Number(view.split(":")[1]);
      const label = seat === null ? "Full view (all cards)" : seatName({ meta }, seat);
      const option = el("option", null, label);
      option.value = view;
      ui.view.appendChild(option);
    }
    // The view and step live in the URL's fragment (#view=seat:1&step=12), so a position can
    // be linked to; ?view= works too.
    const linked = new URLSearchParams(location.hash.slice(1));
    const wanted = linked.get("view") || new URLSearchParams(location.search).get("view");
    if (wanted && meta.views.includes(wanted)) ui.view.value = wanted;
    if (/^\d+$/.test(linked.get("step") || "")) state.step = Number(linked.get("step"));

    function load(view) {
      state.wanted = view;
      ui.status.textContent = "Loading…";
      if (!cache[view]) {
        const url = root + "/api/games/" + encodeURIComponent(meta.id) + "/replay?view=" +
          encodeURIComponent(view);
        cache[view] = fetch(url, { headers: { Accept: "application/json" } }).then((r) => {
          if (!r.ok) throw new Error("HTTP " + r.status);
          return r.json();
        });
      }
      return cache[view].then((data) => {
        if (state.wanted !== view) return;
        state.view = view;
        state.data = data;
        ui.slider.max = String(data.frames.length - 1);
        ui.status.textContent = "";
        show(Math.min(state.step, data.frames.length - 1));
      }).catch((err) => {
        delete cache[view];
        ui.status.textContent = "Could not load the replay: " + err.message;
      });
    }

    function last() {
      return state.data ? state.data.frames.length - 1 : 0;
    }

    function show(step) {
      if (!state.data) return;
      step = Math.max(0, Math.min(last(), step));
      state.step = step;
      const frames = state.data.frames;
      const frame = frames[step];
      const ctx = {
        meta, frame, prev: step > 0 ? frames[step - 1] : null, step, view: state.view,
        seat: state.view === "full" ? null : Number(state.view.split(":")[1]),
        h: helpers,
      };
      ui.slider.value = String(step);
      ui.slider.setAttribute("aria-valuetext", "step " + step + " of " + last());
      ui.counter.textContent = "Step " + step + " / " + last();
      ui.table.dataset.step = String(step);
      history.replaceState(null, "", "#view=" + encodeURIComponent(state.view) + "&step=" + step);
      ui.table.replaceChildren();
      if (renderer) {
        renderer.render(ui.table, frame, ctx);
      } else {
        ui.table.appendChild(el("p", "warning", "No renderer for " + meta.game));
      }
      renderScores(frame, ctx);
      renderMoves(frame, ctx);
      renderLogs(step);
      if (step >= last()) pause();
    }

    function renderScores(frame, ctx) {
      ui.scores.replaceChildren();
      meta.seats.forEach((s, seat) => {
        const item = el("li", "score-seat");
        if (frame.to_act.includes(seat)) item.classList.add("to-act");
        if (frame.moves.some((m) => m.seat === seat)) item.classList.add("moved");
        if (ctx.seat === seat) item.classList.add("viewer");
        add(item, el("span", "score-name", seatName(ctx, seat)),
            el("span", "score-value", formatScore(frame.scores[seat])));
        if (frame.to_act.includes(seat)) item.appendChild(el("span", "badge", "to act"));
        ui.scores.appendChild(item);
      });
    }

    function renderMoves(frame, ctx) {
      ui.moves.replaceChildren();
      if (!frame.moves.length) {
        ui.moves.appendChild(el("li", "muted", ctx.step === 0 ? "The deal: no move yet." : "—"));
      }
      for (const move of frame.moves) {
        const text = renderer && renderer.describe ? renderer.describe(move, ctx)
          : JSON.stringify(move.action);
        const item = el("li", "move last-move");
        add(item, el("span", "move-seat", seatName(ctx, move.seat)), el("span", "move-text", text));
        ui.moves.appendChild(item);
      }
      if (ctx.step === last() && meta.termination && meta.termination !== "normal") {
        const who = meta.culprit_seat !== null && meta.culprit_seat !== undefined
          ? seatName(ctx, meta.culprit_seat) + ": " : "";
        ui.moves.appendChild(el("li", "ending", "Game ended: " + who + meta.termination +
          (meta.detail ? " (" + meta.detail + ")" : "")));
      }
    }

    // The rows of this step in the server's move list are marked; their log lines (what each
    // bot wrote while it was asked for the move just applied) are copied beside the table.
    function renderLogs(step) {
      if (!ui.logs) return;
      ui.logs.replaceChildren();
      let lines = 0;
      for (const tr of rows) {
        const here = Number(tr.dataset.step) === step;
        tr.classList.toggle("current", here);
        if (!here) continue;
        for (const line of tr.querySelectorAll(".log-line")) {
          const item = el("li", line.className);
          item.dataset.seat = line.dataset.seat;
          add(item, el("span", "log-bot", line.querySelector(".log-bot").textContent),
              el("span", "log-text", line.querySelector(".log-text").textContent));
          ui.logs.appendChild(item);
          lines += 1;
        }
      }
      if (!lines) ui.logs.appendChild(el("li", "muted", "No log line at this step."));
    }

    function formatScore(value) {
      return Number.isInteger(value) ? String(value) : Number(value).toFixed(1);
    }

    function play() {
      if (state.timer) return pause();
      if (state.step >= last()) show(0);
      ui.play.textContent = "❚❚";
      ui.play.setAttribute("aria-label", "pause");
      ui.play.classList.add("playing");
      state.timer = setInterval(() => show(state.step + 1), 700);
    }

    function pause() {
      if (state.timer) clearInterval(state.timer);
      state.timer = null;
      ui.play.textContent = "▶";
      ui.play.setAttribute("aria-label", "play");
      ui.play.classList.remove("playing");
    }

    $("first").addEventListener("click", () => { pause(); show(0); });
    $("prev").addEventListener("click", () => { pause(); show(state.step - 1); });
    $("next").addEventListener("click", () => { pause(); show(state.step + 1); });
    $("last").addEventListener("click", () => { pause(); show(last()); });
    ui.play.addEventListener("click", play);
    ui.slider.addEventListener("input", () => { pause(); show(Number(ui.slider.value)); });
    ui.view.addEventListener("change", () => {
      // Give the arrow keys back to the replay once a view is chosen.
      ui.view.blur();
      load(ui.view.value);
    });

    document.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const target = event.target;
      // The slider and the view menu handle their own arrow keys.
      const own = target === ui.slider || target === ui.view;
      const keys = {
        ArrowLeft: () => { pause(); show(state.step - 1); },
        ArrowRight: () => { pause(); show(state.step + 1); },
        Home: () => { pause(); show(0); },
        End: () => { pause(); show(last()); },
        " ": play,
      };
      const action = keys[event.key];
      if (!action || (own && event.key !== " ")) return;
      event.preventDefault();
      action();
    });
    // A focused button would also "click" on the space key's release: the keydown above already
    // toggled play, so that click is cancelled.
    document.addEventListener("keyup", (event) => {
      if (event.key === " " && event.target.tagName === "BUTTON") event.preventDefault();
    });

    load(ui.view.value);
  }

  window.ArenaReplay = { register, helpers };
  document.addEventListener("DOMContentLoaded", start);
})();
