"""A DataTable that follows a :class:`TableSpec` cheaply."""

from __future__ import annotations

from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.message import Message
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets._data_table import CellKey, RowKey

from ktop.ui.render.sortkey import sort_key
from ktop.ui.render.view import LazyRows, TableSpec
from ktop.ui.widgets.cell_render import CellRenderer, fits_fast_path

MIN_WINDOW = 30
"""Rows of a long (lazy) list held by the table at least (before the table has a size)."""
CACHE_LINES = 1024
"""Drawn lines remembered per table (a few screens of a tall table, at a few widths)."""
WINDOW_SCREENS = 3
"""A long list's table holds this many screens of rows: the rows on screen and twice as
many again for the cursor (and the mouse wheel) to move through before the window moves.
Rows past them are never built, so a frame costs the same at 1,000 not-Ready nodes as at
50,000."""


class SnapshotTable(DataTable[Text]):
    """Shows a :class:`TableSpec`; updates cells in place when the row keys are unchanged.

    When the set of rows changes it clears and re-adds every row (one pass;
    never many ``remove_row`` calls, which are O(N) each), keeping the
    cursor on the same row key when that row survives.

    A long list (a spec with :class:`LazyRows`) is shown a window of rows at a time
    (:attr:`window_size`: three screens of the table, at least :data:`MIN_WINDOW`): the
    cursor keys move the window when the cursor leaves it, so every row can be reached,
    and the filter and the sort run over the whole list (its search text and sort keys,
    not built rows).
    """

    class WindowMoved(Message):
        """A long list's table now holds other rows (its title says which)."""

    def __init__(self, *, id: str | None = None, rows_only: bool = False) -> None:
        # A cell cursor lets `s` sort by the column under it; tables whose rows are
        # chosen with enter (triage) keep a row cursor, so enter selects the row.
        super().__init__(id=id, cursor_type="row" if rows_only else "cell", zebra_stripes=True)
        self.rebuilds = 0
        """How many times rows were cleared and re-added (tests check in-place updates)."""
        self._shown_columns: tuple[str, ...] = ()
        self._shown_widths: tuple[int | None, ...] = ()
        self._shown_rows: dict[str, tuple[Text, ...]] = {}
        self._spec: TableSpec | None = None
        self.filter_text = ""
        """Rows shown contain this text in some cell (case does not matter); '' shows all."""
        self.sort_by: str | None = None
        """The column rows are sorted by, or None for the view's own order."""
        self.sort_reverse = False
        self.total_rows = 0
        """Rows in the spec before filtering."""
        self.matched = 0
        """Rows that pass the filter (on screen or not)."""
        self.window_start = 0
        """Where in the matching rows the rows held by the table begin (lazy lists)."""
        self._order: tuple[object, str, str | None, bool, list[int]] | None = None
        """A lazy list's filtered, sorted order, for (source, filter, sort, reverse)."""
        self._rebuild_next = False
        """The rows on screen may differ from ``_shown_rows`` (the filter or the sort
        changed): the next :meth:`show` re-adds every row, even when none match."""
        self._cells = CellRenderer()
        self._lines: LRUCache[tuple[object, ...], Strip] = LRUCache(CACHE_LINES)
        """Drawn lines, kept until their row's cells, the table's layout, the cursor, hover
        or focus change (the DataTable's own line cache is emptied by any change to any
        cell, so every row on screen was drawn again when one cell changed)."""
        self._generation = 0
        """Bumped when rows are re-added, columns change width or the theme changes: every
        line drawn before is then out of date."""
        self._row_versions: list[int] = []
        """Per row on screen: bumped when :meth:`_update_by_position` changes its cells."""
        self._version = 0
        self._by_position = not rows_only
        """Rows that changed order or identity but not number are written over the rows
        on screen, cell by cell, instead of clearing and re-adding every row (at 100,000
        nodes a sorted list reorders every second). The DataTable's own row keys are then
        those of the last rebuild: :attr:`row_keys` and :attr:`cursor_key` say which rows
        are shown. Tables whose rows are chosen by key (``rows_only``) always rebuild."""

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        """A line of the table as the DataTable draws it, remembered (see ``_lines``)."""
        try:
            row_key, _offset = self._get_offsets(y)
        except LookupError:
            return super()._render_line(y, x1, x2, base_style)
        index = None if row_key is self._header_row_key else self._row_locations.get(row_key)
        versions = self._row_versions
        version = versions[index] if index is not None and 0 <= index < len(versions) else -1
        key = (self._generation, version, y, x1, x2, self.size.width, self.cursor_coordinate,
               self.hover_coordinate, base_style, self.cursor_type, self.show_cursor,
               self._show_hover_cursor, self._pseudo_class_state, self.zebra_stripes)  # fmt: skip
        strip = self._lines.get(key)
        if strip is None:
            strip = super()._render_line(y, x1, x2, base_style)
            self._lines[key] = strip
        return strip

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """Columns may change width (rows were added): every line is out of date."""
        super()._update_dimensions(new_rows)
        self._generation += 1

    def _update_column_widths(self, updated_cells: set[CellKey]) -> None:
        """Columns may change width (a wider cell): every line is out of date."""
        super()._update_column_widths(updated_cells)
        self._generation += 1

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list[list[Segment]]:
        """A body cell of one line from :class:`CellRenderer` (same segments, remembered by
        content); headers, labels, fixed and taller cells as the DataTable draws them.
        """
        padding = self.cell_padding
        row_key = self._row_locations.get_key(row_index) if row_index >= 0 else None
        row = self.rows.get(row_key) if row_key is not None else None
        if row is None or column_index < self.fixed_columns or row_index < self.fixed_rows:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        cells = self._get_row_renderables(row_index).cells
        cell = cells[column_index] if column_index < len(cells) else None
        if not isinstance(cell, Text) or not fits_fast_path(cell, width, padding, row.height):
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        # Not the DataTable's own cell cache: any change to the table empties that one,
        # while this one keeps each cell's line until its text or its place changes.

        def styles() -> tuple[Style, Style]:
            component_style, post_style = self._get_styles_to_render_cell(
                False,
                False,
                False,
                hover,
                cursor,
                self.show_cursor,
                self._show_hover_cursor,
                self.cursor_foreground_priority == "css",
                self.cursor_background_priority == "css",
            )
            meta = Style.from_meta({"row": row_index, "column": column_index})
            return base_style + meta + component_style, post_style

        # Everything the styles depend on: the cell's place, the row's style, the cursor,
        # hover and focus (the component styles follow the theme: forget() on a change).
        place = (row_index, column_index, base_style, cursor, hover, self.show_cursor,
                 self._show_hover_cursor, self._pseudo_class_state)  # fmt: skip
        return self._cells.line(self.app.console, cell, width, padding, place, styles)

    def show(self, spec: TableSpec) -> None:
        """Make the table show ``spec`` (filtered and sorted as asked)."""
        self._spec = spec
        columns = tuple(c.key for c in spec.columns)
        widths = tuple(c.width for c in spec.columns)
        if columns != self._shown_columns or widths != self._shown_widths:
            self._shown_widths = widths
            self.clear(columns=True)
            for column in spec.columns:
                self.add_column(column.label, width=column.width, key=column.key)
            self._shown_columns = columns
            self._shown_rows = {}
        if spec.lazy is not None:
            rows = self._window(spec.lazy)
        else:
            rows = _unique_rows(spec)
            self.total_rows = len(rows)
            rows = self._filtered_sorted(rows)
            self.matched, self.window_start = len(rows), 0
        same_rows = tuple(rows) == tuple(self._shown_rows)
        reordered = self._by_position and len(rows) == len(self._shown_rows)
        if not self._rebuild_next and (same_rows or reordered):
            self._update_by_position(rows)
        else:
            self._rebuild(rows)
            self._rebuild_next = False

    def _window(self, lazy: LazyRows) -> dict[str, tuple[Text, ...]]:
        """The rows of the window of a lazy list, built now."""
        order = self._lazy_order(lazy)
        self.total_rows, self.matched = lazy.count, len(order)
        size = self.window_size
        self.window_start = max(0, min(self.window_start, self.matched - size))
        rows: dict[str, tuple[Text, ...]] = {}
        for i in order[self.window_start : self.window_start + size]:
            row = lazy.row(i)
            rows[row.key if row.key not in rows else f"{row.key}#{i}"] = row.cells
        return rows

    def _lazy_order(self, lazy: LazyRows) -> list[int]:
        """Indices of a lazy list's rows that match the filter, in the order asked."""
        key = self.sort_by if self.sort_by in lazy.sort_keys else None
        cached = self._order
        if (
            cached is not None
            and cached[0] is lazy.source
            and cached[1:4] == (self.filter_text, key, self.sort_reverse)
        ):
            return cached[4]
        order = list(range(lazy.count))
        if self.filter_text:
            needle = self.filter_text.lower()
            order = [i for i in order if needle in lazy.search(i)]
        if key is not None:
            order.sort(key=lazy.sort_keys[key], reverse=self.sort_reverse)
        self._order = (lazy.source, self.filter_text, key, self.sort_reverse, order)
        return order

    def move_to(self, index: int) -> None:
        """Put the cursor on the ``index``-th matching row, moving the window to it."""
        if self.matched == 0:
            return
        index = max(0, min(index, self.matched - 1))
        if not self.window_start <= index < self.window_start + self.row_count:
            size = self.window_size
            self.window_start = max(0, min(index - size // 2, self.matched - size))
            self._reshow()
            self.post_message(self.WindowMoved())
        self.move_cursor(row=index - self.window_start, animate=False)

    @property
    def window_size(self) -> int:
        """Rows of a long list held at a time: three screens of this table."""
        return max(MIN_WINDOW, WINDOW_SCREENS * self.scrollable_content_region.height)

    def on_resize(self) -> None:
        """A long list holds three screens of the table's new height (the rows it shows,
        at least): more when it grew, fewer (none built in vain) when it shrank.
        """
        lazy = self._spec is not None and self._spec.lazy is not None
        if lazy and self._windowed and self.row_count != self.window_size:
            self._reshow()
            self.post_message(self.WindowMoved())  # the title says which rows it holds

    @property
    def _windowed(self) -> bool:
        return self.row_count < self.matched

    def _page(self) -> int:
        header = self.header_height if self.show_header else 0
        return max(1, self.scrollable_content_region.height - header)

    def action_cursor_down(self) -> None:
        """Down; past the window's last row, the window moves on."""
        if self._windowed and self.cursor_row >= self.row_count - 1:
            self.move_to(self.window_start + self.cursor_row + 1)
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        """Up; above the window's first row, the window moves back."""
        if self._windowed and self.cursor_row <= 0:
            self.move_to(self.window_start - 1)
        else:
            super().action_cursor_up()

    def action_page_down(self) -> None:
        """A page down, across the window's end."""
        if self._windowed and self.cursor_row + self._page() >= self.row_count:
            self.move_to(self.window_start + self.cursor_row + self._page())
        else:
            super().action_page_down()

    def action_page_up(self) -> None:
        """A page up, across the window's start."""
        if self._windowed and self.cursor_row - self._page() < 0:
            self.move_to(self.window_start + self.cursor_row - self._page())
        else:
            super().action_page_up()

    def action_scroll_top(self) -> None:
        """The first matching row."""
        if self._windowed:
            self.move_to(0)
        else:
            super().action_scroll_top()

    def action_scroll_bottom(self) -> None:
        """The last matching row."""
        if self._windowed:
            self.move_to(self.matched - 1)
        else:
            super().action_scroll_bottom()

    def _update_by_position(self, rows: dict[str, tuple[Text, ...]]) -> None:
        """Write ``rows`` over the same number of rows on screen; the cursor follows its row
        when that row is still shown.
        """
        cursor_key = self.cursor_key
        widths = [column.content_width for column in self.ordered_columns]
        for i, (cells, before) in enumerate(
            zip(rows.values(), self._shown_rows.values(), strict=True)
        ):
            if cells != before and i < len(self._row_versions):
                self._version += 1
                self._row_versions[i] = self._version
            for j, (new, old) in enumerate(zip(cells, before, strict=False)):
                if new != old:
                    # A cell wider than its column widens it (as re-adding the row would);
                    # asking for it on every cell would measure the whole column each time.
                    wider = j < len(widths) and new.cell_len > widths[j]
                    if wider:
                        widths[j] = new.cell_len
                    self.update_cell_at(Coordinate(i, j), new, update_width=wider)
        self._shown_rows = rows
        if cursor_key is not None and cursor_key in rows:
            index = list(rows).index(cursor_key)
            if index != self.cursor_row:
                self.move_cursor(row=index, animate=False)

    @property
    def cursor_key(self) -> str | None:
        """The key of the row under the cursor (as the view names it), or None."""
        if self._shown_rows and 0 <= self.cursor_row < len(self._shown_rows):
            return list(self._shown_rows)[self.cursor_row]
        return None

    def _rebuild(self, rows: dict[str, tuple[Text, ...]]) -> None:
        cursor_key = self.cursor_key
        cursor_row = self.cursor_row
        self.clear()
        for key, cells in rows.items():
            self.add_row(*cells, key=key)
        self._shown_rows = rows
        self.rebuilds += 1
        self._generation += 1
        self._row_versions = [0] * len(rows)
        if rows:
            index = list(rows).index(cursor_key) if cursor_key in rows else cursor_row
            self.move_cursor(row=min(index, len(rows) - 1), animate=False)

    def _filtered_sorted(self, rows: dict[str, tuple[Text, ...]]) -> dict[str, tuple[Text, ...]]:
        if self.filter_text:
            needle = self.filter_text.lower()
            rows = {
                k: cells
                for k, cells in rows.items()
                if any(needle in c.plain.lower() for c in cells)
            }
        if self.sort_by is not None and self.sort_by in self._shown_columns:
            index = self._shown_columns.index(self.sort_by)
            ordered = sorted(
                rows.items(),
                key=lambda item: sort_key(item[1][index].plain),
                reverse=self.sort_reverse,
            )
            rows = dict(ordered)
        return rows

    def set_filter(self, text: str) -> None:
        """Show only rows with ``text`` in some cell ('' shows all)."""
        if text != self.filter_text:
            self.window_start = 0
        self.filter_text = text
        self._reshow()

    def sort_on(self, column: str | None = None) -> None:
        """Sort by ``column`` (default: the one under the cursor); again on it reverses."""
        if column is None:
            if not self._shown_columns:
                return
            column = self._shown_columns[min(self.cursor_column, len(self._shown_columns) - 1)]
        if column == self.sort_by:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_by, self.sort_reverse = column, False
        self.window_start = 0
        self._reshow()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column header sorts by that column."""
        event.stop()
        if event.column_key.value is not None:
            self.sort_on(event.column_key.value)

    def _reshow(self) -> None:
        self._rebuild_next = True
        if self._spec is not None:
            self.show(self._spec)

    def forget(self) -> None:
        """Rebuild every row on the next :meth:`show` (the theme changed)."""
        self._shown_columns = ()
        self._shown_rows = {}
        self._order = None
        self._rebuild_next = True
        self._cells.clear()
        self._lines.clear()
        self._generation += 1

    def as_text(self, title: str = "") -> str:
        """The table as aligned plain text (what ``y`` copies): title, header, rows."""
        labels = [str(c.label) for c in self.columns.values()]
        rows = [[self.cell_text(key, c) for c in self._shown_columns] for key in self._shown_rows]
        widths = [
            max([len(t) for t in (label, *(r[i] for r in rows))]) for i, label in enumerate(labels)
        ]
        lines = [title] if title else []
        for cells in (labels, *rows):
            lines.append("  ".join(t.ljust(w) for t, w in zip(cells, widths, strict=True)).rstrip())
        return "\n".join(lines)

    def cell_text(self, row_key: str, column_key: str) -> str:
        """A cell's plain text (for tests and screen readers of the DOM)."""
        if row_key not in self._shown_rows:
            raise KeyError(row_key)
        row = list(self._shown_rows).index(row_key)
        value = self.get_cell_at(Coordinate(row, self._shown_columns.index(column_key)))
        return value.plain if isinstance(value, Text) else str(value)

    def column_text(self, column_key: str) -> list[str]:
        """Every cell of a column as plain text, top to bottom."""
        return [self.cell_text(key, column_key) for key in self._shown_rows]

    @property
    def shown_range(self) -> str:
        """Which matching rows the table holds, ``201-400``, or '' when it holds all."""
        if not self._windowed:
            return ""
        return f"{self.window_start + 1:,}-{self.window_start + self.row_count:,}"

    @property
    def row_keys(self) -> list[str]:
        """The row keys, top to bottom."""
        return list(self._shown_rows)


def _unique_rows(spec: TableSpec) -> dict[str, tuple[Text, ...]]:
    """Rows by key; a repeated key gets ``#index`` (DataTable keys must be unique)."""
    rows: dict[str, tuple[Text, ...]] = {}
    for index, row in enumerate(spec.rows):
        key = row.key if row.key not in rows else f"{row.key}#{index}"
        rows[key] = row.cells
    return rows
