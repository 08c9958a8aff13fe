"""Events: the only thing sources hand to the model.

Every source (the simulator, a live cluster, a recording, an offline bundle)
emits these and nothing else. They hold plain data only (strings, numbers,
tuples, other events' records) so that a recording is the event stream
itself and replay needs no field-by-field copying.

Times are Unix seconds (float). ``at`` is when the source observed the
thing, on the source's clock: the simulator's virtual clock, the live
clock, or the recorded clock on replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Component(StrEnum):
    """Which control-plane component a metrics target is."""

    APISERVER = "apiserver"
    ETCD = "etcd"
    SCHEDULER = "scheduler"
    CONTROLLER_MANAGER = "controller-manager"


class Area(StrEnum):
    """The five signal areas of the overview."""

    APF = "apf"
    APISERVERS = "apiservers"
    ETCD = "etcd"
    SCHEDULER = "scheduler"
    NODES = "nodes"


Labels = tuple[tuple[str, str], ...]
"""Metric labels as a tuple of ``(name, value)`` pairs sorted by name."""


LOAD_BALANCED = "(load-balanced)"
"""The instance name of reads through the kubeconfig's (load-balanced) server address,
used only while no apiserver instance is known: never summed with real instances."""


@dataclass(frozen=True, slots=True)
class Target:
    """One metrics endpoint: a component instance."""

    component: Component
    instance: str


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample of a Prometheus exposition (histogram buckets included)."""

    name: str
    labels: Labels
    value: float


# --------------------------------------------------------------------------
# Metrics


@dataclass(frozen=True, slots=True)
class MetricsScraped:
    """A target's metrics were read (already filtered to what ktop uses)."""

    at: float
    target: Target
    samples: tuple[Sample, ...]
    parse_errors: tuple[str, ...] = ()
    """Malformed lines that were skipped (the rest was read)."""


@dataclass(frozen=True, slots=True)
class ScrapeFailed:
    """A target's metrics could not be read; ``reason`` says why."""

    at: float
    target: Target
    reason: str


@dataclass(frozen=True, slots=True)
class TargetGone:
    """A target is no longer read (an apiserver instance left, a leader moved):
    its series, health and APF dump are dropped, not kept as a stale row.
    """

    at: float
    target: Target
    reason: str


@dataclass(frozen=True, slots=True)
class ApfLevelDump:
    """One row of ``/debug/api_priority_and_fairness/dump_priority_levels``.

    Counters are cumulative since the apiserver started; fields absent in
    older formats are ``None``.
    """

    priority_level: str
    active_queues: int | None
    is_idle: bool | None
    is_quiescing: bool | None
    waiting_requests: int | None
    executing_requests: int | None
    dispatched_requests: int | None = None
    rejected_requests: int | None = None
    timedout_requests: int | None = None
    cancelled_requests: int | None = None


@dataclass(frozen=True, slots=True)
class ApfDumpRead:
    """An apiserver instance's APF priority-level dump was read."""

    at: float
    instance: str
    levels: tuple[ApfLevelDump, ...]


@dataclass(frozen=True, slots=True)
class ApfDumpFailed:
    """An apiserver instance's APF dump could not be read."""

    at: float
    instance: str
    reason: str


@dataclass(frozen=True, slots=True)
class ApfTalker:
    """One client's requests in one priority level at one reading of
    ``/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1``.

    A client is a user name and a flow distinguisher under one flow schema.
    Executing requests are listed from Kubernetes 1.28 on (``-1`` in their
    queue position); before that only queued ones are.
    """

    priority_level: str
    flow_schema: str
    user: str
    distinguisher: str
    executing: int
    executing_seats: int
    """The executing requests' initial seats."""
    waiting: int
    waiting_seats: int
    """The queued requests' initial seats (what they will hold once dispatched)."""
    oldest_wait_s: float
    """How long the longest-queued of these requests had waited when read (0: none)."""
    what: str
    """The commonest verb and resource of these requests (``list pods``)."""


@dataclass(frozen=True, slots=True)
class ApfRequestsRead:
    """An apiserver instance's APF request dump was read, folded per client."""

    at: float
    instance: str
    talkers: tuple[ApfTalker, ...]
    requests: int
    """How many request rows were read."""
    executing_listed: bool
    """True when the dump lists executing requests (Kubernetes 1.28+, ``StartTime``)."""
    truncated: bool = False
    """True when the body passed ktop's size limit and only its beginning was read."""
    skipped: int = 0
    """Rows that could not be read (wrong cell count, bad numbers)."""


@dataclass(frozen=True, slots=True)
class ApfRequestsFailed:
    """An apiserver instance's APF request dump could not be read."""

    at: float
    instance: str
    reason: str


# --------------------------------------------------------------------------
# Kubernetes objects, in compact form (converters live beside the sources)


