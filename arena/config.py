"""Tournament configuration: TOML files validated into pydantic models, and bot manifests."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from arena.errors import ConfigError
from arena.players.base import BotSpec
from arena.protocol import TimeControl


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BotEntry(_Strict):
    """A bot in a tournament: a manifest file, a command, or an in-process Python factory."""

    name: str | None = Field(default=None, description="Name in this tournament (default: manifest's).")
    manifest: str | None = Field(default=None, description="Path of a bot manifest (TOML).")
    command: list[str] | None = Field(default=None, description="Command line of a subprocess bot.")
    workdir: str | None = Field(default=None, description="Working directory of the command.")
    args: list[str] = Field(default_factory=list, description="Extra arguments appended to the command.")
    python: str | None = Field(default=None, description="`module:attr` of an in-process bot factory.")
    version: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> BotEntry:
        sources = [s for s in ("manifest", "command", "python") if getattr(self, s)]
        if len(sources) != 1:
            raise ValueError(f"give exactly one of manifest, command or python (got {sources or 'none'})")
        if not self.manifest and not self.name:
            raise ValueError("a bot given by command or python needs a name")
        return self


class Manifest(_Strict):
    """A bot manifest (`bots/*.toml`): how to start the bot."""

    name: str
    version: str = ""
    command: list[str] = Field(min_length=1)
    workdir: str = "."
    language: str = ""
    games: list[str] = Field(default_factory=list)
    description: str = ""
    author: str = ""


class TimeConfig(_Strict):
    """Time limits in milliseconds."""

    startup_ms: int = Field(default=10_000, gt=0)
    move_ms: int = Field(default=2_000, gt=0)


class RatingConfig(_Strict):
    """Rating settings."""

    k: float = Field(default=32.0, gt=0)
    initial: float = 1500.0


class TournamentConfig(_Strict):
    """A whole tournament: game, format, bots, deals, seed, time control and ratings."""

    name: str
    game: str
    format: Literal["round_robin"] = "round_robin"
    seats: int = Field(default=2, ge=2, le=4, description="Seats per table.")
    seed: int = 0
    deals: int = Field(default=2, ge=1, description="Deals per match.")
    games_per_pairing: int | None = Field(
        default=None, ge=1,
        description="Games per match, instead of `deals`: deals × seats with duplicate deals.",
    )
    duplicate: bool = Field(default=True, description="Play each deal once per seat rotation.")
    cycles: int = Field(default=1, ge=1, description="Round-robin repetitions.")
    max_failures: int = Field(default=3, ge=1, description="Failures of a bot before it forfeits the rest of a match.")
    options: dict[str, Any] = Field(default_factory=dict)
    time: TimeConfig = Field(default_factory=TimeConfig)
    rating: RatingConfig = Field(default_factory=RatingConfig)
    bots: list[BotEntry] = Field(min_length=2)

    @model_validator(mode="after")
    def _games_per_pairing(self) -> TournamentConfig:
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
        return self


def _first_error(exc: ValidationError, source: str) -> ConfigError:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "config"
    bad = f" (got {err['input']!r})" if err["type"] not in ("missing",) and not isinstance(err.get("input"), dict) else ""
    msg = err["msg"].removeprefix("Value error, ")
    return ConfigError(f"{source}: {where}: {msg}{bad}")


def read_toml(path: Path) -> dict:
    """Parse a TOML file; ConfigError names the file and the problem."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"no such file: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def load_manifest(path: Path) -> Manifest:
    """A validated bot manifest."""
    try:
        return Manifest.model_validate(read_toml(path))
    except ValidationError as exc:
        raise _first_error(exc, str(path)) from None


def load_config(path: str | Path) -> tuple[TournamentConfig, list[BotSpec], list[dict]]:
    """The tournament config, its bots as BotSpecs, and their registry rows; all paths resolved."""
    path = Path(path)
    raw = read_toml(path)
    raw.setdefault("name", path.stem)
    try:
        config = TournamentConfig.model_validate(raw)
    except ValidationError as exc:
        raise _first_error(exc, str(path)) from None
    specs, rows = [], []
    for entry in config.bots:
        spec, row = resolve_bot(entry, path.parent, config.game)
        specs.append(spec)
        rows.append(row)
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"{path}: bot names must be unique; repeated: {', '.join(dupes)}")
    if len(specs) < config.seats:
        raise ConfigError(f"{path}: {len(specs)} bots cannot fill tables of {config.seats} seats")
    return config, specs, rows


def resolve_bot(entry: BotEntry, base: Path, game: str) -> tuple[BotSpec, dict]:
    """A BotSpec (absolute paths) and a registry row for one config entry playing `game`."""
    if entry.python:
        factory = import_factory(entry.python)
        version = entry.version or ""
        spec = BotSpec(name=entry.name, factory=factory, version=version)
        return spec, {"name": entry.name, "version": version, "command": [f"python:{entry.python}"],
                      "workdir": "", "language": "python (in process)", "description": ""}
    if entry.manifest:
        mpath = (base / entry.manifest).resolve()
        manifest = load_manifest(mpath)
        name = entry.name or manifest.name
        command = manifest.command + entry.args
        workdir = (mpath.parent / manifest.workdir).resolve()
        version = entry.version or manifest.version
        language, description = manifest.language, manifest.description
        if manifest.games and game not in manifest.games:
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
    spec = BotSpec(name=name, command=tuple(command), workdir=str(workdir), version=version)
    return spec, {"name": name, "version": version, "command": command, "workdir": str(workdir),
                  "language": language, "description": description}


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
    return TimeControl(startup_ms=config.time.startup_ms, move_ms=config.time.move_ms)
