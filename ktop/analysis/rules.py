"""Rules: pure functions from a snapshot to findings, one per catalogue code.

Every number a rule compares with comes from :mod:`ktop.analysis.catalogue`.
A reading that is unknown produces no finding of its code (it is neither
healthy nor unhealthy); the area's ``-010`` code and the triage paths report
unknown evidence. One fact is one finding: the same finding of several etcd members
or apiserver instances (a leader change every member saw) is one line naming them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from ktop.analysis import catalogue as c
from ktop.analysis.baseline_marks import BaselineMark, baseline_marks
from ktop.analysis.findings import Finding, Severity
from ktop.analysis.reading_rules import READING_RULES, graded_findings
from ktop.analysis.trends import signal_trend
from ktop.model.area_apiservers import REQUEST_LOAD, WATCH_LOAD, peers
from ktop.model.areas import AREAS
from ktop.model.events import Area, PodWait
from ktop.model.limits import BASELINE_MARK
from ktop.model.reading import key
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_apiservers import ApiserverRow
from ktop.model.snapshot_etcd import EtcdMemberRow
from ktop.model.snapshot_nodes import MetricsOnlyNodes, ZoneHealth, ZoneState
from ktop.model.text import (
    counted,
    fmt_age,
    fmt_bytes,
    fmt_count,
    fmt_duration,
    fmt_pct,
    fmt_rate,
    fmt_si,
)
from ktop.model.values import Val

RuleFn = Callable[[ClusterSnapshot], Iterator[Finding]]


def _f(
    code: str,
    severity: Severity,
    title: str,
    *evidence: str,
    signal: str = "",
    threshold: float | None = None,
) -> Finding:
    return Finding(code, severity, c.BY_CODE[code].area, title, tuple(evidence), signal, threshold)


def _sev(t: c.Threshold, v: Val) -> Severity:
    """Severity of a reading; OK for unknown ones (they produce no finding)."""
    return Severity.OK if v.value is None else t.grade(v.value)


def _graded(
    code: str,
    t: c.Threshold,
    v: Val,
    title: str,
    *evidence: str,
    signal: str = "",
) -> Iterator[Finding]:
    """The finding of one reading graded against its threshold: none while the reading
    is unknown or below it.

    A finding with a signal carries that same threshold, so its trend is measured
    against the number that raised it.
    """
    if sev := _sev(t, v):
        yield _f(
            code, sev, title, *evidence, signal=signal, threshold=t.fires_at if signal else None
        )


FOLD_NAMES = 6
"""A folded finding names at most this many members or instances, then counts the rest."""


def _names(subjects: list[str]) -> str:
    shown = ", ".join(subjects[:FOLD_NAMES])
    more = len(subjects) - FOLD_NAMES
    return f"{shown} and {more} more" if more > 0 else shown


def _fold(found: Iterable[tuple[str, Finding]]) -> Iterator[Finding]:
    """One finding per fact: findings of one code and severity whose titles differ only in
    the member or instance they start with (and whose evidence is the same) become one,
    naming them all (the first one's signal carries its trend).
    """
    groups: dict[tuple[str, Severity, str, tuple[str, ...]], list[tuple[str, Finding]]] = {}
    for subject, f in found:
        rest = f.title[len(subject) :] if subject and f.title.startswith(subject) else None
        key = (f.code, f.severity, "\0" + f.title if rest is None else rest, f.evidence)
        groups.setdefault(key, []).append((subject, f))
    for (_, _, rest, _), same in groups.items():
        first = same[0][1]
        if len(same) == 1 or rest.startswith("\0"):
            yield from (f for _, f in same)
        else:
            yield replace(first, title=_names([subject for subject, _ in same]) + rest)


def apf(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-APF-*."""
    a = s.apf
    if a.unknown_reason:
        yield _f("KT-APF-010", Severity.UNKNOWN, f"APF unknown: {a.unknown_reason}")
        return
    for row in a.levels:
        used, lim = row.seats_in_use.value, row.seats_limit.value
        full = Severity.OK
        if used is not None and lim is not None and lim > 0:
            full = c.APF_SEATS.grade(used / lim)
        if full:
            yield _f("KT-APF-003", full, f"{row.priority_level} uses {used:.0f} of {lim:.0f} seats")


def apiservers(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-API-*."""
    a = s.apiservers
    yield from _fold(
        (row.instance, _f("KT-API-010", Severity.UNKNOWN, f"{row.instance}: {row.error}"))
        for row in a.instances
        if row.error
    )
    for code, sig, v, load in (
        ("KT-API-001", "api.request_skew", a.request_skew, REQUEST_LOAD),
        ("KT-API-002", "api.watch_skew", a.watch_skew, WATCH_LOAD),
    ):
        if (p := peers(a.instances, load.of)) is not None:
            text = f"{load.name} skew {v.or_(0):.1f}x: {p.words(load.unit)}"
            yield from _graded(code, c.API_SKEW, v, text, signal=key(sig))
    yield from _fold((row.instance, f) for row in a.instances for f in _instance(s, row))


def _instance(s: ClusterSnapshot, row: ApiserverRow) -> Iterator[Finding]:
    """One apiserver instance's findings (folded with the other instances' by the caller)."""
    start = row.start_time.value
    if start is not None and (sev := c.API_UPTIME.grade(s.at - start)):
        yield _f("KT-API-003", sev, f"{row.instance} restarted {fmt_age(s.at - start)} ago")


def etcd(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-ETCD-*."""
    e = s.etcd
    if e.unknown_reason:
        yield _f("KT-ETCD-010", Severity.UNKNOWN, f"etcd unknown: {e.unknown_reason}")
        return
    yield from _fold((m.instance, f) for m in e.members for f in _member(m))


def _member(m: EtcdMemberRow) -> Iterator[Finding]:
    """One etcd member's findings (folded with the other members' by the caller)."""
    if m.error:
        yield _f("KT-ETCD-010", Severity.UNKNOWN, f"{m.instance}: {m.error}")
        return
    if m.has_leader.value == 0:
        yield _f(
            "KT-ETCD-001",
            Severity.CRITICAL,
            f"{m.instance} has no leader",
            signal=key("etcd.has_leader", m.instance),
            threshold=c.ETCD_NO_LEADER_BELOW,
        )
    # A lifetime count (single scrape) includes the first election: not a window count.
    if not m.leader_changes.lifetime and (sev := _sev(c.ETCD_LEADER_CHANGES, m.leader_changes)):
        n = m.leader_changes.or_(0)
        yield _f("KT-ETCD-002", sev, f"{m.instance} saw {n:.0f} leader change(s)")
    frag = _sev(c.ETCD_FRAGMENTATION, m.fragmentation)
    if frag and _sev(c.ETCD_FRAG_MIN_IN_USE, m.db_in_use_bytes):
        yield _f(
            "KT-ETCD-006",
            frag,
            f"{m.instance} db {m.fragmentation.or_(0) * 100:.0f}% fragmented",
            signal=key("etcd.fragmentation", m.instance),
            threshold=c.ETCD_FRAGMENTATION.fires_at,
        )


def scheduler(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-SCHED-*."""
    sc = s.scheduler
    if not sc.pods_known:
        yield _f("KT-SCHED-010", Severity.UNKNOWN, f"pending pods unknown: {sc.pods_reason}")
    if sc.metrics_reason:
        yield _f("KT-SCHED-010", Severity.UNKNOWN, f"scheduler metrics: {sc.metrics_reason}")
    n = sc.unschedulable()
    if sc.reasons and (sev := c.SCHED_UNSCHEDULABLE.grade(max(n, sc.reasons[0].pods))):
        top = sc.reasons[0]
        about = "about " if sc.unschedulable_estimated else ""
        of_read = " of the pods read whole" if sc.unschedulable_estimated else ""
        yield _f(
            "KT-SCHED-001",
            sev,
            f"{about}{counted(n, 'pod')} unschedulable; top reason: {top.reason} "
            f"({counted(top.pods, 'pod')}{of_read})",
            *(
                f"{r.reason}: {counted(r.pods, 'pod')}, e.g. {', '.join(r.sample_pods)}"
                for r in sc.reasons[:5]
            ),
            signal=key("sched.reason_pods", top.reason),
            threshold=c.SCHED_UNSCHEDULABLE.fires_at,
        )
    gated = sc.pending_by_wait.get(PodWait.GATED, 0)
    if sev := c.SCHED_GATED.grade(gated):
        yield _f(
            "KT-SCHED-002",
            sev,
            f"{counted(gated, 'pod')} held by scheduling gates "
            "(admission/quota, not the scheduler)",
            signal=key("sched.waiting_pods", PodWait.GATED.value),
            threshold=c.SCHED_GATED.fires_at,
        )
    for q in sc.quotas_near_limit[:5]:
        if sev := c.SCHED_QUOTA_USED.grade(q.ratio):
            yield _f(
                "KT-SCHED-004",
                sev,
                f"quota {q.namespace}/{q.name}: {q.resource} at {q.ratio * 100:.0f}% of its limit",
            )
    if sev := c.SCHED_QUOTA_REJECTIONS.grade(sc.quota_rejections):
        yield _f(
            "KT-SCHED-003",
            sev,
            f"{sc.quota_rejections} pod creations refused for exceeded quota",
        )


def nodes(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-NODE-*."""
    n = s.nodes
    if n.metrics_only is not None:
        yield from _metrics_only_zones(n.metrics_only)
        return
    if not n.nodes_known:
        yield _f("KT-NODE-010", Severity.UNKNOWN, f"nodes unknown: {n.nodes_reason}")
        if n.interim is not None:  # ktop's node list under way: the controller's zones
            where = f"from the {n.interim.source}'s metrics while ktop's node list loads"
            yield from _controller_zones(n.interim.zones, where)
        return
    for z in n.zones:
        if z.state is ZoneState.FULL_DISRUPTION:
            yield _f(
                "KT-NODE-001",
                c.BY_CODE["KT-NODE-001"].severity,
                f"zone {z.zone}: {fmt_count(z.unhealthy)}/{fmt_count(z.total)} nodes not Ready "
                "(FullDisruption)",
                signal=key("nodes.unhealthy", z.zone),
                threshold=c.NODE_UNHEALTHY_ABOVE,
            )
        elif z.state is ZoneState.PARTIAL_DISRUPTION:
            yield _f(
                "KT-NODE-002",
                c.BY_CODE["KT-NODE-002"].severity,
                f"zone {z.zone}: {fmt_count(z.unhealthy)}/{fmt_count(z.total)} nodes not Ready "
                "(PartialDisruption)",
                signal=key("nodes.unhealthy", z.zone),
                threshold=c.NODE_UNHEALTHY_ABOVE,
            )
    unhealthy = n.not_ready + n.unknown
    if unhealthy >= c.NODE_DOMAIN_MIN_UNHEALTHY and len(n.zones) > 1:
        worst = max(n.zones, key=lambda z: z.unhealthy)
        if sev := c.NODE_DOMAIN_SHARE.grade(worst.unhealthy / unhealthy):
            yield _f(
                "KT-NODE-003",
                sev,
                f"{worst.unhealthy} of {unhealthy} unhealthy nodes are in zone {worst.zone}: "
                "suspect that zone's shared parts (network, power, control path)",
                signal=key("nodes.unhealthy", worst.zone),
                threshold=c.NODE_UNHEALTHY_ABOVE,
            )


def _metrics_only_zones(view: MetricsOnlyNodes) -> Iterator[Finding]:
    """Zone states from the node lifecycle controller's own gauges (metrics-only mode)."""
    if not view.zones:
        yield _f("KT-NODE-010", Severity.UNKNOWN, f"zones unknown: {view.zones_reason}")
    yield from _controller_zones(view.zones, "from the node lifecycle controller's metrics")


def _controller_zones(zones: Iterable[ZoneHealth], where: str) -> Iterator[Finding]:
    """KT-NODE-001/002 of zones as the node lifecycle controller counts them, saying so
    (``where``): in metrics-only mode, and while ktop's own node list loads.
    """
    codes = {ZoneState.FULL_DISRUPTION: "KT-NODE-001", ZoneState.PARTIAL_DISRUPTION: "KT-NODE-002"}
    for z in zones:
        code = codes.get(z.state)
        if code is not None:
            yield _f(
                code,
                c.BY_CODE[code].severity,
                f"zone {z.zone}: {fmt_count(z.unhealthy)}/{fmt_count(z.size)} nodes not Ready "
                f"({z.state.value}, {where})",
                signal=key("nodes.unhealthy", z.zone),
                threshold=c.NODE_UNHEALTHY_ABOVE,
            )


def inputs(s: ClusterSnapshot) -> Iterator[Finding]:
    """A failing feed or controller-manager scrape: its area's evidence is unknown.

    (apiserver, etcd and scheduler targets are reported by their areas' rules.)
    """
    for f in s.freshness:
        if f.error and (" " not in f.name or f.name.startswith("controller-manager ")):
            yield _f(AREAS[f.area].input_unknown_code, Severity.UNKNOWN, f"{f.name}: {f.error}")


def _with_trend(s: ClusterSnapshot, f: Finding) -> Finding:
    """Add since when the finding's signal breaches its threshold, and which way it goes."""
    if not f.signal or f.threshold is None:
        return f
    return replace(f, trend=signal_trend(s.history, f.signal, f.threshold))


def _fmt(unit: str) -> Callable[[float], str]:
    return {"s": fmt_duration, "/s": fmt_rate, "B": fmt_bytes, "ratio": fmt_pct}.get(unit, fmt_si)


def _mark_line(m: BaselineMark, fmt: Callable[[float], str]) -> str:
    subject = m.subject or "cluster"
    return f"{subject}: {fmt(m.value)}, normal {fmt(m.normal)}, {m.ratio:.0f}x"


def baselines(s: ClusterSnapshot) -> Iterator[Finding]:
    """Readings far above their own normal though under their limit, one finding per
    reading naming its subjects (``analysis/baseline_marks.py``).
    """
    by_reading: dict[str, list[BaselineMark]] = {}
    for m in baseline_marks(s):
        by_reading.setdefault(m.reading.metric, []).append(m)
    for marks in by_reading.values():
        marks.sort(key=lambda m: -m.ratio)
        top = marks[0]
        r, th = top.reading, top.reading.threshold
        if r.area is None or th is None or th.warn is None:
            continue
        fmt = _fmt(r.unit)
        where = _names([m.subject for m in marks if m.subject])
        yield _f(
            c.BASELINE_CODES[r.area],
            Severity.WARNING,
            f"{r.label} {top.ratio:.0f}x its normal{' on ' + where if where else ''} "
            f"({fmt(top.normal)} -> {fmt(top.value)}; limit {fmt(th.warn)})",
            *(_mark_line(m, fmt) for m in marks),
            signal=key(r.metric, top.subject),
            threshold=BASELINE_MARK * top.normal,
        )


def readings(s: ClusterSnapshot) -> Iterator[Finding]:
    """The findings that grade one reading each (``ktop/analysis/reading_rules.py``)."""
    for rule in READING_RULES:
        found = graded_findings(s, rule)
        yield from _fold(found) if rule.fold else (f for _, f in found)


RULES: tuple[RuleFn, ...] = (
    apf,
    apiservers,
    etcd,
    scheduler,
    nodes,
    inputs,
    baselines,
    readings,
)


def waiting(s: ClusterSnapshot) -> Iterator[Finding]:
    """An area whose first data is not yet due: one unknown finding that says it waits
    (instead of the area's own findings, which could only be about missing data).
    """
    for area in Area:
        if s.area_waiting_s(area) is not None:
            yield _f(
                AREAS[area].input_unknown_code,
                Severity.UNKNOWN,
                f"{area.value}: waiting for first data (due within {s.first_data_due_s:g} s "
                "of the start)",
            )


def evaluate(snapshot: ClusterSnapshot) -> tuple[Finding, ...]:
    """All findings, worst first, then by code."""
    waits = {a for a in Area if snapshot.area_waiting_s(a) is not None}
    found = [
        _with_trend(snapshot, f)
        for rule in RULES
        for f in rule(snapshot)
        if c.BY_CODE[f.code].area not in waits
    ]
    found += waiting(snapshot)
    return tuple(sorted(found, key=lambda f: (-f.severity, f.code, f.title)))
