"""A DataTable that follows a :class:`TableSpec` cheaply."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from ktop.ui.render.sortkey import sort_key
from ktop.ui.render.view import TableSpec


class SnapshotTable(DataTable[Text]):
    """Shows a :class:`TableSpec`; updates cells in place when the row keys are unchanged.

    When the set of rows changes it clears and re-adds every row (one pass;
    never many ``remove_row`` calls, which are O(N) each), keeping the
    cursor on the same row key when that row survives.
    """

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
        self._rebuild_next = False
        """The rows on screen may differ from ``_shown_rows`` (the filter or the sort
        changed): the next :meth:`show` re-adds every row, even when none match."""

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
        rows = _unique_rows(spec)
        self.total_rows = len(rows)
        rows = self._filtered_sorted(rows)
        if not self._rebuild_next and tuple(rows) == tuple(self._shown_rows):
            self._update_in_place(rows)
        else:
            self._rebuild(rows)
            self._rebuild_next = False

    def _update_in_place(self, rows: dict[str, tuple[Text, ...]]) -> None:
        for key, cells in rows.items():
            old = self._shown_rows[key]
            for column, new, before in zip(self._shown_columns, cells, old, strict=False):
                if new != before:
                    self.update_cell(key, column, new)
        self._shown_rows = rows

    def _rebuild(self, rows: dict[str, tuple[Text, ...]]) -> None:
        cursor_key: str | None = None
        if self._shown_rows and 0 <= self.cursor_row < len(self._shown_rows):
            cursor_key = list(self._shown_rows)[self.cursor_row]
        cursor_row = self.cursor_row
        self.clear()
        for key, cells in rows.items():
            self.add_row(*cells, key=key)
        self._shown_rows = rows
        self.rebuilds += 1
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
        self._rebuild_next = True

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
        value = self.get_cell(row_key, column_key)
        return value.plain if isinstance(value, Text) else str(value)

    def column_text(self, column_key: str) -> list[str]:
        """Every cell of a column as plain text, top to bottom."""
        return [self.cell_text(key, column_key) for key in self._shown_rows]

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
