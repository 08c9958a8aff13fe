"""The readings of the nodes area: per zone, and the Lease lag.

Part of the registry of readings, :data:`ktop.model.signals.SIGNALS`, in display order.
"""

from __future__ import annotations

from ktop.model import limits
from ktop.model.extractors import lease_lag, per_zone, zone_of, zones_size, zones_unhealthy
from ktop.model.promql import ZONE_SIZE, ZONE_UNHEALTHY
from ktop.model.reading import Chart, Reading
from ktop.model.scrape_targets import Component
from ktop.model.signal_areas import Area

NODES_UNHEALTHY = Reading(
    "nodes.unhealthy",
    "not Ready",
    "",
    Component.CONTROLLER_MANAGER,
    "zone",
    ZONE_UNHEALTHY,
    subject_of=zone_of,
    area=Area.NODES,
    extract=zones_unhealthy,
    chart=Chart("sum", "not Ready nodes (NotReady + Unknown), all zones", 1),
)

NODES_ZONE_SIZE = Reading(
    "nodes.zone_size",
    "nodes",
    "",
    Component.CONTROLLER_MANAGER,
    "zone",
    ZONE_SIZE,
    subject_of=zone_of,
    higher_is_worse=False,
    area=Area.NODES,
    extract=zones_size,
)

NODES_NOT_READY = Reading(
    "nodes.not_ready",
    "NotReady",
    "",
    None,
    "zone",
    area=Area.NODES,
    extract=per_zone("not_ready"),
    chart=Chart("sum", "NotReady nodes, all zones", 2),
)

NODES_UNKNOWN = Reading(
    "nodes.unknown",
    "Unknown",
    "",
    None,
    "zone",
    area=Area.NODES,
    extract=per_zone("unknown"),
    chart=Chart("sum", "Unknown nodes, all zones", 3),
)

NODES_LEASE_LAG_P99_S = Reading(
    "nodes.lease_lag_p99_s",
    "Lease lag p99",
    "s",
    None,
    area=Area.NODES,
    extract=lease_lag,
    threshold=limits.NODE_LEASE_LAG_P99,
    chart=Chart("max", "Lease lag p99", 4),
)

NODE_SIGNALS: tuple[Reading, ...] = (
    NODES_UNHEALTHY,
    NODES_ZONE_SIZE,
    NODES_NOT_READY,
    NODES_UNKNOWN,
    NODES_LEASE_LAG_P99_S,
)
"""The nodes area's signals, in display order."""
