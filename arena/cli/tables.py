"""Tables that fit the terminal: numbers and names are never cut, the least important columns fold.

Every column has a kind and a priority. A `fixed` column (a number, a name, a date) is as wide as
its widest cell and never wraps; a `words` column (a list of names) may wrap between words but
never inside one; a `text` column (notes, details, stderr) may wrap anywhere and is the first to
fold. When the columns do not fit the width, those with the highest priority number fold away,
rightmost first (priority 0 never folds), and a line under the table names them and says how to
see them. `--wide` (`WIDE_OPTION`, on every table-printing command) shows every column whatever
the width. A table too narrow even for its columns that never fold prints one block of
`header: value` lines per row instead.

A crosstable too wide for the terminal is printed in blocks of opponent columns, each with the
row labels and totals (`PagedMatrix`).

Tables are built as usual (`arena.cli._app.new_table`, `add_row`, `console.print`): the fitting
happens when rich renders them, at the width it renders to (the console's: `COLUMNS`, or 80 when
piped).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import typer
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

FIXED, WORDS, TEXT = "fixed", "words", "text"
TEXT_MIN = 24  # free text is shown at least this wide (or its full width if less), else folded


@dataclass
class _Settings:
    """What the running command asked for: every column (--wide), and its other output forms."""

    wide: bool = False
    other_forms: str = ""


settings = _Settings()


def reset() -> None:
    """Forget the last command's --wide (the CLI group calls this before each command)."""
    settings.wide = False
    settings.other_forms = ""


def _set_wide(ctx: typer.Context, value: bool) -> bool:
    settings.wide = bool(value)
    # The fold note names the command's own machine forms: -f csv / -f json, or --json.
    forms = []
    for param in ctx.command.params:
        if param.name == "format" and isinstance(param.default, Enum):
            forms = [f"--format={c.value}" for c in type(param.default) if c.value != "table"]
        elif param.name == "as_json":
            forms = ["--json"]
    settings.other_forms = " and ".join(forms)
    return value


WIDE_OPTION = typer.Option("--wide", callback=_set_wide,
                           help="Show every column of the tables, however wide the terminal.")


def _cell_text(console: Console, cell) -> Text:
    """A cell as plain rich Text (markup parsed, as rich would print it)."""
    if isinstance(cell, Text):
        return cell.copy()
    if isinstance(cell, str):
        return console.render_str(cell)
    return Text(str(cell))


def _longest_word(text: Text) -> int:
    return max((cell_len(w) for w in text.plain.split()), default=0)


def _longest_line(text: Text) -> int:
    return max((cell_len(line) for line in text.plain.splitlines()), default=0)


