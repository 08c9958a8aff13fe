"""Nodes by failure domain: readiness, Lease lag and zone state.

Per-node state is one small frozen record plus one float (the Lease renew
time). Roll-ups are recomputed when a snapshot is taken: a single pass over
the nodes, grouping by interned (region, zone, rack) keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ktop.model.events import NodeRecord, Readiness
from ktop.model.snapshot import DomainRollup, NodesSnapshot, NotReadyNode
from ktop.model.values import Val
from ktop.model.zones import zone_state

NOT_READY_LIST_CAP = 200
RACK_LIST_CAP = 200


@dataclass(slots=True)
class _Dom:
    total: int = 0
    ready: int = 0
    not_ready: int = 0
    unknown: int = 0
    cordoned: int = 0
    counted_ready: int = 0
    counted_not_ready: int = 0
    lags: list[float] = field(default_factory=list)

    def rollup(
        self, region: str, zone: str, rack: str, zone_level: bool, thr: float
    ) -> DomainRollup:
        lags = sorted(self.lags)
        return DomainRollup(
            region=region,
            zone=zone,
            rack=rack,
            total=self.total,
            ready=self.ready,
            not_ready=self.not_ready,
            unknown=self.unknown,
            cordoned=self.cordoned,
            lease_lag_max_s=Val.of(lags[-1]) if lags else Val.unknown("no leases seen"),
            lease_lag_p50_s=Val.of(lags[len(lags) // 2]) if lags else Val.unknown("no leases seen"),
            state=(
                zone_state(self.counted_ready, self.counted_not_ready, thr) if zone_level else None
            ),
        )


def _percentile(sorted_vals: list[float], q: float) -> Val:
    if not sorted_vals:
        return Val.unknown("no leases seen")
    idx = min(len(sorted_vals) - 1, int(q * len(sorted_vals)))
    return Val.of(sorted_vals[idx])


def build_nodes(
    nodes: dict[str, NodeRecord],
    leases: dict[str, float],
    now: float,
    *,
    nodes_known: bool,
    nodes_reason: str,
    leases_known: bool,
    rack_label: str,
    unhealthy_zone_threshold: float,
    lease_renew_interval_s: float,
) -> NodesSnapshot:
    """Roll nodes up per zone and rack; list the NotReady ones, longest first."""
    zones: dict[tuple[str, str], _Dom] = {}
    racks: dict[tuple[str, str, str], _Dom] = {}
    all_lags: list[float] = []
    bad: list[NotReadyNode] = []
    totals = _Dom()
    for node in nodes.values():
        z = zones.get((node.region, node.zone))
        if z is None:
            z = zones[(node.region, node.zone)] = _Dom()
        r = racks.get((node.region, node.zone, node.rack))
        if r is None:
            r = racks[(node.region, node.zone, node.rack)] = _Dom()
        renew = leases.get(node.name)
        lag = None if renew is None else max(0.0, now - renew)
        ready = node.ready is Readiness.TRUE
        for d in (z, r, totals):
            d.total += 1
            if ready:
                d.ready += 1
            elif node.ready is Readiness.FALSE:
                d.not_ready += 1
            else:
                d.unknown += 1
            if node.unschedulable:
                d.cordoned += 1
            if not node.exclude_disruption:
                if ready:
                    d.counted_ready += 1
                else:
                    d.counted_not_ready += 1
            if lag is not None:
                d.lags.append(lag)
        if lag is not None:
            all_lags.append(lag)
        if not ready:
            bad.append(
                NotReadyNode(
                    name=node.name,
                    region=node.region,
                    zone=node.zone,
                    rack=node.rack,
                    ready=node.ready.value,
                    since=node.ready_since,
                    lease_lag_s=Val.of(lag) if lag is not None else Val.unknown("no lease seen"),
                    tainted_unreachable=node.unreachable_taint,
                    tainted_not_ready=node.not_ready_taint,
                )
            )
    thr = unhealthy_zone_threshold
    zone_rows = [d.rollup(rg, zn, "", True, thr) for (rg, zn), d in sorted(zones.items())]
    rack_rows = [d.rollup(rg, zn, rk, False, thr) for (rg, zn, rk), d in racks.items()]
    rack_rows.sort(key=lambda x: (-x.unhealthy, -x.lease_lag_max_s.or_(0.0), x.zone, x.rack))
    bad.sort(key=lambda n: (n.since if n.since is not None else now, n.name))
    all_lags.sort()
    leases_reason = "" if leases_known else "leases not listed"
    return NodesSnapshot(
        total=totals.total,
        ready=totals.ready,
        not_ready=totals.not_ready,
        unknown=totals.unknown,
        cordoned=totals.cordoned,
        zones=tuple(zone_rows),
        racks=tuple(rack_rows[:RACK_LIST_CAP]),
        not_ready_nodes=tuple(bad[:NOT_READY_LIST_CAP]),
        lease_lag_p99_s=(
            _percentile(all_lags, 0.99) if leases_known else Val.unknown(leases_reason)
        ),
        heartbeat_writes_per_s=(
            Val.of(totals.total / lease_renew_interval_s)
            if nodes_known
            else Val.unknown(nodes_reason or "nodes not listed")
        ),
        nodes_known=nodes_known,
        nodes_reason=nodes_reason,
        rack_label=rack_label,
    )
