"""The metrics-only view of the nodes and scheduler panes, and the line every pane shows
in that mode (which view it is, what it cannot know).

The nodes pane shows zones as the node lifecycle controller exports them and readiness
per label from kube-state-metrics; the scheduler pane adds unschedulable pods per
plugin to the queues. What cannot be known (``CANNOT_KNOW`` in the model) is shown as
unknown with its reason, never as ok.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from ktop.model.area_metrics_only import CANNOT_KNOW
from ktop.model.areas import AREAS
from ktop.model.events import Area
from ktop.model.snapshot_nodes import MetricsOnlyNodes, ZoneHealth
from ktop.model.snapshot_scheduler import QUEUES, MetricsOnlyScheduler, SchedulerSnapshot
from ktop.model.text import counted, fmt_count, fmt_pct, fmt_val, truncate
from ktop.model.values import Val
from ktop.ui.render.level import STYLE, SYMBOL, ZONE_LEVEL, Level, worst
from ktop.ui.render.scheduler import queue_line, reason_line
from ktop.ui.render.sortkey import larger_first
from ktop.ui.render.view import (
    Column,
    PanelView,
    Row,
    TableCell,
    TableSpec,
    degrade,
    fit,
    num_cell,
    table_lines,
    text_cell,
    title,
    val_cell,
)

VIEW = "metrics-only view"
"""What every pane says it shows in metrics-only mode."""


def _pct(percent: float) -> str:
    """``node_collector_zone_health`` is a percentage already."""
    return fmt_pct(percent / 100.0)


def view_line(area: Area, why: str, width: int) -> Text:
    """``metrics-only view (--metrics-only) · unknown: Lease lag per ...``."""
    unknown = CANNOT_KNOW[area]
    text = f"{VIEW} ({why})"
    if unknown:
        text += " · unknown: " + "; ".join(unknown)
    return Text(truncate(text, width), style=STYLE[Level.UNKNOWN])


def zone_name(z: ZoneHealth) -> str:
    """``region/zone``, ``zone``, or ``(no zone)``."""
    name = f"{z.region}/{z.zone}" if z.region else z.zone
    return name or "(no zone)"


def zones_level(zones: Sequence[ZoneHealth]) -> Level:
    """The worst zone state; unknown when there are no zones."""
    if not zones:
        return Level.UNKNOWN
    return worst([ZONE_LEVEL[z.state] for z in zones])


def nodes_level(v: MetricsOnlyNodes) -> Level:
    """The worst zone state; unknown when the controller's gauges were not read."""
    return zones_level(v.zones)


def zones_ready(zones: Sequence[ZoneHealth]) -> str:
    """``98,000/100,000 ready`` summed over the controller's zones (``?`` with none)."""
    if not zones:
        return "? ready"
    size = sum(z.size for z in zones)
    bad = sum(z.unhealthy for z in zones)
    return f"{fmt_count(size - bad)}/{fmt_count(size)} ready"


def zone_lines(zones: Sequence[ZoneHealth], width: int) -> tuple[Text, list[Text]]:
    """A panel's table of the controller's zones: its (dim) header, and one line per zone
    (ready/size, unhealthy, state, health %).
    """
    spec = [("ready/size", 13), ("unhealthy", 10), ("state", 17), ("health", 7)]
    table = [[TableCell(" zone", 0, "left"), *(TableCell(t, w) for t, w in spec)]]
    for z in zones:
        zl = ZONE_LEVEL[z.state]
        cells = [
            TableCell(f"{SYMBOL[zl]} {z.zone or '(no zone)'}", 0, "left", max(zl, Level.OK)),
            TableCell(f"{fmt_count(z.size - z.unhealthy)}/{fmt_count(z.size)}", 13),
            TableCell(
                fmt_count(z.unhealthy), 10, level=Level.WARN if z.unhealthy else Level.NEUTRAL
            ),
            TableCell(z.state.value, 17, level=zl),
            TableCell(fmt_val(z.health_pct, _pct), 7),
        ]
        table.append(cells)
    header, *body = table_lines(table, width)
    header.stylize("dim")
    return header, body


