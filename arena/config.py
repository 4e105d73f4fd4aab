"""Tournament configuration: TOML files validated into pydantic models, and bot manifests."""

from __future__ import annotations

import importlib
import os
import re
import stat
import tomllib
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from arena.errors import ConfigError
from arena.games import get_game, make_options
from arena.players.base import BotSpec
from arena.players.launch import SANDBOXES
from arena.players.limits import LimitOverrides, as_overrides, resolve_limits
from arena.protocol import DEFAULT_GRACE_MS, TimeControl
from arena.ratings.defaults import DEFAULT_K, DEFAULT_RATING, DEFAULT_SAMPLES

# Names are shown in terminals, web pages and CSV files and compared by eye: ASCII only, so a
# zero-width space, a right-to-left override or a Cyrillic look-alike cannot pass for another bot.
NAME_MAX = 64
BOT_NAME_RULE = "at most 64 characters, only ASCII letters, digits and _-.+, starting with a letter or digit"
_BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
_ASCII_GRAPHIC = re.compile(r"[!-~]*")  # printable ASCII without the space
TITLE_MAX = 200  # a tournament's or ladder's name
MANIFEST_MAX_BYTES = 64 * 1024
SHOWN_MAX = 80  # characters of an untrusted value quoted in an error message


def shown(value: object, limit: int = SHOWN_MAX) -> str:
    """An untrusted value for a one-line message: ascii() (look-alikes visible), cut to `limit`."""
    text = ascii(value)
    if len(text) > limit:
        size = f"{len(value)} characters" if isinstance(value, str) else "cut"
        text = f"{text[:limit]}... ({size})"
    return text


def check_bot_name(name: str, what: str = "bot name") -> str:
    """`name` if it is a valid bot name (ASCII letters, digits, _-.+; at most 64), else ValueError."""
    if len(name) > NAME_MAX or not _BOT_NAME.fullmatch(name):
        raise ValueError(f"{what} {shown(name)}: {BOT_NAME_RULE}")
    return name


def check_label(value: str, what: str, limit: int = NAME_MAX) -> str:
    """`value` if it is printable ASCII without spaces and at most `limit` long, else ValueError."""
    if len(value) > limit or not _ASCII_GRAPHIC.fullmatch(value):
        raise ValueError(f"{what} {shown(value)}: at most {limit} characters, printable ASCII "
                         f"without spaces")
    return value


def check_title(value: str, what: str = "name") -> str:
    """`value` if it is a fit tournament name: at most 200 characters, no control or format characters."""
    if not value or len(value) > TITLE_MAX or any(
            unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in value):
        raise ValueError(f"{what} {shown(value)}: 1 to {TITLE_MAX} characters without control or "
                         f"invisible formatting characters")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Arg = Annotated[str, Field(max_length=4096)]


class BotEntry(_Strict):
    """A bot in a tournament: a manifest file, a command, or an in-process Python factory."""

    name: str | None = Field(default=None, description="Name in this tournament (default: manifest's).")
    manifest: str | None = Field(default=None, description="Path of a bot manifest (TOML).")
    command: list[str] | None = Field(default=None, description="Command line of a subprocess bot.")
    workdir: str | None = Field(default=None, description="Working directory of the command.")
    args: list[str] = Field(default_factory=list, description="Extra arguments appended to the command.")
    python: str | None = Field(default=None, description="`module:attr` of an in-process bot factory.")
    bot: str | None = Field(default=None, description="A registry bot: `name` (latest) or `name@version`.")
    version: str | None = None
    limits: LimitOverrides | None = Field(default=None, description="This bot's limits (over the manifest's).")

    @field_validator("name")
    @classmethod
    def _name(cls, name: str | None) -> str | None:
        # The organiser's own names: any printable ASCII (a registry name is stricter) but `@`,
        # which Arena writes between a name and a version: `x@2` must never pass for bot x's 2.
        if name is not None and "@" in name:
            raise ValueError(f"bot name {shown(name)}: '@' is kept for name@version (two versions "
                             f"of one bot are named so by themselves)")
        return name if name is None else check_label(name, "bot name")

    @field_validator("version")
    @classmethod
    def _version(cls, version: str | None) -> str | None:
        return version if version is None else check_label(version, "version")

    @model_validator(mode="after")
    def _one_source(self) -> BotEntry:
        sources = [s for s in ("manifest", "command", "python", "bot") if getattr(self, s)]
        if len(sources) != 1:
            raise ValueError(f"give exactly one of manifest, command, python or bot (got {sources or 'none'})")
        if self.bot and self.version:
            raise ValueError("a registry bot takes its version from `bot = \"name@version\"`")
        if not self.manifest and not self.bot and not self.name:
            raise ValueError("a bot given by command or python needs a name")
        return self


