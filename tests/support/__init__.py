"""Test support: in-process bots, paths, config builders, a tournament factory and a protocol
double, imported as `from tests.support.X import …` (the repository root is on pytest's path)."""
