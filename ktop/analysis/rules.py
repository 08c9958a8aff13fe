"""Rules: pure functions from a snapshot to findings, one per catalogue code."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from ktop.analysis.catalogue import BY_CODE
from ktop.analysis.findings import Finding, Severity
from ktop.model.events import Area, PodWait
from ktop.model.signals import BY_METRIC, key
from ktop.model.snapshot import ClusterSnapshot, ZoneState
from ktop.model.trends import trend
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
    return Finding(code, severity, BY_CODE[code].area, title, tuple(evidence), signal, threshold)


def _ms(v: Val) -> str:
    return "?" if v.value is None else f"{v.value * 1000:.0f} ms"


def apf(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-APF-*."""
    a = s.apf
    if a.unknown_reason:
        yield _f("KT-APF-010", Severity.UNKNOWN, f"APF unknown: {a.unknown_reason}")
        return
    for row in a.levels:
        rej = row.rejected_total_per_s
        if rej.or_(0.0) > 0:
            reasons = ", ".join(
                f"{r} {v.or_(0):.1f}/s" for r, v in row.rejected_per_s.items() if v.or_(0) > 0
            )
            yield _f(
                "KT-APF-001",
                Severity.CRITICAL,
                f"{row.priority_level} rejects {rej.or_(0):.1f} req/s ({reasons})",
                f"in queue {row.in_queue.or_(0):.0f}, p99 wait {_ms(row.wait_p99_s)}",
                signal=key("apf.rejected_per_s", row.priority_level),
                threshold=0.0,
            )
        if row.wait_p99_s.or_(0.0) > 1.0:
            yield _f(
                "KT-APF-002",
                Severity.WARNING,
                f"{row.priority_level} p99 wait {_ms(row.wait_p99_s)}, "
                f"{row.in_queue.or_(0):.0f} in queue",
                signal=key("apf.wait_p99_s", row.priority_level),
                threshold=1.0,
            )