class Manifest(_Strict):
    """A bot manifest (`bots/*.toml`): how to start the bot."""

    name: str
    version: str = ""
    command: list[Arg] = Field(min_length=1, max_length=256)
    workdir: str = Field(default=".", max_length=4096)
    language: str = Field(default="", max_length=64)
    games: list[Annotated[str, Field(max_length=64)]] = Field(default_factory=list, max_length=64)
    description: str = Field(default="", max_length=2000)
    author: str = Field(default="", max_length=200)
    limits: LimitOverrides | None = Field(default=None, description="Limits the bot needs (over the tournament's).")

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        return check_bot_name(name)

    @field_validator("version")
    @classmethod
    def _version(cls, version: str) -> str:
        return check_label(version, "version")


class TimeConfig(_Strict):
    """Time limits in milliseconds: startup, per move, a per-game bank, and the runner's grace."""

    startup_ms: int = Field(default=10_000, gt=0, description="Time from process start to `ready`.")
    move_ms: int = Field(default=2_000, gt=0, description="Time for each action.")
    bank_ms: int = Field(default=0, ge=0,
                         description="Per bot and game: time over move_ms comes out of it (0: no bank).")
    grace_ms: int = Field(default=DEFAULT_GRACE_MS, ge=0, le=10_000,
                          description="Margin added to every deadline for scheduling noise.")


class RatingConfig(_Strict):
    """Rating settings."""

    k: float = Field(default=DEFAULT_K, gt=0, description="Elo's K factor.")
    initial: float = Field(default=DEFAULT_RATING,
                           description="Elo's starting rating and the fitted pool's average.")
    samples: int = Field(default=DEFAULT_SAMPLES, ge=0, le=10_000,
                         description="Bootstrap samples for the 95 % intervals (0: none).")
    anchor: str | None = Field(default=None, description="A bot whose fitted rating is fixed at "
                               "`initial` (default: the pool's average is).")


class SprtConfig(_Strict):
    """A gauntlet's stop rule: each candidate stops once fishtest's SPRT decides against the field."""

    elo0: float = Field(default=0.0, description="H0: the candidate is this much stronger (Elo).")
    elo1: float = Field(default=5.0, description="H1: the candidate is this much stronger (Elo).")
    alpha: float = Field(default=0.05, gt=0, lt=0.5, description="False-positive rate.")
    beta: float = Field(default=0.05, gt=0, lt=0.5, description="False-negative rate.")
    model: str = Field(default="logistic", description="logistic or normalized.")

    @model_validator(mode="after")
    def _bounds(self) -> SprtConfig:
        if self.elo1 <= self.elo0:
            raise ValueError(f"elo1 ({self.elo1}) must be above elo0 ({self.elo0})")
        if self.model not in ("logistic", "normalized"):
            raise ValueError(f"unknown model {self.model!r} (choose logistic or normalized)")
        return self

    def as_tuple(self) -> tuple:
        """(elo0, elo1, alpha, beta, model), as the scheduler takes it."""
        return (self.elo0, self.elo1, self.alpha, self.beta, self.model)


STAGE_KEYS = frozenset({
    "game", "format", "seats", "deals", "games_per_pairing", "duplicate", "cycles", "rounds",
    "candidates", "seeding", "tiebreaks", "bye_points", "max_failures", "options", "sprt", "weight",
})
FORMATS = ("round_robin", "swiss", "gauntlet")


