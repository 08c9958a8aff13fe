"""kube-apiserver instances: per-instance rows for the overview, side by side in the drill-down."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from ktop.model.areas import AREAS
from ktop.model.events import LOAD_BALANCED
from ktop.model.limits import API_SKEW, API_SLO_BUDGET
from ktop.model.signal_areas import Area
from ktop.model.signals_apiservers import (
    API_REQUEST_SKEW,
    API_SLO_RATIO,
    API_TERMINATIONS_PER_S,
    API_THROTTLED_PER_S,
    API_WATCH_SKEW,
)
from ktop.model.slo import SLOS
from ktop.model.snapshot_apiservers import ApiserverRow, ApiserversSnapshot, SloRow
from ktop.model.text import (
    fmt_age,
    fmt_bytes,
    fmt_cores,
    fmt_duration,
    fmt_pct,
    fmt_rate,
    fmt_si,
    fmt_times,
    fmt_val,
    short_instance,
)
from ktop.model.values import Val, max_val, sum_vals
from ktop.ui.render.level import (
    RECENT_RESTART_S,
    Level,
    graded,
    reading_level,
    styled,
    worst,
)
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

NAME = AREAS[Area.APISERVERS].name
"""The panel's name on its border (the area registry's)."""

WIDE = 60


def inflight(row: ApiserverRow) -> Val:
    """Read-only plus mutating requests in flight."""
    return sum_vals([row.inflight_readonly, row.inflight_mutating])


def uptime(row: ApiserverRow, now: float) -> Val:
    """Seconds since the process started (a short uptime means a restart)."""
    if row.start_time.value is None:
        return row.start_time
    return Val.of(max(0.0, now - row.start_time.value))


def uptime_level(row: ApiserverRow, now: float) -> Level:
    """WARN when the instance restarted within the last ten minutes."""
    up = uptime(row, now)
    if up.value is None:
        return Level.UNKNOWN
    return Level.WARN if up.value < RECENT_RESTART_S else Level.NEUTRAL


def instance_level(row: ApiserverRow, now: float) -> Level:
    """How one instance looks: unreachable is unknown, throttling or a restart a warning."""
    if row.error or not row.requests_per_s.known:
        return Level.UNKNOWN
    worst_slo = row.worst_slo
    slo = Level.NEUTRAL if worst_slo is None else reading_level(API_SLO_RATIO, worst_slo.ratio)
    levels = [
        uptime_level(row, now),
        reading_level(API_THROTTLED_PER_S, row.throttled_per_s),
        slo,
    ]
    return worst(levels) if max(levels) > Level.NEUTRAL else Level.OK


def panel(
    api: ApiserversSnapshot,
    now: float,
    note: Text | None,
    rows: int,
    width: int,
    *,
    failing: bool = False,
) -> PanelView:
    """The apiservers overview panel: one line per instance, skew in the title."""
    if not api.instances:
        return PanelView(
            title(NAME, "none seen", Level.UNKNOWN), fit([], note, rows), Level.UNKNOWN
        )
    up = sum(1 for r in api.instances if not r.error and r.requests_per_s.known)
    skew = max_val([api.request_skew, api.watch_skew])
    skew_level = graded(API_SKEW, skew)
    levels = [instance_level(r, now) for r in api.instances]
    level = degrade(
        worst([*levels, skew_level if skew_level != Level.UNKNOWN else Level.OK]), failing
    )
    summary = f"{up}/{len(api.instances)} up · skew {fmt_val(skew, fmt_times)}"
    wide = width >= WIDE
    spec: list[tuple[str, int]] = [("req", 7), ("infl", 5), ("watch", 6)]
    if wide:
        spec += [("cpu", 5), ("rss", 8), ("429", 6), ("p99/slo", 8)]
    spec += [("up", 5)]
    head = [TableCell("instance", 0, "left"), *(TableCell(n, w) for n, w in spec)]
    header, *body = table_lines([head, *(_panel_cells(r, now, wide) for r in api.instances)], width)
    header.stylize("dim")
    body.append(skew_line(api))
    return PanelView(title(NAME, summary, level), fit(body, note, rows, header), level)


def skew_line(api: ApiserversSnapshot) -> Text:
    """``skew requests 1.1x · watches 1.9x``, each styled by its level."""
    out = Text("skew ", style="dim")
    for i, (name, v) in enumerate((("requests", api.request_skew), ("watches", api.watch_skew))):
        if i:
            out.append(" · ", style="dim")
        out.append(f"{name} ")
        out.append(styled(fmt_val(v, fmt_times), graded(API_SKEW, v)))
    return out


def _panel_cells(r: ApiserverRow, now: float, wide: bool) -> list[TableCell]:
    lvl = instance_level(r, now)
    cells = [
        TableCell(short_instance(r.instance), 0, "left", lvl if lvl > Level.OK else Level.NEUTRAL),
        TableCell(fmt_val(r.requests_per_s, fmt_rate), 7),
        TableCell(fmt_val(inflight(r)), 5),
        TableCell(fmt_val(r.watches), 6),
    ]
    if wide:
        slo_text_, slo_level = slo_cell(r)
        cells += [
            TableCell(fmt_val(r.cpu_cores, fmt_cores), 5),
            TableCell(fmt_val(r.rss_bytes, fmt_bytes), 8),
            TableCell(
                fmt_val(r.throttled_per_s, fmt_rate),
                6,
                level=reading_level(API_THROTTLED_PER_S, r.throttled_per_s),
            ),
            TableCell(slo_text_, 8, level=slo_level),
        ]
    if r.error:  # numbers are the last ones read; uptime is meaningless while unreachable
        cells.append(TableCell("err", 5, level=Level.UNKNOWN))
    else:
        cells.append(TableCell(fmt_val(uptime(r, now), fmt_age), 5, level=uptime_level(r, now)))
    return cells


def slo_cell(r: ApiserverRow) -> tuple[str, Level]:
    """The worst SLO's p99 / limit (``0.4x``, ``2.6x``) and its look; ``-`` when no call
    was measured, ``?`` when unknown.
    """
    worst = r.worst_slo
    if worst is None:
        known = [s for s in r.slos if s.p99_s.empty]
        return ("-", Level.NEUTRAL) if known and len(known) == len(r.slos) else ("?", Level.UNKNOWN)
    return fmt_val(worst.ratio, fmt_times), reading_level(API_SLO_RATIO, worst.ratio)


def slo_text(s: SloRow) -> Text:
    """``2.6s of 1s (16% slow)``, styled by p99 / limit; ``~`` marks a lifetime value."""
    if s.p99_s.value is None:
        return val_cell(s.p99_s, fmt_duration)
    slow = "" if s.slow_share.value is None else f" ({fmt_pct(s.slow_share.value)} slow)"
    text = f"{fmt_val(s.p99_s, fmt_duration)} of {fmt_duration(s.limit_s)}{slow}"
    return num_cell(text, reading_level(API_SLO_RATIO, s.ratio))


def budget_text(s: SloRow) -> Text:
    """``38% today`` (counted by Prometheus since 00:00 UTC) or ``38% since 14:02`` (UTC,
    counted by ktop since its first scrape of the instance): the share of the SLO's error
    budget burned, graded by :data:`~ktop.model.limits.API_SLO_BUDGET`; ``-`` when no call
    was counted, ``?`` when the SLI histogram is not exposed.
    """
    v = s.budget_burned
    if v.value is None or s.budget_since is None:
        return val_cell(v, fmt_pct)
    return num_cell(f"{fmt_pct(v.value)} {s.budget_span}", graded(API_SLO_BUDGET, v))


def _budget_metric(i: int) -> Callable[[ApiserverRow, float], Text]:
    def cell(r: ApiserverRow, _now: float) -> Text:
        return budget_text(r.slos[i]) if i < len(r.slos) else num_cell("?", Level.UNKNOWN)

    return cell


def _slo_metric(i: int) -> Callable[[ApiserverRow, float], Text]:
    def cell(r: ApiserverRow, _now: float) -> Text:
        return slo_text(r.slos[i]) if i < len(r.slos) else num_cell("?", Level.UNKNOWN)

    return cell


Metric = tuple[str, str, Callable[[ApiserverRow, float], Text]]


def _v(
    get: Callable[[ApiserverRow], Val], fmt: Callable[[float], str] = fmt_si
) -> Callable[[ApiserverRow, float], Text]:
    return lambda r, _now: val_cell(get(r), fmt)


METRICS: tuple[Metric, ...] = (
    (
        "status",
        "status",
        lambda r, now: text_cell("error" if r.error else "up", instance_level(r, now)),
    ),
    ("version", "version", lambda r, _now: num_cell(r.version or "?")),
    ("requests", "requests/s", _v(lambda r: r.requests_per_s, fmt_rate)),
    ("reads", "reads/s (GET, LIST)", _v(lambda r: r.reads_per_s, fmt_rate)),
    ("writes", "writes/s", _v(lambda r: r.writes_per_s, fmt_rate)),
    ("write_p99", "write latency p99", _v(lambda r: r.write_p99_s, fmt_duration)),
    *(
        (f"slo:{slo.kind}", f"p99 {slo.kind} (SLO {fmt_duration(slo.limit_s)})", _slo_metric(i))
        for i, slo in enumerate(SLOS)
    ),
    *(
        (f"budget:{slo.kind}", f"budget burned, {slo.kind}", _budget_metric(i))
        for i, slo in enumerate(SLOS)
    ),
    (
        "errors_5xx",
        "5xx/s",
        _v(lambda r: r.errors_5xx_per_s, fmt_rate),
    ),
    ("inflight_ro", "inflight read-only", _v(lambda r: r.inflight_readonly)),
    ("inflight_mut", "inflight mutating", _v(lambda r: r.inflight_mutating)),
    ("watches", "watches", _v(lambda r: r.watches)),
    ("cpu", "CPU cores", _v(lambda r: r.cpu_cores, fmt_cores)),
    ("rss", "RSS", _v(lambda r: r.rss_bytes, fmt_bytes)),
    (
        "uptime",
        "uptime",
        lambda r, now: num_cell(fmt_val(uptime(r, now), fmt_age), uptime_level(r, now)),
    ),
    (
        "throttled",
        "429/s",
        lambda r, _now: num_cell(
            fmt_val(r.throttled_per_s, fmt_rate),
            reading_level(API_THROTTLED_PER_S, r.throttled_per_s),
        ),
    ),
    (
        "terminations",
        "terminations/s",
        lambda r, _now: num_cell(
            fmt_val(r.terminations_per_s, fmt_rate),
            reading_level(API_TERMINATIONS_PER_S, r.terminations_per_s),
        ),
    ),
    (
        "last_ok",
        "last scrape",
        lambda r, now: num_cell(fmt_age(None if r.last_ok is None else now - r.last_ok)),
    ),
)
"""Rows of the side-by-side table: key, label, cell per instance."""


def tables(api: ApiserversSnapshot, now: float) -> tuple[TableSpec, ...]:
    """One table, instances side by side (a column each), metrics as rows."""
    columns = (
        Column("metric", "metric"),
        *(Column(f"i:{r.instance}", r.instance, max(9, len(r.instance))) for r in api.instances),
    )
    rows = tuple(
        Row(key, (text_cell(label), *(cell(r, now) for r in api.instances)))
        for key, label, cell in METRICS
    )
    return (TableSpec("instances", "Instances side by side", columns, rows),)


def summary_line(api: ApiserversSnapshot) -> Text:
    """Skew ratios for the drill-down header."""
    req = reading_level(API_REQUEST_SKEW, api.request_skew)
    watch = reading_level(API_WATCH_SKEW, api.watch_skew)
    out = Text("request skew ")
    out.append(styled(fmt_val(api.request_skew, fmt_times), req))
    out.append(" · watch skew ")
    out.append(styled(fmt_val(api.watch_skew, fmt_times), watch))
    out.append(" (the busiest or the idlest reachable instance against the others)", style="dim")
    if api.identities is not None:
        out.append(f" · {api.identities} apiserver identity lease(s) in kube-system")
        read = sum(1 for r in api.instances if r.instance != LOAD_BALANCED)
        if api.identities > read:
            # more apiservers registered than ktop reads: the rows are not the whole set
            out.append(" · ")
            out.append(styled(f"{api.identities} registered, {read} read", Level.UNKNOWN, " "))
    return out
