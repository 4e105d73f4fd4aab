"""Bot author's kits: `arena bot new NAME --lang python|node|c` copies one of these folders.

Each kit folder holds a manifest (`bot.toml`), the source and a README. `{{name}}` in any file is
replaced by the new bot's name; nothing else is changed, so a new bot passes `arena bot check`.

The Python examples in a checkout's `bots/` run from their own folder, so they need the kit's
`arenabot.py` and the built-in random bot beside them as real files (a snapshot holds no links):
`python -m arena.kits bots` writes them from the package, and a test keeps them up to date.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from arena.errors import ConfigError

LANGUAGES = ("python", "node", "c")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")


def kit_files(lang: str) -> dict[str, str]:
    """The files of a language's kit: relative name -> text (placeholders not yet filled)."""
    if lang not in LANGUAGES:
        raise ConfigError(f"no kit for {lang!r} (choose {', '.join(LANGUAGES)})")
    root = resources.files(__name__) / lang
    return {f.name: f.read_text(encoding="utf-8") for f in sorted(root.iterdir(), key=lambda f: f.name)
            if f.is_file() and not f.name.endswith((".pyc", ".pyo"))}


def example_files() -> dict[str, str]:
    """The files of `bots/` made from the package: name -> text (the kit's arenabot.py, and the
    built-in random bot)."""
    return {"arenabot.py": kit_files("python")["arenabot.py"],
            "random_bot.py": (resources.files("arena.bots") / "random_bot.py").read_text("utf-8")}


def write_examples(folder: str | Path) -> list[Path]:
    """Write example_files() into `folder` (a checkout's `bots/`); returns the files changed."""
    changed = []
    for name, text in example_files().items():
        path = Path(folder) / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def new_bot(name: str, lang: str, parent: str | Path = ".") -> Path:
    """Write a working bot folder `parent/name` from the kit of `lang`; returns the folder."""
    if not NAME_RE.match(name):
        raise ConfigError(f"bad bot name {name!r}: use letters, digits, '_', '-' or '.', "
                          f"starting with a letter (at most 64)")
    files = kit_files(lang)
    folder = Path(parent) / name
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ConfigError(f"{folder} already exists and is not empty")
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        dest = folder / rel
        dest.write_text(text.replace("{{name}}", name), encoding="utf-8")
        if rel.endswith(".sh"):
            dest.chmod(0o755)
    return folder
