"""arena.cli.tables: a table fitted to a width folds its least important columns, never cuts a
number or a name, says what it left out, and pages a wide matrix."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from arena.cli import tables
from arena.cli._app import new_table
from arena.cli.tables import TEXT, WORDS, FittedTable, PagedMatrix


def render(renderable, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(renderable)
    return out.getvalue()


@pytest.fixture(autouse=True)
def narrow():
    tables.reset()
    yield
    tables.reset()


def ratings_like() -> FittedTable:
    table = FittedTable(title="ratings")
    table.add_column("#", priority=0)
    table.add_column("bot", priority=0)
    table.add_column("rating", justify="right", priority=0)
    table.add_column("95 %", priority=1)
    table.add_column("W-D-L", priority=3)
    table.add_column("note", kind=TEXT, priority=4)
    table.add_row("1", "xeri_heuristic_deluxe", "1759", "−209 +270", "13-0-5",
                  "a long note that explains what this rating means in several words")
    return table


def test_numbers_and_names_are_never_cut_and_the_least_important_columns_fold():
    for width in (40, 50, 60, 80, 120):
        text = render(ratings_like(), width)
        assert all(len(line) <= width for line in text.splitlines()), text
        for value in ("xeri_heuristic_deluxe", "1759"):
            assert value in text
    narrow = render(ratings_like(), 50)
    assert "−209 +270" in narrow and "13-0-5" not in narrow
    assert "left out to fit 50 columns: W-D-L, note; --wide shows them" in " ".join(narrow.split())


def test_free_text_wraps_at_words_and_a_wide_table_keeps_every_column():
    text = render(ratings_like(), 120)
    assert "left out" not in text and "13-0-5" in text
    assert "a long note that explains" in text  # wrapped between words, never inside one
    tables.settings.wide = True
    wide = render(ratings_like(), 40)
    assert "left out" not in wide and "13-0-5" in wide and "1759" in wide


def test_a_words_column_wraps_between_names_only():
    table = FittedTable()
    table.add_column("round", priority=0)
    table.add_column("bots", kind=WORDS, priority=0)
    table.add_row("1", "xeri_heuristic_deluxe – random_walker_supreme – b3")
    text = render(table, 40)
    assert "xeri_heuristic_deluxe" in text and "random_walker_supreme" in text


def test_columns_of_a_group_fold_together():
    table = FittedTable()
    table.add_column("bot", priority=0)
    for c in ("W", "D", "L"):
        table.add_column(c, priority=3, group="record")
    table.add_column("tie-break", priority=2)
    table.add_row("xeri_heuristic_deluxe", "10", "20", "30", "4.75")
    text = render(table, 42)
    assert "4.75" in text and "10" not in text and "30" not in text
    assert "W, D, L" in text


def test_too_narrow_for_the_essential_columns_prints_one_block_per_row():
    table = FittedTable(title="t")
    table.add_column("case", priority=0)
    table.add_column("games", priority=0)
    table.add_row("xeri-2p-dealer_rotation=per_deal,redeal_if=any_pair_or_top_jack", "5")
    text = render(table, 40)
    assert all(len(line) <= 40 for line in text.splitlines())
    assert "games: 5" in text


def test_new_table_without_priorities_never_cuts_a_number():
    table = new_table("t", "id", "name", "a", "b", "c", right=("a", "b", "c"))
    table.add_row("1", "some_name", "123456789", "987654321", "555555555")
    text = render(table, 40)
    assert all(len(line) <= 40 for line in text.splitlines())
    assert "123456789" in text  # the rightmost columns fold whole
    assert "555555555" not in text and "left out" in text


def test_a_wide_matrix_pages_its_columns_with_the_row_labels_in_each_block():
    names = [f"bot_{i:02d}_long_name" for i in range(12)]
    values = [["—" if i == j else f"{i}/{j + 10}" for j in range(12)] for i in range(12)]
    matrix = PagedMatrix("crosstable", names, values, totals=[f"{i}/99" for i in range(12)])
    text = render(matrix, 80)
    blocks = text.count("opponents ")
    assert blocks >= 2
    assert all(len(line) <= 80 for line in text.splitlines())
    for name in names:
        assert text.count(name) == blocks
    for i in range(12):
        for j in range(12):
            if i != j:
                assert f"{i}/{j + 10}" in text
    whole = render(matrix, 300)
    assert "opponents" not in whole


def test_a_legend_names_only_the_columns_that_show():
    table = FittedTable(title="swiss")
    table.add_column("#", priority=0)
    table.add_column("bot", priority=0)
    table.add_column("pts", justify="right", priority=0)
    table.add_column("BH", justify="right", priority=2)
    table.add_column("SB", justify="right", priority=3)
    table.add_row("1", "xeri_heuristic_deluxe_edition_two", "4.5", "12.25", "10.75")
    table.legend = ("tie-breaks: ", {"BH": "Buchholz", "SB": "Sonneborn-Berger"})
    wide = " ".join(render(table, 120).split())
    assert "tie-breaks: BH Buchholz, SB Sonneborn-Berger" in wide
    narrow = " ".join(render(table, 56).split())
    assert "left out to fit 56 columns: SB" in narrow
    assert "tie-breaks: BH Buchholz" in narrow and "Sonneborn" not in narrow
    none = " ".join(render(table, 48).split())
    assert "left out to fit 48 columns: BH, SB" in none and "tie-breaks" not in none


def test_a_legend_under_a_narrow_table_uses_the_whole_width():
    table = FittedTable(title="swiss")
    for header in ("#", "bot", "pts", "DE", "SB"):
        table.add_column(header, justify="right", priority=0)
    table.add_row("1", "rb", "2", "1", "3.5")
    table.legend = ("tie-breaks in order: ", {"DE": "direct encounter", "SB": "Sonneborn-Berger"})
    lines = render(table, 80).splitlines()
    table_width = max(len(line) for line in lines if line.startswith(("┃", "│", "┏")))
    legend = [line for line in lines if "tie-breaks" in line]
    assert legend == ["tie-breaks in order: DE direct encounter, SB Sonneborn-Berger"]
    assert len(legend[0]) > table_width  # a caption would have wrapped at the table's width


def test_a_long_legend_breaks_between_entries():
    table = FittedTable(title="swiss")
    for header in ("#", "bot", "pts", "BH-1", "BH", "SB", "DE"):
        table.add_column(header, justify="right", priority=0)
    table.add_row("1", "rb", "2", "1", "1", "3.5", "0")
    meanings = {"BH-1": "Buchholz cut-1", "BH": "Buchholz", "SB": "Sonneborn-Berger",
                "DE": "direct encounter"}
    table.legend = ("tie-breaks in order: ", meanings)
    printed = render(table, 80).splitlines()
    bottom = max(i for i, ln in enumerate(printed) if ln.startswith("└"))
    lines = [ln for ln in printed[bottom + 1:] if ln]
    assert all(len(ln) <= 80 for ln in lines)
    text = " ".join(" ".join(lines).split())
    assert text == ("tie-breaks in order: BH-1 Buchholz cut-1, BH Buchholz, SB Sonneborn-Berger,"
                    " DE direct encounter")
    assert any(ln.strip() == "DE direct encounter" for ln in lines)  # moved whole, not split
