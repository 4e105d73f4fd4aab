"""Tournament and ladder configs for tests, built from keyword arguments instead of pasted TOML.

    path = write_tournament(tmp_path, name="sw", format="swiss", rounds=2, seed=4,
                            options={"rounds": 1}, bots=[python_bot("a"), manifest_bot("random")])

`tournament_toml` gives the text (top-level keys, then tables: options, time, limits, rating, …,
then one `[[bots]]` per bot); `ladder_toml` the same for a ladder (its `[[formats]]` last);
`write_tournament` writes a tournament's; `write_config` formats a TOML template
with `{bots}` (the repository's bots folder) the way the older tests do.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from tests.support.paths import BOTS

# Three subprocess bots from the repository's manifests: the tournament tests' default field.
CONFIG = """
name = "t"
game = "xeri"
seed = 7
deals = 2
[options]
rounds = 1
[time]
move_ms = 5000
[[bots]]
manifest = "{bots}/random.toml"
args = ["1"]
[[bots]]
manifest = "{bots}/random.toml"
name = "random-b"
args = ["2"]
[[bots]]
manifest = "{bots}/xeri_heuristic.toml"
"""


def write_config(tmp_path: Path, text: str = CONFIG, **fmt) -> Path:
    """`text` (a template: `{bots}` is the bots folder, other fields from `fmt`) as tmp_path/t.toml."""
    path = tmp_path / "t.toml"
    path.write_text(textwrap.dedent(text).format(bots=BOTS, **fmt))
    return path


# -- builders ---------------------------------------------------------------------------------------
def python_bot(name: str, factory: str = "tests.support.bots:SeededRandom", **more) -> dict:
    """An in-process bot entry (`python = "module:attr"`)."""
    return {"name": name, "python": factory, **more}


def manifest_bot(manifest: str, name: str | None = None, **more) -> dict:
    """A bot entry from one of the repository's manifests (`bots/<manifest>.toml`)."""
    entry: dict[str, Any] = {"manifest": f"{BOTS}/{manifest}.toml"}
    if name is not None:
        entry["name"] = name
    return {**entry, **more}


def python_bots(n: int, factory: str = "tests.support.bots:SeededRandom",
                prefix: str = "b") -> list[dict]:
    """n in-process bots named b0…b{n-1}."""
    return [python_bot(f"{prefix}{i}", factory) for i in range(n)]


def tournament_toml(*, bots: list[dict], name: str = "t", game: str = "xeri", **fields) -> str:
    """A tournament config: scalar keyword arguments are top-level keys (format, seed, deals,
    rounds, seats, sandbox, …), dict ones are tables (options, time, limits, rating, …)."""
    return _config_toml({"name": name, "game": game, **fields}, "bots", bots)


# A ladder's usual table: two-seat Xeri, one round a game.
XERI_TABLE = {"game": "xeri", "seats": 2, "options": {"rounds": 1}}


def ladder_toml(*, name: str = "lad", seed: int = 4, deals: int = 1,
                formats: list[dict] = (XERI_TABLE,), **fields) -> str:
    """A ladder config: keyword arguments as `tournament_toml`'s (in_flight, sandbox, …; tables
    time, limits, matchmaking, leaderboard, …), and one `[[formats]]` per entry of `formats`."""
    return _config_toml({"name": name, "seed": seed, "deals": deals, **fields}, "formats",
                        list(formats))


def _config_toml(fields: dict[str, Any], array: str, entries: list[dict]) -> str:
    """Scalar `fields` as top-level keys, dict ones as tables, then `[[array]]` per entry."""
    lines = []
    tables = []
    for key, value in fields.items():
        if value is None:
            continue
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_value(value)}")
    for key, table in tables:
        lines.append(f"[{key}]")
        lines.extend(f"{k} = {_value(v)}" for k, v in table.items())
    for entry in entries:
        lines.append(f"[[{array}]]")
        lines.extend(f"{k} = {_value(v)}" for k, v in entry.items())
    return "\n".join(lines) + "\n"


def write_tournament(folder: Path, filename: str | None = None, **fields) -> Path:
    """`tournament_toml(**fields)` written into `folder` (as <name>.toml unless named)."""
    path = folder / (filename or f"{fields.get('name', 't')}.toml")
    path.write_text(tournament_toml(**fields))
    return path


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string is a JSON string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {value!r}")


def bots_toml(n: int, factory: str = "tests.support.bots:SeededRandom") -> str:
    """`[[bots]]` tables of n in-process bots b0…b{n-1}, to append to a TOML template."""
    return "".join(f'\n[[bots]]\nname = "b{i}"\npython = "{factory}"\n' for i in range(n))


def config_file(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    """`text` (dedented) written as tmp_path/name."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path
