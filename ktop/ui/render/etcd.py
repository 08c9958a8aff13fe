"""etcd members (fsync, commit, db size, fragmentation, leadership) and etcd as the
apiservers see it (request latency, rates, errors, storage size, object counts).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from ktop.model.areas import AREAS
from ktop.model.extractors import member_value
from ktop.model.limits import ETCD_CLIENT_ERRORS, ETCD_COMMIT_P99, ETCD_LEADER_CHANGES
from ktop.model.reading import Reading
from ktop.model.signal_areas import Area
from ktop.model.signals import MEMBER_READINGS
from ktop.model.signals_etcd import (
    ETCD_COMMIT_P99_S,
    ETCD_DB_QUOTA_RATIO,
    ETCD_DEFRAG_INFLIGHT,
    ETCD_FRAGMENTATION,
    ETCD_FSYNC_P99_S,
)
from ktop.model.snapshot_etcd import (
    EtcdApiserverView,
    EtcdClientRow,
    EtcdMemberRow,
    EtcdSnapshot,
    EtcdView,
)
from ktop.model.text import (
    fmt_age,
    fmt_bytes,
    fmt_duration,
    fmt_pct,
    fmt_rate,
    fmt_si,
    fmt_val,
    short_instance,
)
from ktop.model.values import Val, sum_vals, whole
from ktop.ui.render.level import (
    SYMBOL,
    Level,
    graded,
    reading_level,
    shown_level,
    worst,
)
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

NAME = AREAS[Area.ETCD].name
"""The panel's name on its border (the area registry's)."""

WIDE = 60
LEADER_MARK = "*"
"""Marks the leader in member lists."""
DEFRAG_MARK = "defrag"
"""Marks a member that defragments (it blocks reads and writes until it ends)."""
VIEW_LABEL: dict[EtcdView, str] = {
    EtcdView.MEMBERS: "members",
    EtcdView.APISERVER: "apiserver view",
    EtcdView.BOTH: "members + apiserver view",
    EtcdView.NONE: "no view",
}
"""Which etcd view a pane shows, as it says so."""


def client_level(r: EtcdClientRow) -> Level:
    """An apiserver's etcd requests: errors are a warning, slow p99 as for commits; a p99
    unread or with no observations is unknown, never ok.
    """
    if not r.p99_s.known:
        return Level.UNKNOWN
    levels = [graded(ETCD_CLIENT_ERRORS, r.errors_per_s), graded(ETCD_COMMIT_P99, r.p99_s)]
    return worst(levels) if max(levels) > Level.NEUTRAL else Level.OK


def client_summary(view: EtcdApiserverView) -> str:
    """One line: the apiservers' etcd p99 (worst instance), rates, errors, storage."""
    p99 = [r.p99_s for r in view.instances if r.p99_s.known]
    worst_p99 = max(p99, key=lambda v: v.or_(0.0)) if p99 else Val.unknown("no p99")
    reqs = sum_vals([r.requests_per_s for r in view.instances], empty_reason="none")
    errs = sum_vals([r.errors_per_s for r in view.instances], empty_reason="none")
    return (
        f"apiserver view: p99 {fmt_val(worst_p99, fmt_duration)} · "
        f"{fmt_val(reqs, fmt_rate)} req · {fmt_val(errs, fmt_rate)} err · "
        f"db {fmt_val(view.storage_bytes, fmt_bytes)}"
    )


def fsync_level(m: EtcdMemberRow) -> Level:
    """WAL fsync p99 against the mixin's 0.5 s / 1 s."""
    return reading_level(ETCD_FSYNC_P99_S, m.wal_fsync_p99_s)


def commit_level(m: EtcdMemberRow) -> Level:
    """Backend commit p99 against the mixin's 0.25 s."""
    return reading_level(ETCD_COMMIT_P99_S, m.backend_commit_p99_s)


def quota_level(m: EtcdMemberRow) -> Level:
    """Db size / quota against 80 % / 95 %."""
    return reading_level(ETCD_DB_QUOTA_RATIO, m.db_quota_ratio)


def defrag_level(m: EtcdMemberRow) -> Level:
    """A defragmentation in progress (the member blocks reads and writes); a member that
    does not expose the gauge (etcd before 3.4.18) is not marked: triage says it is unknown.
    """
    if not m.defragmenting:
        return Level.NEUTRAL
    return reading_level(ETCD_DEFRAG_INFLIGHT, m.defrag_inflight)


