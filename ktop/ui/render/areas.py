"""Dispatch by area: overview panels and drill-down views from a cluster snapshot."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, replace

from rich.text import Text

from ktop.analysis.etcd_space import defrag_advice
from ktop.model.areas import AREAS
from ktop.model.events import Area
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.text import fmt_clock, truncate
from ktop.ui.render import apf, apiservers, etcd, metrics_only, nodes, scheduler
from ktop.ui.render.cost import cost_line
from ktop.ui.render.level import STYLE, Level
from ktop.ui.render.reasons import drill_reason_lines, input_errors, only_warming_up, panel_note
from ktop.ui.render.status import (
    CONNECTING_STYLE,
    CONNECTING_WORD,
    WAITING_STYLE,
    AreaState,
    area_state,
    state_words,
)
from ktop.ui.render.trend import AREA_CHARTS, WINDOWS, ChartData, chart_data
from ktop.ui.render.view import DrillView, PanelView, cuts_rows, title

PanelFn = Callable[[ClusterSnapshot, "Text | None", int, int, bool], PanelView]
"""An area's overview panel: snapshot, note, rows, width, whether the area's data is
stale or an input failing (its level is then never better than unknown)."""
DrillFn = Callable[[ClusterSnapshot, tuple[Text, ...], tuple[Text, ...]], DrillView]
"""An area's drill-down: snapshot, the reasons' lines, ktop's own load line (if shown)."""


@dataclass(frozen=True, slots=True)
class AreaView:
    """How one area is shown (the UI's half of its :class:`~ktop.model.areas.AreaSpec`):
    its key, what its views depend on, and the pure functions that draw its overview
    panel and drill-down (in metrics-only mode too).
    """

    key: str
    """The key that opens its drill-down."""
    panel: PanelFn
    drill: DrillFn
    panel_clock: bool = False
    """Its overview panel shows times relative to the source clock (uptime)."""
    drill_clock: bool = False
    """Its drill-down shows times relative to the source clock (ages, uptime)."""
    cost: bool = False
    """Its drill-down shows ktop's own load (its APF level, its requests)."""
    own_metrics_only: bool = False
    """Its panel says itself what the metrics-only view shows (the others' titles add
    that they show it)."""


def _apf_panel(
    s: ClusterSnapshot, note: Text | None, rows: int, width: int, failing: bool
) -> PanelView:
    return apf.panel(s.apf, note, rows, width, failing=failing)


def _apf_drill(s: ClusterSnapshot, reasons: tuple[Text, ...], own: tuple[Text, ...]) -> DrillView:
    return DrillView((*reasons, *own), apf.tables(s.apf))


def _api_panel(
    s: ClusterSnapshot, note: Text | None, rows: int, width: int, failing: bool
) -> PanelView:
    return apiservers.panel(s.apiservers, s.at, note, rows, width, failing=failing)


def _api_drill(s: ClusterSnapshot, reasons: tuple[Text, ...], own: tuple[Text, ...]) -> DrillView:
    api = s.apiservers
    return DrillView((*reasons, apiservers.summary_line(api), *own), apiservers.tables(api, s.at))


def _etcd_panel(
    s: ClusterSnapshot, note: Text | None, rows: int, width: int, failing: bool
) -> PanelView:
    return etcd.panel(s.etcd, note, rows, width, failing=failing)


def _etcd_drill(s: ClusterSnapshot, reasons: tuple[Text, ...], own: tuple[Text, ...]) -> DrillView:
    advice = defrag_advice(s.etcd)
    hint = () if advice is None else (Text(advice.text(), style=STYLE[Level.WARN]),)
    return DrillView((*reasons, *hint), etcd.tables(s.etcd, s.at))


def _sched_panel(
    s: ClusterSnapshot, note: Text | None, rows: int, width: int, failing: bool
) -> PanelView:
    view = s.scheduler.metrics_only
    if view is not None:
        return metrics_only.scheduler_panel(s.scheduler, view, note, rows, width, failing=failing)
    return scheduler.panel(s.scheduler, note, rows, width, failing=failing)


