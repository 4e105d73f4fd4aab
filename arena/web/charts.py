"""Line charts drawn on the server as inline SVG (the author's ladder trajectory on /me): the
coordinates are computed here, the template only writes them out, so the chart shows without
JavaScript and within the pages' CSP (no inline style; the colours are app.css's s0-s5)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

WIDTH, HEIGHT = 760, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 40
MAX_SERIES = 6  # app.css has six series colours
MAX_POINTS = 300  # per series: a long ladder's thousands of snapshots, thinned evenly
# Seconds between the time axis's ticks: whole seconds, minutes, hours or days.
TIME_STEPS = (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 86400, 2 * 86400,
              7 * 86400, 30 * 86400)


def nice_ticks(lo: float, hi: float, count: int) -> list[float]:
    """Round-number ticks from `lo` to `hi`, about `count` of them (as app.js's charts)."""
    span = (hi - lo) or 1.0
    step0 = 10 ** math.floor(math.log10(span / count))
    step = next((m * step0 for m in (1, 2, 5, 10) if span / (m * step0) <= count), step0 * 10)
    out, value = [], math.ceil(lo / step) * step
    while value <= hi + 1e-9:
        out.append(value)
        value += step
    return out


def thin(points: list, limit: int = MAX_POINTS) -> list:
    """At most `limit` of `points`, evenly spaced, the first and the last always kept."""
    if len(points) <= limit:
        return points
    stride = (len(points) - 1) / (limit - 1)
    return [points[round(i * stride)] for i in range(limit)]


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def time_ticks(lo: float, hi: float, count: int) -> list[float]:
    """At most about `count` ticks between `lo` and `hi` (epoch seconds) at whole seconds,
    minutes, hours or days."""
    step = next((s for s in TIME_STEPS if (hi - lo) / s <= count), TIME_STEPS[-1])
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) // step) + 1)]


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc)


def time_chart(series: list[dict]) -> dict | None:
    """An SVG line chart of ratings over time: `series` is [{label, points: [{at (ISO stamp),
    rating, lo, hi}]}]; the result holds the drawing's coordinates (grid lines with their
    labels, in UTC, each series' path, band and legend class). None when there is no point."""
    series = [s for s in series if s["points"]][:MAX_SERIES]
    if not series:
        return None
    xs = [_seconds(p["at"]) for s in series for p in s["points"]]
    ys = [v for s in series for p in s["points"]
          for v in (p["rating"], p.get("lo"), p.get("hi")) if v is not None]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if y1 - y0 < 1:
        y0, y1 = y0 - 10, y1 + 10

    def sx(x: float) -> float:
        return round(LEFT + ((x - x0) / (x1 - x0) if x1 > x0 else 0.5) * (WIDTH - LEFT - RIGHT), 1)

    def sy(y: float) -> float:
        return round(TOP + (1 - (y - y0) / (y1 - y0)) * (HEIGHT - TOP - BOTTOM), 1)

    ticks = time_ticks(x0, x1, 6) if x1 > x0 else [x0]
    clock = "%H:%M:%S" if any(t % 60 for t in ticks) else "%H:%M"  # seconds only when they tell
    form = clock if _utc(x0).date() == _utc(x1).date() else "%m-%d " + clock
    x_ticks = [{"x": sx(t), "label": _utc(t).strftime(form)} for t in ticks]
    drawn = []
    for i, s in enumerate(series):
        points = thin(s["points"])
        coords = [(sx(_seconds(p["at"])), sy(p["rating"])) for p in points]
        band = [p for p in points if p.get("lo") is not None and p.get("hi") is not None]
        upper = [f"{sx(_seconds(p['at']))},{sy(p['hi'])}" for p in band]
        lower = [f"{sx(_seconds(p['at']))},{sy(p['lo'])}" for p in reversed(band)]
        drawn.append({"label": s["label"], "cls": f"s{i}",
                      "path": " ".join(f"{'L' if j else 'M'}{x},{y}"
                                       for j, (x, y) in enumerate(coords)),
                      "band": " ".join(upper + lower) if len(band) > 1 else None,
                      "dot": coords[0] if len(coords) == 1 else None})
    return {"width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "top": TOP,
            "bottom": HEIGHT - BOTTOM,
            "y_ticks": [{"y": sy(v), "label": str(round(v))} for v in nice_ticks(y0, y1, 5)],
            "x_ticks": x_ticks, "series": drawn}
