"""Nodes by failure domain: readiness, Lease lag and zone state.

Per node ktop holds one small frozen record and one float (the Lease renew
time). Readiness counts per (region, zone, rack) are kept up to date as
nodes change, so a snapshot does not recount 100,000 nodes; it only reads
the renew times of each rack's members to compute Lease lag, and builds the
NotReady list from the set of nodes that are not Ready (sorted again only
when that set, one of its nodes or one of their Leases changed).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from ktop.model.events import NodeRecord, Readiness
from ktop.model.snapshot_nodes import DomainRollup, NodesSnapshot, NotReadyList, rack_order
from ktop.model.values import Val
from ktop.model.zones import zone_state

Domain = tuple[str, str, str]
"""(region, zone, rack)."""

# Positions in a domain's counter list.
TOTAL, READY, NOT_READY, UNKNOWN, CORDONED, COUNTED_READY, COUNTED_NOT_READY = range(7)
_COUNTED = operator.attrgetter(
    "region", "zone", "rack", "ready", "unschedulable", "exclude_disruption"
)
"""What of a node its domain's counts count."""


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


PLACE_ALL_SHARE = 8
"""A batch of renewals of at least one node in this many is placed by walking every node
(:meth:`NodesState._place`); a smaller one, renewal by renewal."""


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
        self._dirty: set[Domain] = set()
        self._sorted: dict[Domain, list[float]] = {}
        self._zone_sorted: dict[Domain, list[float]] = {}
        self._all_sorted: list[float] = []
        self._unhealthy_changes = 0
        """Bumped when a not-Ready node, its record or its Lease changes."""
        self._listed: tuple[int, tuple[NodeRecord, ...], tuple[float | None, ...]] = (0, (), ())
        """The not-Ready nodes longest first and their renews, as of ``_unhealthy_changes``."""
        self.sampling: tuple[int, float] | None = None
        """``(per_round, period_s)`` when the source samples Leases (``LeasesSampled``):
        then ``leases`` and ``renews`` hold ``renew_time - read_at`` (minus the lag when
        read) instead of renew times, and lag is measured from 0 instead of from now."""
        self._unplaced = False
        """Renewals were taken in bulk (:meth:`renew_many`): they are in ``leases``, and
        ``renews`` is made from ``leases`` again before it is next read."""

    def sample(self, per_round: int, period_s: float) -> None:
        """From now on Leases are sampled: forget renew times read before (they were
        times, not lags) and keep each Lease's lag as read.
        """
        self._place()
        if self.sampling is None:
            self.leases.clear()
            self._unhealthy_changes += 1
            for dom in self.renews:
                self.renews[dom] = {}
                self._dirty.add(dom)
        self.sampling = (per_round, period_s)

    def lag_origin(self, now: float) -> float:
        """What a stored value's lag is measured from: now, or 0 when sampled."""
        return now if self.sampling is None else 0.0

    def sorted_renews(
        self,
    ) -> tuple[dict[Domain, list[float]], dict[Domain, list[float]], list[float]]:
        """Renew times sorted oldest first: per domain, per zone, and over all nodes.

        A cache: only domains whose renew times changed since the last call are sorted again
        (the order does not depend on the clock), so a snapshot of an unchanged cluster sorts
        nothing. The lists are shared: callers must not change them.
        """
        self._place()
        if not self._dirty:
            return self._sorted, self._zone_sorted, self._all_sorted
        zones = set()
        for dom in self._dirty:
            zones.add((dom[0], dom[1], ""))
            renews = self.renews.get(dom)
            if renews is None:
                self._sorted.pop(dom, None)
            else:
                self._sorted[dom] = sorted(renews.values())
        self._dirty.clear()
        for zdom in zones:
            merged: list[float] = []
            for dom, lst in self._sorted.items():
                if dom[0] == zdom[0] and dom[1] == zdom[1]:
                    merged += lst
            if merged or any(d[:2] == zdom[:2] for d in self.renews):
                merged.sort()  # concatenated sorted runs: near-linear
                self._zone_sorted[zdom] = merged
            else:
                self._zone_sorted.pop(zdom, None)
        everything: list[float] = []
        for zdom in sorted(self._zone_sorted):
            everything += self._zone_sorted[zdom]
        everything.sort()
        self._all_sorted = everything
        return self._sorted, self._zone_sorted, self._all_sorted

    def _account(self, node: NodeRecord, sign: int) -> None:
        dom = (node.region, node.zone, node.rack)
        counts = self.counts.get(dom)
        if counts is None:
            counts = self.counts[dom] = [0] * 7
            self.renews[dom] = {}
        self._dirty.add(dom)
        for i, v in enumerate(_contribution(node)):
            counts[i] += sign * v
        if sign > 0:
            renew = self.leases.get(node.name)
            if renew is not None:
                self.renews[dom][node.name] = renew
            if node.ready is not Readiness.TRUE:
                since = node.ready_since if node.ready_since is not None else float("inf")
                self.unhealthy[node.name] = (since, node.name)
                self._unhealthy_changes += 1
        else:
            self.renews[dom].pop(node.name, None)
            if self.unhealthy.pop(node.name, None) is not None:
                self._unhealthy_changes += 1
            if counts[TOTAL] == 0:
                del self.counts[dom], self.renews[dom]

    def not_ready_list(self, now: float) -> NotReadyList:
        """Every not-Ready node, longest first (sorted again only after a change)."""
        changes, records, renews = self._listed
        if changes != self._unhealthy_changes:
            nodes, leases = self.nodes, self.leases
            records = tuple(nodes[name] for _, name in sorted(self.unhealthy.values()))
            renews = tuple(leases.get(node.name) for node in records)
            self._listed = (self._unhealthy_changes, records, renews)
        return NotReadyList(records, renews, self.lag_origin(now))

    def upsert(self, node: NodeRecord) -> None:
        """Add or replace a node."""
        old = self.nodes.get(node.name)
        if old == node:
            return
        if old is not None:
            self._account(old, -1)
        self.nodes[node.name] = node
        self._account(node, +1)

    def load(
        self, nodes: Sequence[NodeRecord], counted: Iterable[tuple[Any, ...]] | None = None
    ) -> None:
        """Add ``nodes`` to a state that holds none yet (a keyframe's), in order: the state
        :meth:`upsert` of each leaves, with each domain's counts made once from the number of
        nodes alike in what they count, and the renew times per domain made from the Leases
        when next read (as after renewals taken in bulk). ``counted``: what the counts count
        of each node (its region, zone, rack, readiness, unschedulable, excluded from
        disruption), when the caller has it at hand.
        """
        if self.nodes or self.counts:
            raise ValueError("expected a state without nodes")
        by_name = {node.name: node for node in nodes}
        if len(by_name) != len(nodes):  # a name twice: the later record replaces the first
            for node in nodes:
                self.upsert(node)
            return
        self.nodes = by_name
        counts = self.counts
        alike = Counter(map(_COUNTED, nodes) if counted is None else counted)
        for (region, zone, rack, ready, cordoned, excluded), k in alike.items():
            dom = (region, zone, rack)
            c = counts.get(dom)
            if c is None:
                c = counts[dom] = [0] * 7
            c[TOTAL] += k
            if ready is Readiness.TRUE:
                c[READY] += k
            elif ready is Readiness.FALSE:
                c[NOT_READY] += k
            else:
                c[UNKNOWN] += k
            c[CORDONED] += k * int(cordoned)
            if not excluded:
                c[COUNTED_READY if ready is Readiness.TRUE else COUNTED_NOT_READY] += k
        self.renews = {dom: {} for dom in counts}
        self._unplaced = bool(self.leases)
        for node in nodes:
            if node.ready is not Readiness.TRUE:
                since = node.ready_since if node.ready_since is not None else float("inf")
                self.unhealthy[node.name] = (since, node.name)
                self._unhealthy_changes += 1
        self._dirty.update(counts)

    def delete(self, name: str) -> None:
        """Forget a node and its Lease."""
        old = self.nodes.pop(name, None)
        if old is not None:
            self._account(old, -1)
        self.leases.pop(name, None)

    def renew(self, name: str, renew_time: float, read_at: float) -> None:
        """Record a Lease renewal seen at ``read_at``."""
        if self.sampling is not None:
            renew_time = min(0.0, renew_time - read_at)
        self.leases[name] = renew_time
        if name in self.unhealthy:
            self._unhealthy_changes += 1
        self._into_domain(name, renew_time)

    def _into_domain(self, name: str, renew_time: float) -> None:
        """Put a Lease's renew time (as stored) in its node's domain, marked to sort again
        (nothing while its node is not known: :meth:`_account` puts it there then).
        """
        node = self.nodes.get(name)
        if node is not None:
            dom = (node.region, node.zone, node.rack)
            self.renews[dom][name] = renew_time
            self._dirty.add(dom)

    def renew_many(
        self, names: Sequence[str], renew_times: Sequence[float], read_ats: Sequence[float]
    ) -> None:
        """Record the Lease renewals ``names[i]``, ``renew_times[i]`` seen at ``read_ats[i]``,
        in order: the state :meth:`renew` one by one would leave, at a cost per renewal of
        one dictionary store (the renew times per domain are made again when next read).
        """
        if len(names) != len(renew_times):
            raise ValueError("expected as many renew times as names")
        if self.sampling is not None:
            renew_times = list(map(min, repeat(0.0), map(operator.sub, renew_times, read_ats)))
        self.leases.update(zip(names, renew_times, strict=True))  # a later renewal wins
        if self.unhealthy and not self.unhealthy.keys().isdisjoint(names):
            self._unhealthy_changes += 1
        if self._unplaced or len(names) * PLACE_ALL_SHARE >= len(self.nodes):
            self._unplaced = True
            return
        # A few renewals (a sampled page): each into its domain, not every Lease placed
        # again (at 100,000 nodes that walk was most of an idle sample's cost).
        for name, renew_time in zip(names, renew_times, strict=True):
            self._into_domain(name, renew_time)

    def renew_latest(self, renew_times: Mapping[str, float]) -> None:
        """Record each Lease's last renew time of a stretch of renewals (not sampled), in the
        order of each Lease's first renewal in it: the state :meth:`renew` of every renewal
        of the stretch would leave.
        """
        if self.sampling is not None:
            raise ValueError("expected Leases that are not sampled")
        self.leases.update(renew_times)
        if self.unhealthy and not self.unhealthy.keys().isdisjoint(renew_times):
            self._unhealthy_changes += 1
        self._unplaced = True

    def _place(self) -> None:
        """After renewals taken in bulk: every domain's renew times made again from
        ``leases`` (a node's entry is its Lease's, for every node that has one).
        """
        if not self._unplaced:
            return
        self._unplaced = False
        renews: dict[Domain, dict[str, float]] = {dom: {} for dom in self.renews}
        leases = self.leases
        for name, node in self.nodes.items():
            renew = leases.get(name)
            if renew is not None:
                renews[(node.region, node.zone, node.rack)][name] = renew
        self.renews = renews
        self._dirty.update(renews)


