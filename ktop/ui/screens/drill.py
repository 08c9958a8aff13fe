"""A drill-down screen for one area: reasons for unknown values, a summary, tables."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.events import Resize
from textual.widgets import Input, Static

from ktop.model.areas import AREAS
from ktop.model.events import Area
from ktop.model.text import counted
from ktop.ui.frame import Frame
from ktop.ui.render.areas import AREA_KEYS, drill_view, render_key
from ktop.ui.render.trend import AREA_CHARTS
from ktop.ui.render.view import DrillView
from ktop.ui.screens.base import KtopScreen
from ktop.ui.widgets.filter_input import FilterInput
from ktop.ui.widgets.snapshot_table import SnapshotTable
from ktop.ui.widgets.trend_chart import TrendChart

TALL = 36
"""Drill-downs at least this tall show every chart; shorter ones only the first."""


class DrillScreen(KtopScreen):
    """Every detail of one area in DataTables (tab moves between tables)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "slash",
            "filter",
            "filter",
            key_display="/",
            tooltip="filter the tables: rows with this text in any column (name, zone, rack, "
            "namespace, reason, flow schema); enter keeps it, escape clears it",
        ),
        Binding(
            "s",
            "sort",
            "sort",
            show=False,
            tooltip="sort by the column under the cursor; again reverses (or click a header)",
        ),
    ]
    """The drill-down's own keys; each ``tooltip`` is its text in the help screen."""

    def __init__(self, area: Area) -> None:
        super().__init__(name=area.value)
        self.area = area
        self._shown_key: object = None
        self._titles_of: dict[str, tuple[str, str]] = {}
        self._shown_titles: dict[str, Text] = {}
        self._shown_header: Text | None = None
        self._header_lines = -1

    def compose_body(self) -> ComposeResult:
        """Title, header lines, and one titled table per table of the area's view."""
        view = drill_view(self.ktop.frame.snapshot, self.area)
        yield Static(
            Text.assemble(
                (f"{AREA_KEYS[self.area]} {AREAS[self.area].title}", "bold"),
                ("   esc/o overview · 1-5 areas · f findings · ? help", "dim"),
            ),
            id="drill-title",
        )
        yield Static("", id="drill-header")
        with Vertical(id="drill-charts"):
            for i, chart in enumerate(AREA_CHARTS[self.area]):
                yield TrendChart(chart, id=f"chart-{i}", classes="extra" if i else "")
        with Vertical(id="drill-tables"):
            for spec in view.tables:
                yield Static(spec.title, id=f"title-{spec.key}", classes="table-title")
                yield SnapshotTable(id=f"table-{spec.key}")
        filter_line = FilterInput(
            placeholder="filter: text in any column (enter keeps, escape clears)",
            id="drill-filter",
            compact=True,
        )
        filter_line.display = False
        yield filter_line

    def action_filter(self) -> None:
        """Open the filter line."""
        line = self.query_one(FilterInput)
        line.display = True
        line.focus()

    def close_filter(self) -> None:
        """Hide the filter line (keeping its text as the filter) and focus the first table."""
        line = self.query_one(FilterInput)
        self._apply_filter(line.value)
        line.display = False
        tables = list(self.query(SnapshotTable))
        if tables:
            tables[0].focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Filter as the user types."""
        self._apply_filter(event.value)

    def on_filter_input_closed(self, _event: FilterInput.Closed) -> None:
        """Enter keeps the filter, escape cleared it."""
        self.close_filter()

    def _apply_filter(self, text: str) -> None:
        for table in self.query(SnapshotTable):
            table.set_filter(text.strip())
        self._titles()

    def on_snapshot_table_window_moved(self, _event: SnapshotTable.WindowMoved) -> None:
        """A long list moved on: its title says which rows it holds."""
        self._titles()

    def action_sort(self) -> None:
        """Sort the table in focus by the column under its cursor."""
        table = self.focused if isinstance(self.focused, SnapshotTable) else None
        if table is None:
            tables = list(self.query(SnapshotTable))
            table = tables[0] if tables else None
        if table is not None:
            table.sort_on()
            self._titles()

    def on_resize(self, event: Resize) -> None:
        """Show every chart on tall terminals, only the first on short ones."""
        self.set_class(event.size.height >= TALL, "-tall")

    def show_body(self, frame: Frame) -> None:
        """Update charts, then header and tables unless the area's data is unchanged."""
        self.set_class(self.size.height >= TALL, "-tall")
        window_s = self.ktop.trend_window_s
        events = frame.published.timeline
        for chart in self.query(TrendChart):
            chart.show(frame.snapshot.history, frame.snapshot.at, window_s, events, self.area)
        key = render_key(frame.snapshot, self.area, drill=True)
        if key is self._shown_key or key == self._shown_key:
            return
        self._shown_key = key
        self._render_view(drill_view(frame.snapshot, self.area))

    def forget(self) -> None:
        """Render the view again on the next show (the theme changed)."""
        self._shown_key = None
        self._shown_titles = {}
        self._shown_header, self._header_lines = None, -1
        for table in self.query(SnapshotTable):
            table.forget()

    def copy_text(self) -> tuple[str, str]:
        """The table in focus (or the first one) as aligned plain text."""
        tables = list(self.query(SnapshotTable))
        focused = self.focused if isinstance(self.focused, SnapshotTable) else None
        table = focused or (tables[0] if tables else None)
        if table is None:
            return "table", ""
        key = (table.id or "").removeprefix("table-")
        title = self.query_one(f"#title-{key}", Static).content
        name = title.plain if isinstance(title, Text) else str(title)
        return f"table {name.split('  ')[0]}", table.as_text(name)

    def _render_view(self, view: DrillView) -> None:
        header = self.query_one("#drill-header", Static)
        text = Text("\n").join(view.header)
        if text != self._shown_header:
            # A layout pass only when the header's height can change (its line count).
            lines = len(view.header)
            header.update(text, layout=lines != self._header_lines)
            self._shown_header, self._header_lines = text, lines
        header.display = bool(view.header)
        self._titles_of = {spec.key: (spec.title, spec.empty) for spec in view.tables}
        for spec in view.tables:
            self.query_one(f"#table-{spec.key}", SnapshotTable).show(spec)
        self._titles()

    def _titles(self) -> None:
        """Each table's title: rows shown (of how many, when filtered), sort column."""
        for key, (title, empty) in self._titles_of.items():
            table = self.table(key)
            count = counted(table.total_rows, "row") if table.total_rows else empty
            if table.filter_text:
                count = (
                    f"{table.matched:,} of {counted(table.total_rows, 'row')} "
                    f"match {table.filter_text!r}"
                )
            if table.shown_range:
                count += f" · {table.shown_range} shown, pgdn for more"
            if table.sort_by is not None:
                arrow = "desc" if table.sort_reverse else "asc"
                count += f" · sorted by {table.sort_by} {arrow}"
            text = Text.assemble((title, "bold"), (f"  {count}", "dim"))
            if self._shown_titles.get(key) != text:  # one line each: never a layout pass
                self._shown_titles[key] = text
                self.query_one(f"#title-{key}", Static).update(text, layout=False)

    def charts(self) -> list[TrendChart]:
        """The screen's trend charts, in order."""
        return list(self.query(TrendChart))

    def table(self, key: str) -> SnapshotTable:
        """One of the screen's tables by its spec key."""
        return self.query_one(f"#table-{key}", SnapshotTable)

    @property
    def header_text(self) -> str:
        """The header lines as plain text."""
        content = self.query_one("#drill-header", Static).content
        return content.plain if isinstance(content, Text) else str(content)
