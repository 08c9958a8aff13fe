"""A full-width trend chart: title with now/min/max, Textual's Sparkline, the incident
timeline's marks (shown when there are any in the window), a labelled time axis.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from ktop.analysis.triage.timeline import TimelineEvent
from ktop.model.events import Area
from ktop.model.history import HistoryView
from ktop.ui.render.spark import scale_of, spark_lines
from ktop.ui.render.timeline import axis_marks
from ktop.ui.render.trend import ChartData, ChartSpec, chart_data, time_axis, window_label


class TrendChart(Vertical):
    """One signal over the chosen window, as wide as the screen.

    The line starts where the history does: with less history than the
    window, the sparkline is narrower and right-aligned (blanks on its left)
    so that its columns stay on the time axis.
    """

    def __init__(self, spec: ChartSpec, *, id: str | None = None, classes: str = "") -> None:
        super().__init__(id=id, classes=f"trend-chart {classes}".strip())
        self.spec = spec
        self.data: ChartData | None = None
        """What was drawn last (tests compare it with an independent computation)."""
        self.marks: dict[int, str] = {}
        """Column -> mark of the timeline events drawn under the line last."""
        self._shown: dict[str, Text] = {}

    def compose(self) -> ComposeResult:
        """Title, the sparkline row, the axis."""
        yield Static("", classes="chart-title")
        with Horizontal(classes="chart-row"):
            yield Static("", classes="chart-line")
        yield Static("", classes="chart-axis")

    def show(
        self,
        view: HistoryView,
        now: float,
        window_s: float,
        events: Sequence[TimelineEvent] = (),
        area: Area | None = None,
    ) -> None:
        """Draw the last ``window_s`` seconds of ``view`` ending at ``now``, with the
        timeline's events of ``area`` and of this chart's reading marked under it.
        """
        width = max(10, self.content_size.width or self.app.size.width - 2)
        data = chart_data(view, self.spec, now, window_s, width)
        self.data = data
        title = Text.assemble(
            (f"{self.spec.title} ", "bold"),
            (f"[{window_label(window_s)}]  ", "dim"),
            data.summary,
        )
        if data.values:
            title.append(f" · {scale_of(self.spec.metric, data.values).words(self.spec.metric)}")
        self._update(".chart-title", title)
        height = 2 if self.screen.has_class("-tall") else 1
        # Right-aligned by blanks on its left: the line is always as wide as the chart, so
        # a history that grows by a column a sample never asks for a layout pass.
        blank = " " * max(0, width - len(data.values))
        rows = [Text(blank) + row for row in spark_lines(self.spec.metric, data.values, height)]
        self._update(".chart-line", Text("\n").join(rows) if data.values else Text(""))
        self.marks = (
            axis_marks(events, area, self.spec.metric, data.start, data.end, width)
            if area is not None
            else {}
        )
        axis = Text(time_axis(data.start, data.end, width, self.marks), style="dim")
        for col in self.marks:
            axis.stylize("bold not dim", col, col + 1)
        self._update(".chart-axis", axis)

    def _update(self, selector: str, text: Text) -> None:
        """Show ``text`` in one of the chart's lines unless it shows it already.

        No layout pass: each line's height is fixed by the stylesheet (and the sparkline's
        width by its style, set apart), so new text never moves anything.
        """
        if self._shown.get(selector) != text:
            self._shown[selector] = text
            self.query_one(selector, Static).update(text, layout=False)

    def forget(self) -> None:
        """Draw every line again on the next :meth:`show` (the theme changed)."""
        self._shown.clear()
