"""`python -m arena.kits FOLDER`: write the Python example files of `bots/` from the package."""

import sys

from arena.kits import write_examples


def main(argv: list[str]) -> int:
    """Write the examples into the folder given (default `bots`); say which files changed."""
    folder = argv[0] if argv else "bots"
    for path in write_examples(folder):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
