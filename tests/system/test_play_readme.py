"""The README's samples of `arena play` and `arena replay` are real output: the same game (the
built-in subprocess random bot, seed 3, the same typed input) prints every line they show."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from arena.cli import app
from tests.support.paths import ROOT

runner = CliRunner()
TYPED = ["3", "x", "1", "2"] + ["1"] * 16  # the README's session: 3, a typo, then 1, 2, 1, …


def readme_sample(command: str) -> list[str]:
    """The lines of the README's ```text block that starts with `$ command`, without the `$`
    line, the `…` cuts and what the person typed after a prompt."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```text\n\$ " + re.escape(command) + r"\n(.*?)```", text, re.S)
    assert block, command
    lines = []
    for line in block.group(1).splitlines():
        if line == "…":
            continue
        lines.append(re.sub(r"^(your move \(number, \? or q\): ).+$", r"\1", line))
    return lines


def test_the_readme_samples_are_what_the_commands_print(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the sample's game is recorded in ./arena.db
    monkeypatch.setenv("COLUMNS", "80")
    from arena.cli._app import console

    monkeypatch.setattr(console, "_width", 80)
    out = runner.invoke(app, ["play", "crossfire", "--against", "random", "--seed", "3"],
                        input="".join(t + "\n" for t in TYPED))
    assert out.exit_code == 0, out.output
    # Piped input is not echoed: a prompt and what follows it share a line here.
    printed = out.output.replace("your move (number, ? or q): ", "your move (number, ? or q): \n")
    played = [line.rstrip() for line in printed.splitlines()]
    for line in readme_sample("arena play crossfire --against random --seed 3"):
        assert line.rstrip() in played, line
    out = runner.invoke(app, ["replay", "t1-play-g1"])
    assert out.exit_code == 0, out.output
    replayed = [line.rstrip() for line in out.output.splitlines()]
    sample = readme_sample("arena replay t1-play-g1")
    for line in sample:
        assert line.rstrip() in replayed, line
    assert max(map(len, sample)) <= 80
