"""What feeds the cluster model: which areas each component's targets and each feed
feed, how an input last fared, and the model's settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.model import events as ev
from ktop.model.events import Area, Component
from ktop.model.history import DEFAULT_RETENTION_S, DEFAULT_STEP_S
from ktop.model.series import WINDOW_S
from ktop.model.zones import DEFAULT_UNHEALTHY_ZONE_THRESHOLD

INPUT_AREAS: dict[Component, tuple[Area, ...]] = {
    Component.APISERVER: (Area.APISERVERS, Area.APF),
    Component.ETCD: (Area.ETCD,),
    Component.SCHEDULER: (Area.SCHEDULER,),
    Component.CONTROLLER_MANAGER: (Area.NODES,),
}
"""The areas whose freshness lists a component's targets."""
COMPONENT_AREAS: dict[Component, tuple[Area, ...]] = {
    **INPUT_AREAS,
    Component.APISERVER: (*INPUT_AREAS[Component.APISERVER], Area.ETCD, Area.SCHEDULER),
}
"""The areas a component's metrics feed (the apiservers' etcd client metrics feed etcd,
their binding requests the scheduler's throughput)."""
FEED_AREAS: dict[str, Area] = {
    ev.FEED_NODES: Area.NODES,
    ev.FEED_LEASES: Area.NODES,
    ev.FEED_PENDING_PODS: Area.SCHEDULER,
    ev.FEED_EVENTS: Area.SCHEDULER,
    ev.FEED_QUOTAS: Area.SCHEDULER,
    ev.FEED_IDENTITIES: Area.APISERVERS,
    ev.FEED_DISCOVERY: Area.APISERVERS,
    ev.FEED_PROMETHEUS: Area.APISERVERS,
    ev.FEED_PROMETHEUS_BACKFILL: Area.APISERVERS,
    ev.FEED_SLO_DAY: Area.APISERVERS,
    ev.FEED_APF_NAMES: Area.APF,
    ev.FEED_NODE_DETAILS: Area.NODES,
    ev.FEED_COMPONENTS: Area.SCHEDULER,
    ev.FEED_KUBE_STATE_METRICS: Area.NODES,
    ev.FEED_CLOCK: Area.NODES,
}


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Tunables of the model."""

    window_s: float = WINDOW_S
    rack_label: str = "topology.ktop.dev/rack"
    unhealthy_zone_threshold: float = DEFAULT_UNHEALTHY_ZONE_THRESHOLD
    lease_renew_interval_s: float = 10.0
    history_s: float = DEFAULT_RETENTION_S
    """How much history each signal keeps (source clock)."""
    history_step_s: float = DEFAULT_STEP_S
    """At most one history frame per this many seconds (the refresh cadence)."""


@dataclass(slots=True)
class InputHealth:
    """How one input (a scrape target, a feed, an APF dump) last fared."""

    last_ok: float | None = None
    error: str = ""
    synced: bool = False
    note: str = ""
