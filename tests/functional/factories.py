"""Hand-built snapshots and a hub that publishes them, for UI tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ktop.analysis.findings import Finding, Severity
from ktop.hub import Hub, Published
from ktop.model.events import Area, PodWait
from ktop.model.slo import SLOS
from ktop.model.snapshot import ClusterSnapshot, Freshness
from ktop.model.snapshot_apf import ApfRow, ApfSnapshot
from ktop.model.snapshot_apiservers import ApiserverRow, ApiserversSnapshot, SloRow
from ktop.model.snapshot_etcd import EtcdMemberRow, EtcdSnapshot
from ktop.model.snapshot_nodes import (
    DomainRollup,
    NodesSnapshot,
    NotReadyList,
    NotReadyNode,
    ZoneState,
)
from ktop.model.snapshot_scheduler import ReasonCount, SchedulerSnapshot
from ktop.model.values import Val

AT = 1_750_000_000.0  # 2025-06-15 15:06:40 UTC
REFUSED = "etcd-1: connection refused"


def v(x: float) -> Val:
    return Val.of(x)


def u(reason: str) -> Val:
    return Val.unknown(reason)


def apf_row(
    level: str,
    *,
    instance: str = "",
    flow: str = "",
    in_queue: float = 0,
    seats: float = 5,
    limit: float = 100,
    p99: float = 0.001,
    rejected: dict[str, float] | None = None,
) -> ApfRow:
    return ApfRow(
        instance=instance,
        priority_level=level,
        flow_schema=flow,
        in_queue=v(in_queue),
        executing=v(seats),
        seats_in_use=v(seats),
        seats_limit=v(limit),
        wait_p50_s=v(p99 / 4),
        wait_p99_s=v(p99),
        dispatched_per_s=v(120),
        rejected_per_s={k: v(x) for k, x in (rejected or {}).items()},
    )


def apf() -> ApfSnapshot:
    bad = {"queue-full": 10.0, "time-out": 2.0}
    levels = (
        apf_row("workload-low", in_queue=340, seats=98, p99=4.2, rejected=bad),
        apf_row("global-default", in_queue=3, seats=40),
        apf_row("leader-election", seats=2, limit=30),
        apf_row("system", seats=10, limit=50),
        apf_row("exempt", seats=1, limit=0),
    )
    flows = (
        apf_row("workload-low", flow="service-accounts", in_queue=300, seats=90, rejected=bad),
        apf_row("workload-low", flow="kube-controller-manager", in_queue=40, seats=8),
        apf_row("global-default", flow="global-default", in_queue=3, seats=40),
    )
    per_instance = tuple(
        apf_row("workload-low", instance=f"apiserver-{i}", in_queue=340 / 3, seats=33)
        for i in range(3)
    )
    return ApfSnapshot(levels, flows, per_instance)


def apiserver(i: int, *, rps: float, start: float, error: str = "") -> ApiserverRow:
    return ApiserverRow(
        instance=f"apiserver-{i}",
        version="v1.31.2",
        requests_per_s=v(rps),
        reads_per_s=v(rps * 0.8),
        writes_per_s=v(rps * 0.2),
        inflight_readonly=v(40),
        inflight_mutating=v(12),
        watches=v(3100),
        cpu_cores=v(3.2),
        rss_bytes=v(6.5 * 2**30),
        start_time=v(start),
        throttled_per_s=v(0),
        terminations_per_s=v(0),
        last_ok=AT - 2,
        error=error,
        write_p99_s=v(0.045),
        slos=tuple(
            SloRow(
                s.kind,
                s.limit_s,
                v(0.045 * (i + 1) * (k + 1)),
                v(0.0),
                budget_burned=v(0.0),
                budget_since=AT - 3600,  # ktop's first scrape, an hour ago: 14:06 UTC
            )
            for k, s in enumerate(SLOS)
        ),
        errors_5xx_per_s=v(0),
    )


def apiservers() -> ApiserversSnapshot:
    rows = (
        apiserver(0, rps=1500, start=AT - 86400),
        apiserver(1, rps=800, start=AT - 86400),
        apiserver(2, rps=300, start=AT - 120),
    )
    return ApiserversSnapshot(rows, request_skew=v(1500 / ((800 + 300) / 2)), watch_skew=v(1.0))


def member(name: str, *, leader: bool = False, fsync: float = 0.004) -> EtcdMemberRow:
    return EtcdMemberRow(
        instance=name,
        is_leader=v(1 if leader else 0),
        has_leader=v(1),
        leader_changes=v(1),
        wal_fsync_p50_s=v(fsync / 3),
        wal_fsync_p99_s=v(fsync),
        backend_commit_p99_s=v(fsync * 2),
        proposals_pending=v(0),
        proposals_failed_per_s=v(0),
        slow_applies_per_s=v(0),
        db_size_bytes=v(4 * 2**30),
        db_in_use_bytes=v(3 * 2**30),
        quota_bytes=v(8 * 2**30),
        fragmentation=v(0.25),
        peer_rtt_p99_s=v(0.002),
        defrag_inflight=v(0),
        alarms=v(0),
        start_time=v(AT - 86_400),
        last_ok=AT - 5,
    )


def etcd() -> EtcdSnapshot:
    x = u("scrape of etcd-1 failed: connection refused")
    dead = EtcdMemberRow(
        instance="etcd-1",
        is_leader=x,
        has_leader=x,
        leader_changes=x,
        wal_fsync_p50_s=x,
        wal_fsync_p99_s=x,
        backend_commit_p99_s=x,
        proposals_pending=x,
        proposals_failed_per_s=x,
        slow_applies_per_s=x,
        db_size_bytes=x,
        db_in_use_bytes=x,
        quota_bytes=x,
        fragmentation=x,
        peer_rtt_p99_s=x,
        defrag_inflight=x,
        alarms=x,
        start_time=x,
        last_ok=AT - 120,
        error="connection refused",
    )
    members = (member("etcd-0", leader=True), dead, member("etcd-2", fsync=0.612))
    return EtcdSnapshot(members, leader="etcd-0", leader_known=True)


def scheduler() -> SchedulerSnapshot:
    return SchedulerSnapshot(
        queue={"active": v(3), "backoff": v(10), "unschedulable": v(1200), "gated": v(40)},
        attempts_per_s={"scheduled": v(12), "unschedulable": v(30), "error": v(0)},
        pending_by_wait={
            PodWait.UNSCHEDULABLE: 1200,
            PodWait.GATED: 40,
            PodWait.NOT_ATTEMPTED: 5,
            PodWait.SCHEDULER_ERROR: 0,
            PodWait.BOUND_NOT_STARTED: 7,
        },
        reasons=(
            ReasonCount("Insufficient cpu", 1100, 5400, ("batch/job-1", "batch/job-2")),
            ReasonCount("node(s) had untolerated taint", 100, 600, ("web/api-7",)),
        ),
        quota_rejections=3,
        oldest_pending_s=v(720),
        pods_known=True,
        bindings_per_s=v(12),
    )


def zone(name: str, ready: int, total: int, state: ZoneState, lag: float) -> DomainRollup:
    return DomainRollup(
        region="",
        zone=name,
        rack="",
        total=total,
        ready=ready,
        not_ready=total - ready,
        unknown=0,
        cordoned=1,
        lease_lag_max_s=v(lag),
        lease_lag_p50_s=v(min(lag, 5)),
        state=state,
    )


def nodes() -> NodesSnapshot:
    zones = (
        zone("zone-a", 0, 200, ZoneState.FULL_DISRUPTION, 180),
        zone("zone-b", 199, 200, ZoneState.NORMAL, 9),
        zone("zone-c", 200, 200, ZoneState.NORMAL, 8),
    )
    racks = (replace(zones[0], rack="rack-01", total=20, ready=0, not_ready=20, state=None),)
    not_ready = tuple(
        NotReadyNode(
            name=f"node-a-{i:03d}",
            region="",
            zone="zone-a",
            rack="rack-01",
            ready="Unknown",
            since=AT - 180,
            lease_lag_s=v(180),
            tainted_unreachable=True,
            tainted_not_ready=False,
        )
        for i in range(5)
    )
    return NodesSnapshot(
        total=600,
        ready=399,
        not_ready=201,
        unknown=0,
        cordoned=3,
        zones=zones,
        racks=racks,
        not_ready_nodes=NotReadyList.of(not_ready),
        lease_lag_p99_s=v(180),
        heartbeat_writes_per_s=v(60),
        nodes_known=True,
        rack_label="topology.ktop.dev/rack",
    )


def freshness() -> tuple[Freshness, ...]:
    return (
        Freshness("apiserver-0", Area.APF, AT - 2),
        Freshness("apiserver-0", Area.APISERVERS, AT - 2),
        Freshness("etcd-0", Area.ETCD, AT - 5),
        Freshness("etcd-1", Area.ETCD, AT - 120, error="connection refused"),
        Freshness("scheduler", Area.SCHEDULER, AT - 1),
        Freshness("nodes", Area.NODES, AT - 1),
    )


def findings() -> tuple[Finding, ...]:
    return (
        Finding(
            "KT-ETCD-003",
            Severity.WARNING,
            Area.ETCD,
            "WAL fsync p99 612 ms on etcd-2 (>500 ms)",
            ("etcd-2 wal fsync p99 612ms",),
        ),
        Finding(
            "KT-NODE-001",
            Severity.CRITICAL,
            Area.NODES,
            "zone-a in FullDisruption: 200 of 200 nodes not Ready",
            ("zone-a ready 0/200", "lease lag max 3.0m"),
        ),
        Finding("KT-ETCD-010", Severity.UNKNOWN, Area.ETCD, "etcd-1 unreadable", ()),
    )


def busy_snapshot(*, seq: int = 1, at: float = AT) -> ClusterSnapshot:
    """An incident: zone-a down, etcd-2 slow disk, etcd-1 unreachable, APF rejecting."""
    return ClusterSnapshot(
        at=at,
        source_kind="demo",
        context="sim/zone-outage",
        source_detail="",
        apf=apf(),
        apiservers=apiservers(),
        etcd=etcd(),
        scheduler=scheduler(),
        nodes=nodes(),
        freshness=freshness(),
        seq=seq,
    )


class StaticHub(Hub):
    """A hub that publishes what a test sets with :meth:`set`."""

    def __init__(self, snapshot: ClusterSnapshot, found: Sequence[Finding] = ()) -> None:
        super().__init__()
        self._next: Published | None = Published(snapshot, tuple(found))
        self._latest = self._next

    def set(self, snapshot: ClusterSnapshot, found: Sequence[Finding] = ()) -> None:
        self._next = Published(snapshot, tuple(found))

    def publish(self, *, force: bool = False) -> Published | None:
        published, self._next = self._next, None
        if published is not None:
            self._latest = published
        return published
