"""A drill-down screen for one area: reasons for unknown values, a summary, tables."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Resize
from textual.widgets import Static

from ktop.model.events import Area
from ktop.ui.frame import Frame
from ktop.ui.render.areas import AREA_KEYS, AREA_TITLES, drill_view, render_key
from ktop.ui.render.trend import AREA_CHARTS
from ktop.ui.render.view import DrillView
from ktop.ui.screens.base import KtopScreen
from ktop.ui.widgets.snapshot_table import SnapshotTable
from ktop.ui.widgets.trend_chart import TrendChart

TALL = 36
"""Drill-downs at least this tall show every chart; shorter ones only the first."""


class DrillScreen(KtopScreen):
    """Every detail of one area in DataTables (tab moves between tables)."""

    def __init__(self, area: Area) -> None:
        super().__init__(name=area.value)
        self.area = area
        self._shown_key: object = None

    def compose_body(self) -> ComposeResult:
        """Title, header lines, and one titled table per table of the area's view."""
        view = drill_view(self.ktop.frame.snapshot, self.area)
        yield Static(
            Text.assemble(
                (f"{AREA_KEYS[self.area]} {AREA_TITLES[self.area]}", "bold"),
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

    def on_resize(self, event: Resize) -> None:
        """Show every chart on tall terminals, only the first on short ones."""
        self.set_class(event.size.height >= TALL, "-tall")

    def show_body(self, frame: Frame) -> None:
        """Update charts, then header and tables unless the area's data is unchanged."""
        self.set_class(self.size.height >= TALL, "-tall")
        window_s = self.ktop.trend_window_s
        for chart in self.query(TrendChart):
            chart.show(frame.snapshot.history, frame.snapshot.at, window_s)
        key = render_key(frame.snapshot, self.area, drill=True)
        if key is self._shown_key or key == self._shown_key:
            return
        self._shown_key = key
        self._render_view(drill_view(frame.snapshot, self.area))

    def _render_view(self, view: DrillView) -> None:
        header = self.query_one("#drill-header", Static)
        header.update(Text("\n").join(view.header))
        header.display = bool(view.header)
        for spec in view.tables:
            count = f"{len(spec.rows)} rows" if spec.rows else spec.empty
            self.query_one(f"#title-{spec.key}", Static).update(
                Text.assemble((spec.title, "bold"), (f"  {count}", "dim"))
            )
            self.query_one(f"#table-{spec.key}", SnapshotTable).show(spec)

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