class Readiness(StrEnum):
    """The status of a node's Ready condition (missing counts as unknown)."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """What ktop keeps of a Node: a few small fields, strings interned.

    ``ready_since`` is the Ready condition's lastTransitionTime (Unix s) or
    ``None``. ``exclude_disruption`` mirrors the label
    ``node.kubernetes.io/exclude-disruption`` that the node lifecycle
    controller honours when it computes zone states.
    """

    name: str
    region: str
    zone: str
    rack: str
    ready: Readiness
    ready_since: float | None
    unreachable_taint: bool = False
    not_ready_taint: bool = False
    unschedulable: bool = False
    exclude_disruption: bool = False


@dataclass(frozen=True, slots=True)
class NodeUpserted:
    """A node was listed, added or changed."""

    at: float
    node: NodeRecord


@dataclass(frozen=True, slots=True)
class NodeDeleted:
    """A node was deleted."""

    at: float
    name: str


@dataclass(frozen=True, slots=True)
class LeaseRenewed:
    """A node's Lease in ``kube-node-lease`` has this ``spec.renewTime``."""

    at: float
    node: str
    renew_time: float


@dataclass(frozen=True, slots=True)
class LeasesSampled:
    """The source reads node Leases in rounds instead of watching them all.

    Every ``period_s`` it reads ``per_round`` Leases in rotation, plus those of
    nodes that are not Ready or whose Lease lagged when last read. A Lease read
    long ago says nothing about its lag now, so from this event on the model
    takes each Lease's lag as it was when read (``at - renew_time``).
    """

    at: float
    per_round: int
    period_s: float


class PodWait(StrEnum):
    """Why a pending pod has not started, at the coarsest level."""

    NOT_ATTEMPTED = "not-attempted"
    """Unscheduled and without a PodScheduled condition yet."""
    UNSCHEDULABLE = "unschedulable"
    """The scheduler tried and no node fits (PodScheduled=False, Unschedulable)."""
    SCHEDULER_ERROR = "scheduler-error"
    """PodScheduled=False with reason SchedulerError."""
    GATED = "gated"
    """Held by scheduling gates (quota or queue admission, e.g. Kueue)."""
    BOUND_NOT_STARTED = "bound-not-started"
    """Bound to a node but still Pending (image pull, volumes, sandbox...)."""


@dataclass(frozen=True, slots=True)
class PendingPodRecord:
    """What ktop keeps of a Pending pod."""

    namespace: str
    name: str
    created: float
    wait: PodWait
    node: str = ""
    message: str = ""
    """The PodScheduled condition's full message (FailedScheduling text)."""


@dataclass(frozen=True, slots=True)
class PendingPodUpserted:
    """A Pending pod was listed, added or changed."""

    at: float
    pod: PendingPodRecord


@dataclass(frozen=True, slots=True)
class PendingPodDeleted:
    """A pod stopped being Pending (started, deleted or failed)."""

    at: float
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class WarningEvent:
    """A Warning Event the triage paths use (FailedScheduling, FailedCreate, ...)."""

    at: float
    reason: str
    namespace: str
    object_kind: str
    object_name: str
    message: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class QuotaRecord:
    """A ResourceQuota's used and hard amounts, per resource (numbers in base units)."""

    namespace: str
    name: str
    items: tuple[tuple[str, float, float], ...]
    """``(resource, used, hard)`` for every resource with a hard limit."""


@dataclass(frozen=True, slots=True)
class QuotaUpserted:
    """A ResourceQuota was listed, added or changed."""

    at: float
    quota: QuotaRecord


@dataclass(frozen=True, slots=True)
class QuotaDeleted:
    """A ResourceQuota was deleted."""

    at: float
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class ApiserverIdentities:
    """The apiserver identity Leases in ``kube-system`` (one per running apiserver host)."""

    at: float
    identities: tuple[str, ...]


# --------------------------------------------------------------------------
# Source state


@dataclass(frozen=True, slots=True)
class SourceStarted:
    """A source describes itself: what it is and what it reads."""

    at: float
    kind: str
    """``demo``, ``live``, ``replay`` or ``bundle``."""
    context: str
    """The kube context, or the scenario name for the simulator."""
    detail: str = ""
    first_data_due_s: float | None = None
    """How long after this start every input's first data is due, from the cadences the
    source reads at (``ktop.model.snapshot.first_data_due_s``); None: the default
    (``FIRST_DATA_DUE_S``)."""


@dataclass(frozen=True, slots=True)
class FeedSynced:
    """A feed (e.g. ``nodes``, ``leases``, ``pending-pods``) finished its initial list."""

    at: float
    feed: str


@dataclass(frozen=True, slots=True)
class FeedFailed:
    """A feed could not be read; the data it feeds is unknown until it recovers."""

    at: float
    feed: str
    reason: str


@dataclass(frozen=True, slots=True)
class ObjectsSkipped:
    """Objects of a feed that could not be read (a field of the wrong type) were skipped.

    The rest of the list or watch was read; the skipped objects are missing from
    the data, which the feed's note says.
    """

    at: float
    feed: str
    skipped_total: int
    """Objects skipped on this feed since the source started."""
    example: str
    """What was wrong with one of them."""


