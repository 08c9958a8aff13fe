"""The nodes area's snapshot: zones, racks, NotReady nodes (see :mod:`ktop.model.snapshot`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

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
class NodesSnapshot:
    """Nodes grouped by failure domain."""

    total: int
    ready: int
    not_ready: int
    unknown: int
    cordoned: int
    zones: tuple[DomainRollup, ...]
    racks: tuple[DomainRollup, ...]
    """Per rack, only racks with unhealthy nodes or lease lag first; capped."""
    not_ready_nodes: tuple[NotReadyNode, ...]
    """The longest-NotReady nodes first; capped."""
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
