"""The server-drawn line chart of /me's ladder trajectory (arena/web/charts.py): its coordinates
stay inside the drawing, follow time and rating the right way, and a long series is thinned."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from arena.web.charts import HEIGHT, MAX_POINTS, WIDTH, thin, time_chart, time_ticks

START = datetime(2026, 12, 6, 3, 0, tzinfo=timezone.utc)


def points(ratings: list[float], minutes: float = 1.0) -> list[dict]:
    return [{"at": (START + timedelta(minutes=i * minutes)).isoformat(timespec="milliseconds"),
             "rating": r, "lo": r - 50, "hi": r + 50} for i, r in enumerate(ratings)]


def coords(path: str) -> list[tuple[float, float]]:
    return [tuple(map(float, p[1:].split(","))) for p in path.split()]


def test_a_series_is_drawn_left_to_right_in_time_and_higher_ratings_higher():
    ratings = [1500, 1540, 1480, 1600, 1590]
    chart = time_chart([{"label": "me@1", "points": points(ratings)}])
    drawn = coords(chart["series"][0]["path"])
    assert len(drawn) == len(ratings)
    xs, ys = [x for x, _ in drawn], [y for _, y in drawn]
    assert xs == sorted(xs) and xs[0] == chart["left"] and xs[-1] == chart["right"]
    assert all(chart["top"] <= y <= chart["bottom"] for y in ys)
    order = sorted(range(len(ratings)), key=lambda i: ratings[i])
    assert [ys[i] for i in order] == sorted(ys, reverse=True)  # the best rating has the least y
    band = [tuple(map(float, p.split(","))) for p in chart["series"][0]["band"].split()]
    assert len(band) == 2 * len(ratings)
    assert all(0 <= x <= WIDTH and 0 <= y <= HEIGHT for x, y in band)


def test_time_ticks_fall_on_whole_minutes_inside_the_span_and_are_labelled_in_utc():
    chart = time_chart([{"label": "a", "points": points([1500, 1510, 1520], minutes=20)}])
    labels = [t["label"] for t in chart["x_ticks"]]
    assert labels and all(re.fullmatch(r"\d\d:\d\d", label) for label in labels)
    assert labels[0] == START.strftime("%H:%M")
    ticks = time_ticks(START.timestamp(), START.timestamp() + 3 * 3600, 6)
    assert all(t % 60 == 0 for t in ticks) and len(ticks) <= 7
    # a ladder that published twice within a minute still has a labelled time axis
    quick = [{**p, "at": (START + timedelta(seconds=5 * i)).isoformat()}
             for i, p in enumerate(points([1500, 1520, 1510]))]
    labels = [t["label"] for t in time_chart([{"label": "a", "points": quick}])["x_ticks"]]
    assert len(labels) >= 2 and all(re.fullmatch(r"\d\d:\d\d:\d\d", label) for label in labels)


def test_one_point_is_a_dot_and_no_point_no_chart():
    chart = time_chart([{"label": "a", "points": points([1500])}, {"label": "b", "points": []}])
    assert len(chart["series"]) == 1 and chart["series"][0]["dot"] is not None
    assert time_chart([{"label": "a", "points": []}]) is None


def test_a_long_series_is_thinned_keeping_its_ends():
    many = list(range(MAX_POINTS * 7 + 3))
    kept = thin(many)
    assert len(kept) == MAX_POINTS and kept[0] == many[0] and kept[-1] == many[-1]
    assert kept == sorted(set(kept))
    assert thin(many[:10]) == many[:10]
