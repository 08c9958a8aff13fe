"""The scheduler area's snapshot (see :mod:`ktop.model.snapshot`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ktop.model.events import PendingPodRecord, PodWait
from ktop.model.values import Val

# --------------------------------------------------------------------------
# scheduler


QUEUES = ("active", "backoff", "unschedulable", "gated")
"""The scheduler's queues (``scheduler_pending_pods{queue}``), in the order they are shown."""


@dataclass(frozen=True, slots=True)
class ReasonCount:
    """One FailedScheduling reason and how many pending pods it blocks."""

    reason: str
    pods: int
    nodes: int
    """The most nodes any one of those pods was refused by for this reason."""
    sample_pods: tuple[str, ...]
    """A few ``namespace/name`` examples."""
    wording: str = ""
    """The reason as the scheduler words it (the first wording seen for this key)."""


@dataclass(frozen=True, slots=True)
class QuotaUsage:
    """One resource of a ResourceQuota close to (or at) its hard limit."""

    namespace: str
    name: str
    resource: str
    used: float
    hard: float

    @property
    def ratio(self) -> float:
        """Used / hard (1.0 and above: new pods asking for it are refused)."""
        return self.used / self.hard if self.hard else float("inf")


@dataclass(frozen=True, slots=True)
class StartFailure:
    """Pods bound to a node but not started, sharing the cause of their latest Warning."""

    category: str
    """``image pull``, ``sandbox / CNI``, ``volume attach / mount`` or ``other``."""
    reason: str
    """The Warning event's reason (``FailedCreatePodSandBox``, ``FailedMount`` ...)."""
    pods: int
    nodes: tuple[tuple[str, int], ...]
    """The nodes with most such pods, with their pod counts."""
    node_count: int
    zones: tuple[tuple[str, int], ...]
    """Pods per zone (empty zone name when the node has no zone label or is unknown)."""
    sample_pods: tuple[str, ...]


NO_APISERVER_METRICS = Val.unknown("no apiserver metrics")


@dataclass(frozen=True, slots=True)
class SchedulerSnapshot:
    """Pending pods and why."""

    queue: Mapping[str, Val]
    """``scheduler_pending_pods`` by queue: active, backoff, unschedulable, gated."""
    attempts_per_s: Mapping[str, Val]
    """``scheduler_schedule_attempts_total`` rate by result."""
    pending_by_wait: Mapping[PodWait, int]
    """Pending pods seen through the API by why they wait."""
    reasons: tuple[ReasonCount, ...]
    """Parsed FailedScheduling reasons, most pods first."""
    quota_rejections: int
    """Recent FailedCreate events for exceeded quota (pods never created)."""
    oldest_pending_s: Val
    pods_known: bool
    """False until the pending-pods feed has synced."""
    pods_reason: str = ""
    metrics_reason: str = ""
    """Why scheduler metrics are unknown (empty when a scheduler was scraped)."""
    quotas_near_limit: tuple[QuotaUsage, ...] = ()
    """ResourceQuota resources at or above 90 % of their hard limit, fullest first."""
    quotas_known: bool = False
    """False when ResourceQuotas are not read by this source."""
    start_failures: tuple[StartFailure, ...] = ()
    """Bound-but-not-started pods grouped by the cause of their latest start Warning."""
    events_known: bool = False
    """False when Warning events are not read by this source."""
    metrics_only: MetricsOnlyScheduler | None = None
    """Set in metrics-only mode: per-plugin counts instead of the pods' own messages."""
    pending_pods: tuple[PendingPodRecord, ...] = ()
    """Every Pending pod seen through the API, the oldest first (shared, not copied)."""
    pending_rows: int = 0
    """Pending pods listed as Table rows without their objects (a long list past its first
    page): their wait class is one of gated, bound-not-started or not-bound, their
    namespace and PodScheduled message are not read, so the reasons are those of the pods
    read whole."""
    bindings_per_s: Val = NO_APISERVER_METRICS
    """Pods bound per second, as the apiservers count them (``POST pods/binding`` answered
    201): the scheduler's throughput, readable where the scheduler itself is not."""

    def unschedulable(self) -> int:
        """Unschedulable pods: counted when every unbound pod was read whole; else the
        count among those read whole plus the not-bound rows in the same proportion (the
        pods read whole are the list's first page: a sample, not a choice).
        """
        n = self.pending_by_wait.get(PodWait.UNSCHEDULABLE, 0)
        rows = self.pending_by_wait.get(PodWait.NOT_BOUND, 0)
        if not rows or not n:
            return n
        unbound_read = n + sum(
            self.pending_by_wait.get(w, 0) for w in (PodWait.SCHEDULER_ERROR, PodWait.NOT_ATTEMPTED)
        )
        return n + round(rows * n / unbound_read)

    @property
    def unschedulable_estimated(self) -> bool:
        """Whether :meth:`unschedulable` is an estimate (not-bound rows were not read)."""
        return bool(self.pending_by_wait.get(PodWait.NOT_BOUND, 0))


@dataclass(frozen=True, slots=True)
class MetricsOnlyScheduler:
    """The scheduler pane in metrics-only mode."""

    why: str
    unschedulable_by_plugin: tuple[tuple[str, Val], ...]
    """``scheduler_unschedulable_pods`` per plugin, most pods first."""
    plugins_reason: str
    cannot_know: tuple[str, ...]
