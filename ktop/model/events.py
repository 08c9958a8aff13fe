"""Events: the only thing sources hand to the model.

Every source (the simulator, a live cluster, a recording, an offline bundle)
emits these and nothing else. They hold plain data only (strings, numbers,
tuples, other events' records) so that a recording is the event stream
itself and replay needs no field-by-field copying.

Times are Unix seconds (float). ``at`` is when the source observed the
thing, on the source's clock: the simulator's virtual clock, the live
clock, or the recorded clock on replay.

This module is the events' namespace (``from ktop.model import events as ev``): it
defines :data:`Event`, the union of every event, and makes importable from here what
the events are made of, each defined in the module that holds its kind:

* :mod:`ktop.model.scrape_targets`: components, targets, labels and samples;
* :mod:`ktop.model.signal_areas`: the signal areas;
* :mod:`ktop.model.scrape_events`: metrics scrapes and APF dumps;
* :mod:`ktop.model.object_events`: Kubernetes objects (nodes, Leases, pods, quotas);
* :mod:`ktop.model.source_events`: the source's own state (feeds, clock, cost);
* :mod:`ktop.model.feeds`: the feeds' names (``FEED_*``).
"""

from __future__ import annotations

from ktop.model.feeds import (
    FEED_APF_NAMES,
    FEED_CLOCK,
    FEED_COMPONENTS,
    FEED_DISCOVERY,
    FEED_EVENTS,
    FEED_IDENTITIES,
    FEED_KUBE_STATE_METRICS,
    FEED_LEASES,
    FEED_NODE_DETAILS,
    FEED_NODES,
    FEED_PENDING_PODS,
    FEED_PROMETHEUS,
    FEED_PROMETHEUS_BACKFILL,
    FEED_QUOTAS,
    FEED_SLO_DAY,
)
from ktop.model.object_events import (
    ROW_NAMESPACE,
    ApiserverIdentities,
    LeaseRenewed,
    LeasesSampled,
    NodeDeleted,
    NodeRecord,
    NodeUpserted,
    PendingPodDeleted,
    PendingPodRecord,
    PendingPodUpserted,
    PodWait,
    QuotaDeleted,
    QuotaRecord,
    QuotaUpserted,
    Readiness,
    WarningEvent,
    is_row,
    row_namespace,
)
from ktop.model.scrape_events import (
    ApfDumpFailed,
    ApfDumpRead,
    ApfLevelDump,
    ApfRequestsFailed,
    ApfRequestsRead,
    ApfTalker,
    MetricsScraped,
    ScrapeFailed,
    TargetGone,
)
from ktop.model.scrape_targets import LOAD_BALANCED, Component, Labels, Sample, Target
from ktop.model.signal_areas import Area
from ktop.model.source_events import (
    PACE_BEHIND_RATIO,
    ClockTick,
    FeedFailed,
    FeedProgress,
    FeedSynced,
    HistoryBackfilled,
    MetricsOnlyMode,
    NodeReadinessByLabel,
    ObjectsSkipped,
    ProviderDetected,
    SelfCost,
    SimPace,
    SloDayCounted,
    SourceStarted,
)

Event = (
    MetricsScraped
    | ScrapeFailed
    | TargetGone
    | ApfDumpRead
    | ApfDumpFailed
    | ApfRequestsRead
    | ApfRequestsFailed
    | NodeUpserted
    | NodeDeleted
    | LeaseRenewed
    | LeasesSampled
    | PendingPodUpserted
    | PendingPodDeleted
    | WarningEvent
    | QuotaUpserted
    | QuotaDeleted
    | ApiserverIdentities
    | SourceStarted
    | ProviderDetected
    | FeedSynced
    | FeedFailed
    | FeedProgress
    | ObjectsSkipped
    | SelfCost
    | SimPace
    | ClockTick
    | HistoryBackfilled
    | MetricsOnlyMode
    | NodeReadinessByLabel
    | SloDayCounted
)
"""Any event a source may emit."""

__all__ = [
    "FEED_APF_NAMES",
    "FEED_CLOCK",
    "FEED_COMPONENTS",
    "FEED_DISCOVERY",
    "FEED_EVENTS",
    "FEED_IDENTITIES",
    "FEED_KUBE_STATE_METRICS",
    "FEED_LEASES",
    "FEED_NODES",
    "FEED_NODE_DETAILS",
    "FEED_PENDING_PODS",
    "FEED_PROMETHEUS",
    "FEED_PROMETHEUS_BACKFILL",
    "FEED_QUOTAS",
    "FEED_SLO_DAY",
    "LOAD_BALANCED",
    "PACE_BEHIND_RATIO",
    "ROW_NAMESPACE",
    "ApfDumpFailed",
    "ApfDumpRead",
    "ApfLevelDump",
    "ApfRequestsFailed",
    "ApfRequestsRead",
    "ApfTalker",
    "ApiserverIdentities",
    "Area",
    "ClockTick",
    "Component",
    "Event",
    "FeedFailed",
    "FeedProgress",
    "FeedSynced",
    "HistoryBackfilled",
    "Labels",
    "LeaseRenewed",
    "LeasesSampled",
    "MetricsOnlyMode",
    "MetricsScraped",
    "NodeDeleted",
    "NodeReadinessByLabel",
    "NodeRecord",
    "NodeUpserted",
    "ObjectsSkipped",
    "PendingPodDeleted",
    "PendingPodRecord",
    "PendingPodUpserted",
    "PodWait",
    "ProviderDetected",
    "QuotaDeleted",
    "QuotaRecord",
    "QuotaUpserted",
    "Readiness",
    "Sample",
    "ScrapeFailed",
    "SelfCost",
    "SimPace",
    "SloDayCounted",
    "SourceStarted",
    "Target",
    "TargetGone",
    "WarningEvent",
    "is_row",
    "row_namespace",
]