def member_level(m: EtcdMemberRow) -> Level:
    """How one member looks; unreachable, unknown readings or a WAL fsync with no
    observations (etcd run with ``--unsafe-no-fsync``) are unknown, never healthy.
    """
    if m.error or not m.wal_fsync_p99_s.known:
        return Level.UNKNOWN
    levels = [
        fsync_level(m),
        commit_level(m),
        quota_level(m),
        reading_level(ETCD_FRAGMENTATION, m.fragmentation),
        defrag_level(m),
        Level.CRIT if m.has_leader.value == 0 else Level.NEUTRAL,
    ]
    return worst(levels) if max(levels) > Level.NEUTRAL else Level.OK


def member_name(m: EtcdMemberRow, leader: str) -> str:
    """The member name without its port, with ``*`` when it is the leader."""
    return short_instance(m.instance) + (LEADER_MARK if m.instance == leader else "")


def role(m: EtcdMemberRow) -> str:
    """``leader``, ``follower``, ``?``; ``defrag`` while it defragments."""
    if m.defragmenting:
        return DEFRAG_MARK
    return {None: "?", 1.0: "leader"}.get(m.is_leader.value, "follower")


def leader_changes(etcd: EtcdSnapshot) -> Val:
    """Leader changes over the window, the largest any member saw."""
    known = [m.leader_changes for m in etcd.members if m.leader_changes.known]
    if not known:
        return sum_vals([m.leader_changes for m in etcd.members], empty_reason="no members")
    return max(known, key=lambda v: v.or_(0))


def panel(
    etcd: EtcdSnapshot, note: Text | None, rows: int, width: int, *, failing: bool = False
) -> PanelView:
    """The etcd overview panel: leader in the title, one line per member; the
    apiservers' view when members cannot be read (and a line of it beside them).
    """
    view = etcd.view
    client = etcd.apiserver_view
    if view is EtcdView.APISERVER and client is not None:
        return _client_panel(etcd, client, note, rows, width, failing)
    if not etcd.members:
        return PanelView(
            title(NAME, "no members", Level.UNKNOWN), fit([], note, rows), Level.UNKNOWN
        )
    if not etcd.leader_known:
        lead, lead_level = "leader ?", Level.UNKNOWN
    elif etcd.leader:
        lead, lead_level = f"leader {short_instance(etcd.leader)}", Level.OK
    else:
        lead, lead_level = "NO LEADER", Level.CRIT
    changes = leader_changes(etcd)
    # a single scrape's lifetime count includes the first election: context, not graded
    change_level = Level.NEUTRAL if changes.lifetime else graded(ETCD_LEADER_CHANGES, changes)
    level = degrade(
        worst([lead_level, change_level, *(member_level(m) for m in etcd.members)]), failing
    )
    one = changes.value is not None and whole(changes.value) == 1
    summary = f"{lead} · {fmt_val(changes)} {'change' if one else 'changes'}"
    wide = width >= WIDE
    spec: list[tuple[str, int]] = [("fsync", 6), ("commit", 6), ("db/quota", 8)]
    if wide:
        spec += [("db", 8), ("frag", 5), ("pend", 5)]
    head = [TableCell("member", 0, "left"), *(TableCell(n, w) for n, w in spec)]
    header, *body = table_lines(
        [head, *(_panel_cells(m, etcd.leader, wide) for m in etcd.members)], width
    )
    header.stylize("dim")
    if view is EtcdView.BOTH and client is not None:
        extra = Text(client_summary(client), style="dim")
        extra.truncate(width)
        body.append(extra)
    return PanelView(title(NAME, summary, level), fit(body, note, rows, header), level)