class FittedTable(Table):
    """A rich Table that fits the width it is printed at: see the module's docstring.

    Add columns with `add_column(..., kind=, priority=)` and rows with `add_row` as with a rich
    Table; `console.print` fits it.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.kinds: list[str] = []
        self.priorities: list[int] = []
        self.groups: list[str | None] = []
        # (prefix, {header: meaning}): a caption naming only the columns shown, e.g. tie-breaks
        self.legend: tuple[str, dict[str, str]] | None = None

    def add_column(self, header="", *args, kind: str = FIXED, priority: int | None = None,
                   group: str | None = None, **kwargs) -> None:
        """A column: `kind` fixed, words or text; `priority` 0 never folds, higher folds sooner
        (default: by position, the first two columns never); the columns of a `group` (W, D, L)
        fold together."""
        super().add_column(header, *args, **kwargs)
        n = len(self.kinds)
        self.kinds.append(kind)
        self.priorities.append(priority if priority is not None else (0 if n < 2 else n))
        self.groups.append(group)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """Fitted tables take the width they are given, at most their natural width."""
        natural = self._plan(console, 10**6, wide=True)[2]
        return Measurement(min(natural, options.max_width), min(natural, options.max_width))

    def _plan(self, console: Console, width: int, wide: bool):
        """(kept column indexes, their widths, total width, folded indexes) at `width`."""
        headers = [_cell_text(console, c.header) for c in self.columns]
        cells = [[_cell_text(console, x) for x in c._cells] for c in self.columns]
        lows, highs = [], []
        for i, kind in enumerate(self.kinds):
            head = _longest_word(headers[i])  # a header may wrap between its words
            natural = max([_longest_line(t) for t in cells[i]] + [cell_len(headers[i].plain)])
            if kind == FIXED:
                low = max([_longest_line(t) for t in cells[i]] + [head])
            elif kind == WORDS:
                low = max([_longest_word(t) for t in cells[i]] + [head])
            else:  # narrower than this, free text reads a word a line: better folded away
                low = max([min(natural, TEXT_MIN), head])
            lows.append(max(low, 1))
            highs.append(max(natural, low, 1))
        kept = list(range(len(self.columns)))

        def total(widths: list[int]) -> int:
            return sum(widths) + 3 * len(widths) + 1  # padding of 1 each side, a border each

        folded = []
        if not wide:
            order = sorted((i for i in kept if self.priorities[i] > 0),
                           key=lambda i: (-self.priorities[i], -i))
            for i in order:
                if total([lows[j] for j in kept]) <= width:
                    break
                for j in list(kept):
                    if j == i or (self.groups[i] is not None and self.groups[j] == self.groups[i]):
                        kept.remove(j)
                        folded.append(j)
        if wide:
            widths = [highs[i] for i in kept]
        else:
            widths = [lows[i] for i in kept]
            spare = width - total(widths)
            # The spare room goes to whole headers first, then to the wrapping columns in turn.
            for kinds in ((FIXED,), (WORDS, TEXT)):
                for n, i in enumerate(kept):
                    if self.kinds[i] in kinds:
                        give = min(max(spare, 0), highs[i] - widths[n])
                        widths[n] += give
                        spare -= give
        return kept, widths, total(widths), sorted(folded)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        kept, widths, needed, folded = self._plan(console, width, settings.wide)
        # A legend goes below the table at the console's width: as a caption it would wrap at the
        # table's, which for a narrow table splits the list every few words.
        legend = self._legend_lines(console, kept, width) if self.legend is not None else []
        inner = Table(title=self.title, caption=None if self.legend is not None else self.caption,
                      title_justify=self.title_justify,
                      caption_justify=self.caption_justify, box=self.box,
                      show_header=self.show_header, show_edge=self.show_edge)
        for i, w in zip(kept, widths):
            col = self.columns[i]
            header = _cell_text(console, col.header)
            header.no_wrap = False
            inner.add_column(header, justify=col.justify, width=w,
                             no_wrap=self.kinds[i] == FIXED, overflow="fold")
        for r in range(self.row_count):
            row = []
            for i in kept:
                text = _cell_text(console, self.columns[i]._cells[r])
                text.no_wrap = self.kinds[i] == FIXED
                text.overflow = "fold"
                row.append(text)
            inner.add_row(*row)
        if needed > width:  # too narrow even for the columns that never fold: one row a block
            yield from self._records(console)
            return
        yield inner
        yield from legend
        if folded:
            names = ", ".join(_cell_text(console, self.columns[i].header).plain for i in folded)
            # Options are written without spaces so that a wrapped line never splits one.
            how = "--wide shows them" + (f", as do {settings.other_forms}"
                                         if settings.other_forms else "")
            yield Text(f"left out to fit {width} columns: {names}; {how}")


    def _caption(self, console: Console, kept: list[int]):
        """The caption; a legend names only the columns in `kept`."""
        if self.legend is None:
            return self.caption
        entries = self._legend_entries(console, kept)
        return self.legend[0] + ", ".join(entries) if entries else None

    def _legend_entries(self, console: Console, kept: list[int]) -> list[str]:
        """`HEADER meaning` of each column in `kept` that the legend explains."""
        meanings = self.legend[1]
        shown = [_cell_text(console, self.columns[i].header).plain for i in kept]
        return [f"{h} {meanings[h]}" for h in shown if h in meanings]

    def _legend_lines(self, console: Console, kept: list[int], width: int) -> list[Text]:
        """The legend in lines of at most `width`, broken between entries, never inside one
        (none when no column it explains is shown)."""
        entries = self._legend_entries(console, kept)
        if not entries:
            return []
        lines, line = [], self.legend[0].rstrip()
        for n, entry in enumerate(entries):
            piece = entry + ("," if n < len(entries) - 1 else "")
            if n and cell_len(line) + 1 + cell_len(piece) > width:
                lines.append(line)
                line = "  " + piece
            else:
                line = f"{line} {piece}" if line else piece
        lines.append(line)
        return [_cell_text(console, ln) for ln in lines]

    def _records(self, console: Console) -> RenderResult:
        """The table as one block of `header: value` lines per row (every column, none cut)."""
        if self.title:
            yield _cell_text(console, self.title)
        headers = [_cell_text(console, c.header).plain for c in self.columns]
        for r in range(self.row_count):
            yield Text("")
            for header, col in zip(headers, self.columns):
                value = _cell_text(console, col._cells[r])
                if value.plain:
                    yield Text.assemble(f"{header}: ", value)
        caption = self._caption(console, list(range(len(self.columns))))
        if caption:
            yield Text("")
            yield _cell_text(console, caption)


class PagedMatrix:
    """A bot-against-bot matrix (crosstable, LOS): the opponent columns in as many blocks as the
    width needs, each block with the rank, name and total of every row."""

    def __init__(self, title: str, labels: list[str], values: list[list[str]],
                 totals: list[str] | None = None, total_header: str = "total",
                 caption: str | None = None) -> None:
        self.title, self.labels, self.values = title, labels, values
        self.totals, self.total_header, self.caption = totals, total_header, caption

    def _table(self, title: str, columns: list[int], with_total: bool) -> FittedTable:
        table = FittedTable(title=title, title_justify="left", caption=self.caption,
                            caption_justify="left")
        table.add_column("#", justify="right", priority=0)
        table.add_column("bot", priority=0)
        for j in columns:
            table.add_column(str(j + 1), justify="right", priority=0)
        if with_total:
            table.add_column(self.total_header, justify="right", priority=0)
        for i, label in enumerate(self.labels):
            table.add_row(str(i + 1), label, *(self.values[i][j] for j in columns),
                          *([self.totals[i]] if with_total else []))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        n = len(self.labels)
        with_total = self.totals is not None
        whole = self._table(self.title, list(range(n)), with_total)
        if settings.wide or whole._plan(console, options.max_width, True)[2] <= options.max_width:
            yield whole
            return
        # Every cell is fixed, so a column's width is its widest cell: blocks are cut by sums.
        def width_of(cells: list[str]) -> int:
            return max(cell_len(_cell_text(console, c).plain) for c in cells) + 3

        fixed = 1 + width_of(["#", str(n)]) + width_of(["bot", *self.labels])
        if with_total:
            fixed += width_of([self.total_header, *self.totals])
        widths = [width_of([str(j + 1), *(row[j] for row in self.values)]) for j in range(n)]
        blocks: list[list[int]] = [[]]
        used = fixed
        for j in range(n):  # as many opponent columns as fit beside the row labels (at least one)
            if blocks[-1] and used + widths[j] > options.max_width:
                blocks.append([])
                used = fixed
            blocks[-1].append(j)
            used += widths[j]
        for block in blocks:  # each block complete in itself: labels, its opponents, the totals
            yield self._table(f"{self.title} (opponents {block[0] + 1}–{block[-1] + 1} of {n})",
                              block, with_total)
