"""Dispatch by area: overview panels and drill-down views from a cluster snapshot."""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text

from ktop.model.events import Area
from ktop.model.snapshot import ClusterSnapshot
from ktop.ui.render import apf, apiservers, etcd, metrics_only, nodes, scheduler
from ktop.ui.render.cost import cost_line
from ktop.ui.render.reasons import drill_reason_lines, input_errors, panel_note
from ktop.ui.render.trend import AREA_CHARTS, WINDOWS, ChartData, chart_data
from ktop.ui.render.view import DrillView, PanelView

AREA_KEYS: dict[Area, str] = {
    Area.APF: "1",
    Area.APISERVERS: "2",
    Area.ETCD: "3",
    Area.SCHEDULER: "4",
    Area.NODES: "5",
}
"""The key that opens each area's drill-down."""

AREA_TITLES: dict[Area, str] = {
    Area.APF: "API Priority and Fairness",
    Area.APISERVERS: "kube-apiserver instances",
    Area.ETCD: "etcd members",
    Area.SCHEDULER: "Scheduler: pending pods",
    Area.NODES: "Nodes by failure domain",
}


PANEL_CLOCK_AREAS = frozenset({Area.APISERVERS})
"""Areas whose overview panel shows times relative to the source clock (uptime)."""
DRILL_CLOCK_AREAS = frozenset({Area.APISERVERS, Area.ETCD, Area.NODES})
"""Areas whose drill-down shows times relative to the source clock (ages, uptime)."""
COST_AREAS = frozenset({Area.APF, Area.APISERVERS})
"""Areas whose drill-down shows ktop's own load (its APF level, its requests)."""


def render_key(snapshot: ClusterSnapshot, area: Area, *, drill: bool = False) -> object:
    """What an area's rendering depends on: equal keys render the same.

    The area snapshot and the area's failing inputs, plus the source clock
    where the view shows ages or uptimes.
    """
    part = getattr(snapshot, area.value)
    errors = input_errors(snapshot.area_freshness(area))
    own = snapshot.self_cost if drill and area in COST_AREAS else None
    if area in (DRILL_CLOCK_AREAS if drill else PANEL_CLOCK_AREAS):
        return (part, errors, snapshot.at, own)
    return (part, errors, own)


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
    if why and area not in (Area.NODES, Area.SCHEDULER):
        # Every pane says which view it shows (the nodes and scheduler panes say more).
        head = view.title.copy()
        head.append(f" · {metrics_only.VIEW}", style="dim")
        return replace(view, title=head)
    return view


def _full_panel(
    snapshot: ClusterSnapshot, area: Area, rows: int, width: int, note: Text | None
) -> PanelView:
    failing = any(f.error for f in snapshot.area_freshness(area))
    if area is Area.APF:
        return apf.panel(snapshot.apf, note, rows, width, failing=failing)
    if area is Area.APISERVERS:
        api = snapshot.apiservers
        return apiservers.panel(api, snapshot.at, note, rows, width, failing=failing)
    if area is Area.ETCD:
        return etcd.panel(snapshot.etcd, note, rows, width, failing=failing)
    sched_view, nodes_view = snapshot.scheduler.metrics_only, snapshot.nodes.metrics_only
    if area is Area.SCHEDULER and sched_view is not None:
        return metrics_only.scheduler_panel(
            snapshot.scheduler, sched_view, note, rows, width, failing=failing
        )
    if area is Area.SCHEDULER:
        return scheduler.panel(snapshot.scheduler, note, rows, width, failing=failing)
    if nodes_view is not None:
        return metrics_only.nodes_panel(nodes_view, note, rows, width, failing=failing)
    return nodes.panel(snapshot.nodes, note, rows, width, failing=failing)


def drill_view(snapshot: ClusterSnapshot, area: Area) -> DrillView:
    """An area's drill-down: reasons for unknown values, a summary, and tables."""
    reasons = drill_reason_lines(snapshot, area)
    why = _metrics_only_why(snapshot)
    if why:
        reasons = (*reasons, metrics_only.view_line(area, why, 400))
    cost = cost_line(snapshot.self_cost)
    own = (cost,) if cost is not None else ()
    if area is Area.APF:
        return DrillView((*reasons, *own), apf.tables(snapshot.apf))
    if area is Area.APISERVERS:
        api = snapshot.apiservers
        return DrillView(
            (*reasons, apiservers.summary_line(api), *own), apiservers.tables(api, snapshot.at)
        )
    if area is Area.ETCD:
        return DrillView(reasons, etcd.tables(snapshot.etcd, snapshot.at))
    sched_view, nodes_view = snapshot.scheduler.metrics_only, snapshot.nodes.metrics_only
    if area is Area.SCHEDULER and sched_view is not None:
        sched = snapshot.scheduler
        return DrillView(
            (*reasons, metrics_only.scheduler_summary(sched, sched_view)),
            metrics_only.scheduler_tables(sched, sched_view),
        )
    if area is Area.NODES and nodes_view is not None:
        return DrillView(
            (*reasons, metrics_only.nodes_summary(nodes_view)),
            metrics_only.nodes_tables(nodes_view),
        )
    if area is Area.SCHEDULER:
        sched = snapshot.scheduler
        return DrillView((*reasons, scheduler.summary_line(sched)), scheduler.tables(sched))
    return DrillView(
        (*reasons, nodes.summary_line(snapshot.nodes)), nodes.tables(snapshot.nodes, snapshot.at)
    )
