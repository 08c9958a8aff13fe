"""The fleet view as a table (one row per cell, worst first) and its notes. Pure."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from ktop.analysis.fleet import CellSummary, SharedCause
from ktop.analysis.triage.paths import PATHS
from ktop.analysis.triage.types import Verdict
from ktop.fleet import FleetView
from ktop.model.signals_apiservers import API_REQUEST_SKEW
from ktop.model.signals_etcd import ETCD_FSYNC_P99_S
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.text import (
    fmt_age,
    fmt_duration,
    fmt_rate,
    fmt_si,
    fmt_times,
    fmt_val,
)
from ktop.model.values import Val
from ktop.ui.render.level import (
    SEVERITY_LEVEL,
    SEVERITY_SYMBOL,
    STALE_AFTER_S,
    STYLE,
    SYMBOL,
    ZONE_LEVEL,
    Level,
    reading_level,
)
from ktop.ui.render.triage import STATUS_LEVEL, VERDICT_LEVEL
from ktop.ui.render.view import Column, Row, TableSpec

WIDE = 140
"""Terminals at least this wide get the long columns (APF level, pending reason, path)."""

ZONE_SHORT: dict[ZoneState | None, str] = {
    ZoneState.FULL_DISRUPTION: "Full",
    ZoneState.PARTIAL_DISRUPTION: "Part",
    ZoneState.INITIAL: "Init",
    ZoneState.NORMAL: "Norm",
    None: "?",
}
"""Zone states in four letters (the full names are in docs/fleet.md and the cell's pane)."""


def middle(name: str, width: int) -> str:
    """``name`` cut in the middle to ``width`` (cells differ at the end: ``...-cell-a``)."""
    if len(name) <= width:
        return name
    head = (width - 1) // 2
    return name[:head] + "…" + name[len(name) - (width - 1 - head) :]


def _cell(text: str, level: Level = Level.NEUTRAL, *, right: bool = False) -> Text:
    return Text(text, style=STYLE[level], justify="right" if right else "left")


def _val(v: Val, fmt: Callable[[float], str], level: Level) -> Text:
    text = fmt_val(v, fmt)
    return _cell(text, level if v.known or v.empty else Level.UNKNOWN, right=True)


def _nodes(c: CellSummary) -> Text:
    if c.not_ready.value is None or c.nodes_total.value is None:
        return _cell("?", Level.UNKNOWN, right=True)
    level = Level.WARN if c.not_ready.value > 0 else Level.OK
    text = f"{fmt_si(c.not_ready.value)}/{fmt_si(c.nodes_total.value)}"
    return _cell(text, level, right=True)


def _zones(c: CellSummary) -> Text:
    if not c.zones:
        return _cell("?", Level.UNKNOWN)
    worst = c.worst_zone
    count = sum(1 for _, s in c.zones if s == worst)
    level = ZONE_LEVEL[worst] if worst is not None else Level.UNKNOWN
    return _cell(f"{ZONE_SHORT[worst]} {count}/{len(c.zones)}", level)


def _apf(c: CellSummary) -> Text:
    v = c.apf_rejected_per_s
    return _val(v, fmt_rate, Level.CRIT if (v.value or 0.0) > 0 else Level.OK)


def _etcd(c: CellSummary) -> Text:
    level = max(STATUS_LEVEL[c.etcd_leader], reading_level(ETCD_FSYNC_P99_S, c.etcd_fsync_p99_s))
    fsync = fmt_val(c.etcd_fsync_p99_s, fmt_duration)
    return _cell(f"{SYMBOL[STATUS_LEVEL[c.etcd_leader]]} {fsync}", level)


def _triage(c: CellSummary) -> Text:
    level = VERDICT_LEVEL[c.verdict]
    what = c.path if c.verdict is not Verdict.CLEAR else "clear"
    return _cell(f"{SYMBOL[level]} {what or c.verdict.value}", level)


def _age(c: CellSummary) -> Text:
    v = c.data_age_s
    if v.value is None:
        return _cell("?", Level.UNKNOWN, right=True)
    level = Level.WARN if v.value > STALE_AFTER_S else Level.NEUTRAL
    return _cell(fmt_age(v.value), level, right=True)


TRIAGE_WIDE = max(len(p.id) for p in PATHS) + 2
"""On wide terminals the triage column holds every path's id whole, after its mark."""
CELL_PADDING = 2
"""Columns a table cell adds around its text (one each side)."""
WHY_MIN = 20
"""On wide terminals the last column, why, keeps at least this much."""
NAME_MIN = 10


def _name_width(view: FleetView, width: int, rest: list[Column]) -> int:
    """The cell column as wide as the longest name (and its status mark) where the width
    allows it, so that no name is cut while the table has room; at least
    :data:`NAME_MIN`.
    """
    longest = max((len(c.name) for c in view.cells), default=4) + 2
    taken = sum((col.width or WHY_MIN) + CELL_PADDING for col in rest) + CELL_PADDING
    return max(NAME_MIN, min(longest, width - taken))


def _why_fills(rest: list[Column], name_width: int, width: int) -> list[Column]:
    """The columns with *why* (the one without a width) given the width the others leave
    (the cell column keeps it :data:`WHY_MIN` where it can): its text is cut to the
    screen with ``…``, not by the screen's edge.
    """
    taken = sum((c.width or 0) + CELL_PADDING for c in rest) + name_width + CELL_PADDING
    room = max(1, width - taken)
    return [Column(c.key, c.label, room) if c.width is None else c for c in rest]


def fleet_table(view: FleetView, width: int) -> TableSpec:
    """Every cell worst first; wide terminals also get the APF level, the top pending
    reason and why (the suspect path's title, or why the cell is unknown).
    """
    wide = width >= WIDE
    rest = [
        Column("nodes", "NotReady" if wide else "NotRdy", 9 if wide else 8),
        Column("zones", "zones", 8),
        Column("apf", "APF rej" if wide else "APF", 7 if wide else 6),
    ]
    if wide:
        rest.append(Column("level", "APF level", 14))
    rest += [
        Column("skew", "skew", 5 if wide else 4),
        Column("etcd", "etcd", 7),
        Column("pending", "pending" if wide else "pend", 7 if wide else 4),
    ]
    if wide:
        rest.append(Column("reason", "top pending reason", 20))
    rest += [Column("triage", "triage", TRIAGE_WIDE if wide else 7), Column("age", "age", 3)]
    if wide:
        rest.append(Column("why", "why", None))
    name_width = _name_width(view, width, rest)
    columns = [Column("cell", "cell", name_width), *_why_fills(rest, name_width, width)]
    rows = []
    for c in view.cells:
        level = SEVERITY_LEVEL[c.severity]
        cells = [
            _cell(f"{SEVERITY_SYMBOL[c.severity]} {middle(c.name, name_width - 2)}", level),
            _nodes(c),
            _zones(c),
            _apf(c),
        ]
        if wide:
            cells.append(_cell(c.apf_level or "?", Level.NEUTRAL if c.apf_level else Level.UNKNOWN))
        cells += [
            _val(c.api_skew, fmt_times, reading_level(API_REQUEST_SKEW, c.api_skew)),
            _etcd(c),
            _val(c.pending, fmt_si, Level.NEUTRAL),
        ]
        if wide:
            cells.append(_cell(c.pending_top_reason or "-", Level.NEUTRAL))
        cells += [_triage(c), _age(c)]
        if wide:
            cells.append(_why(c))
        rows.append(
            Row(c.name, tuple(fit(t, col.width) for t, col in zip(cells, columns, strict=True)))
        )
    return TableSpec("fleet", "Cells, worst first (enter: open)", tuple(columns), tuple(rows))


def fit(text: Text, width: int | None) -> Text:
    """``text`` cut to ``width`` cells ending in ``…`` when longer (a bare cut reads as
    another value: ``API-C`` for ``API-CPU``); as it is when the column sizes to it.
    """
    if width is None or text.cell_len <= width:
        return text
    out = text.copy()
    out.truncate(width, overflow="ellipsis")
    return out


def _why(c: CellSummary) -> Text:
    if c.reason:
        return _cell(c.reason, Level.UNKNOWN)
    if c.path:
        return _cell(c.path_title, VERDICT_LEVEL[c.verdict])
    return _cell("", Level.NEUTRAL)


def headline(view: FleetView) -> Text:
    """``7 cells: 3 ✖ critical, 2 ▲ warning, 1 ? unknown, 1 ✓ ok``."""
    counts: dict[Level, int] = {}
    for c in view.cells:
        lv = SEVERITY_LEVEL[c.severity]
        counts[lv] = counts.get(lv, 0) + 1
    out = Text(f"{len(view.cells)} cells:", style="bold")
    names = {Level.CRIT: "critical", Level.WARN: "warning", Level.UNKNOWN: "unknown"}
    for lv in (Level.CRIT, Level.WARN, Level.UNKNOWN, Level.OK, Level.NEUTRAL):
        if counts.get(lv):
            out.append(f" {counts[lv]} {SYMBOL[lv]} {names.get(lv, 'ok')}", style=STYLE[lv])
    return out


def _shared(s: SharedCause) -> Text:
    """``▲ P4 in a, b within 12s: shared cause, likely region us-east-1 (KT-FLEET-001)``."""
    spread = s.last_onset - s.first_onset
    out = Text(f"{SYMBOL[Level.WARN]} ", style=STYLE[Level.WARN])
    out.append(", ".join(s.paths), style="bold")
    out.append(f" in {', '.join(s.cells)} within {fmt_duration(spread)}: ")
    out.append(f"shared cause, likely {s.dependency} ({s.code})")
    return out


def notes(view: FleetView) -> tuple[Text, ...]:
    """Shared causes first, then every cell that cannot be read with its reason."""
    lines = [_shared(s) for s in view.shared]
    lines += [
        Text(f"{SYMBOL[Level.UNKNOWN]} {c.name}: {c.reason}", style=STYLE[Level.UNKNOWN])
        for c in view.cells
        if c.reason
    ]
    return tuple(lines)
