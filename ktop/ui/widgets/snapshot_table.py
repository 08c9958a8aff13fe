"""A DataTable that follows a :class:`TableSpec` cheaply."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from ktop.ui.render.view import TableSpec


class SnapshotTable(DataTable[Text]):
    """Shows a :class:`TableSpec`; updates cells in place when the row keys are unchanged.

    When the set of rows changes it clears and re-adds every row (one pass;
    never many ``remove_row`` calls, which are O(N) each), keeping the
    cursor on the same row key when that row survives.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.rebuilds = 0
        """How many times rows were cleared and re-added (tests check in-place updates)."""
        self._shown_columns: tuple[str, ...] = ()
        self._shown_rows: dict[str, tuple[Text, ...]] = {}

    def show(self, spec: TableSpec) -> None:
        """Make the table show ``spec``."""
        columns = tuple(c.key for c in spec.columns)
        if columns != self._shown_columns:
            self.clear(columns=True)
            for column in spec.columns:
                self.add_column(column.label, width=column.width, key=column.key)
            self._shown_columns = columns
            self._shown_rows = {}
        rows = _unique_rows(spec)
        if tuple(rows) == tuple(self._shown_rows):
            self._update_in_place(rows)
        else:
            self._rebuild(rows)

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

    def forget(self) -> None:
        """Rebuild every row on the next :meth:`show` (the theme changed)."""
        self._shown_columns = ()
        self._shown_rows = {}

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