def _client_panel(
    etcd: EtcdSnapshot,
    client: EtcdApiserverView,
    note: Text | None,
    rows: int,
    width: int,
    failing: bool,
) -> PanelView:
    level = degrade(worst([Level.UNKNOWN, *(client_level(r) for r in client.instances)]), failing)
    db = fmt_val(client.storage_bytes, fmt_bytes)
    summary = f"{VIEW_LABEL[EtcdView.APISERVER]} · leader ? · db {db}"
    spec: list[tuple[str, int]] = [("p99", 6), ("req/s", 7), ("err/s", 6)]
    if width >= WIDE:
        spec += [("p50", 6), ("db", 8)]
    table = [[TableCell("apiserver", 0, "left"), *(TableCell(n, w) for n, w in spec)]]
    for r in client.instances:
        lvl = client_level(r)
        cells = [
            TableCell(
                short_instance(r.instance), 0, "left", lvl if lvl > Level.OK else Level.NEUTRAL
            ),
            TableCell(fmt_val(r.p99_s, fmt_duration), 6, level=graded(ETCD_COMMIT_P99, r.p99_s)),
            TableCell(fmt_val(r.requests_per_s, fmt_rate), 7),
            TableCell(
                fmt_val(r.errors_per_s, fmt_rate),
                6,
                level=graded(ETCD_CLIENT_ERRORS, r.errors_per_s),
            ),
        ]
        if width >= WIDE:
            cells += [
                TableCell(fmt_val(r.p50_s, fmt_duration), 6),
                TableCell(fmt_val(r.storage_bytes, fmt_bytes), 8),
            ]
        table.append(cells)
    header, *body = table_lines(table, width)
    header.stylize("dim")
    why = etcd.unknown_reason or "; ".join(m.error for m in etcd.members if m.error)
    members = Text(f"members: {why or 'not read'}", style="dim")
    members.truncate(width)
    body.append(members)
    return PanelView(title(NAME, summary, level), fit(body, note, rows, header), level)


def _panel_cells(m: EtcdMemberRow, leader: str, wide: bool) -> list[TableCell]:
    lvl = member_level(m)
    name = member_name(m, leader) + (f" {DEFRAG_MARK}" if m.defragmenting else "")
    cells = [
        TableCell(name, 0, "left", lvl if lvl > Level.OK else Level.NEUTRAL),
        TableCell(fmt_val(m.wal_fsync_p99_s, fmt_duration), 6, level=fsync_level(m)),
        TableCell(fmt_val(m.backend_commit_p99_s, fmt_duration), 6, level=commit_level(m)),
        TableCell(fmt_val(m.db_quota_ratio, fmt_pct), 8, level=quota_level(m)),
    ]
    if wide:
        cells += [
            TableCell(fmt_val(m.db_size_bytes, fmt_bytes), 8),
            TableCell(
                fmt_val(m.fragmentation, fmt_pct),
                5,
                level=reading_level(ETCD_FRAGMENTATION, m.fragmentation),
            ),
            TableCell(fmt_val(m.proposals_pending), 5),
        ]
    return cells


def tables(etcd: EtcdSnapshot, now: float) -> tuple[TableSpec, ...]:
    """Drill-down: one row per member, its columns :func:`member_columns`."""
    ranked = member_columns()
    columns = tuple(column for _, column, _ in ranked)
    rows = tuple(
        Row(m.instance, tuple(cell(m, etcd.leader, now) for _, _, cell in ranked))
        for m in etcd.members
    )
    # The same tables whatever the data: a drill-down composes its tables once.
    return (TableSpec("members", "Members", columns, rows), *client_tables(etcd.apiserver_view))


