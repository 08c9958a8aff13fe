"""Evidence readers of etcd (see :mod:`ktop.analysis.triage.evidence`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ktop.analysis import catalogue as c
from ktop.analysis.etcd_defrag import defrag_stall, defragmenting
from ktop.analysis.findings import Severity
from ktop.analysis.triage.evidence import (
    Context,
    EvidenceReading,
    Reader,
    fmt_count,
    unknown,
    worst_reading,
)
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.analysis.triage.restarts import recent_restart
from ktop.model.reading import key as signal_key
from ktop.model.snapshot_etcd import EtcdMemberRow, EtcdQuorum
from ktop.model.text import fmt_clock, fmt_duration
from ktop.model.values import Val


def _etcd_rows(ctx: Context) -> list[EtcdMemberRow]:
    return list(ctx.snap.etcd.answering)


def _readable(ctx: Context) -> list[EtcdMemberRow] | EvidenceReading:
    """The members that answered, or the unknown reading that says why none can be read."""
    e = ctx.snap.etcd
    if e.unknown_reason:
        return unknown(e.unknown_reason)
    rows = _etcd_rows(ctx)
    if not rows:
        return unknown("; ".join(f"{m.instance}: {m.error}" for m in e.members) or "no member")
    return rows


def _etcd_reading(
    ctx: Context,
    spec: EvidenceSpec,
    field: Callable[[EtcdMemberRow], Val],
    fmt: Callable[[float], str],
    metric: str = "",
) -> EvidenceReading:
    rows = _readable(ctx)
    if isinstance(rows, EvidenceReading):
        return rows
    return worst_reading(spec, [(m.instance, field(m)) for m in rows], "member", fmt, metric)


def etcd_leader(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.has_leader``."""
    e = ctx.snap.etcd
    rows = _readable(ctx)
    if isinstance(rows, EvidenceReading):
        return rows
    if all(m.has_leader.value is None for m in rows):
        return unknown("etcd_server_has_leader not exposed")
    without = [m.instance for m in rows if m.has_leader.value == 0]
    if not without:
        return EvidenceReading(Severity.OK, 0.0, f"leader {e.leader or '?'}")
    detail = f"without a leader: {', '.join(without)}"
    reading = EvidenceReading(Severity.CRITICAL, float(len(without)), detail)
    return reading.on(signal_key("etcd.has_leader", without[0]), c.ETCD_NO_LEADER_BELOW)


def lost_member(m: EtcdMemberRow, started_at: float | None) -> str:
    """Which member is lost, why, and since when: ``etcd-2: connection refused (last
    answered 06:12:03)``, ``(not answered since ktop started at 06:11:50)`` when it never
    did (``started_at``: the source's start), ``etcd-2: answers without a leader``.
    """
    if not m.error:
        return f"{m.instance}: answers without a leader"
    if m.last_ok is not None:
        since = f"last answered {fmt_clock(m.last_ok)}"
    elif started_at is not None:
        since = f"not answered since ktop started at {fmt_clock(started_at)}"
    else:
        since = "never answered this run"
    return f"{m.instance}: {m.error} ({since})"


def lost_members(ctx: Context, q: EtcdQuorum) -> str:
    """Every lost member of ``q`` (:func:`lost_member`), ``; ``-separated."""
    return "; ".join(lost_member(m, ctx.snap.started_at) for m in q.lost)


def quorum_state(q: EtcdQuorum) -> str:
    """``2 of 3 members answer with a leader; quorum 2, 0 more may fail``, and the members
    not read (neither up nor down) with why.
    """
    held = f"at least {q.margin} more may fail" if q.unread else f"{q.margin} more may fail"
    state = (
        f"{len(q.counting)} of {q.members} members answer with a leader; quorum {q.quorum}, "
        + (held if q.held else "quorum lost")
    )
    if q.unread:
        state += "; not read: " + "; ".join(f"{m.instance}: {m.error}" for m in q.unread)
    return state


