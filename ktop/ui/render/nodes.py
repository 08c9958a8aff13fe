"""Nodes by failure domain: zones with state, racks, the NotReady list."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from ktop.model.areas import AREAS
from ktop.model.signal_areas import Area
from ktop.model.signals_nodes import NODES_LEASE_LAG_P99_S
from ktop.model.snapshot_nodes import (
    DomainRollup,
    InterimZones,
    NodesSnapshot,
    NotReadyList,
    NotReadyNode,
)
from ktop.model.text import (
    fmt_age,
    fmt_count,
    fmt_duration,
    fmt_rate,
    fmt_val,
    listing_text,
    truncate,
)
from ktop.model.values import Val, max_val
from ktop.ui.render.level import (
    STYLE,
    SYMBOL,
    ZONE_LEVEL,
    Level,
    reading_level,
    worst,
)
from ktop.ui.render.metrics_only import zone_lines, zones_level, zones_ready, zones_table
from ktop.ui.render.view import (
    Column,
    LazyRows,
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

NAME = AREAS[Area.NODES].name
"""The panel's name on its border (the area registry's)."""

WIDE = 90


def zone_level(d: DomainRollup) -> Level:
    """The zone state's level; for racks, by unhealthy nodes."""
    if d.state is not None:
        return ZONE_LEVEL[d.state]
    return Level.WARN if d.unhealthy else Level.OK


def lag_level(v: Val) -> Level:
    """Lease lag against the node monitor grace period (40 s)."""
    return reading_level(NODES_LEASE_LAG_P99_S, v)


def domain_level(d: DomainRollup) -> Level:
    """A zone's or rack's row mark: the worst of what its row shows (its state, its
    unhealthy nodes, its Lease lag), so that a row never shows ✓ beside its own ✖.
    """
    unhealthy = Level.WARN if d.unhealthy else Level.OK
    return worst([zone_level(d), unhealthy, lag_level(d.lease_lag_max_s)])


def domain_name(d: DomainRollup) -> str:
    """A unique key: ``zone`` (``region/zone`` when regions are set); racks add ``/rack``."""
    name = f"{d.region}/{d.zone}" if d.region else d.zone
    return f"{name}/{d.rack}" if d.rack else (name or "(no zone)")


def short_name(d: DomainRollup) -> str:
    """What a panel shows: the rack, else the zone."""
    return d.rack or d.zone or "(no zone)"


def level(n: NodesSnapshot) -> Level:
    """The worst zone state; unknown when the node feed is not synced (worse when the node
    lifecycle controller's zones, shown meanwhile, are disrupted: never ok).
    """
    if not n.nodes_known:
        zones = n.interim.zones if n.interim is not None else ()
        return max(zones_level(zones), Level.UNKNOWN)
    return worst([zone_level(z) for z in n.zones])


def interim_words(interim: InterimZones) -> str:
    """Where the zones shown while ktop's node list loads come from."""
    return f"zones: {interim.source} ({interim.metrics}) until ktop's list completes"


def _progress(n: NodesSnapshot) -> str:
    """How far ktop's own node list is (or why it is not there)."""
    if n.listed is not None:
        return listing_text("nodes", *n.listed)
    return n.nodes_reason or "ktop's node list not read yet"


def _interim_summary(n: NodesSnapshot, interim: InterimZones) -> str:
    """``98,000/100,000 ready (node lifecycle controller) · nodes 41,500 / ~100,000
    listed so far``.
    """
    return f"{zones_ready(interim.zones)} ({interim.source}) · {_progress(n)}"


def _interim_panel(
    n: NodesSnapshot,
    interim: InterimZones,
    note: Text | None,
    rows: int,
    width: int,
    failing: bool,
) -> PanelView:
    """While ktop's node list loads: the node lifecycle controller's zones, saying so."""
    lvl = degrade(level(n), failing)
    header, body = zone_lines(interim.zones, width)
    body.append(Text(truncate(interim_words(interim), width), style="dim"))
    return PanelView(
        title(NAME, _interim_summary(n, interim), lvl), fit(body, note, rows, header), lvl
    )


