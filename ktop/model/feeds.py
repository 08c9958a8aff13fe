"""The names of the feeds a source reads besides the metrics targets (nodes, Leases,
pending pods, discovery, Prometheus...): the ``feed`` of ``FeedSynced``, ``FeedFailed``
and ``ObjectsSkipped`` (:mod:`ktop.model.source_events`).
"""

from __future__ import annotations

FEED_NODES = "nodes"
FEED_LEASES = "leases"
FEED_PENDING_PODS = "pending-pods"
FEED_EVENTS = "events"
FEED_QUOTAS = "resourcequotas"
FEED_IDENTITIES = "apiserver-identities"
OBJECT_FEEDS = (
    FEED_NODES,
    FEED_LEASES,
    FEED_PENDING_PODS,
    FEED_EVENTS,
    FEED_QUOTAS,
    FEED_IDENTITIES,
)
"""The feeds of the API's objects: what Prometheus history, a metrics slice or audit logs
cannot fill (said so, never left to look healthy)."""
FEED_DISCOVERY = "apiserver-discovery"
"""Finding apiserver instances (EndpointSlices, Prometheus targets)."""
FEED_APF_NAMES = "apf-names"
"""FlowSchema and PriorityLevelConfiguration names (they label ktop's own cost)."""
FEED_PROMETHEUS = "prometheus-discovery"
"""Finding and connecting to Prometheus (``--prometheus auto`` or ``k8s://``)."""
FEED_PROMETHEUS_BACKFILL = "prometheus-backfill"
"""The one-time read of the last hour from Prometheus at start."""
FEED_SLO_DAY = "prometheus-slo-day"
"""The day so far's SLO calls per apiserver from Prometheus
(:class:`~ktop.model.source_events.SloDayCounted`)."""
FEED_KUBE_STATE_METRICS = "kube-state-metrics"
"""Node readiness per label from kube-state-metrics through Prometheus (metrics-only mode)."""
FEED_NODE_DETAILS = "node-details"
"""GETs of single not-Ready nodes."""
FEED_COMPONENTS = "component-discovery"
"""Finding control-plane pods and their leaders through the apiserver."""
FEED_CLOCK = "clock"
"""The source's clock ticks (they age not-Ready nodes and Lease lags, and carry ktop's
own cost); reported only when the loop that sends them fails."""