def _sched_drill(s: ClusterSnapshot, reasons: tuple[Text, ...], own: tuple[Text, ...]) -> DrillView:
    sched, view = s.scheduler, s.scheduler.metrics_only
    if view is not None:
        return DrillView(
            (*reasons, metrics_only.scheduler_summary(sched, view)),
            metrics_only.scheduler_tables(sched, view),
        )
    return DrillView((*reasons, scheduler.summary_line(sched)), scheduler.tables(sched, s.at))


def _nodes_panel(
    s: ClusterSnapshot, note: Text | None, rows: int, width: int, failing: bool
) -> PanelView:
    view = s.nodes.metrics_only
    if view is not None:
        return metrics_only.nodes_panel(view, note, rows, width, failing=failing)
    return nodes.panel(s.nodes, note, rows, width, failing=failing)


def _nodes_drill(s: ClusterSnapshot, reasons: tuple[Text, ...], own: tuple[Text, ...]) -> DrillView:
    view = s.nodes.metrics_only
    if view is not None:
        return DrillView(
            (*reasons, metrics_only.nodes_summary(view)), metrics_only.nodes_tables(view)
        )
    return DrillView((*reasons, nodes.summary_line(s.nodes)), nodes.tables(s.nodes, s.at))


AREA_VIEWS: dict[Area, AreaView] = {
    Area.APF: AreaView("1", _apf_panel, _apf_drill, cost=True),
    Area.APISERVERS: AreaView(
        "2", _api_panel, _api_drill, panel_clock=True, drill_clock=True, cost=True
    ),
    Area.ETCD: AreaView("3", _etcd_panel, _etcd_drill, drill_clock=True),
    Area.SCHEDULER: AreaView(
        "4", _sched_panel, _sched_drill, drill_clock=True, own_metrics_only=True
    ),
    Area.NODES: AreaView("5", _nodes_panel, _nodes_drill, drill_clock=True, own_metrics_only=True),
}
"""Every area's view, in the overview's order (that of the area registry,
:data:`~ktop.model.areas.AREAS`, whose names, titles and help it shows): the one table
the keys and panels derive from."""

AREA_KEYS: dict[Area, str] = {area: view.key for area, view in AREA_VIEWS.items()}
"""The key that opens each area's drill-down."""


def render_key(snapshot: ClusterSnapshot, area: Area, *, drill: bool = False) -> object:
    """What an area's rendering depends on: equal keys render the same.

    The area snapshot, the area's failing inputs and its state (waiting, stale ...),
    plus the source clock where the view shows ages or uptimes.
    """
    part = AREAS[area].view(snapshot)
    errors = input_errors(snapshot.area_freshness(area))
    spec = AREA_VIEWS[area]
    own = snapshot.self_cost if drill and spec.cost else None
    now = area_state(snapshot, area)
    # a waiting drill-down counts down to when its first data is due
    countdown = waiting_words(snapshot, area) if drill and now is AreaState.WAITING else None
    state = (now, snapshot.started_at, snapshot.first_data_due_s, countdown)
    if spec.drill_clock if drill else spec.panel_clock:
        return (part, errors, snapshot.at, own, state)
    return (part, errors, own, state)


SPARK_MIN_WIDTH = 30
"""Narrower panels show no sparkline."""
RICH_WIDTH = 56
"""Panels at least this wide (terminals of about 120 columns and more) with at least
``RICH_ROWS`` rows give their last, least important line to the sparkline."""
RICH_ROWS = 8
SPARK_LABEL_WIDTH = 18


def overview_panel(
    snapshot: ClusterSnapshot,
    area: Area,
    rows: int,
    width: int,
    window_s: float = WINDOWS[0][1],
    *,
    sparks: bool = True,
) -> PanelView:
    """One overview panel fitted to ``rows`` x ``width`` content cells, with sparklines
    of the area's signals over ``window_s`` when there is room: in rows the content
    leaves free (one per chart of the area, most telling first), or, on wide panels
    without a free row, instead of the last, least important row. ``sparks`` False
    (low-bandwidth mode) draws none: they move, and so redraw, every frame.
    """
    note = panel_note(snapshot, area, width)  # walks the area: once, for both fits below
    view = _panel(snapshot, area, rows, width, note)
    if note is not None and cuts_rows(view) and only_warming_up(snapshot, area):
        note = None  # rows before "warming up": the drill-down keeps the note
        view = _panel(snapshot, area, rows, width, note)
    if not sparks or width < SPARK_MIN_WIDTH or rows < 2:
        return view
    if len(view.lines) >= rows:
        if width < RICH_WIDTH or rows < RICH_ROWS:
            return view
        view = _panel(snapshot, area, rows - 1, width, note)
    free = rows - len(view.lines)
    drawn: list[ChartData] = []
    for spec in AREA_CHARTS[area][:free]:
        data = chart_data(snapshot.history, spec, snapshot.at, window_s, width - SPARK_LABEL_WIDTH)
        if len(data.values) >= 2:  # one frame is no trend
            drawn.append(data)
    return replace(view, sparks=tuple(drawn)) if drawn else view