class StageConfig(_Strict):
    """One stage of an event: a game, its format, seats, deals and options."""

    name: str | None = Field(default=None, description="Stage name (default: the game's name).")
    game: str
    format: str = Field(default="round_robin", description="round_robin, swiss or gauntlet.")
    seats: int = Field(default=2, ge=2, le=4, description="Seats per table.")
    deals: int = Field(default=2, ge=1, description="Deals per match.")
    games_per_pairing: int | None = Field(
        default=None, ge=1,
        description="Games per match, instead of `deals`: deals × seats with duplicate deals.",
    )
    duplicate: bool = Field(default=True, description="Play each deal once per seat rotation.")
    cycles: int = Field(default=1, ge=1, description="Round-robin or gauntlet repetitions.")
    rounds: int | None = Field(default=None, ge=1, description="Swiss rounds (default ⌈log2 N⌉+1).")
    candidates: list[str] = Field(default_factory=list, description="Gauntlet: bots that play the field.")
    seeding: list[str] = Field(default_factory=list, description="Swiss: initial order, strongest first.")
    tiebreaks: list[str] | None = Field(default=None, description="Tie-break order (default per format).")
    bye_points: float = Field(default=1.0, ge=0, description="Match points of a bye.")
    sprt: SprtConfig | None = Field(
        default=None, description="Gauntlet of 2 seats: stop each candidate once the SPRT decides.")
    max_failures: int = Field(default=3, ge=1, description="Failures of a bot before it forfeits the rest of a match.")
    weight: float = Field(default=1.0, ge=0, allow_inf_nan=False, strict=True, description=(
        "Event: the stage's weight in the overall standing (a bot's share of the stage's "
        "maximum times this; see arena/standings.py)."))
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _games_per_pairing(self) -> StageConfig:
        if self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r} (choose {', '.join(FORMATS)})")
        if self.games_per_pairing is not None:
            if "deals" in self.model_fields_set:
                raise ValueError("give deals or games_per_pairing, not both")
            per_deal = self.seats if self.duplicate else 1
            if self.games_per_pairing % per_deal:
                raise ValueError(
                    f"games_per_pairing={self.games_per_pairing} is not a multiple of {per_deal} "
                    f"(each deal is played once per seat rotation)"
                )
            self.deals = self.games_per_pairing // per_deal
        if self.sprt is not None and (self.format != "gauntlet" or self.seats != 2):
            raise ValueError(f"sprt: only a 2-seat gauntlet takes an SPRT stop rule "
                             f"(format {self.format}, {self.seats} seats)")
        if self.name is None:
            self.name = self.game
        return self


class TournamentConfig(_Strict):
    """A tournament: one stage (keys at the top level) or an event of several `[[stages]]`.

    In an event, stage keys given at the top level are defaults for every stage.
    """

    name: str
    seed: int = 0
    match_attempts: int = Field(default=3, ge=1, le=20,
                                description="Attempts of a match that fails by a runner error.")
    pin_cpu: bool = Field(default=True, description="Pin each match and its bots to one core.")
    sandbox: str = Field(default="auto", description="auto (bwrap when it works here), none or bwrap.")
    bot_user: Literal["seat", "bot", "runner"] = Field(
        default="seat", description="As root: a uid per running bot (seat), per program (bot), "
                                    "or root itself (runner).")
    allow_unconfined: bool = Field(default=False, description="As root in plain mode with nothing "
                                   "to bound the bots (no cgroups, no tmpfs): run anyway.")
    limits: LimitOverrides | None = Field(default=None, description="Resource limits of every bot.")
    time: TimeConfig = Field(default_factory=TimeConfig)
    rating: RatingConfig = Field(default_factory=RatingConfig)
    bots: list[BotEntry] = Field(min_length=2)
    stages: list[StageConfig] = Field(min_length=1)
    event: bool = Field(default=False, description="Set when the config has [[stages]].")

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        return check_title(name, "tournament name")

    @model_validator(mode="before")
    @classmethod
    def _stages_from_top_level(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        raw = dict(raw)
        if "event" in raw:
            raise ValueError("event is derived from [[stages]]; do not set it")
        defaults = {k: raw.pop(k) for k in list(raw) if k in STAGE_KEYS}
        if "stages" in raw:
            stages = raw["stages"]
            if not isinstance(stages, list) or not stages:
                raise ValueError("stages: give at least one [[stages]] table")
            raw["stages"] = [{**defaults, **s} if isinstance(s, dict) else s for s in stages]
            raw["event"] = True
        else:
            raw["stages"] = [defaults]
        return raw

    @model_validator(mode="after")
    def _known_sandbox(self) -> TournamentConfig:
        if self.sandbox not in SANDBOXES:
            raise ValueError(f"sandbox must be one of {', '.join(SANDBOXES)}")
        return self

    @model_validator(mode="after")
    def _unique_stage_names(self) -> TournamentConfig:
        names = [s.name for s in self.stages]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"stage names must be unique; repeated: {', '.join(dupes)} "
                             f"(give each stage a name)")
        return self

    @model_validator(mode="after")
    def _some_weight(self) -> TournamentConfig:
        if all(s.weight == 0 for s in self.stages):
            raise ValueError("every stage has weight 0: give at least one stage a weight "
                             "above 0")
        return self

    @property
    def games(self) -> list[str]:
        """The games of the stages, in order."""
        return [s.game for s in self.stages]