def apiservers(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-API-*."""
    a = s.apiservers
    for row in a.instances:
        if row.error:
            yield _f("KT-API-010", Severity.UNKNOWN, f"{row.instance}: {row.error}")
    if a.request_skew.or_(0.0) > 2.0:
        busiest = max(a.instances, key=lambda r: r.requests_per_s.or_(0.0))
        yield _f(
            "KT-API-001",
            Severity.WARNING,
            f"request skew {a.request_skew.or_(0):.1f}x: {busiest.instance} "
            f"serves {busiest.requests_per_s.or_(0):.0f} req/s",
            signal=key("api.request_skew"),
            threshold=2.0,
        )
    if a.watch_skew.or_(0.0) > 2.0:
        busiest = max(a.instances, key=lambda r: r.watches.or_(0.0))
        yield _f(
            "KT-API-002",
            Severity.WARNING,
            f"watch skew {a.watch_skew.or_(0):.1f}x: {busiest.instance} "
            f"holds {busiest.watches.or_(0):.0f} watches",
            signal=key("api.watch_skew"),
            threshold=2.0,
        )
    for row in a.instances:
        start = row.start_time.value
        if start is not None and s.at - start < s.window_s:
            yield _f(
                "KT-API-003", Severity.INFO, f"{row.instance} restarted {s.at - start:.0f}s ago"
            )
        if row.throttled_per_s.or_(0.0) > 0:
            yield _f(
                "KT-API-004",
                Severity.WARNING,
                f"{row.instance} answers {row.throttled_per_s.or_(0):.1f} 429/s",
                signal=key("api.throttled_per_s", row.instance),
                threshold=0.0,
            )


def etcd(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-ETCD-*."""
    e = s.etcd
    if e.unknown_reason:
        yield _f("KT-ETCD-010", Severity.UNKNOWN, f"etcd unknown: {e.unknown_reason}")
        return
    for m in e.members:
        if m.error:
            yield _f("KT-ETCD-010", Severity.UNKNOWN, f"{m.instance}: {m.error}")
            continue
        if m.has_leader.value == 0:
            yield _f(
                "KT-ETCD-001",
                Severity.CRITICAL,
                f"{m.instance} has no leader",
                signal=key("etcd.has_leader", m.instance),
                threshold=0.5,
            )
        changes = m.leader_changes.or_(0.0)
        if changes >= 1:
            sev = Severity.CRITICAL if changes >= 4 else Severity.WARNING
            yield _f("KT-ETCD-002", sev, f"{m.instance} saw {changes:.0f} leader change(s)")
        fsync = m.wal_fsync_p99_s.or_(0.0)
        if fsync > 0.5:
            sev = Severity.CRITICAL if fsync > 1.0 else Severity.WARNING
            yield _f(
                "KT-ETCD-003",
                sev,
                f"{m.instance} WAL fsync p99 {_ms(m.wal_fsync_p99_s)}",
                signal=key("etcd.fsync_p99_s", m.instance),
                threshold=0.5,
            )
        if m.backend_commit_p99_s.or_(0.0) > 0.25:
            yield _f(
                "KT-ETCD-004",
                Severity.WARNING,
                f"{m.instance} backend commit p99 {_ms(m.backend_commit_p99_s)}",
                signal=key("etcd.commit_p99_s", m.instance),
                threshold=0.25,
            )
        q = m.db_quota_ratio.or_(0.0)
        if q > 0.8:
            sev = Severity.CRITICAL if q > 0.95 else Severity.WARNING
            yield _f(
                "KT-ETCD-005",
                sev,
                f"{m.instance} db at {q * 100:.0f}% of quota",
                signal=key("etcd.db_quota_ratio", m.instance),
                threshold=0.8,
            )
        if m.fragmentation.or_(0.0) > 0.5 and m.db_in_use_bytes.or_(0.0) > 100e6:
            yield _f(
                "KT-ETCD-006",
                Severity.WARNING,
                f"{m.instance} db {m.fragmentation.or_(0) * 100:.0f}% fragmented",
            )
        if m.proposals_failed_per_s.or_(0.0) > 0:
            yield _f(
                "KT-ETCD-007",
                Severity.WARNING,
                f"{m.instance} {m.proposals_failed_per_s.or_(0):.2f} failed proposals/s",
                signal=key("etcd.proposals_failed_per_s", m.instance),
                threshold=0.0,
            )


def scheduler(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-SCHED-*."""
    sc = s.scheduler
    if not sc.pods_known:
        yield _f("KT-SCHED-010", Severity.UNKNOWN, f"pending pods unknown: {sc.pods_reason}")
    if sc.metrics_reason:
        yield _f("KT-SCHED-010", Severity.UNKNOWN, f"scheduler metrics: {sc.metrics_reason}")
    if sc.reasons:
        top = sc.reasons[0]
        n = sc.pending_by_wait.get(PodWait.UNSCHEDULABLE, 0)
        yield _f(
            "KT-SCHED-001",
            Severity.WARNING,
            f"{n} pods unschedulable; top reason: {top.reason} ({top.pods} pods)",
            *(
                f"{r.reason}: {r.pods} pods, e.g. {', '.join(r.sample_pods)}"
                for r in sc.reasons[:5]
            ),
            signal=key("sched.reason_pods", top.reason),
            threshold=0.0,
        )
    gated = sc.pending_by_wait.get(PodWait.GATED, 0)
    if gated:
        yield _f(
            "KT-SCHED-002",
            Severity.INFO,
            f"{gated} pods held by scheduling gates (admission/quota, not the scheduler)",
        )
    for q in sc.quotas_near_limit[:5]:
        yield _f(
            "KT-SCHED-004",
            Severity.WARNING if q.ratio >= 1.0 else Severity.INFO,
            f"quota {q.namespace}/{q.name}: {q.resource} at {q.ratio * 100:.0f}% of its limit",
        )
    if sc.quota_rejections:
        yield _f(
            "KT-SCHED-003",
            Severity.WARNING,
            f"{sc.quota_rejections} pod creations refused for exceeded quota",
        )


def nodes(s: ClusterSnapshot) -> Iterator[Finding]:
    """KT-NODE-*."""
    n = s.nodes
    if not n.nodes_known:
        yield _f("KT-NODE-010", Severity.UNKNOWN, f"nodes unknown: {n.nodes_reason}")
        return
    for z in n.zones:
        if z.state is ZoneState.FULL_DISRUPTION:
            yield _f(
                "KT-NODE-001",
                Severity.CRITICAL,
                f"zone {z.zone}: {z.unhealthy}/{z.total} nodes not Ready (FullDisruption)",
                signal=key("nodes.unhealthy", z.zone),
                threshold=0.0,
            )
        elif z.state is ZoneState.PARTIAL_DISRUPTION:
            yield _f(
                "KT-NODE-002",
                Severity.WARNING,
                f"zone {z.zone}: {z.unhealthy}/{z.total} nodes not Ready (PartialDisruption)",
                signal=key("nodes.unhealthy", z.zone),
                threshold=0.0,
            )
    unhealthy = n.not_ready + n.unknown
    if unhealthy >= 3 and n.zones:
        worst = max(n.zones, key=lambda z: z.unhealthy)
        if worst.unhealthy / unhealthy >= 0.9 and len(n.zones) > 1:
            yield _f(
                "KT-NODE-003",
                Severity.INFO,
                f"{worst.unhealthy} of {unhealthy} unhealthy nodes are in zone {worst.zone}: "
                "suspect that zone's shared parts (network, power, control path)",
            )
    if n.lease_lag_p99_s.or_(0.0) > 40:
        yield _f(
            "KT-NODE-004",
            Severity.WARNING,
            f"lease lag p99 {n.lease_lag_p99_s.or_(0):.0f}s (kubelet lease duration 40s)",
            signal=key("nodes.lease_lag_p99_s"),
            threshold=40.0,
        )


INPUT_UNKNOWN_CODES = {
    Area.APF: "KT-APF-010",
    Area.APISERVERS: "KT-API-010",
    Area.ETCD: "KT-ETCD-010",
    Area.SCHEDULER: "KT-SCHED-010",
    Area.NODES: "KT-NODE-010",
}


def inputs(s: ClusterSnapshot) -> Iterator[Finding]:
    """A failing feed or controller-manager scrape: its area's evidence is unknown.

    (apiserver, etcd and scheduler targets are reported by their areas' rules.)
    """
    for f in s.freshness:
        if f.error and (" " not in f.name or f.name.startswith("controller-manager ")):
            yield _f(INPUT_UNKNOWN_CODES[f.area], Severity.UNKNOWN, f"{f.name}: {f.error}")


def _with_trend(s: ClusterSnapshot, f: Finding) -> Finding:
    """Add since when the finding's signal breaches its threshold, and which way it goes."""
    if not f.signal or f.threshold is None:
        return f
    spec = BY_METRIC[f.signal.partition("|")[0]]
    points = s.history.points(f.signal)
    t = trend(points, threshold=f.threshold, higher_is_worse=spec.higher_is_worse)
    return replace(f, trend=t)


RULES: tuple[RuleFn, ...] = (apf, apiservers, etcd, scheduler, nodes, inputs)


def evaluate(snapshot: ClusterSnapshot) -> tuple[Finding, ...]:
    """All findings, worst first, then by code."""
    found = [_with_trend(snapshot, f) for rule in RULES for f in rule(snapshot)]
    return tuple(sorted(found, key=lambda f: (-f.severity, f.code, f.title)))