def _metrics_only_why(snapshot: ClusterSnapshot) -> str:
    """Why the source reads no objects (empty when it reads them)."""
    view = snapshot.nodes.metrics_only
    return view.why if view is not None else ""


def _panel(
    snapshot: ClusterSnapshot, area: Area, rows: int, width: int, note: Text | None
) -> PanelView:
    view = _full_panel(snapshot, area, rows, width, note)
    why = _metrics_only_why(snapshot)
    if why and not AREA_VIEWS[area].own_metrics_only:
        # Every pane says which view it shows (the nodes and scheduler panes say more).
        head = view.title.copy()
        head.append(f" · {metrics_only.VIEW}", style="dim")
        return replace(view, title=head)
    return view


WAITING_SUMMARY = "waiting for first data"
CONNECTING_LINE = "connecting: no input has answered yet"


def waiting_line(snapshot: ClusterSnapshot) -> str:
    """A waiting panel's line: when its first data is due (the border counts down)."""
    due = snapshot.first_data_due_s
    start = snapshot.started_at
    when = "" if start is None else f" (by {fmt_clock(start + due)}Z)"
    return (
        f"first data due within {due:g} s of the start{when}; no input has answered yet, "
        "and it is shown as failed if none has by then"
    )


def _full_panel(
    snapshot: ClusterSnapshot, area: Area, rows: int, width: int, note: Text | None
) -> PanelView:
    state = area_state(snapshot, area)
    if state is AreaState.CONNECTING:
        lines = (Text(truncate(CONNECTING_LINE, width), style=CONNECTING_STYLE),)[:rows]
        head = title(AREAS[area].name, CONNECTING_WORD, Level.UNKNOWN)
        return PanelView(head, lines, Level.UNKNOWN)
    if state is AreaState.WAITING:
        wrapped = textwrap.wrap(waiting_line(snapshot), max(4, width)) if rows > 0 else []
        if len(wrapped) > rows:  # no room for all of it: the last line shown says it is cut
            wrapped = [*wrapped[: rows - 1], truncate(" ".join(wrapped[rows - 1 :]), width)]
        lines = tuple(Text(line, style="dim") for line in wrapped)
        name = AREAS[area].name
        return PanelView(title(name, WAITING_SUMMARY, Level.NEUTRAL), lines, Level.NEUTRAL)
    # stale data or a failing input: the panel's level is at least unknown, never healthy
    degraded = state in (AreaState.STALE, AreaState.FAILED)
    return AREA_VIEWS[area].panel(snapshot, note, rows, width, degraded)


def waiting_words(snapshot: ClusterSnapshot, area: Area) -> str:
    """A waiting drill-down's first line: ``etcd: waiting for first data, due in 26s``."""
    return f"{area.value}: {WAITING_SUMMARY}, {state_words(snapshot, area)}"


def drill_view(snapshot: ClusterSnapshot, area: Area) -> DrillView:
    """An area's drill-down: reasons for unknown values, a summary, and tables (while
    the area waits for its first data, a first line that counts down to when it is due).
    """
    reasons = drill_reason_lines(snapshot, area)
    if area_state(snapshot, area) is AreaState.WAITING:
        reasons = (Text(waiting_words(snapshot, area), style=WAITING_STYLE), *reasons)
    why = _metrics_only_why(snapshot)
    if why:
        reasons = (*reasons, metrics_only.view_line(area, why, 400))
    cost = cost_line(snapshot.self_cost)
    own = (cost,) if cost is not None and AREA_VIEWS[area].cost else ()
    return AREA_VIEWS[area].drill(snapshot, tuple(reasons), own)
