"""Nodes by failure domain: readiness, Lease lag and zone state.

Per node ktop holds one small frozen record and one float (the Lease renew
time). Readiness counts per (region, zone, rack) are kept up to date as
nodes change, so a snapshot does not recount 100,000 nodes; it only reads
the renew times of each rack's members to compute Lease lag, and builds the
NotReady list from the set of nodes that are not Ready.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ktop.model.events import NodeRecord, Readiness
from ktop.model.snapshot import DomainRollup, NodesSnapshot, NotReadyNode
from ktop.model.values import Val
from ktop.model.zones import zone_state

NOT_READY_LIST_CAP = 200
RACK_LIST_CAP = 200

Domain = tuple[str, str, str]
"""(region, zone, rack)."""

# Positions in a domain's counter list.
TOTAL, READY, NOT_READY, UNKNOWN, CORDONED, COUNTED_READY, COUNTED_NOT_READY = range(7)


def _contribution(node: NodeRecord) -> list[int]:
    c = [0] * 7
    c[TOTAL] = 1
    if node.ready is Readiness.TRUE:
        c[READY] = 1
    elif node.ready is Readiness.FALSE:
        c[NOT_READY] = 1
    else:
        c[UNKNOWN] = 1
    c[CORDONED] = int(node.unschedulable)
    if not node.exclude_disruption:
        c[COUNTED_READY if node.ready is Readiness.TRUE else COUNTED_NOT_READY] = 1
    return c


class NodesState:
    """Nodes, their Lease renew times, and per-domain counts kept incrementally."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeRecord] = {}
        self.leases: dict[str, float] = {}
        self.renews: dict[Domain, dict[str, float]] = {}
        """Per domain, its nodes' Lease renew times (copied out in C at snapshot time)."""
        self.counts: dict[Domain, list[int]] = {}
        self.unhealthy: dict[str, tuple[float, str]] = {}
        """Not-Ready nodes with their sort key (since, name), longest first when sorted."""

    def _account(self, node: NodeRecord, sign: int) -> None:
        dom = (node.region, node.zone, node.rack)
        counts = self.counts.get(dom)
        if counts is None:
            counts = self.counts[dom] = [0] * 7
            self.renews[dom] = {}
        for i, v in enumerate(_contribution(node)):
            counts[i] += sign * v
        if sign > 0:
            renew = self.leases.get(node.name)
            if renew is not None:
                self.renews[dom][node.name] = renew
            if node.ready is not Readiness.TRUE:
                since = node.ready_since if node.ready_since is not None else float("inf")
                self.unhealthy[node.name] = (since, node.name)
        else:
            self.renews[dom].pop(node.name, None)
            self.unhealthy.pop(node.name, None)
            if counts[TOTAL] == 0:
                del self.counts[dom], self.renews[dom]

    def upsert(self, node: NodeRecord) -> None:
        """Add or replace a node."""
        old = self.nodes.get(node.name)
        if old == node:
            return
        if old is not None:
            self._account(old, -1)
        self.nodes[node.name] = node
        self._account(node, +1)

    def delete(self, name: str) -> None:
        """Forget a node and its Lease."""
        old = self.nodes.pop(name, None)
        if old is not None:
            self._account(old, -1)
        self.leases.pop(name, None)

    def renew(self, name: str, renew_time: float) -> None:
        """Record a Lease renewal."""
        self.leases[name] = renew_time
        node = self.nodes.get(name)
        if node is not None:
            self.renews[(node.region, node.zone, node.rack)][name] = renew_time


@dataclass(frozen=True, slots=True)
class NodesConfig:
    """Settings that shape the nodes snapshot."""

    rack_label: str
    unhealthy_zone_threshold: float
    lease_renew_interval_s: float