@dataclass(frozen=True, slots=True)
class NodesConfig:
    """Settings that shape the nodes snapshot."""

    rack_label: str
    unhealthy_zone_threshold: float
    lease_renew_interval_s: float


def _lag_vals(renews: list[float], now: float, reason: str) -> tuple[Val, Val]:
    """Max and median Lease lag from renew times sorted oldest first."""
    if not renews:
        return Val.unknown(reason), Val.unknown(reason)
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
    by_domain, by_zone, all_renews = state.sorted_renews()
    origin = state.lag_origin(now)
    zone_counts: dict[Domain, list[int]] = {}
    for dom, counts in state.counts.items():
        zdom = (dom[0], dom[1], "")
        zc = zone_counts.setdefault(zdom, [0] * 7)
        for i, v in enumerate(counts):
            zc[i] += v
    # Worst racks first, as printed; every rack (a screen builds only the rows it shows).
    racks = rack_order(
        [
            _rollup(dom, counts, by_domain.get(dom, []), origin, False, cfg)
            for dom, counts in state.counts.items()
        ]
    )
    zones = [
        _rollup(d, zone_counts[d], by_zone.get(d, []), origin, True, cfg)
        for d in sorted(zone_counts)
    ]
    total = sum(z.total for z in zones)
    if leases_known and all_renews:
        # p99 of lag = now - the renew time at the 1st percentile (oldest first).
        k = len(all_renews) - min(len(all_renews) - 1, int(0.99 * len(all_renews)))
        p99 = Val.of(max(0.0, origin - all_renews[k - 1]))
    else:
        p99 = Val.unknown("leases not listed" if not leases_known else "no leases seen")
    return NodesSnapshot(
        total=total,
        ready=sum(z.ready for z in zones),
        not_ready=sum(z.not_ready for z in zones),
        unknown=sum(z.unknown for z in zones),
        cordoned=sum(z.cordoned for z in zones),
        zones=tuple(zones),
        racks=racks,
        not_ready_nodes=state.not_ready_list(now),
        lease_lag_p99_s=p99,
        heartbeat_writes_per_s=(
            Val.of(total / cfg.lease_renew_interval_s)
            if nodes_known
            else Val.unknown(nodes_reason or "nodes not listed")
        ),
        nodes_known=nodes_known,
        nodes_reason=nodes_reason,
        rack_label=cfg.rack_label,
        lease_sample=state.sampling,
        leases_read=len(all_renews),
    )
