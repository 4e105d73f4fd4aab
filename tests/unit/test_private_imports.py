"""No module of arena uses another module's private names.

The rule, checked on every arena/**/*.py by its syntax tree:

- A name starting with `_` (not a dunder such as `__version__`) is private to the module that
  defines it: no other module imports it (`from arena.x import _name`) or reaches it as an
  attribute (`arena.x._name`, `x._name` after `from arena import x`). Sibling modules of one
  package count as other modules: a helper two modules share is public (no underscore), or
  lives in a module of its own.
- A module whose own name starts with `_` (`arena/cli/_app.py`) is private to its package: its
  siblings and their subpackages may import it, nothing outside that package may.

`KNOWN` lists the violations in modules this change does not own, as `(file, what)`; they are to
be fixed where they are, and each one fixed is removed from the list (a listed one that no longer
occurs in a file that exists fails too, so the list only shrinks; a listed file that does not
exist is one that moves on another branch).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARENA = ROOT / "arena"

KNOWN: set[tuple[str, str]] = set()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str, root: Path) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _package_of(module: str, path: Path) -> str:
    """The package a module belongs to (a package's __init__ belongs to the package itself)."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _private_module_outside(target: str, package: str) -> str | None:
    """The first private module along `target` that `package` is not inside of, if any."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:i])  # the package the private module belongs to
            if not (package == owner or package.startswith(owner + ".")):
                return ".".join(parts[: i + 1])
    return None


def violations(path: Path, root: Path = ROOT) -> list[str]:
    """What `path` uses of other modules' private names and packages' private modules."""
    module = _module_name(path, root)
    package = _package_of(module, path)
    tree = ast.parse(path.read_text(), str(path))
    found: list[str] = []
    aliases: dict[str, str] = {}  # a local name bound to an arena module -> that module

    def check_module(target: str) -> None:
        private = _private_module_outside(target, package)
        if private:
            found.append(f"imports {private}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "arena" or alias.name.startswith("arena."):
                    check_module(alias.name)
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        aliases["arena"] = "arena"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "arena" or node.module.startswith("arena.")):
            check_module(node.module)
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _is_module(full, root):
                    check_module(full)
                    aliases[alias.asname or alias.name] = full
                elif _private(alias.name) and node.module != module:
                    found.append(f"imports {full}")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain: list[str] = []
        base = node
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if not isinstance(base, ast.Name) or base.id not in aliases:
            continue
        target = aliases[base.id]
        for attr in reversed(chain):
            if _is_module(f"{target}.{attr}", root):
                target = f"{target}.{attr}"
                check_module(target)
                continue
            if _private(attr) and target != module:
                found.append(f"uses {target}.{attr}")
            break
    return sorted(set(found))


def all_violations() -> set[tuple[str, str]]:
    """Every violation in arena/, as (file relative to the repository, what)."""
    return {(str(path.relative_to(ROOT)), what)
            for path in sorted(ARENA.rglob("*.py")) for what in violations(path)}


def test_no_module_uses_another_modules_private_names():
    new = sorted(all_violations() - KNOWN)
    assert not new, "private names used across modules:\n" + "\n".join(f"{f}: {w}" for f, w in new)


def test_the_known_list_only_shrinks():
    gone = sorted((f, w) for f, w in KNOWN - all_violations() if (ROOT / f).is_file())
    assert not gone, "fixed, so take them off KNOWN:\n" + "\n".join(f"{f}: {w}" for f, w in gone)


def test_the_check_sees_each_kind_of_use(tmp_path):
    """The checker itself: each way of reaching a private name is caught, the allowed ones not."""
    root = tmp_path
    (root / "arena" / "pkg").mkdir(parents=True)
    for name in ("arena/__init__.py", "arena/pkg/__init__.py"):
        (root / name).write_text("")
    (root / "arena" / "a.py").write_text("_hidden = 1\n__version__ = '1'\n")
    (root / "arena" / "pkg" / "_helpers.py").write_text("x = 1\n")
    (root / "arena" / "pkg" / "inside.py").write_text("from arena.pkg._helpers import x\n")
    (root / "arena" / "b.py").write_text(
        "import arena.a\nfrom arena import a\nfrom arena import a as other\n"
        "from arena.a import _hidden, __version__\nfrom arena.pkg._helpers import x\n"
        "y = arena.a._hidden + a._hidden + other._hidden + a.__version__\n")
    assert violations(root / "arena" / "pkg" / "inside.py", root) == []
    assert violations(root / "arena" / "b.py", root) == [
        "imports arena.a._hidden", "imports arena.pkg._helpers", "uses arena.a._hidden"]