def _lag_vals(renews: list[float], now: float, reason: str) -> tuple[Val, Val]:
    """Max and median Lease lag from renew times (sorted in place)."""
    if not renews:
        return Val.unknown(reason), Val.unknown(reason)
    renews.sort()
    return Val.of(max(0.0, now - renews[0])), Val.of(max(0.0, now - renews[len(renews) // 2]))


def _rollup(
    dom: Domain,
    counts: list[int],
    renews: list[float],
    now: float,
    zone_level: bool,
    cfg: NodesConfig,
) -> DomainRollup:
    lag_max, lag_p50 = _lag_vals(renews, now, "no leases seen")
    return DomainRollup(
        region=dom[0],
        zone=dom[1],
        rack=dom[2],
        total=counts[TOTAL],
        ready=counts[READY],
        not_ready=counts[NOT_READY],
        unknown=counts[UNKNOWN],
        cordoned=counts[CORDONED],
        lease_lag_max_s=lag_max,
        lease_lag_p50_s=lag_p50,
        state=(
            zone_state(
                counts[COUNTED_READY], counts[COUNTED_NOT_READY], cfg.unhealthy_zone_threshold
            )
            if zone_level
            else None
        ),
    )


def _not_ready(state: NodesState, now: float) -> list[NotReadyNode]:
    """The longest-NotReady nodes (only the listed ones become objects)."""
    nodes = state.nodes
    out = []
    for _, name in heapq.nsmallest(NOT_READY_LIST_CAP, state.unhealthy.values()):
        node = nodes[name]
        renew = state.leases.get(name)
        out.append(
            NotReadyNode(
                name=name,
                region=node.region,
                zone=node.zone,
                rack=node.rack,
                ready=node.ready.value,
                since=node.ready_since,
                lease_lag_s=(
                    Val.of(max(0.0, now - renew)) if renew is not None else Val.unknown("no lease")
                ),
                tainted_unreachable=node.unreachable_taint,
                tainted_not_ready=node.not_ready_taint,
            )
        )
    return out


def build_nodes(
    state: NodesState,
    now: float,
    cfg: NodesConfig,
    *,
    nodes_known: bool,
    nodes_reason: str,
    leases_known: bool,
) -> NodesSnapshot:
    """Roll nodes up per zone and rack; list the NotReady ones, longest first."""
    zone_counts: dict[Domain, list[int]] = {}
    zone_renews: dict[Domain, list[float]] = {}
    rack_keys: list[tuple[int, float, str, str, Domain]] = []
    for dom, counts in state.counts.items():
        renews = state.renews[dom]
        zdom = (dom[0], dom[1], "")
        zc = zone_counts.setdefault(zdom, [0] * 7)
        for i, v in enumerate(counts):
            zc[i] += v
        zone_renews.setdefault(zdom, []).extend(renews.values())
        oldest = min(renews.values()) if renews else now
        unhealthy = counts[NOT_READY] + counts[UNKNOWN]
        rack_keys.append((-unhealthy, oldest, dom[1], dom[2], dom))
    # Worst racks first; only the listed ones get their median computed.
    rack_keys.sort()
    racks = [
        _rollup(k[4], state.counts[k[4]], list(state.renews[k[4]].values()), now, False, cfg)
        for k in rack_keys[:RACK_LIST_CAP]
    ]
    # Zone lists are sorted by _rollup; their concatenation sorts in near-linear time.
    zones = [
        _rollup(d, zone_counts[d], zone_renews[d], now, True, cfg) for d in sorted(zone_counts)
    ]
    all_renews: list[float] = []
    for d in sorted(zone_renews):
        all_renews += zone_renews[d]
    all_renews.sort()
    total = sum(z.total for z in zones)
    if leases_known and all_renews:
        # p99 of lag = now - the renew time at the 1st percentile (oldest first).
        k = len(all_renews) - min(len(all_renews) - 1, int(0.99 * len(all_renews)))
        p99 = Val.of(max(0.0, now - all_renews[k - 1]))
    else:
        p99 = Val.unknown("leases not listed" if not leases_known else "no leases seen")
    return NodesSnapshot(
        total=total,
        ready=sum(z.ready for z in zones),
        not_ready=sum(z.not_ready for z in zones),
        unknown=sum(z.unknown for z in zones),
        cordoned=sum(z.cordoned for z in zones),
        zones=tuple(zones),
        racks=tuple(racks),
        not_ready_nodes=tuple(_not_ready(state, now)),
        lease_lag_p99_s=p99,
        heartbeat_writes_per_s=(
            Val.of(total / cfg.lease_renew_interval_s)
            if nodes_known
            else Val.unknown(nodes_reason or "nodes not listed")
        ),
        nodes_known=nodes_known,
        nodes_reason=nodes_reason,
        rack_label=cfg.rack_label,
    )