def _first_error(exc: ValidationError, source: str, single_stage: bool = False) -> ConfigError:
    errors = exc.errors()
    # A wrong value says more than a missing key that may simply not be written yet.
    err = next((e for e in errors if e["type"] != "missing"), errors[0])
    loc = list(err["loc"])
    if single_stage and loc[:2] == ["stages", 0]:
        loc = loc[2:]  # the stage keys were written at the top level
    where = ".".join(str(p) for p in loc) or "config"
    msg = err["msg"].removeprefix("Value error, ")
    bad = ""
    if err["type"] != "missing" and not isinstance(err.get("input"), dict):
        # Bounded: a 100,000-character value must not make a 100,000-character line.
        given = repr(err["input"])
        if len(given) > SHOWN_MAX:
            given = shown(err["input"])
        if shown(err["input"]) not in msg:  # a name check quotes the value itself
            bad = f" (got {given})"
    return ConfigError(f"{source}: {where}: {msg}{bad}")


def read_toml(path: Path, max_bytes: int | None = None) -> dict:
    """Parse a TOML file (of at most `max_bytes`); ConfigError names the file and the problem."""
    try:
        data = _read_file(path, max_bytes)
    except FileNotFoundError:
        raise ConfigError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise ConfigError(f"not a file: {path}") from None
    return parse_toml(data, path)


def parse_toml(data: bytes, path: Path) -> dict:
    """Parse TOML bytes read from `path`; ConfigError names the file and the problem."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
    _check_ints(raw, path)
    return raw


def _read_file(path: Path, max_bytes: int | None) -> bytes:
    """A regular file's bytes; never blocks on a FIFO nor reads a device or an oversized file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"not a regular file: {path}")
        if max_bytes is None:
            with os.fdopen(os.dup(fd), "rb") as fh:
                return fh.read()
        too_big = ConfigError(f"{path}: over {max_bytes // 1024} KiB ({st.st_size:,} bytes); "
                              f"a manifest is a short TOML file")
        if st.st_size > max_bytes:
            raise too_big
        chunks, left = [], max_bytes + 1  # one byte more tells a file that grew since fstat
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise too_big
        return b"".join(chunks)
    finally:
        os.close(fd)


INT64 = (-(2**63), 2**63 - 1)  # what SQLite (and the JSON columns' writer) can store


