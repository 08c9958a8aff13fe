"""The fleet screen: one row per cell, worst first; enter opens the cell's dashboard."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Footer, Static

from ktop.ui.frame import Frame
from ktop.ui.render.fleet import fleet_table, headline, notes
from ktop.ui.screens.base import KtopScreen
from ktop.ui.widgets.snapshot_table import SnapshotTable

if TYPE_CHECKING:
    from ktop.ui.fleet_app import FleetApp


class FleetScreen(KtopScreen):
    """The cells table, a headline, and the shared causes and unread cells below it."""

    _seen_data = False

    def compose(self) -> ComposeResult:
        """Title, headline, the cells table, the notes and the footer."""
        yield Static(
            Text.assemble(
                ("Fleet", "bold"),
                ("   enter: open a cell · esc in a cell: back here · ? keys", "dim"),
            ),
            id="fleet-title",
        )
        yield Static("", id="fleet-headline")
        yield SnapshotTable(id="fleet-cells", rows_only=True)
        yield Static("", id="fleet-notes")
        yield Footer(compact=True, show_command_palette=False)

    @property
    def fleet_app(self) -> FleetApp:
        """The app, typed."""
        return cast("FleetApp", self.app)

    def show(self, frame: Frame) -> None:
        """Render the app's fleet view (the frame belongs to the cell last opened)."""
        view = self.fleet_app.view
        self.query_one("#fleet-headline", Static).update(headline(view))
        self.table.show(fleet_table(view, self.size.width or self.app.size.width))
        if not self._seen_data and any(c.read for c in view.cells):
            self._seen_data = True  # the first data ranks the cells: start on the worst
            self.table.move_cursor(row=0, animate=False)
        lines = notes(view)
        box = self.query_one("#fleet-notes", Static)
        box.update(Text("\n").join(lines))
        box.display = bool(lines)

    def on_resize(self) -> None:
        """Wide terminals get more columns."""
        self._show_latest()

    def copy_text(self) -> tuple[str, str]:
        """``y`` copies the fleet table as text."""
        rows = [
            "  ".join(cell.plain for cell in row.cells)
            for row in fleet_table(self.fleet_app.view, 200).rows
        ]
        return "fleet", "\n".join(rows)

    @property
    def table(self) -> SnapshotTable:
        """The cells table."""
        return self.query_one("#fleet-cells", SnapshotTable)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a cell: its full dashboard."""
        if event.row_key.value:
            self.fleet_app.open_cell(str(event.row_key.value))