@dataclass(frozen=True, slots=True)
class SelfCost:
    """What ktop itself costs the cluster, measured by the source over ``window_s``."""

    at: float
    window_s: float
    requests_per_s: float
    bytes_per_s: float
    open_watches: int
    requests_total: int
    bytes_total: int
    priority_level: str = ""
    """The APF priority level ktop's requests land in (from response headers)."""
    flow_schema: str = ""
    throttled_total: int = 0
    """Responses with code 429 ktop received."""
    by_destination: tuple[tuple[str, int, int], ...] = ()
    """``(destination, requests, bytes)`` since start, per apiserver instance, Prometheus
    and component endpoint."""


PACE_BEHIND_RATIO = 0.9
"""The simulator is behind when its clock moved at less than this share of the asked speed."""


@dataclass(frozen=True, slots=True)
class SimPace:
    """How fast the simulator's clock moved against the wall clock (``ktop demo
    --speed``): over the last ``window_s`` wall seconds it advanced ``effective_speed``
    simulated seconds per wall second, asked to advance ``speed``.
    """

    at: float
    speed: float
    """The asked speed (simulated seconds per wall second)."""
    effective_speed: float
    """The speed measured over the window (less than asked on a busy machine)."""
    window_s: float
    """The wall seconds measured over."""

    @property
    def behind(self) -> bool:
        """The clock moved at less than :data:`PACE_BEHIND_RATIO` of the asked speed."""
        return self.effective_speed < PACE_BEHIND_RATIO * self.speed


@dataclass(frozen=True, slots=True)
class ClockTick:
    """The source's clock advanced (lets ages grow when nothing else happens)."""

    at: float


@dataclass(frozen=True, slots=True)
class HistoryBackfilled:
    """Past values of history signals read from elsewhere (Prometheus range queries).

    ``series`` pairs a signal key (``ktop/model/signals.py``) with its
    ``(time, value)`` points; the model adds those older than its own history.
    """

    at: float
    series: tuple[tuple[str, tuple[tuple[float, float], ...]], ...]


@dataclass(frozen=True, slots=True)
class MetricsOnlyMode:
    """The source reads no node, Lease or pod objects (``--metrics-only``, or a global
    Prometheus without a kubeconfig): nodes and pending pods are known only from the
    control plane's metrics, which the panes say.
    """

    at: float
    why: str
    """What put the source in this mode (``--metrics-only``, ``no kubeconfig``)."""


@dataclass(frozen=True, slots=True)
class NodeReadinessByLabel:
    """Node readiness per value of one node label, from kube-state-metrics
    (``kube_node_status_condition`` joined with ``kube_node_labels``, through Prometheus).
    """

    at: float
    label: str
    """The node label (``topology.kubernetes.io/zone``, the rack label)."""
    rows: tuple[tuple[str, int, int], ...]
    """``(label value, Ready nodes, not-Ready nodes)``, by label value."""


@dataclass(frozen=True, slots=True)
class SloDayCounted:
    """The API call SLOs' calls on one apiserver instance over the day so far, counted by
    Prometheus (``increase`` of the SLI histogram's buckets since 00:00 UTC): a day of
    history that ktop, which keeps only its own run, cannot count itself.
    """

    at: float
    instance: str
    since: float
    """Where the counted span starts (00:00 UTC of the day of ``at``)."""
    counts: tuple[tuple[str, float, float], ...]
    """``(SLO kind, slow calls, calls)`` per SLO of ``ktop/model/slo.py``."""


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
    | FeedSynced
    | FeedFailed
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

FEED_NODES = "nodes"
FEED_LEASES = "leases"
FEED_PENDING_PODS = "pending-pods"
FEED_EVENTS = "events"
FEED_QUOTAS = "resourcequotas"
FEED_IDENTITIES = "apiserver-identities"
FEED_DISCOVERY = "apiserver-discovery"
"""Finding apiserver instances (EndpointSlices, Prometheus targets)."""
FEED_APF_NAMES = "apf-names"
"""FlowSchema and PriorityLevelConfiguration names (they label ktop's own cost)."""
FEED_PROMETHEUS = "prometheus-discovery"
"""Finding and connecting to Prometheus (``--prometheus auto`` or ``k8s://``)."""
FEED_PROMETHEUS_BACKFILL = "prometheus-backfill"
"""The one-time read of the last hour from Prometheus at start."""
FEED_SLO_DAY = "prometheus-slo-day"
"""The day so far's SLO calls per apiserver from Prometheus (:class:`SloDayCounted`)."""
FEED_KUBE_STATE_METRICS = "kube-state-metrics"
"""Node readiness per label from kube-state-metrics through Prometheus (metrics-only mode)."""
FEED_NODE_DETAILS = "node-details"
"""GETs of single not-Ready nodes."""
FEED_COMPONENTS = "component-discovery"
"""Finding control-plane pods and their leaders through the apiserver."""
FEED_CLOCK = "clock"
"""The source's clock ticks (they age not-Ready nodes and Lease lags, and carry ktop's
own cost); reported only when the loop that sends them fails."""
