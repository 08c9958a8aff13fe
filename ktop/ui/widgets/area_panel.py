"""An overview panel for one area."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.events import Click, Resize
from textual.widget import Widget
from textual.widgets import Static

from ktop.model.events import Area
from ktop.model.signals import BY_METRIC
from ktop.model.snapshot import ClusterSnapshot
from ktop.ui.render.areas import (
    AREA_KEYS,
    SPARK_LABEL_WIDTH,
    SPARK_MIN_WIDTH,
    overview_panel,
    render_key,
)
from ktop.ui.render.level import SYMBOL, Level
from ktop.ui.render.spark import spark_lines
from ktop.ui.render.status import panel_age
from ktop.ui.render.trend import WINDOWS, ChartData, window_label
from ktop.ui.render.view import PanelView
from ktop.ui.widgets.redraw_hold import RedrawHold

_LEVEL_CLASSES = {
    Level.CRIT: "-crit",
    Level.WARN: "-warn",
    Level.UNKNOWN: "-unknown",
    Level.OK: "-ok",
}


class AreaPanel(Widget):
    """The most important lines of one area, fitted to the panel's size.

    Keeps what it last rendered and skips a refresh when the area's data
    (``render_key``) and its own size are unchanged. The border (title, and the data age
    as subtitle) is this widget's; the lines are a child's, so the age changing every
    second redraws the border without rendering the lines again.
    """

    def __init__(self, area: Area, *, id: str | None = None) -> None:
        super().__init__(id=id or f"panel-{area.value}")
        self.area = area
        self._body = Static("", classes="panel-body")
        self.renders = 0
        """How many times the content was rebuilt (tests check skipping)."""
        self._shown_key: object = None
        self._shown_size: tuple[int, int] = (0, 0)
        self._snapshot: ClusterSnapshot | None = None
        self.window_s = WINDOWS[0][1]
        self.sparks: tuple[ChartData, ...] = ()
        """The sparklines drawn last (tests compare them with an independent computation)."""
        self._plain_body = ""
        self._shown_body: Text | None = None
        self._shown_sparks: object = None
        self._shown_subtitle = ""
        self._shown_title: Text | None = None
        self._shown_state: tuple[str, tuple[int, int]] = ("", (0, 0))
        self._hold = RedrawHold()
        self.lean = False
        """Low-bandwidth mode: no sparklines, coarse ages, numbers redrawn on every
        third frame unless a state changed (:mod:`ktop.ui.widgets.redraw_hold`)."""

    @property
    def body(self) -> Static:
        """The widget that holds the panel's lines (inside this widget's border)."""
        return self._body

    def compose(self) -> ComposeResult:
        """The panel's lines."""
        yield self._body

    def show(self, snapshot: ClusterSnapshot, window_s: float | None = None) -> None:
        """Render ``snapshot`` unless it shows the same as the last one."""
        self._snapshot = snapshot
        if window_s is not None:
            self.window_s = window_s
        subtitle, _ = panel_age(snapshot, self.area, self.lean)
        if subtitle != self._shown_subtitle:  # setting it, even to the same text, redraws
            self._shown_subtitle = subtitle
            self.border_subtitle = Text(subtitle, style="")
        size = (self.content_size.height, self.content_size.width)
        key = (render_key(snapshot, self.area), self.window_s, self._spark_slot(snapshot, size))
        if size == self._shown_size and (key is self._shown_key or key == self._shown_key):
            return
        self._shown_key, self._shown_size = key, size
        self._rebuild(snapshot)

    def _spark_slot(self, snapshot: ClusterSnapshot, size: tuple[int, int]) -> int | None:
        """Which time slot (one sparkline column) the snapshot falls in, when the panel may
        draw sparklines: the area's readings can stay the same while its history scrolls.
        None when no sparkline can be drawn (no history, too narrow, low bandwidth).
        """
        width = size[1] - SPARK_LABEL_WIDTH
        if self.lean or size[1] < SPARK_MIN_WIDTH or width <= 0 or snapshot.history.last_at is None:
            return None
        return int(snapshot.at // (self.window_s / width))

    def forget(self) -> None:
        """Render again on the next :meth:`show` (the theme changed)."""
        self._shown_key = None
        self._shown_size = (0, 0)
        self._shown_body = None
        self._shown_subtitle = ""
        self._shown_title = None

    async def on_click(self, _event: Click) -> None:
        """A click opens the area's drill-down (as its number key does)."""
        await self.app.run_action(f"goto('{self.area.value}')")

    def on_resize(self, _event: Resize) -> None:
        """Fit the content to the new size."""
        if self._snapshot is not None:
            self.show(self._snapshot)

    def _rebuild(self, snapshot: ClusterSnapshot) -> None:
        rows, width = self._shown_size
        if rows <= 0 or width <= 0:
            return
        view = overview_panel(snapshot, self.area, rows, width, self.window_s, sparks=not self.lean)
        title = Text(f"{AREA_KEYS[self.area]} ", style="dim")
        title.append_text(view.title)
        state = (_symbols(view), self._shown_size)
        same_state = state == self._shown_state and self._shown_body is not None
        if self._hold.hold(self.lean, same_state):
            self._shown_key = None  # the next frame rebuilds even if the data stops moving
            return
        self._shown_state = state
        if title != self._shown_title:
            self._shown_title = title
            self.border_title = title
        body = Text("\n").join(view.lines)
        self.sparks = view.sparks
        self._plain_body = body.plain
        lines = (self.window_s, tuple((s.spec.metric, s.values) for s in view.sparks))
        if body != self._shown_body or lines != self._shown_sparks:  # same: no redraw
            self._shown_body, self._shown_sparks = body, lines
            # a grid cell: its size is the grid's, so no layout pass
            if view.sparks:
                sparks = (_spark_row(s, self.window_s) for s in view.sparks)
                self._body.update(Group(body, *sparks), layout=False)
            else:
                self._body.update(body, layout=False)
        for level, name in _LEVEL_CLASSES.items():
            self.set_class(view.level == level, name)
        self.renders += 1

    @property
    def plain(self) -> str:
        """The title and content as plain text."""
        body = self._plain_body
        for spark in self.sparks:
            body += f"\n{_spark_label(spark, self.window_s)}"
        title = Content.from_markup(self.border_title).plain if self.border_title else ""
        return f"{title}\n{body}"


def _symbols(view: PanelView) -> str:
    """The status symbols of a panel's title and lines, in order: its state without
    the numbers.
    """
    marks = set(SYMBOL.values()) - {" "}
    return "".join(ch for line in (view.title, *view.lines) for ch in line.plain if ch in marks)


def _spark_label(spark: ChartData, window_s: float) -> str:
    label = BY_METRIC[spark.spec.metric].label
    return f"{label} {window_label(window_s)}"[: SPARK_LABEL_WIDTH - 1]


def _spark_row(spark: ChartData, window_s: float) -> Table:
    """The label, then the sparkline (``ktop/ui/render/spark.py``), right-aligned to the
    time slots.
    """
    grid = Table.grid(expand=True)
    grid.add_column(width=SPARK_LABEL_WIDTH, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_column(width=len(spark.values), no_wrap=True)
    grid.add_row(
        Text(_spark_label(spark, window_s), style="dim"),
        "",
        spark_lines(spark.spec.metric, spark.values)[0],
    )
    return grid