def _check_ints(value: Any, path: Path, where: str = "") -> None:
    """ConfigError for a whole number SQLite cannot store: TOML's are unbounded, the columns are not."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_ints(v, path, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_ints(v, path, f"{where}[{i}]")
    elif isinstance(value, int) and not isinstance(value, bool) and not INT64[0] <= value <= INT64[1]:
        raise ConfigError(f"{path}: {where}: {value} does not fit a 64-bit integer")


def load_manifest(path: Path, data: bytes | None = None) -> Manifest:
    """A validated bot manifest (from `data` when the caller has read the file itself)."""
    if data is not None and len(data) > MANIFEST_MAX_BYTES:
        raise ConfigError(f"{path}: over {MANIFEST_MAX_BYTES // 1024} KiB ({len(data):,} bytes); "
                          f"a manifest is a short TOML file")
    raw = read_toml(path, MANIFEST_MAX_BYTES) if data is None else parse_toml(data, path)
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise _first_error(exc, str(path)) from None


def parse_config(raw: dict, source: str = "config") -> TournamentConfig:
    """A validated TournamentConfig from parsed TOML; ConfigError names the key and the value."""
    try:
        return TournamentConfig.model_validate(raw)
    except ValidationError as exc:
        raise _first_error(exc, source, single_stage="stages" not in raw) from None


@dataclass(frozen=True)
class Entrant:
    """One bot of a config: its BotSpec and what the store records of it (its bots row)."""

    spec: BotSpec
    name: str
    version: str
    command: list[str]
    workdir: str
    language: str
    description: str
    games: list[str]  # the games its manifest declares (empty: any game)
    content_hash: str | None = None  # a registry version's snapshot (others get one at run time)
    registry_ref: str | None = None  # `name@version` of a registry bot
    manifest_ref: tuple[str, str] | None = None  # what its `ready` should say (name, version)

    @classmethod
    def of(cls, spec: BotSpec, row: dict) -> Entrant:
        """An entrant from a spec and the row resolve_bot (or Registry.resolve) gives for it."""
        return cls(spec, row["name"], row["version"], list(row["command"]), row["workdir"],
                   row["language"], row["description"], list(row["games"]),
                   row.get("content_hash"), row.get("registry_ref"),
                   tuple(row["manifest_ref"]) if row.get("manifest_ref") else None)

    def row(self) -> dict:
        """Its bots row as the planner and the store take it (fields it lacks left out)."""
        row = {"name": self.name, "version": self.version, "command": list(self.command),
               "workdir": self.workdir, "language": self.language,
               "description": self.description, "games": list(self.games)}
        for key in ("content_hash", "registry_ref", "manifest_ref"):
            if getattr(self, key) is not None:
                row[key] = getattr(self, key)
        return row


@dataclass(frozen=True)
class LoadedConfig:
    """A tournament config and its entrants, in config order, every path resolved."""

    config: TournamentConfig
    entrants: list[Entrant]

    @property
    def specs(self) -> list[BotSpec]:
        """The entrants' BotSpecs."""
        return [e.spec for e in self.entrants]

    @property
    def rows(self) -> list[dict]:
        """The entrants' bots rows."""
        return [e.row() for e in self.entrants]

    # Many tests (and benches) unpack `config, specs, rows = load_config(...)`: they still may.
    def __iter__(self):
        return iter((self.config, self.specs, self.rows))

    def __getitem__(self, index):
        return tuple(self)[index]


def load_config(path: str | Path, registry: Any = None) -> LoadedConfig:
    """The tournament config and its entrants (spec and bots row of each); all paths resolved.

    Each entrant's `games` lists the games its manifest declares (empty: any game). A single-game
    tournament refuses a bot that does not play its game; an event leaves it out of that stage.
    `registry` (an arena.registry.Registry) resolves `bot = "name@version"` entries.
    """
    path = Path(path)
    raw = read_toml(path)
    raw.setdefault("name", path.stem)
    config = parse_config(raw, str(path))
    # The games before the bots: "bot 'x' does not play nope" would hide that no game is nope.
    for stage in config.stages:
        try:
            get_game(stage.game)
        except ConfigError as exc:
            where = f"{path}: stage {stage.name!r}" if config.event else str(path)
            raise ConfigError(f"{where}: {exc}") from None
    specs, rows = [], []
    for entry in config.bots:
        spec, row = resolve_bot(entry, path.parent, None if config.event else config.stages[0].game,
                                registry, limits=config.limits, sandbox=config.sandbox)
        specs.append(spec)
        rows.append(row)
    specs = versioned_names(specs, rows, str(path))
    names = [s.name for s in specs]
    if config.rating.anchor is not None and config.rating.anchor not in names:
        raise ConfigError(f"{path}: rating.anchor: {config.rating.anchor!r} is not one of the bots "
                          f"({', '.join(names)})")
    for stage in config.stages:
        where = f"{path}: stage {stage.name!r}" if config.event else str(path)
        for key in ("candidates", "seeding"):
            unknown = [n for n in getattr(stage, key) if n not in names]
            if unknown:
                raise ConfigError(f"{where}: {key}: no bot named {unknown[0]!r}")
        players = stage_entrants(stage, rows)
        if len(players) < stage.seats:
            raise ConfigError(f"{where}: {len(players)} bots cannot fill tables of {stage.seats} seats")
    return LoadedConfig(config, [Entrant.of(s, r) for s, r in zip(specs, rows)])


