"""A healthy hand-built snapshot and one-field variations of it, for rule tests."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_apf import ApfSnapshot
from ktop.model.snapshot_apiservers import ApiserversSnapshot
from ktop.model.snapshot_etcd import EtcdSnapshot
from ktop.model.snapshot_nodes import NodesSnapshot, NotReadyList, ZoneState
from ktop.model.snapshot_scheduler import SchedulerSnapshot
from ktop.model.values import Val
from tests.functional.factories import AT, apf_row, apiserver, member, zone

__all__ = ["AT", "healthy", "with_apf", "with_api", "with_etcd", "with_nodes", "with_sched"]


def healthy() -> ClusterSnapshot:
    """Two apiservers, one etcd member, two zones of ten Ready nodes, nothing pending."""
    level = apf_row("workload-low", in_queue=0, seats=10, limit=100, p99=0.01)
    apis = (
        apiserver(0, rps=100, start=AT - 86400),
        apiserver(1, rps=100, start=AT - 86400),
    )
    m = replace(member("etcd-0", leader=True), leader_changes=Val.of(0), fragmentation=Val.of(0.1))
    zones = (
        zone("zone-a", 10, 10, ZoneState.NORMAL, 5),
        zone("zone-b", 10, 10, ZoneState.NORMAL, 5),
    )
    return ClusterSnapshot(
        at=AT,
        source_kind="test",
        context="test",
        source_detail="",
        apf=ApfSnapshot((level,), (), ()),
        apiservers=ApiserversSnapshot(apis, request_skew=Val.of(1.0), watch_skew=Val.of(1.0)),
        etcd=EtcdSnapshot((m,), leader="etcd-0", leader_known=True),
        scheduler=SchedulerSnapshot(
            queue={q: Val.of(0) for q in ("active", "backoff", "unschedulable", "gated")},
            attempts_per_s={"scheduled": Val.of(1)},
            pending_by_wait={},
            reasons=(),
            quota_rejections=0,
            oldest_pending_s=Val.nothing("no pending pods"),
            pods_known=True,
            quotas_known=True,
            events_known=True,
        ),
        nodes=NodesSnapshot(
            total=20,
            ready=20,
            not_ready=0,
            unknown=0,
            cordoned=0,
            zones=zones,
            racks=(),
            not_ready_nodes=NotReadyList(),
            lease_lag_p99_s=Val.of(5),
            heartbeat_writes_per_s=Val.of(2),
            nodes_known=True,
        ),
    )


def with_apf(**changes: Any) -> ClusterSnapshot:
    """The healthy snapshot with its one priority level changed."""
    s = healthy()
    row = replace(s.apf.levels[0], **changes)
    return replace(s, apf=replace(s.apf, levels=(row,)))


def with_api(**changes: Any) -> ClusterSnapshot:
    """The healthy snapshot with its first apiserver changed."""
    s = healthy()
    rows = (replace(s.apiservers.instances[0], **changes), *s.apiservers.instances[1:])
    return replace(s, apiservers=replace(s.apiservers, instances=rows))


def with_etcd(**changes: Any) -> ClusterSnapshot:
    """The healthy snapshot with its etcd member changed."""
    s = healthy()
    return replace(s, etcd=replace(s.etcd, members=(replace(s.etcd.members[0], **changes),)))


def with_sched(**changes: Any) -> ClusterSnapshot:
    """The healthy snapshot with its scheduler snapshot changed."""
    s = healthy()
    return replace(s, scheduler=replace(s.scheduler, **changes))


def with_nodes(
    *,
    zone_a: tuple[int, int, ZoneState] | None = None,
    unhealthy_split: tuple[int, int] | None = None,
    **changes: Any,
) -> ClusterSnapshot:
    """The healthy snapshot with zone-a (ready, total, state) or an unhealthy split changed."""
    s = healthy()
    n = replace(s.nodes, **changes)
    if zone_a is not None:
        ready, total, state = zone_a
        za = replace(zone("zone-a", ready, total, state, 60), state=state)
        zones = (za, n.zones[1])
        n = replace(n, zones=zones, ready=ready + 10, not_ready=total - ready, total=total + 10)
    if unhealthy_split is not None:
        a, b = unhealthy_split
        za = zone("zone-a", 10 - a, 10, ZoneState.NORMAL, 5)
        zb = zone("zone-b", 10 - b, 10, ZoneState.NORMAL, 5)
        n = replace(n, zones=(za, zb), ready=20 - a - b, not_ready=a + b)
    return replace(s, nodes=n)
