// Arena web: client-side table sorting, live updates and the rating-history chart.
// No framework and no build step. Page data comes from <script type="application/json"
// id="page-data"> (the CSP forbids inline scripts); every text is set with textContent.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const POLL_MS = 5000;

  function pageData() {
    const el = document.getElementById("page-data");
    if (!el) return {};
    try { return JSON.parse(el.textContent); } catch (e) { return {}; }
  }

  // -- sorting ------------------------------------------------------------------------------
  function cellValue(row, index) {
    const cell = row.cells[index];
    if (!cell) return "";
    return cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
  }

  function compare(a, b, numeric) {
    if (numeric) {
      const x = parseFloat(a), y = parseFloat(b);
      const xn = isNaN(x), yn = isNaN(y);
      if (xn || yn) return xn === yn ? 0 : (xn ? 1 : -1);  // blanks last
      return x - y;
    }
    return a.localeCompare(b, undefined, {numeric: true, sensitivity: "base"});
  }

  function sortBy(table, th) {
    const index = Array.prototype.indexOf.call(th.parentNode.children, th);
    const numeric = th.getAttribute("data-type") === "num";
    const ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th[aria-sort]").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const body = table.tBodies[0];
    if (!body) return;
    const rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      const c = compare(cellValue(r1, index), cellValue(r2, index), numeric);
      return ascending ? c : -c;
    });
    const frag = document.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r); });
    body.appendChild(frag);
  }

  function initSorting(root) {
    root.querySelectorAll("table.sortable").forEach(function (table) {
      if (table.dataset.sortReady) return;
      table.dataset.sortReady = "1";
      table.querySelectorAll("th[data-sort]").forEach(function (th) {
        th.tabIndex = 0;
        th.addEventListener("click", function () { sortBy(table, th); });
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th); }
        });
      });
    });
  }

  // A re-rendered table keeps the order the reader chose.
  function sortState(root) {
    const state = {};
    root.querySelectorAll("table.sortable[id] th[aria-sort]").forEach(function (th) {
      state[th.closest("table").id] = [th.getAttribute("data-sort"), th.getAttribute("aria-sort")];
    });
    return state;
  }

  function restoreSort(root, state) {
    Object.keys(state).forEach(function (id) {
      const table = document.getElementById(id);
      if (!table) return;
      const th = table.querySelector('th[data-sort="' + CSS.escape(state[id][0]) + '"]');
      if (!th) return;
      // sortBy toggles: start from the opposite state to land on the saved one.
      th.setAttribute("aria-sort", state[id][1] === "ascending" ? "descending" : "ascending");
      sortBy(table, th);
    });
  }

  // -- live updates -------------------------------------------------------------------------
  // Poll the page's JSON; when its stamp changes, fetch the page and swap its [data-live] parts.
  function startLive(data) {
    if (!data.live || !data.api) return;
    const badge = document.getElementById("live-badge");
    let stamp = data.stamp;
    let busy = false;

    async function refresh() {
      const response = await fetch(location.href, {headers: {"Accept": "text/html"}});
      if (!response.ok) return;
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      const state = sortState(document);
      document.querySelectorAll("[data-live][id]").forEach(function (el) {
        const fresh = doc.getElementById(el.id);
        if (fresh) el.replaceWith(document.importNode(fresh, true));
      });
      const next = doc.getElementById("page-data");
      if (next) document.getElementById("page-data").textContent = next.textContent;
      initSorting(document);
      restoreSort(document, state);
      drawCharts(pageData());
    }

    async function poll() {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const response = await fetch(data.api, {headers: {"Accept": "application/json"}});
        if (!response.ok) throw new Error(String(response.status));
        const fresh = await response.json();
        if (fresh.stamp !== stamp) {
          stamp = fresh.stamp;
          await refresh();
        }
        if (badge) {
          badge.classList.toggle("hidden", false);
          badge.classList.toggle("stale", !fresh.live);
          badge.textContent = fresh.live ? "live" : "stopped";
        }
        if (!fresh.live) clearInterval(timer);
      } catch (e) {
        if (badge) { badge.classList.add("stale"); badge.textContent = "offline"; }
      } finally {
        busy = false;
      }
    }
    const timer = setInterval(poll, POLL_MS);
  }

  // -- rating-history chart -----------------------------------------------------------------
  function el(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // Round-number ticks; minStep 1 keeps counts (games, tables) whole.
  function niceTicks(lo, hi, count, minStep) {
    const span = hi - lo || 1;
    const step0 = Math.pow(10, Math.floor(Math.log10(span / count)));
    const step = Math.max(minStep || 0, [1, 2, 5, 10].map(function (m) { return m * step0; })
      .find(function (s) { return span / s <= count; }) || step0 * 10);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(v);
    return out;
  }

  // series: [{label, x, points: [[x, rating, lo, hi], ...]}]
  function drawChart(container, series) {
    container.textContent = "";
    const W = 760, H = 260, L = 48, R = 12, T = 12, B = 40;
    let xs = [], ys = [];
    series.forEach(function (s) {
      s.points.forEach(function (p) {
        xs.push(p[0]); ys.push(p[1]);
        if (p[2] !== null && p[3] !== null) { ys.push(p[2]); ys.push(p[3]); }
      });
    });
    if (!xs.length) return;
    const x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    let y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    if (y1 - y0 < 1) { y0 -= 10; y1 += 10; }
    const sx = function (x) { return L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - R); };
    const sy = function (y) { return T + (1 - (y - y0) / (y1 - y0)) * (H - T - B); };
    const svg = el("svg", {viewBox: "0 0 " + W + " " + H, role: "img"});
    svg.appendChild(el("title", {}, "rating history"));
    niceTicks(y0, y1, 5).forEach(function (v) {
      svg.appendChild(el("line", {class: "grid", x1: L, x2: W - R, y1: sy(v), y2: sy(v)}));
      svg.appendChild(el("text", {class: "tick", x: L - 6, y: sy(v) + 4, "text-anchor": "end"},
                         String(Math.round(v))));
    });
    svg.appendChild(el("line", {class: "axis", x1: L, x2: L, y1: T, y2: H - B}));
    svg.appendChild(el("line", {class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B}));
    niceTicks(x0, x1, 6, 1).forEach(function (v) {
      svg.appendChild(el("text", {class: "tick", x: sx(v), y: H - B + 14, "text-anchor": "middle"},
                         String(Math.round(v))));
    });
    series.forEach(function (s, i) {
      const cls = "s" + (i % 6);
      const band = s.points.filter(function (p) { return p[2] !== null && p[3] !== null; });
      if (band.length > 1) {
        const upper = band.map(function (p) { return sx(p[0]) + "," + sy(p[3]); });
        const lower = band.slice().reverse().map(function (p) { return sx(p[0]) + "," + sy(p[2]); });
        svg.appendChild(el("polygon", {class: "band " + cls, points: upper.concat(lower).join(" ")}));
      }
      const d = s.points.map(function (p, j) {
        return (j ? "L" : "M") + sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1);
      }).join(" ");
      svg.appendChild(el("path", {class: "series " + cls, d: d}));
      if (s.points.length === 1) {
        svg.appendChild(el("circle", {class: cls, cx: sx(s.points[0][0]), cy: sy(s.points[0][1]), r: 3}));
      }
    });
    container.appendChild(svg);
  }

  function drawCharts(data) {
    if (!data.charts) return;
    document.querySelectorAll(".chart[data-chart]").forEach(function (node) {
      const series = data.charts[parseInt(node.getAttribute("data-chart"), 10)];
      if (series && series.length) drawChart(node, series.slice(0, 6));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    const data = pageData();
    initSorting(document);
    drawCharts(data);
    startLive(data);
  });
  window.arena = {sortBy: sortBy, drawChart: drawChart};
})();