def client_tables(view: EtcdApiserverView | None) -> tuple[TableSpec, ...]:
    """Drill-down of the apiservers' view: per instance, per request (the slowest p99
    first, then the busiest), object counts (the most first), each by the values as
    printed and then by name (empty tables that say why when no apiserver exposes etcd
    client metrics).
    """
    empty = "(no apiserver exposes etcd client metrics)"
    if view is None:
        view = EtcdApiserverView((), (), (), Val.unknown(empty), unknown_reason=empty)
    inst_cols = (
        Column("status", "", 1),
        Column("apiserver", "apiserver"),
        Column("p50", "p50", 8),
        Column("p99", "p99", 8),
        Column("req", "req/s", 8),
        Column("err", "err/s", 8),
        Column("db", "storage", 9),
    )
    inst_rows = tuple(
        Row(
            r.instance,
            (
                text_cell(SYMBOL[client_level(r)], client_level(r)),
                text_cell(short_instance(r.instance)),
                val_cell(r.p50_s, fmt_duration),
                val_cell(r.p99_s, fmt_duration, graded(ETCD_COMMIT_P99, r.p99_s)),
                val_cell(r.requests_per_s, fmt_rate),
                val_cell(r.errors_per_s, fmt_rate, graded(ETCD_CLIENT_ERRORS, r.errors_per_s)),
                val_cell(r.storage_bytes, fmt_bytes),
            ),
        )
        for r in view.instances
    )
    req_cols = (
        Column("resource", "resource"),
        Column("operation", "operation", 12),
        Column("p99", "p99", 8),
        Column("req", "req/s", 8),
        Column("err", "err/s", 8),
    )
    req_rows = tuple(
        Row(
            f"{r.resource}/{r.operation}",
            (
                text_cell(r.resource),
                text_cell(r.operation),
                val_cell(r.p99_s, fmt_duration, graded(ETCD_COMMIT_P99, r.p99_s)),
                val_cell(r.requests_per_s, fmt_rate),
                val_cell(r.errors_per_s, fmt_rate, graded(ETCD_CLIENT_ERRORS, r.errors_per_s)),
            ),
        )
        for r in sorted(
            view.requests,
            key=lambda r: (
                larger_first(r.p99_s, fmt_duration),
                larger_first(r.requests_per_s, fmt_rate),
                r.resource,
                r.operation,
            ),
        )
    )
    obj_cols = (Column("resource", "resource"), Column("objects", "objects", 10))
    objects = sorted(view.objects, key=lambda kv: (larger_first(kv[1]), kv[0]))
    obj_rows = tuple(Row(name, (text_cell(name), val_cell(v))) for name, v in objects)
    return (
        TableSpec("etcd-clients", "etcd as the apiservers see it", inst_cols, inst_rows, empty),
        TableSpec("etcd-requests", "etcd requests by resource", req_cols, req_rows, empty),
        TableSpec("etcd-objects", "Objects stored, by resource", obj_cols, obj_rows, empty),
    )


MemberCell = Callable[[EtcdMemberRow, str, float], Text]
"""One cell of a member's row, from the member, the leader's instance and the time now."""


def _status_cell(m: EtcdMemberRow, _leader: str, _now: float) -> Text:
    lvl = member_level(m)
    return text_cell(SYMBOL[lvl], lvl)


def _role_cell(m: EtcdMemberRow, _leader: str, _now: float) -> Text:
    return text_cell(role(m), Level.CRIT if m.has_leader.value == 0 else defrag_level(m))


def _plain(attr: str, fmt: Callable[[float], str] = fmt_si) -> MemberCell:
    return lambda m, _leader, _now: val_cell(getattr(m, attr), fmt)


OWN_COLUMNS: tuple[tuple[int, Column, MemberCell], ...] = (
    (10, Column("status", "", 1), _status_cell),
    (20, Column("member", "member"), lambda m, leader, _now: text_cell(member_name(m, leader))),
    (30, Column("leader", "role", 8), _role_cell),
    (40, Column("fsync_p50", "fsync p50", 9), _plain("wal_fsync_p50_s", fmt_duration)),
    (80, Column("in_use", "in use", 9), _plain("db_in_use_bytes", fmt_bytes)),
    (100, Column("quota", "quota", 9), _plain("quota_bytes", fmt_bytes)),
    (130, Column("changes", "leader chg", 10), _plain("leader_changes")),
    (
        900,
        Column("last_ok", "scraped", 8),
        lambda m, _leader, now: num_cell(fmt_age(None if m.last_ok is None else now - m.last_ok)),
    ),
    (
        910,
        Column("error", "error"),
        lambda m, _leader, _now: text_cell(m.error, Level.UNKNOWN if m.error else Level.NEUTRAL),
    ),
)
"""The members table's own columns (not readings), by rank among every column."""


def _reading_cell(reading: Reading, fmt: Callable[[float], str]) -> MemberCell:
    def cell(m: EtcdMemberRow, _leader: str, _now: float) -> Text:
        v = member_value(reading, m)
        return val_cell(v, fmt, shown_level(reading, v))

    return cell


def member_columns() -> list[tuple[int, Column, MemberCell]]:
    """The members table's columns by rank: its own and every per-member reading's that
    declares a column (header, width, format; coloured by the reading's threshold).
    """
    readings = [
        (c.rank, Column(c.key, c.header, c.width), _reading_cell(r, c.fmt))
        for r in MEMBER_READINGS
        if (c := r.column) is not None
    ]
    return sorted([*OWN_COLUMNS, *readings], key=lambda ranked: ranked[0])