def nodes_panel(
    v: MetricsOnlyNodes, note: Text | None, rows: int, width: int, *, failing: bool = False
) -> PanelView:
    """Zones from ``node_collector_*``: ready/size, unhealthy, state, health %."""
    lvl = degrade(nodes_level(v), failing)
    summary = f"{zones_ready(v.zones)} · {VIEW}"
    header, body = zone_lines(v.zones, width)
    if not v.zones:
        body.append(Text(truncate(f"zones unknown: {v.zones_reason}", width), style="dim"))
    body.append(view_line(Area.NODES, v.why, width))
    return PanelView(
        title(AREAS[Area.NODES].name, summary, lvl), fit(body, note, rows, header), lvl
    )


def zones_table(zones: Sequence[ZoneHealth], heading: str, empty: str) -> TableSpec:
    """The drill-down table of the controller's zones (key ``zones``)."""
    return TableSpec(
        "zones",
        heading,
        (
            Column("status", "", 1),
            Column("region", "region"),
            Column("zone", "zone"),
            Column("state", "state", 17),
            Column("ready", "ready/size", 13),
            Column("unhealthy", "unhealthy", 10),
            Column("health", "health", 7),
        ),
        tuple(
            Row(
                zone_name(z),
                (
                    text_cell(SYMBOL[ZONE_LEVEL[z.state]], ZONE_LEVEL[z.state]),
                    text_cell(z.region or "-"),
                    text_cell(z.zone or "(no zone)"),
                    text_cell(z.state.value, ZONE_LEVEL[z.state]),
                    num_cell(f"{fmt_count(z.size - z.unhealthy)}/{fmt_count(z.size)}"),
                    num_cell(fmt_count(z.unhealthy), Level.WARN if z.unhealthy else Level.NEUTRAL),
                    val_cell(z.health_pct, _pct),
                ),
            )
            for z in zones
        ),
        empty=empty,
    )


def nodes_tables(v: MetricsOnlyNodes) -> tuple[TableSpec, ...]:
    """Zones as the controller exports them, readiness per label, what is unknown."""
    zones = zones_table(
        v.zones, "Zones (node lifecycle controller's metrics)", f"(unknown: {v.zones_reason})"
    )
    readiness = TableSpec(
        "readiness",
        "Readiness per node label (kube-state-metrics)",
        (
            Column("label", "label"),
            Column("value", "value"),
            Column("ready", "ready", 8),
            Column("not_ready", "not ready", 10),
        ),
        tuple(
            Row(
                f"{r.label}={r.value}",
                (
                    text_cell(r.label),
                    text_cell(r.value or "(unset)"),
                    num_cell(fmt_count(r.ready)),
                    num_cell(fmt_count(r.not_ready), Level.WARN if r.not_ready else Level.NEUTRAL),
                ),
            )
            for r in v.readiness
        ),
        empty=f"(unknown: {v.readiness_reason})",
    )
    return (zones, readiness, unknown_table(Area.NODES, v.why))


def unknown_table(area: Area, why: str) -> TableSpec:
    """What this pane cannot know in metrics-only mode, each unknown with the reason."""
    return TableSpec(
        "unknown",
        f"Not known in the {VIEW}",
        (Column("what", "what"), Column("value", "value", 8), Column("why", "why")),
        tuple(
            Row(
                what,
                (
                    text_cell(what),
                    text_cell("?", Level.UNKNOWN),
                    text_cell(f"metrics-only ({why})", Level.UNKNOWN),
                ),
            )
            for what in CANNOT_KNOW[area]
        ),
    )


def nodes_summary(v: MetricsOnlyNodes) -> Text:
    """Drill-down header of the nodes pane in metrics-only mode."""
    lvl = nodes_level(v)
    out = Text(f"{SYMBOL[lvl]} ", style=STYLE[lvl])
    if v.zones:
        size = sum(z.size for z in v.zones)
        bad = sum(z.unhealthy for z in v.zones)
        out.append(f"{fmt_count(size)} nodes in {len(v.zones)} zones · {fmt_count(bad)} unhealthy")
    else:
        out.append(f"zones unknown: {v.zones_reason}")
    out.append(f" · {VIEW} ({v.why})")
    return out


