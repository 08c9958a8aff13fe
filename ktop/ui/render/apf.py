"""APF: worst priority levels for the overview; levels, flows, instances for the drill-down."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from ktop.model.areas import AREAS
from ktop.model.limits import APF_SEATS
from ktop.model.signal_areas import Area
from ktop.model.signals_apf import APF_IN_QUEUE, APF_REJECTED_PER_S, APF_WAIT_P99_S
from ktop.model.snapshot_apf import ApfRow, ApfSnapshot, TalkerRow, TalkersView
from ktop.model.text import counted, fmt_duration, fmt_pct, fmt_rate, fmt_si, fmt_val
from ktop.model.values import Val, ratio, sum_vals
from ktop.ui.render.level import (
    STYLE,
    SYMBOL,
    Level,
    graded,
    reading_level,
    worst,
)
from ktop.ui.render.sortkey import Larger, larger_first
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

NAME = AREAS[Area.APF].name
"""The panel's name on its border (the area registry's)."""

WIDE = 60
"""Panels at least this wide show the extra columns."""


def seats_text(row: ApfRow) -> str:
    """``used/limit`` seats, ``?`` for unknown parts."""
    return f"{fmt_val(row.seats_in_use)}/{fmt_val(row.seats_limit)}"


def seats_pct_text(row: ApfRow) -> str:
    """Seats in use as a share of the limit: ``92%``; ``?`` when either is unknown."""
    return fmt_val(ratio(row.seats_in_use, row.seats_limit, zero_reason="no limit"), fmt_pct)


def seats_level(row: ApfRow) -> Level:
    """WARN when seats in use reach 90 % of the limit."""
    used, limit = row.seats_in_use.value, row.seats_limit.value
    if used is None or limit is None:
        return Level.UNKNOWN
    return graded(APF_SEATS, Val.of(used / limit)) if limit > 0 else Level.NEUTRAL


def row_level(row: ApfRow) -> Level:
    """How bad one APF row looks: rejections are critical, queueing a warning."""
    rejected = row.rejected_total_per_s
    levels = [
        reading_level(APF_REJECTED_PER_S, rejected),
        reading_level(APF_IN_QUEUE, row.in_queue),
        reading_level(APF_WAIT_P99_S, row.wait_p99_s),
        seats_level(row),
    ]
    if not (row.in_queue.known and row.executing.known):
        levels.append(Level.UNKNOWN)
    return worst(levels) if max(levels) > Level.NEUTRAL else Level.OK


def rejected_text(row: ApfRow) -> str:
    """Rejections per second by reason, e.g. ``queue-full 10/s, time-out 2/s``."""
    parts = [
        f"{reason} {fmt_val(v, fmt_rate)}"
        for reason, v in sorted(row.rejected_per_s.items())
        if not v.known or v.or_(0) > 0
    ]
    return ", ".join(parts) or "-"


def shown_order(rows: Sequence[ApfRow]) -> list[ApfRow]:
    """Worst first, by the values as printed: status, rejections, queued, wait p99; then by
    name. Jitter the screen does not show never swaps two rows.
    """

    def key(r: ApfRow) -> tuple[int, Larger, Larger, Larger, str, str, str]:
        return (
            -row_level(r),
            larger_first(r.rejected_total_per_s, fmt_rate),
            larger_first(r.in_queue, fmt_si),
            larger_first(r.wait_p99_s, fmt_duration),
            r.priority_level,
            r.flow_schema,
            r.instance,
        )

    return sorted(rows, key=key)


def panel(
    apf: ApfSnapshot, note: Text | None, rows: int, width: int, *, failing: bool = False
) -> PanelView:
    """The APF overview panel: the worst priority levels first."""
    if not apf.levels:
        level = Level.UNKNOWN
        summary = "no data" if apf.unknown_reason else "no priority levels"
        return PanelView(title(NAME, summary, level), fit([], note, rows), level)
    in_queue = sum_vals([r.in_queue for r in apf.levels])
    rejected = sum_vals([r.rejected_total_per_s for r in apf.levels])
    level = degrade(worst([row_level(r) for r in apf.levels]), failing)
    summary = f"{fmt_val(in_queue, fmt_si)} queued · {fmt_val(rejected, fmt_rate)} rejected"
    wide = width >= WIDE
    header_cells = [TableCell("level", 0, "left"), TableCell("inq", 5)]
    if wide:
        header_cells += [TableCell("exec", 5)]
    header_cells += [TableCell("seats", 9) if wide else TableCell("seats", 6)]
    if wide:
        header_cells += [TableCell("p50", 6)]
    header_cells += [TableCell("p99", 6 if wide else 5)]
    if wide:
        header_cells += [TableCell("disp", 7)]
    header_cells += [TableCell("rej", 7 if wide else 5)]
    header, *body = table_lines(
        [header_cells, *(_panel_cells(r, wide) for r in shown_order(apf.levels))], width
    )
    header.stylize("dim")
    if (top := top_talker(apf)) is not None:
        body.insert(0, Text(talker_line(top[1], width), style=STYLE[top[2]]))
    return PanelView(title(NAME, summary, level), fit(body, note, rows, header), level)


def top_talker(apf: ApfSnapshot) -> tuple[ApfRow, TalkerRow, Level] | None:
    """The heaviest client of the worst priority level that queues or rejects, with
    that level's row and look; None when no such level has a known client.
    """
    for r in shown_order(apf.levels):
        if r.in_queue.or_(0.0) <= 0 and r.rejected_total_per_s.or_(0.0) <= 0:
            continue
        clients = apf.talkers.of_level(r.priority_level)
        if clients:
            return r, clients[0], row_level(r)
    return None


SA_PREFIX = "system:serviceaccount:"


def short_client(name: str) -> str:
    """A client name in fewer columns: ``sa:batch:reporter`` for a service account."""
    return "sa:" + name[len(SA_PREFIX) :] if name.startswith(SA_PREFIX) else name


def talker_line(t: TalkerRow, width: int) -> str:
    """The overview's top-talker line in ``width`` columns: the whole sentence where it
    fits, else the level, share and shortened name, else share and name.
    """
    share = t.share_words() or "most load"
    for text in (
        f"top: {t.sentence()}",
        f"top: {t.priority_level}: {share} {short_client(t.client)}",
        f"top: {share.split()[0]} {short_client(t.client)}",
    ):
        if len(text) <= width:
            return text
    return text[: max(width, 1)]


def _panel_cells(r: ApfRow, wide: bool) -> list[TableCell]:
    lvl = row_level(r)
    cells = [
        TableCell(r.priority_level, 0, "left", lvl if lvl > Level.OK else Level.NEUTRAL),
        TableCell(fmt_val(r.in_queue), 5, level=reading_level(APF_IN_QUEUE, r.in_queue)),
    ]
    if wide:
        cells.append(TableCell(fmt_val(r.executing), 5))
    seats = seats_text(r) if wide else seats_pct_text(r)
    cells.append(TableCell(seats, 9 if wide else 6, level=seats_level(r)))
    if wide:
        cells.append(TableCell(fmt_val(r.wait_p50_s, fmt_duration), 6))
    p99_level = reading_level(APF_WAIT_P99_S, r.wait_p99_s)
    cells.append(TableCell(fmt_val(r.wait_p99_s, fmt_duration), 6 if wide else 5, level=p99_level))
    if wide:
        cells.append(TableCell(fmt_val(r.dispatched_per_s, fmt_rate), 7))
    rejected = r.rejected_total_per_s
    rej_level = reading_level(APF_REJECTED_PER_S, rejected)
    rej_text = fmt_val(rejected, fmt_rate) if wide else fmt_val(rejected)
    cells.append(TableCell(rej_text, 7 if wide else 5, level=rej_level))
    return cells


def _num(v: Val, level: Level = Level.NEUTRAL) -> Text:
    return val_cell(v, level=level)


def _common_cells(r: ApfRow, *, limit: bool = True) -> list[Text]:
    seats = num_cell(seats_text(r), seats_level(r)) if limit else val_cell(r.seats_in_use)
    return [
        _num(r.in_queue, level=reading_level(APF_IN_QUEUE, r.in_queue)),
        _num(r.executing),
        seats,
        num_cell(fmt_val(r.wait_p50_s, fmt_duration)),
        num_cell(
            fmt_val(r.wait_p99_s, fmt_duration),
            reading_level(APF_WAIT_P99_S, r.wait_p99_s),
        ),
        num_cell(fmt_val(r.dispatched_per_s, fmt_rate)),
        num_cell(
            fmt_val(r.rejected_total_per_s, fmt_rate),
            reading_level(APF_REJECTED_PER_S, r.rejected_total_per_s),
        ),
    ]


def _columns(*, limit: bool = True) -> tuple[Column, ...]:
    seats = Column("seats", "seats used/limit", 16) if limit else Column("seats", "seats", 6)
    return (
        Column("in_queue", "in queue", 8),
        Column("executing", "exec", 6),
        seats,
        Column("p50", "wait p50", 8),
        Column("p99", "wait p99", 8),
        Column("dispatched", "disp/s", 8),
        Column("rejected", "rej/s", 8),
    )


def tables(apf: ApfSnapshot) -> tuple[TableSpec, ...]:
    """Drill-down tables: by priority level, by flow schema, per instance."""
    levels = TableSpec(
        "levels",
        "Priority levels (all instances)",
        (
            Column("status", "", 1),
            Column("level", "priority level"),
            *_columns(),
            Column("reasons", "rejected by reason"),
        ),
        tuple(
            Row(
                r.priority_level,
                (
                    text_cell(SYMBOL[row_level(r)], row_level(r)),
                    text_cell(r.priority_level),
                    *_common_cells(r),
                    text_cell(rejected_text(r)),
                ),
            )
            for r in shown_order(apf.levels)
        ),
    )
    flows = TableSpec(
        "flows",
        "Flow schemas",
        (
            Column("level", "priority level"),
            Column("flow", "flow schema"),
            *_columns(limit=False),
        ),
        tuple(
            Row(
                f"{r.priority_level}/{r.flow_schema}",
                (
                    text_cell(r.priority_level),
                    text_cell(r.flow_schema),
                    *_common_cells(r, limit=False),
                ),
            )
            for r in shown_order(apf.flows)
        ),
    )
    instances = TableSpec(
        "instances",
        "Per apiserver instance",
        (Column("instance", "instance"), Column("level", "priority level"), *_columns()),
        tuple(
            Row(
                f"{r.instance}/{r.priority_level}",
                (text_cell(r.instance), text_cell(r.priority_level), *_common_cells(r)),
            )
            for r in shown_order(apf.per_instance)
        ),
    )
    return (levels, talkers_table(apf.talkers), flows, instances)


def _share(x: float | None) -> Text:
    return num_cell("-" if x is None else fmt_pct(x))


def talkers_table(t: TalkersView) -> TableSpec:
    """Who holds the seats and queues: every client of every level, from the request
    dumps (levels with the most queued first, the heaviest client first).
    """
    if t.unknown_reason:
        empty = f"unknown: {t.unknown_reason}"
    else:
        empty = "no request queued or executing in the dumps"
    unread = f"; not read: {', '.join(i for i, _ in t.unread)}" if t.unread else ""
    seats = "" if t.executing_listed else "; executing requests not listed (before 1.28)"
    read = f"{counted(len(t.read), 'instance')}, last {t.window_s:g} s{seats}{unread}"
    return TableSpec(
        "talkers",
        f"Top talkers (request dumps of {read})",
        (
            Column("level", "priority level"),
            Column("client", "client (user or flow distinguisher)"),
            Column("seats", "seats", 7),
            Column("seat_share", "of seats", 8),
            Column("queued", "queued", 7),
            Column("queue_share", "of queue", 8),
            Column("oldest", "oldest wait", 11),
            Column("what", "commonest call"),
            Column("flow", "flow schema"),
            Column("instances", "instances"),
        ),
        tuple(
            Row(
                f"{r.priority_level}/{r.client}",
                (
                    text_cell(r.priority_level),
                    text_cell(r.client),
                    num_cell(fmt_si(r.seats)),
                    _share(r.seat_share),
                    num_cell(fmt_si(r.waiting)),
                    _share(r.wait_share),
                    num_cell(fmt_duration(r.oldest_wait_s) if r.waiting > 0 else "-"),
                    text_cell(r.what),
                    text_cell(r.flow_schema),
                    text_cell(", ".join(r.instances)),
                ),
            )
            for r in t.rows
        ),
        empty=empty,
    )