def panel(
    n: NodesSnapshot, note: Text | None, rows: int, width: int, *, failing: bool = False
) -> PanelView:
    """The nodes overview panel: per zone ready/total, NotReady+Unknown, state, lease lag."""
    if n.interim is not None and not n.nodes_known:
        return _interim_panel(n, n.interim, note, rows, width, failing)
    lag = max_val([z.lease_lag_max_s for z in n.zones], empty_reason="no zones")
    ready = f"{fmt_count(n.ready)}/{fmt_count(n.total)}" if n.nodes_known else "?"
    unhealthy = fmt_count(n.not_ready + n.unknown) if n.nodes_known else "?"
    summary = f"{ready} ready · {unhealthy} not ready"
    if n.listed is not None:  # the first list is under way: say how far, not "?"
        summary = listing_text("nodes", *n.listed)
    summary += f" · max lease lag {fmt_val(lag, fmt_duration)}"
    if n.lease_sample is not None and n.nodes_known and n.leases_read < n.total:
        # The first sweep of the Leases is under way: the lag is of those read so far.
        summary += f" (of {fmt_count(n.leases_read)} read)"
    wide = width >= WIDE
    spec: list[tuple[str, int]] = [("ready/total", 13), ("NR+Unk", 7), ("state", 17)]
    if wide:
        spec += [("NotReady", 8), ("Unknown", 8), ("cordon", 6), ("lag p50", 8)]
    spec += [("lag max", 8)]
    head = [TableCell(" zone", 0, "left"), *(TableCell(t, w) for t, w in spec)]
    zone_rows = [_panel_cells(z, wide) for z in n.zones]
    racks = [r for r in n.racks if r.unhealthy]  # in the model's order, worst first
    built = racks[:rows] if racks and rows >= len(zone_rows) + 4 else []
    # no more racks can show than rows: the rest only counts in "+N more"
    header, *body = table_lines([head, *zone_rows, *(_panel_cells(r, wide) for r in built)], width)
    header.stylize("dim")
    unbuilt = 0
    if built:
        body.insert(len(zone_rows), Text(" racks with unhealthy nodes", style="dim"))
        unbuilt = len(racks) - len(built)
    view_lines = fit(body, note, rows, header, unbuilt=unbuilt)
    # the title's mark is the worst of what the pane shows: its zones' rows (whose worst
    # Lease lag is the one the title names)
    lvl = degrade(worst([level(n), *(domain_level(z) for z in n.zones)]), failing)
    return PanelView(title(NAME, summary, lvl), view_lines, lvl)


def _panel_cells(z: DomainRollup, wide: bool) -> list[TableCell]:
    """A zone's or rack's row, marked by :func:`domain_level`."""
    state = z.state.value if z.state is not None else ("-" if z.rack else "?")
    shown = [
        TableCell(f"{fmt_count(z.ready)}/{fmt_count(z.total)}", 13),
        TableCell(fmt_count(z.unhealthy), 7, level=Level.WARN if z.unhealthy else Level.NEUTRAL),
        TableCell(state, 17, level=zone_level(z)),
    ]
    if wide:
        shown += [
            TableCell(fmt_count(z.not_ready), 8),
            TableCell(fmt_count(z.unknown), 8),
            TableCell(fmt_count(z.cordoned), 6),
            TableCell(fmt_val(z.lease_lag_p50_s, fmt_duration), 8),
        ]
    lag = z.lease_lag_max_s
    shown.append(TableCell(fmt_val(lag, fmt_duration), 8, level=lag_level(lag)))
    mark = domain_level(z)
    return [TableCell(f"{SYMBOL[mark]} {short_name(z)}", 0, "left", mark), *shown]