def scheduler_level(s: SchedulerSnapshot) -> Level:
    """Unschedulable pods in the scheduler's queue are a warning; no gauge is unknown."""
    unsched = s.queue.get("unschedulable")
    if unsched is None or not unsched.known:
        return Level.UNKNOWN
    return Level.WARN if unsched.value else Level.OK


def scheduler_panel(
    s: SchedulerSnapshot,
    v: MetricsOnlyScheduler,
    note: Text | None,
    rows: int,
    width: int,
    *,
    failing: bool = False,
) -> PanelView:
    """Queues and unschedulable pods per plugin from the scheduler's own metrics."""
    lvl = degrade(scheduler_level(s), failing)
    known = [s.queue[q] for q in QUEUES if q in s.queue and s.queue[q].known]
    total = fmt_count(sum(q.value or 0 for q in known)) if known else "?"
    body = [queue_line(s, width)]
    gated = s.queue.get("gated")
    if gated is not None:
        body.append(Text(truncate(f"gated {fmt_val(gated)} (scheduler_pending_pods)", width)))
    blocked = [(p, val) for p, val in plugin_order(v) if val.value]
    body += [reason_line(val.or_(0.0), plugin, width) for plugin, val in blocked]
    if not v.unschedulable_by_plugin:
        body.append(Text(truncate(f"plugins unknown: {v.plugins_reason}", width), style="dim"))
    body.append(view_line(Area.SCHEDULER, v.why, width))
    return PanelView(
        title(AREAS[Area.SCHEDULER].name, f"{total} pending · {VIEW}", lvl),
        fit(body, note, rows),
        lvl,
    )


def scheduler_tables(s: SchedulerSnapshot, v: MetricsOnlyScheduler) -> tuple[TableSpec, ...]:
    """Queues, pods per plugin that rejected them, and what is unknown."""
    queues = TableSpec(
        "queues",
        "Scheduler queues (scheduler_pending_pods)",
        (Column("queue", "queue"), Column("pods", "pods", 8)),
        tuple(Row(q, (text_cell(q), val_cell(val, fmt_count_val))) for q, val in s.queue.items()),
        empty=f"(unknown: {s.metrics_reason or 'no scheduler metrics'})",
    )
    plugins = TableSpec(
        "plugins",
        "Unschedulable pods per plugin (scheduler_unschedulable_pods)",
        (Column("plugin", "plugin"), Column("pods", "pods", 8)),
        tuple(
            Row(
                p,
                (
                    text_cell(p),
                    val_cell(val, fmt_count_val, Level.WARN if val.value else Level.NEUTRAL),
                ),
            )
            for p, val in plugin_order(v)
        ),
        empty=f"(unknown: {v.plugins_reason})",
    )
    return (queues, plugins, unknown_table(Area.SCHEDULER, v.why))


def fmt_count_val(x: float) -> str:
    """A gauge of pods as a whole count."""
    return fmt_count(x)


def plugin_order(v: MetricsOnlyScheduler) -> list[tuple[str, Val]]:
    """Plugins by unschedulable pods as printed, the most first, then by name."""
    return sorted(
        v.unschedulable_by_plugin, key=lambda pv: (larger_first(pv[1], fmt_count_val), pv[0])
    )


def scheduler_summary(s: SchedulerSnapshot, v: MetricsOnlyScheduler) -> Text:
    """Drill-down header of the scheduler pane in metrics-only mode."""
    lvl = scheduler_level(s)
    out = Text(f"{SYMBOL[lvl]} ", style=STYLE[lvl])
    unsched = s.queue.get("unschedulable")
    out.append(f"{fmt_val(unsched, fmt_count_val) if unsched else '?'} unschedulable")
    if v.unschedulable_by_plugin:
        plugin, val = plugin_order(v)[0]
        out.append(f" · top plugin: {plugin} ({counted(val.value or 0, 'pod')})")
    out.append(f" · {VIEW} ({v.why})")
    return out
