"""The metrics-only view of nodes and pending pods (no node, Lease or pod objects read).

In metrics-only mode the nodes pane is built from what the control plane exports
about itself instead of from the objects:

* zone states and unhealthy counts from the node lifecycle controller's own gauges
  (``node_collector_zone_size``, ``node_collector_unhealthy_nodes_in_zone``,
  ``node_collector_zone_health``), the zone state computed from them by the
  controller's rule (:func:`ktop.model.zones.zone_state`);
* node readiness per label value from kube-state-metrics, when Prometheus has it;

and the scheduler pane adds ``scheduler_unschedulable_pods`` per plugin to the
queues it always shows. What the metrics cannot tell is listed, per pane, in
:data:`CANNOT_KNOW` (the panes and docs/panes.md show it).
"""

from __future__ import annotations

from collections.abc import Mapping

from ktop.model.events import Area
from ktop.model.series import TargetSeries
from ktop.model.snapshot_nodes import InterimZones, LabelReadiness, MetricsOnlyNodes, ZoneHealth
from ktop.model.snapshot_scheduler import MetricsOnlyScheduler
from ktop.model.values import Val, whole
from ktop.model.zones import ZONE_KEY_SEP, zone_state

"""``GetZoneKey`` joins region and zone with this (a NUL byte between colons)."""

CANNOT_KNOW: Mapping[Area, tuple[str, ...]] = {
    Area.NODES: (
        "per-node names and NotReady since when (nodes are not read)",
        "Lease lag per node, rack and zone (Leases are not read)",
        "racks, unless kube-state-metrics exports the rack label",
        "cordoned nodes and taints",
    ),
    Area.SCHEDULER: (
        "pending pods by namespace and their FailedScheduling messages (pods are not read)",
        "the oldest pending pod's wait",
        "quota refusals and ResourceQuotas near their limit",
        "pods bound but not starting (Warning events are not read)",
    ),
    Area.APISERVERS: ("apiserver identity Leases",),
    Area.APF: (),
    Area.ETCD: (),
}
"""What each pane cannot know in metrics-only mode: shown as unknown, with this reason."""


def split_zone_key(key: str) -> tuple[str, str]:
    """``(region, zone)`` of a ``GetZoneKey`` value (``""`` is no region and no zone)."""
    region, sep, zone = key.partition(ZONE_KEY_SEP)
    return (region, zone) if sep else ("", key)


def _leader(series: Mapping[str, TargetSeries]) -> TargetSeries | None:
    """The controller-manager target that exports the zone gauges (only the leader does)."""
    for instance in sorted(series):
        ts = series[instance]
        if ts.gauge_by("node_collector_zone_size", ("zone",)):
            return ts
    return None


def zone_health(
    series: Mapping[str, TargetSeries], threshold: float, reason: str
) -> tuple[tuple[ZoneHealth, ...], str]:
    """Zones from the node lifecycle controller's gauges, or why there are none."""
    ts = _leader(series)
    if ts is None:
        if not series:
            return (), reason or "no controller-manager metrics source"
        return (), reason or "no controller-manager exports node_collector_zone_size"
    sizes = ts.gauge_by("node_collector_zone_size", ("zone",))
    unhealthy = ts.gauge_by("node_collector_unhealthy_nodes_in_zone", ("zone",))
    health = ts.gauge_by("node_collector_zone_health", ("zone",))
    out = []
    for (key,), size_val in sizes.items():
        bad_val = unhealthy.get((key,), Val.of(0))
        size, bad = whole(size_val.or_(0.0)), whole(bad_val.or_(0.0))
        if size is None or bad is None:
            return (), f"zone {key!r}: a node count is infinite (node_collector_* gauges)"
        if size == 0 and not bad:
            continue  # a zone that went away: the controller keeps it at size 0
        region, zone = split_zone_key(key)
        out.append(
            ZoneHealth(
                region=region,
                zone=zone,
                size=size,
                unhealthy=bad,
                health_pct=health.get((key,), Val.unknown("node_collector_zone_health absent")),
                state=zone_state(max(0, size - bad), bad, threshold),
            )
        )
    out.sort(key=lambda z: (z.region, z.zone))
    return tuple(out), ""


LIFECYCLE_CONTROLLER = "node lifecycle controller"
"""Where the controller's zones come from, as the panes and findings say it."""
ZONE_METRICS = "node_collector_*"
"""The gauges the controller's zones are read from."""


def interim_zones(
    controller_managers: Mapping[str, TargetSeries], threshold: float
) -> InterimZones | None:
    """The node lifecycle controller's zones, shown while ktop's own node list is under
    way; None when no controller-manager exports them.
    """
    zones, _ = zone_health(controller_managers, threshold, "")
    return InterimZones(zones, LIFECYCLE_CONTROLLER, ZONE_METRICS) if zones else None


def build_metrics_only_nodes(
    why: str,
    controller_managers: Mapping[str, TargetSeries],
    cm_reason: str,
    readiness: Mapping[str, tuple[tuple[str, int, int], ...]],
    readiness_reason: str,
    threshold: float,
) -> MetricsOnlyNodes:
    """The nodes pane's metrics-only view."""
    zones, zones_reason = zone_health(controller_managers, threshold, cm_reason)
    rows = tuple(
        LabelReadiness(label, value, ready, not_ready)
        for label in sorted(readiness)
        for value, ready, not_ready in readiness[label]
    )
    if not rows and not readiness_reason:
        readiness_reason = "kube-state-metrics not read"
    return MetricsOnlyNodes(
        why=why,
        zones=zones,
        zones_reason=zones_reason,
        readiness=rows,
        readiness_reason="" if rows else readiness_reason,
        cannot_know=CANNOT_KNOW[Area.NODES],
    )


def build_metrics_only_scheduler(
    why: str, schedulers: Mapping[str, TargetSeries], reason: str
) -> MetricsOnlyScheduler:
    """The scheduler pane's metrics-only view: unschedulable pods per plugin."""
    per_plugin: dict[str, float] = {}
    for ts in schedulers.values():
        for (plugin,), val in ts.gauge_by("scheduler_unschedulable_pods", ("plugin",)).items():
            per_plugin[plugin] = per_plugin.get(plugin, 0.0) + (val.value or 0.0)
    plugins = tuple(
        (p, Val.of(v)) for p, v in sorted(per_plugin.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    if plugins:
        plugins_reason = ""
    elif schedulers:
        plugins_reason = "scheduler_unschedulable_pods not exposed (added in 1.24)"
    else:
        plugins_reason = reason or "no scheduler metrics source"
    return MetricsOnlyScheduler(
        why=why,
        unschedulable_by_plugin=plugins,
        plugins_reason=plugins_reason,
        cannot_know=CANNOT_KNOW[Area.SCHEDULER],
    )
