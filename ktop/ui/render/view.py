"""What renderers return: overview panel content and drill-down tables."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from rich.text import Text

from ktop.model.text import fmt_si, fmt_val, truncate, truncate_middle
from ktop.model.values import Val
from ktop.ui.render.level import MARKED, STYLE, SYMBOL, Level, marked, styled
from ktop.ui.render.trend import ChartData

Align = Literal["left", "right"]


@dataclass(frozen=True, slots=True)
class PanelView:
    """One overview panel: a title with status, and lines that fit its box."""

    title: Text
    lines: tuple[Text, ...]
    level: Level = Level.NEUTRAL
    sparks: tuple[ChartData, ...] = ()
    """Sparklines for the last rows, when the panel has room for them."""

    @property
    def plain(self) -> str:
        """Title and lines as plain text (for tests and logs)."""
        return "\n".join([self.title.plain, *(line.plain for line in self.lines)])


@dataclass(frozen=True, slots=True)
class Column:
    """A drill-down table column; ``width`` None sizes it to the content."""

    key: str
    label: str
    width: int | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """A drill-down table row with a stable key."""

    key: str
    cells: tuple[Text, ...]


@dataclass(frozen=True, slots=True)
class LazyRows:
    """A long list whose rows are built only for the part of it on screen.

    Row ``i`` (in the list's own order) is ``row(i)``; the filter searches
    ``search(i)`` (the row's text, lower case) and sorting a column uses
    ``sort_keys[column](i)``. ``source`` is the data the rows come from: a table
    keeps its filtered and sorted order while ``source`` is the same object.
    """

    count: int
    row: Callable[[int], Row]
    search: Callable[[int], str]
    sort_keys: Mapping[str, Callable[[int], Any]]
    source: object


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A drill-down table: what columns, which rows.

    A long list gives ``lazy`` instead of ``rows``: the table shows a window of
    it, and the filter and the sort still reach every row.
    """

    key: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    empty: str = "(none)"
    """Shown in the title when there are no rows."""
    lazy: LazyRows | None = None

    def all_rows(self) -> tuple[Row, ...]:
        """Every row, a long list's built here one by one (exports and tests)."""
        if self.lazy is None:
            return self.rows
        return tuple(self.lazy.row(i) for i in range(self.lazy.count))


@dataclass(frozen=True, slots=True)
class DrillView:
    """A whole drill-down screen: header lines (unknown reasons, summary) and tables."""

    header: tuple[Text, ...]
    tables: tuple[TableSpec, ...] = field(default=())

    @property
    def plain(self) -> str:
        """Header lines as plain text."""
        return "\n".join(line.plain for line in self.header)


@dataclass(frozen=True, slots=True)
class TableCell:
    """A cell for a fixed-width line: text, width, alignment, level."""

    text: str
    width: int
    align: Align = "right"
    level: Level = Level.NEUTRAL


FLEX_MAX = 28
"""The flexible (name) column never grows wider than this."""


def table_lines(rows: Sequence[Sequence[TableCell]], width: int) -> list[Text]:
    """A panel's table (its header first) in ``width`` cells, one :func:`line` per row.

    The first column is the name. While every name fits in the room the declared
    column widths leave, those widths hold (so columns do not move from one frame to
    the next); when a name would be cut, each other column shrinks to its widest
    content (header included) and the name takes what that frees, so no name is cut
    while the table has free columns.
    """
    if not rows:
        return []
    widths = [c.width for c in rows[0]]
    need = max((len(marked(r[0].text, r[0].level)) for r in rows if r), default=0)
    room = width - sum(widths[1:]) - max(0, len(widths) - 1)
    if room < need:
        widths = [0] + [
            min(w, max(len(marked(r[j].text, r[j].level)) for r in rows if len(r) > j))
            for j, w in enumerate(widths)
            if j > 0
        ]
    flex_max = max(FLEX_MAX, need)
    return [
        line(
            [
                replace(c, width=widths[j]) if 0 < j < len(widths) and c.width > 0 else c
                for j, c in enumerate(r)
            ],
            width,
            flex_max=flex_max,
        )
        for r in rows
    ]


def line(cells: Sequence[TableCell], width: int, *, flex_max: int = FLEX_MAX) -> Text:
    """Join cells into one line of at most ``width`` cells.

    A cell with width 0 is flexible: it takes the room the others leave (at
    least 4 and at most ``flex_max`` cells), and its text is cut to fit.
    A cell of a marked level (:func:`marked`) carries its symbol in its own
    padding, or, when its text fills the width, in the space before it, so no
    column moves and no value is cut for the symbol. The first cell (a row's
    name, coloured by the row's level) carries the symbol only when no other
    cell of the line shows that level or a worse one; when it does not fit, the
    name is cut in the middle, keeping its end.
    """
    fixed = sum(c.width for c in cells if c.width > 0) + max(0, len(cells) - 1)
    flex_width = min(flex_max, max(4, width - fixed))
    out = Text()
    for i, cell in enumerate(cells):
        w = cell.width if cell.width > 0 else flex_width
        text = truncate(cell.text, w)
        sign = marked(text, cell.level)
        if i == 0:
            if sign != text and not _shown_elsewhere(cells, i):
                text = sign if len(sign) <= w else sign[0] + truncate_middle(cell.text, w - 1)
        elif len(sign) > w:
            out.append(sign[0], style=STYLE[cell.level])
        else:
            out.append(" ")
            text = sign
        padded = text.ljust(w) if cell.align == "left" else text.rjust(w)
        out.append(padded, style=STYLE[cell.level])
    out.truncate(width)
    out.rstrip()
    return out


def _shown_elsewhere(cells: Sequence[TableCell], i: int) -> bool:
    """Whether a cell other than ``cells[i]`` shows the symbol of ``cells[i]``'s level or
    of a worse one (marked, or a value that is itself the symbol, like ``?``).
    """
    worse = [SYMBOL[level] for level in MARKED if level >= cells[i].level]
    return any(
        marked(c.text, c.level).startswith(tuple(worse)) for j, c in enumerate(cells) if j != i
    )


def fit(
    body: Sequence[Text],
    note: Text | None,
    rows: int,
    header: Text | None = None,
    *,
    unbuilt: int = 0,
) -> tuple[Text, ...]:
    """Fit a header, body lines and an optional note into ``rows`` lines.

    The note (an unknown reason) always survives; body lines are cut first,
    with a ``+N more`` marker when some are hidden and there is room.
    ``unbuilt`` counts body lines after ``body`` that were not built because
    they could not be shown (``body`` then holds at least ``rows`` lines):
    they count in the ``+N more``.
    """
    rows = max(1, rows)
    top = [header] if header is not None and rows >= 3 else []
    tail = [note] if note is not None else []
    room = rows - len(top) - len(tail)
    shown = list(body)
    if room < len(shown) + unbuilt:
        keep = max(0, room - 1)
        hidden = len(shown) + unbuilt - keep
        shown = [*shown[:keep], Text(f"  +{hidden}{MORE}", style="dim")] if room > 0 else []
    return tuple([*top, *shown, *tail][:rows])


MORE = " more"
"""The end of the line that counts body lines a panel had no room for (``  +2 more``)."""


def cuts_rows(view: PanelView) -> bool:
    """True when ``view`` hides body lines behind a ``+N more`` line."""
    return any(line.plain.startswith("  +") and line.plain.endswith(MORE) for line in view.lines)


def degrade(level: Level, failing: bool) -> Level:
    """At least UNKNOWN when an input of the area is failing: unknown is never healthy."""
    return max(level, Level.UNKNOWN) if failing else level


def title(name: str, summary: str, level: Level) -> Text:
    """A panel title: ``name``, the level symbol and a one-line summary."""
    out = Text(name, style="bold")
    out.append(" ")
    out.append(SYMBOL[level], style=STYLE[level])
    if summary:
        out.append(" " + summary, style=STYLE[level])
    return out


def text_cell(text: str, level: Level = Level.NEUTRAL) -> Text:
    """A table cell (a name or words) styled by level, with its symbol and a space
    when the level is marked: ``✖ FullDisruption``.
    """
    return styled(text, level, " ")


def num_cell(text: str, level: Level = Level.NEUTRAL) -> Text:
    """A right-aligned table cell styled by level, with its symbol when the level is marked."""
    out = styled(text, level)
    out.justify = "right"
    return out


def val_cell(v: Val, fmt: Callable[[float], str] = fmt_si, level: Level = Level.NEUTRAL) -> Text:
    """A right-aligned table cell for a value: ``?`` styled as unknown when unknown."""
    return num_cell(fmt_val(v, fmt), level if v.known or v.empty else Level.UNKNOWN)