_DOMAIN_COLUMNS = (
    Column("ready", "ready/total", 13),
    Column("not_ready", "NotReady", 9),
    Column("unknown", "Unknown", 8),
    Column("cordoned", "cordoned", 8),
    Column("lag_max", "lease lag max", 13),
    Column("lag_p50", "lease lag p50", 13),
)


def _domain_cells(d: DomainRollup) -> tuple[Text, ...]:
    return (
        num_cell(f"{fmt_count(d.ready)}/{fmt_count(d.total)}"),
        num_cell(fmt_count(d.not_ready), Level.WARN if d.not_ready else Level.NEUTRAL),
        num_cell(fmt_count(d.unknown), Level.WARN if d.unknown else Level.NEUTRAL),
        num_cell(fmt_count(d.cordoned)),
        val_cell(d.lease_lag_max_s, fmt_duration, lag_level(d.lease_lag_max_s)),
        val_cell(d.lease_lag_p50_s, fmt_duration),
    )


def _taints(node: NotReadyNode) -> str:
    names = [("unreachable", node.tainted_unreachable), ("not-ready", node.tainted_not_ready)]
    return ", ".join(name for name, on in names if on) or "-"


NOT_READY_COLUMNS = (
    Column("name", "node"),
    Column("zone", "zone"),
    Column("rack", "rack"),
    Column("ready", "Ready", 7),
    Column("since", "for", 6),
    Column("lag", "lease lag", 9),
    Column("taints", "taints"),
)


def not_ready_row(node: NotReadyNode, now: float) -> Row:
    """One row of the NotReady list."""
    return Row(
        node.name,
        (
            text_cell(node.name),
            text_cell(node.zone),
            text_cell(node.rack),
            text_cell(node.ready, Level.CRIT if node.ready == "False" else Level.WARN),
            num_cell(fmt_age(None if node.since is None else now - node.since)),
            val_cell(node.lease_lag_s, fmt_duration, lag_level(node.lease_lag_s)),
            text_cell(_taints(node)),
        ),
    )


def _not_ready_rows(listed: NotReadyList, now: float) -> LazyRows:
    """Every not-Ready node, rows built for the part on screen only."""
    recs, renews = listed.records, listed.renews

    def taints(i: int) -> str:
        r = recs[i]
        names = [("unreachable", r.unreachable_taint), ("not-ready", r.not_ready_taint)]
        return ", ".join(name for name, on in names if on) or "-"

    def search(i: int) -> str:
        r = recs[i]
        return f"{r.name} {r.zone} {r.rack} {r.ready.value} {taints(i)}".lower()

    def since(i: int) -> tuple[bool, float]:
        at = recs[i].ready_since
        return (at is None, -(at or 0.0))  # "for" ascending: the latest to fail first

    def lag(i: int) -> tuple[bool, float]:
        renew = renews[i]
        return (renew is None, -(renew or 0.0))  # lag ascending: the latest renew first

    return LazyRows(
        count=len(listed),
        row=lambda i: not_ready_row(listed[i], now),
        search=search,
        sort_keys={
            "name": lambda i: recs[i].name,
            "zone": lambda i: (recs[i].zone, recs[i].name),
            "rack": lambda i: (recs[i].rack, recs[i].name),
            "ready": lambda i: (recs[i].ready.value, recs[i].name),
            "since": since,
            "lag": lag,
            "taints": taints,
        },
        source=recs,
    )


