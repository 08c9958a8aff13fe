"""The nodes area's snapshot: zones, racks, NotReady nodes (see :mod:`ktop.model.snapshot`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import overload

from ktop.model.events import NodeRecord, Readiness
from ktop.model.text import fmt_duration, larger_first
from ktop.model.values import Val

# --------------------------------------------------------------------------
# nodes


class ZoneState(StrEnum):
    """Zone states as the node lifecycle controller computes them."""

    INITIAL = "Initial"
    NORMAL = "Normal"
    PARTIAL_DISRUPTION = "PartialDisruption"
    FULL_DISRUPTION = "FullDisruption"


@dataclass(frozen=True, slots=True)
class DomainRollup:
    """Node health in one failure domain (a zone, or a rack within a zone)."""

    region: str
    zone: str
    rack: str
    """Empty for a zone-level roll-up."""
    total: int
    ready: int
    not_ready: int
    """Ready=False."""
    unknown: int
    """Ready=Unknown or no Ready condition."""
    cordoned: int
    lease_lag_max_s: Val
    lease_lag_p50_s: Val
    state: ZoneState | None = None
    """Zone state (zone roll-ups only)."""

    @property
    def unhealthy(self) -> int:
        """Nodes whose Ready condition is not True."""
        return self.not_ready + self.unknown


def rack_order(racks: Iterable[DomainRollup]) -> tuple[DomainRollup, ...]:
    """Racks worst first by the values as printed: unhealthy nodes (NotReady and Unknown),
    then lease lag max as shown (so the order never moves on jitter the screen does not
    show); then by region, zone and rack. Decided here once: the panel, the drill-down
    and the rules all see this order.
    """
    return tuple(
        sorted(
            racks,
            key=lambda r: (
                -r.unhealthy,
                larger_first(r.lease_lag_max_s, fmt_duration),
                r.region,
                r.zone,
                r.rack,
            ),
        )
    )


@dataclass(frozen=True, slots=True)
class NotReadyNode:
    """A node that is not Ready, for lists."""

    name: str
    region: str
    zone: str
    rack: str
    ready: str
    since: float | None
    lease_lag_s: Val
    tainted_unreachable: bool
    tainted_not_ready: bool


NO_LEASE = "no lease"
"""Why a listed node's Lease lag is unknown."""


@dataclass(frozen=True, slots=True)
class NotReadyList(Sequence[NotReadyNode]):
    """Every node that is not Ready, longest first; a row is built only when read.

    During a zone outage at 100,000 nodes tens of thousands of nodes are listed:
    the list holds the model's own frozen node records and their Lease renew
    times (shared, not copied), and a screen builds the rows it shows. Lease lag
    is ``origin - renew`` (``origin`` is the snapshot's clock, or 0 when Leases
    are sampled and a renew holds minus its lag).
    """

    records: tuple[NodeRecord, ...] = ()
    renews: tuple[float | None, ...] = ()
    origin: float = 0.0

    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, index: int) -> NotReadyNode: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[NotReadyNode, ...]: ...

    def __getitem__(self, index: int | slice) -> NotReadyNode | tuple[NotReadyNode, ...]:
        if isinstance(index, slice):
            return tuple(self._node(i) for i in range(*index.indices(len(self.records))))
        if index < 0:
            index += len(self.records)
        if not 0 <= index < len(self.records):
            raise IndexError(index)
        return self._node(index)

    def __iter__(self) -> Iterator[NotReadyNode]:
        return (self._node(i) for i in range(len(self.records)))

    def _node(self, i: int) -> NotReadyNode:
        node, renew = self.records[i], self.renews[i]
        lag = Val.of(max(0.0, self.origin - renew)) if renew is not None else Val.unknown(NO_LEASE)
        return NotReadyNode(
            name=node.name,
            region=node.region,
            zone=node.zone,
            rack=node.rack,
            ready=node.ready.value,
            since=node.ready_since,
            lease_lag_s=lag,
            tainted_unreachable=node.unreachable_taint,
            tainted_not_ready=node.not_ready_taint,
        )

    @classmethod
    def of(cls, nodes: Iterable[NotReadyNode]) -> NotReadyList:
        """A list of ready-made rows (tests and fixtures), in the order given."""
        listed = tuple(nodes)
        return cls(
            records=tuple(
                NodeRecord(
                    n.name,
                    n.region,
                    n.zone,
                    n.rack,
                    Readiness(n.ready),
                    n.since,
                    unreachable_taint=n.tainted_unreachable,
                    not_ready_taint=n.tainted_not_ready,
                )
                for n in listed
            ),
            renews=tuple(
                -n.lease_lag_s.value if n.lease_lag_s.value is not None else None for n in listed
            ),
        )