def versioned_names(specs: list[BotSpec], rows: list[dict], source: str) -> list[BotSpec]:
    """The specs with entries that share a name but not a version named `name@version`.

    Two versions of one bot may meet without invented names; entries alike in name and version
    (or one registry version entered twice) are still a ConfigError.
    """
    names = [s.name for s in specs]
    versions: dict[str, set[str]] = {}
    for s in specs:
        versions.setdefault(s.name, set()).add(s.version)
    out = []
    for s in specs:
        if names.count(s.name) > 1 and len(versions[s.name]) == names.count(s.name):
            s = replace(s, name=f"{s.name}@{s.version}" if s.version else s.name)
        out.append(s)
    final = [s.name for s in out]
    dupes = sorted({n for n in final if final.count(n) > 1})
    if dupes:
        raise ConfigError(f"{source}: bot names must be unique; repeated: {', '.join(dupes)} "
                          f"(entries of one name and version: give each its own `name`)")
    # One registry version under two names would be one bots row entered twice.
    seen: dict[tuple, str] = {}
    for s, row in zip(out, rows):
        key = row.get("registry_ref")
        if key is not None and key in seen:
            raise ConfigError(f"{source}: {key} is entered twice ({seen[key]!r} and {s.name!r}); "
                              f"a tournament holds each registry version once")
        if key is not None:
            seen[key] = s.name
    return out


def stage_entrants(stage: StageConfig, rows: list[dict]) -> list[int]:
    """Entry indices of the bots that play a stage: those whose manifest lists its game (or none)."""
    return [i for i, row in enumerate(rows) if not row.get("games") or stage.game in row["games"]]


def resolve_bot(entry: BotEntry, base: Path, game: str | None,
                registry: Any = None, *, limits: LimitOverrides | None = None,
                sandbox: str = "none") -> tuple[BotSpec, dict]:
    """A BotSpec (absolute paths) and a registry row for one config entry; `game`: it must play it.

    `limits` (the tournament's) and `sandbox` go on the spec; the manifest's and then the entry's
    own limits override the tournament's.
    """
    games: list[str] = []
    manifest_limits = None
    if entry.bot:
        if registry is None:
            raise ConfigError(f"bot {entry.bot!r}: no registry: registry bots need a database "
                              f"(run the config with --db)")
        # The snapshot, not the author's folder: a submitted version never changes under a run.
        spec, row = registry.resolve(entry.bot, name=entry.name, args=entry.args)
        # The registry applied the manifest's limits; layer them between tournament and entry.
        spec = replace(spec, limits=resolve_limits(limits, as_overrides(spec.limits), entry.limits),
                       sandbox=sandbox)
        if game and row["games"] and game not in row["games"]:
            raise ConfigError(f"bot {entry.bot!r} does not play {game} "
                              f"(its manifest lists: {', '.join(row['games'])})")
        return spec, row
    if entry.python:
        factory = import_factory(entry.python)
        version = entry.version or ""
        spec = BotSpec(name=entry.name, factory=factory, version=version)
        return spec, {"name": entry.name, "version": version, "command": [f"python:{entry.python}"],
                      "workdir": "", "language": "python (in process)", "description": "",
                      "games": games}
    if entry.manifest:
        mpath = (base / entry.manifest).resolve()
        manifest = load_manifest(mpath)
        name = entry.name or manifest.name
        command = manifest.command + entry.args
        workdir = (mpath.parent / manifest.workdir).resolve()
        version = entry.version or manifest.version
        language, description, games = manifest.language, manifest.description, manifest.games
        manifest_limits = manifest.limits
        if game and manifest.games and game not in manifest.games:
            raise ConfigError(
                f"{mpath}: bot {name!r} does not play {game} "
                f"(its manifest lists: {', '.join(manifest.games)})"
            )
    else:
        name = entry.name
        command = entry.command + entry.args
        workdir = (base / (entry.workdir or ".")).resolve()
        version, language, description = entry.version or "", "", ""
    if not workdir.is_dir():
        raise ConfigError(f"bot {name!r}: working directory {str(workdir)!r} does not exist")
    spec = BotSpec(name=name, command=tuple(command), workdir=str(workdir), version=version,
                   limits=resolve_limits(limits, manifest_limits, entry.limits), sandbox=sandbox,
                   source=str(mpath.parent) if entry.manifest else "")
    row = {"name": name, "version": version, "command": command, "workdir": str(workdir),
           "language": language, "description": description, "games": list(games)}
    if entry.manifest:  # what its `ready` should say (a run warns once when it says otherwise)
        row["manifest_ref"] = (manifest.name, manifest.version)
    return spec, row


def import_factory(target: str):
    """The object named by `module:attr` (an in-process bot factory)."""
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ConfigError(f"python bot {target!r}: expected module:attribute")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"python bot {target!r}: {exc}") from None


