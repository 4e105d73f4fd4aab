"""What the public pages of `arena server` show of whom: a game is public once it is older than
the replay delay (`--replay-delay`; the authors of its bots and the organisers see it at once),
and a submitted bot's version only once its check is clean (an organiser's bots always).

`arena serve` has no such rules: its app is created without a `Visibility`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from arena.errors import ConfigError, NotFound
from arena.games import game_names
from arena.server.authors import Author
from arena.store import Store
from arena.store.public import author_played, authored_versions, game_recorded_at, games_after

DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|min|h|d)?")
UNIT_SECONDS = {None: 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
# A version an author submitted is hidden until its check is clean: received or being checked
# (pending) or failed (rejected).
HIDDEN_STATUSES = ("pending", "rejected")


def parse_duration(text: str) -> float:
    """Seconds of a duration such as 0, 90s, 10m, 1.5h or 2d; ConfigError naming the text."""
    match = DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise ConfigError(f"bad duration {text[:40]!r}: write a number with s, m, h or d "
                          f"(e.g. 0, 90s, 10m, 1h, 2d)")
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)]


def describe(seconds: float) -> str:
    """A delay in words for a message: '10 min', '1 h', '90 s'."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{seconds:g} s"


def cutoff(delay: float, moment: datetime | None = None) -> str:
    """The stamp before which (inclusive) a game is public: `moment` (now) minus the delay, in
    the format of the store's timestamps, so it compares with them as a string."""
    moment = moment or datetime.now(timezone.utc)
    return (moment - timedelta(seconds=delay)).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Visibility:
    """The server's public-page rules; `viewer_of(request)` gives the signed-in author or None."""

    replay_delay: float = 0.0  # seconds
    viewer_of: Callable = lambda request: None

    def sees_everything(self, viewer: Author | None) -> bool:
        """Whether the viewer (an organiser) is exempt from every rule."""
        return viewer is not None and viewer.organiser

    # -- games ---------------------------------------------------------------------------------
    def _young(self, recorded_at: str | None, moment: datetime | None = None) -> bool:
        """Whether a game recorded at `recorded_at` is younger than the delay (not yet public);
        False for none (an unknown game is not found instead)."""
        return (self.replay_delay > 0 and bool(recorded_at)
                and recorded_at > cutoff(self.replay_delay, moment))

    def _hidden(self, store: Store, game_id: str, recorded_at: str | None, viewer: Author | None,
                moment: datetime | None = None) -> bool:
        if self.sees_everything(viewer) or not self._young(recorded_at, moment):
            return False
        return viewer is None or not author_played(store, game_id, viewer.id)

    def game_hidden(self, store: Store, game_id: str, viewer: Author | None,
                    moment: datetime | None = None) -> bool:
        """Whether game `game_id` is still hidden from `viewer`: younger than the delay and not
        one of the viewer's bots' games."""
        return self._hidden(store, game_id, game_recorded_at(store, game_id), viewer, moment)

    def check_game(self, request, store: Store, game_id: str, recorded_at: str) -> bool:
        """NotFound (404) saying the game is not yet public when it is hidden from the request;
        else whether it is shown early (to its authors or an organiser: never to be cached).
        `recorded_at`: the game's, which the caller has read."""
        if self._hidden(store, game_id, recorded_at, self.viewer_of(request)):
            raise NotFound(f"game {game_id} is not yet public: replays are shown "
                           f"{describe(self.replay_delay)} after the game (its bots' authors "
                           f"see it at once after signing in)")
        return self._young(recorded_at)

    def hidden_games(self, store: Store, viewer: Author | None,
                     moment: datetime | None = None) -> frozenset[str]:
        """The ids of every game still hidden from `viewer` (the recent ones, through the index
        on game and recorded_at, one game kind at a time)."""
        if self.replay_delay <= 0 or self.sees_everything(viewer):
            return frozenset()
        since = cutoff(self.replay_delay, moment)
        out: set[str] = set()
        for game in game_names():
            out.update(games_after(store, game, since, None if viewer is None else viewer.id))
        return frozenset(out)

    # -- versions ------------------------------------------------------------------------------
    def hidden_versions(self, store: Store, viewer: Author | None) -> set[tuple[str, str]]:
        """(name, version) of each submitted version not yet clean, but the viewer's own."""
        if self.sees_everything(viewer):
            return set()
        rows = authored_versions(store, HIDDEN_STATUSES)
        return {(name, version) for name, version, author_id in rows
                if viewer is None or author_id != viewer.id}

    # -- a page --------------------------------------------------------------------------------
    def filter_page(self, request, store: Store, kind: str, page: dict) -> dict:
        """The page `kind` (the name of its arena.web.data function) as the request may see it:
        hidden versions left out (NotFound when a bot page is left with none) and
        `hidden_games`, the ids of still-hidden games on it, which are shown without a link."""
        viewer = self.viewer_of(request)
        versions = self.hidden_versions(store, viewer)
        if versions and kind == "bots":
            page = _without_hidden_bots(store, page, versions)
        elif versions and kind == "bot":
            page = _without_hidden_versions(page, versions)
        hidden = self.hidden_games(store, viewer)
        if hidden:
            page = {**page, "hidden_games": sorted(_game_ids_in(page) & hidden)}
        return page


def _without_hidden_bots(store: Store, page: dict, hidden: set[tuple[str, str]]) -> dict:
    counts: dict[str, int] = {}
    for name, _ in hidden:
        counts[name] = counts.get(name, 0) + 1
    rows = []
    for row in page["bots"]:
        left = row["versions"] - counts.get(row["name"], 0)
        if left > 0:
            rows.append({**row, "versions": left} if row["name"] in counts else row)
    return {**page, "bots": rows}


def _without_hidden_versions(page: dict, hidden: set[tuple[str, str]]) -> dict:
    name = page["name"]
    versions = [v for v in page["versions"] if (v["name"], v["version"]) not in hidden]
    if not versions:
        if page.get("version") is not None and any(n == name for n, _ in hidden):
            raise NotFound(f"bot {name[:80]!r} has no version {page['version'][:40]!r}")
        raise NotFound(f"no bot named {name[:80]!r}")
    return {**page, "versions": versions,
            "all_versions": [v for v in page["all_versions"] if (name, v) not in hidden]}


def _game_ids_in(value) -> set[str]:
    """Every string of `value` (a page's nested dicts and lists) that may be a game id: the
    values of its `id`, `game_id` and `game_ids` keys."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if key in ("id", "game_id") and isinstance(sub, str):
                    found.add(sub)
                elif key == "game_ids" and isinstance(sub, list):
                    found.update(x for x in sub if isinstance(x, str))
                elif isinstance(sub, (dict, list)):
                    stack.append(sub)
        elif isinstance(item, list):
            stack.extend(x for x in item if isinstance(x, (dict, list)))
    return found
