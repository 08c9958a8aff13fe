"""The overview: all five areas at once, the findings strip (on terminals of 30 rows and
more), the diagnosis and the status line.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid
from textual.events import Resize

from ktop.model.events import Area
from ktop.ui.frame import Frame
from ktop.ui.screens.base import KtopScreen
from ktop.ui.widgets.area_panel import AreaPanel
from ktop.ui.widgets.findings_strip import FindingsStrip

TALL = 36
"""Terminals at least this tall get a multi-line findings strip."""
SHORT = 30
"""On terminals less tall the diagnosis' line (above the status line) stands in for the
one-line findings strip, so that the panels keep their rows at 80x24: the cause names
what the top finding would, the status line keeps the findings' counts, and ``f`` lists
them."""


class OverviewScreen(KtopScreen):
    """Five area panels in a grid (nodes spans the full width) and the top findings."""

    def compose_body(self) -> ComposeResult:
        """The panel grid and the findings strip."""
        with Grid(id="overview-grid"):
            for area in Area:
                yield AreaPanel(area)
        yield FindingsStrip(id="findings-strip")

    def on_resize(self, event: Resize) -> None:
        """Give the findings strip more lines on tall terminals, none on short ones."""
        self._fit_strip(event.size.height)

    def _fit_strip(self, height: int) -> None:
        self.set_class(height >= TALL, "-tall")
        self.set_class(height < SHORT, "-short")

    def show_body(self, frame: Frame) -> None:
        """Hand the snapshot to each panel; each skips if its area is unchanged."""
        self._fit_strip(self.size.height)
        for panel in self.query(AreaPanel):
            panel.lean = self.ktop.display_options.low_bandwidth
            panel.show(frame.snapshot, self.ktop.trend_window_s)
        strip = self.query_one(FindingsStrip)
        strip.lean = self.ktop.display_options.low_bandwidth
        strip.show(frame.findings)

    def panel(self, area: Area) -> AreaPanel:
        """The panel of one area."""
        return self.query_one(f"#panel-{area.value}", AreaPanel)