def time_control(config: TournamentConfig) -> TimeControl:
    """The protocol's time control for a config."""
    t = config.time
    return TimeControl(startup_ms=t.startup_ms, move_ms=t.move_ms, bank_ms=t.bank_ms,
                       grace_ms=t.grace_ms)


# -- ladders ----------------------------------------------------------------------------------------


class LadderFormat(_Strict):
    """One kind of table a ladder plays: a game at a seat count, with its share of tables."""

    game: str
    seats: int = Field(default=2, ge=2, le=4)
    weight: float = Field(default=1.0, gt=0, description="Share of tables (relative to the others).")
    options: dict[str, Any] = Field(default_factory=dict)


class EntrantRule(_Strict):
    """Who plays: registry bots that list every game of the ladder (or the named ones)."""

    versions: str = Field(default="latest", description="latest (each bot's newest active version) or all.")
    bots: list[str] = Field(default_factory=list,
                            description="Only these registry bots (name or name@version); empty: all.")

    @model_validator(mode="after")
    def _versions(self) -> EntrantRule:
        if self.versions not in ("latest", "all"):
            raise ValueError(f"versions: expected latest or all, got {self.versions!r}")
        return self


class LeaderboardConfig(_Strict):
    """How often the published leaderboard (maximum likelihood, bootstrap intervals) is refitted."""

    every_tables: int = Field(default=50, ge=1, description="Refit after this many new tables.")
    samples: int = Field(default=100, ge=0, le=10_000, description="Bootstrap samples of each refit.")


class MatchmakingSettings(_Strict):
    """The matchmaker's settings (see arena/scheduling/matchmaking.py for what each does)."""

    strategy: str = "info"
    placement_games: int = Field(default=8, ge=0)
    min_share: float = Field(default=0.5, ge=0, le=1)
    window: int = Field(default=100, ge=1)
    top_k: int = Field(default=4, ge=2)
    top_share: float = Field(default=0.1, ge=0, le=1)

    @model_validator(mode="after")
    def _strategy(self) -> MatchmakingSettings:
        if self.strategy not in ("info", "random", "round_robin"):
            raise ValueError(f"strategy: expected info, random or round_robin, got {self.strategy!r}")
        return self


class LadderConfig(_Strict):
    """A ladder: a continuous competition of registry bots over one or several formats."""

    name: str
    seed: int = 0
    deals: int = Field(default=1, ge=1, le=50, description="Deals per table, each at every seat rotation.")
    in_flight: int | None = Field(default=None, ge=1, le=1024,
                                  description="Tables in flight (default: the executor's capacity).")
    match_attempts: int = Field(default=3, ge=1, le=20)
    max_failures: int = Field(default=3, ge=1)
    pin_cpu: bool = True
    sandbox: str = "auto"
    bot_user: Literal["seat", "bot", "runner"] = "seat"
    allow_unconfined: bool = False
    validate_bots: bool = Field(default=True, alias="validate",
                                description="Play a validation game before a new version enters.")
    limits: LimitOverrides | None = None
    time: TimeConfig = Field(default_factory=TimeConfig)
    rating: RatingConfig = Field(default_factory=RatingConfig)
    formats: list[LadderFormat] = Field(min_length=1)
    entrants: EntrantRule = Field(default_factory=EntrantRule)
    matchmaking: MatchmakingSettings = Field(default_factory=MatchmakingSettings)
    leaderboard: LeaderboardConfig = Field(default_factory=LeaderboardConfig)

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        return check_title(name, "ladder name")

    @property
    def games(self) -> list[str]:
        """The ladder's games, each once, in config order."""
        return list(dict.fromkeys(f.game for f in self.formats))


def load_ladder_config(path: str | Path) -> LadderConfig:
    """A validated ladder config: every format's game, seats and options checked."""
    path = Path(path)
    raw = read_toml(path)
    raw.setdefault("name", path.stem)
    try:
        config = LadderConfig.model_validate(raw)
    except ValidationError as exc:
        raise _first_error(exc, str(path)) from None
    for i, fmt in enumerate(config.formats):
        try:
            game_cls = get_game(fmt.game)
            options = make_options(fmt.game, fmt.options)
            game_cls.validate_options(options, fmt.seats)
        except ConfigError as exc:
            # Numbered from 0 and dotted, as the schema's own errors name a format's fields.
            raise ConfigError(f"{path}: formats.{i}: {exc}") from None
    return config