def etcd_lost(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.members_lost``: a member that fails while others answer, or answers
    without a leader, no longer counts: a warning while quorum holds, critical once it is
    lost. Unknown when no member can be read, or when none is lost but some are not read.
    """
    q = ctx.snap.etcd.quorum()
    if isinstance(q, str):
        return unknown(q)
    state = quorum_state(q)
    if not q.lost:
        return unknown(state) if q.unread else EvidenceReading(Severity.OK, 0.0, state)
    detail = f"{lost_members(ctx, q)}; {state}"
    assert spec.threshold is not None, spec.id
    severity = spec.threshold.grade(len(q.lost)) if q.held else Severity.CRITICAL
    return EvidenceReading(severity, float(len(q.lost)), detail)


def etcd_changes(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.leader_changes``; a lifetime count (one scrape) cannot be graded."""
    r = _etcd_reading(ctx, spec, lambda m: m.leader_changes, fmt_count)
    rows = _etcd_rows(ctx)
    lifetime = [m for m in rows if m.leader_changes.lifetime]
    if lifetime and not any(m.leader_changes.known and not m.leader_changes.lifetime for m in rows):
        counts = ", ".join(f"{m.instance} {fmt_count(m.leader_changes.or_(0))}" for m in lifetime)
        return unknown(
            f"lifetime counts only ({counts}; they include the first election): "
            "changes within a window need two scrapes"
        )
    since = [m for m in rows if m.leader_changes_since is not None]
    if since and r.severity is not Severity.UNKNOWN:
        return replace(
            r,
            detail=f"{r.detail}; {since_start_note(since, ctx.snap.window_s)}",
            onset=since_start_onset(since) if r.severity >= Severity.WARNING else None,
        )
    return r


def since_start_onset(rows: list[EtcdMemberRow]) -> float | None:
    """The onset certain of changes counted since a member started: each happened at or
    after its member's start, so the earliest start among the members that counted one
    is the earliest they can have begun (a leader change ranks before its consequences
    when they began after it: :func:`~.diagnosis.explains`); None when none counted one.
    """
    starts = [
        m.leader_changes_since
        for m in rows
        if m.leader_changes_since is not None and m.leader_changes.or_(0.0) > 0
    ]
    return min(starts, default=None)


def since_start_note(rows: list[EtcdMemberRow], window_s: float) -> str:
    """What is certain of changes counted since a member started within the window
    (``ktop/model/since_start.py``): each happened after its start, which is within the
    window; when within it is not known.
    """
    each = "; ".join(
        f"{m.instance} at {fmt_clock(m.leader_changes_since or 0.0)} UTC: "
        f"{fmt_count(m.leader_changes.or_(0))}"
        for m in rows
    )
    return (
        f"counted since each member started within the {fmt_duration(window_s)} look-back "
        f"({each}): each change happened after that start, when exactly is not known; "
        "the first leader a member finds as it starts is not counted"
    )


def etcd_defrag(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.defrag_inflight``: critical when a defragmenting member stalls
    (:mod:`ktop.analysis.etcd_defrag`), a warning while one defragments without a stall;
    unknown when no readable member exposes the gauge (before etcd 3.4.18).
    """
    e = ctx.snap.etcd
    rows = _readable(ctx)
    if isinstance(rows, EvidenceReading):
        return rows
    unread = [m for m in rows if not m.defrag_inflight.known]
    if len(unread) == len(rows):
        return unknown("; ".join(dict.fromkeys(m.defrag_inflight.reason for m in rows)))
    busy = defragmenting(e)
    assert spec.threshold is not None, spec.id
    fires_at = spec.threshold.fires_at
    if stall := defrag_stall(e):
        reading = EvidenceReading(Severity.CRITICAL, float(len(busy)), stall.detail())
        return reading.on(signal_key("etcd.defrag_inflight", stall.instance), fires_at)
    if busy:
        names = ", ".join(m.instance for m in busy)
        detail = f"defragmenting: {names} (no stall seen: fsync, commit and leader are fine)"
        reading = EvidenceReading(spec.threshold.grade(float(len(busy))), len(busy), detail)
        return reading.on(signal_key("etcd.defrag_inflight", busy[0].instance), fires_at)
    detail = "no member defragmenting"
    if unread:
        detail += "; not exposed by " + ", ".join(m.instance for m in unread)
    return EvidenceReading(Severity.OK, 0.0, detail)


def etcd_restart(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.recent_restart``: the answering members' start times."""
    rows = _readable(ctx)
    if isinstance(rows, EvidenceReading):
        return rows
    return recent_restart(ctx, [(m.instance, m.start_time.value) for m in rows], "members")


ETCD_READERS: dict[str, Reader] = {
    "etcd.members_lost": etcd_lost,
    "etcd.has_leader": etcd_leader,
    "etcd.leader_changes": etcd_changes,
    "etcd.defrag_inflight": etcd_defrag,
    "etcd.recent_restart": etcd_restart,
}
"""Evidence ID -> reader, for etcd."""