def _rack_rows(racks: tuple[DomainRollup, ...]) -> LazyRows:
    """Every rack in the model's order (worst first), rows built for the part on screen
    only.
    """

    def count(field: str) -> Callable[[int], int]:
        return lambda i: int(getattr(racks[i], field))

    def lag(field: str) -> Callable[[int], tuple[bool, float]]:
        def key(i: int) -> tuple[bool, float]:
            v: Val = getattr(racks[i], field)
            return (v.value is None, v.value or 0.0)  # unknown last

        return key

    return LazyRows(
        count=len(racks),
        row=lambda i: Row(
            domain_name(racks[i]),
            (text_cell(racks[i].zone), text_cell(racks[i].rack), *_domain_cells(racks[i])),
        ),
        search=lambda i: f"{racks[i].zone} {racks[i].rack}".lower(),
        sort_keys={
            "zone": lambda i: (racks[i].zone, racks[i].rack),
            "rack": lambda i: (racks[i].rack, racks[i].zone),
            "ready": lambda i: (racks[i].ready, racks[i].total),
            "not_ready": count("not_ready"),
            "unknown": count("unknown"),
            "cordoned": count("cordoned"),
            "lag_max": lag("lease_lag_max_s"),
            "lag_p50": lag("lease_lag_p50_s"),
        },
        source=racks,
    )


def tables(n: NodesSnapshot, now: float) -> tuple[TableSpec, ...]:
    """Drill-down: zones with state, racks, and the NotReady node list."""
    zones = TableSpec(
        "zones",
        "Zones",
        (
            Column("status", "", 1),
            Column("region", "region"),
            Column("zone", "zone"),
            Column("state", "state", 17),
            *_DOMAIN_COLUMNS,
        ),
        tuple(
            Row(
                domain_name(z),
                (
                    text_cell(SYMBOL[domain_level(z)], domain_level(z)),
                    text_cell(z.region or "-"),
                    text_cell(z.zone or "(no zone)"),
                    text_cell(z.state.value if z.state else "?", zone_level(z)),
                    *_domain_cells(z),
                ),
            )
            for z in n.zones
        ),
    )
    racks = TableSpec(
        "racks",
        f"Racks ({n.rack_label})" if n.rack_label else "Racks",
        (Column("zone", "zone"), Column("rack", "rack"), *_DOMAIN_COLUMNS),
        (),
        lazy=_rack_rows(n.racks),
    )
    nodes = TableSpec(
        "not_ready",
        "NotReady nodes (longest first)",
        NOT_READY_COLUMNS,
        (),
        lazy=_not_ready_rows(n.not_ready_nodes, now),
    )
    if n.interim is not None and not n.nodes_known:  # ktop's list loads: the controller's
        i = n.interim
        heading = f"Zones ({i.source}'s {i.metrics} metrics, until ktop's node list completes)"
        zones = zones_table(i.zones, heading, "(unknown)")
    return (zones, racks, nodes)


def summary_line(n: NodesSnapshot) -> Text:
    """Drill-down header: totals, lease lag p99, heartbeat writes (while ktop's node list
    loads, the node lifecycle controller's count first, saying so).
    """
    lvl = level(n)
    out = Text(f"{SYMBOL[lvl]} ", style=STYLE[lvl])
    if n.interim is not None and not n.nodes_known:
        out.append(
            f"{_interim_summary(n, n.interim)} · {interim_words(n.interim)}, then ktop's own "
            "count replaces them · listed: "
        )
    out.append(
        f"{fmt_count(n.total)} nodes · {fmt_count(n.ready)} ready · "
        f"{fmt_count(n.not_ready)} NotReady · {fmt_count(n.unknown)} Unknown · "
        f"{fmt_count(n.cordoned)} cordoned · lease lag p99 "
        f"{fmt_val(n.lease_lag_p99_s, fmt_duration)}{_sampled(n)} · heartbeats "
        f"{fmt_val(n.heartbeat_writes_per_s, fmt_rate)}"
    )
    return out


def _sampled(n: NodesSnapshot) -> str:
    """How Lease lag was read, when it was sampled rather than watched."""
    if n.lease_sample is None:
        return ""
    per_round, period_s = n.lease_sample
    so_far = (
        f"; {fmt_count(n.leases_read)} of {fmt_count(n.total)} nodes' Leases read so far"
        if n.nodes_known and n.leases_read < n.total
        else ""
    )
    return (
        f" (sampled: {fmt_count(per_round)} Leases every {period_s:g} s, and every "
        f"not-Ready or lagging node's; lag as last read{so_far})"
    )
