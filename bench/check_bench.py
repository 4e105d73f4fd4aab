"""`arena bot check` duration: the seconds of each (game, seats, option set) and the total.

Checks a bot (default: the shipped random bot) as `arena bot check` does, and prints each option
set's games and seconds, the total wall time and the CPU time of this process and its bots. The
option sets beyond the defaults (Crossfire's open rows, Battlefield Cribbage's teams) play half the
deals, so they should add well under half the defaults' time.

    python bench/check_bench.py [MANIFEST_OR_FOLDER] [--deals N]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from time import perf_counter

from arena.checker import check_bot, resolve_target

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Run the check and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default=str(ROOT / "bots" / "random.toml"))
    parser.add_argument("--deals", type=int, default=2)
    args = parser.parse_args()
    spec, games, expected, language = resolve_target(args.target, None, "none")
    cpu0, t0 = os.times(), perf_counter()
    report = check_bot(spec, games, deals=args.deals, expected=expected, language=language)
    wall, cpu1 = perf_counter() - t0, os.times()
    extra = 0.0
    for c in report.combos:
        extra += c.seconds if c.options else 0.0
        print(f"{c.label:<55} {c.games:>3} games {c.seconds:6.2f} s")
    cpu = sum(cpu1[:4]) - sum(cpu0[:4])
    print(f"total {wall:.1f} s wall ({extra:.1f} s in option sets beyond the defaults), "
          f"{cpu:.1f} s CPU with the bots; {'clean' if report.clean else 'NOT clean'}")


if __name__ == "__main__":
    main()