@dataclass(frozen=True, slots=True)
class ZoneHealth:
    """One zone as the node lifecycle controller exports it (``node_collector_*``)."""

    region: str
    zone: str
    size: int
    """``node_collector_zone_size``."""
    unhealthy: int
    """``node_collector_unhealthy_nodes_in_zone``."""
    health_pct: Val
    """``node_collector_zone_health``."""
    state: ZoneState
    """``ComputeZoneState`` of ``size - unhealthy`` ready and ``unhealthy`` not-ready nodes."""


@dataclass(frozen=True, slots=True)
class LabelReadiness:
    """Ready and not-Ready nodes with one value of a node label (kube-state-metrics)."""

    label: str
    value: str
    ready: int
    not_ready: int


@dataclass(frozen=True, slots=True)
class MetricsOnlyNodes:
    """The nodes pane in metrics-only mode: what the metrics say, and what they cannot."""

    why: str
    zones: tuple[ZoneHealth, ...]
    zones_reason: str
    """Why zone states are unknown (empty when the controller's metrics were read)."""
    readiness: tuple[LabelReadiness, ...]
    readiness_reason: str
    """Why readiness per label is unknown (kube-state-metrics absent or not read)."""
    cannot_know: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class InterimZones:
    """Zones from a cheaper source than ktop's own node list, shown while that list is
    under way (on a large cluster its first list takes long): the node lifecycle
    controller's ``node_collector_*`` gauges. Not ktop's own count: the nodes stay
    unknown until the list completes, and then ktop's own count replaces these.
    """

    zones: tuple[ZoneHealth, ...]
    source: str
    """Where they come from, as the pane says it: ``node lifecycle controller``."""
    metrics: str
    """What was read there: ``node_collector_*``."""


@dataclass(frozen=True, slots=True)
class NodesSnapshot:
    """Nodes grouped by failure domain."""

    total: int
    ready: int
    not_ready: int
    unknown: int
    cordoned: int
    zones: tuple[DomainRollup, ...]
    racks: tuple[DomainRollup, ...]
    """Every rack, those with unhealthy nodes or the oldest Lease first."""
    not_ready_nodes: NotReadyList
    """Every not-Ready node, the longest-NotReady first (rows built when read)."""
    lease_lag_p99_s: Val
    heartbeat_writes_per_s: Val
    """nodes / lease renew interval (capacity arithmetic, 000 §1.2)."""
    nodes_known: bool
    nodes_reason: str = ""
    rack_label: str = ""
    metrics_only: MetricsOnlyNodes | None = None
    """Set in metrics-only mode: the view this pane shows instead of the nodes' own."""
    lease_sample: tuple[int, float] | None = None
    """``(per_round, period_s)`` when Leases are sampled (lag as of each Lease's last
    read); ``None`` when every renewal is seen."""
    leases_read: int = 0
    """Nodes whose Lease has been read (sampled: fewer than ``total`` until the first sweep
    reached every Lease; lag figures are over these)."""
    listed: tuple[int, int | None] | None = None
    """While the first node list is under way: nodes listed so far, and how many the
    apiserver said there are (None: it did not say); None once listed."""
    interim: InterimZones | None = None
    """While ktop's own node list has not completed (and not in metrics-only mode): the
    zones as the node lifecycle controller counts them, when it exports them; None
    once the list completes (ktop's own zones are then shown)."""
