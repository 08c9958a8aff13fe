"""Events of Kubernetes objects, in compact form: nodes, their Leases, pending pods,
Warning Events, ResourceQuotas and the apiserver identity Leases (converters live beside
the sources).

Plain data only, as every event (:mod:`ktop.model.events`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
    NOT_BOUND = "not-bound"
    """Not bound to a node, and whether the scheduler tried is not read: the pod was
    listed as a Table row without its object (past the first page of a long list of
    pending pods), which says neither its PodScheduled condition nor its message."""


ROW_NAMESPACE = "?"
"""The namespace of a pending pod listed as a Table row without its object (a row names
the pod, not its namespace); the n-th row of the same name in a list is ``?n`` (n > 1),
so that rows of one name in several namespaces stay apart."""


def row_namespace(ordinal: int) -> str:
    """:data:`ROW_NAMESPACE` for the ``ordinal``-th row (from 1) of a name in a list."""
    return ROW_NAMESPACE if ordinal <= 1 else f"{ROW_NAMESPACE}{ordinal}"


def is_row(namespace: str) -> bool:
    """Whether a pending pod's namespace is :func:`row_namespace`'s (its object not read)."""
    return namespace.startswith(ROW_NAMESPACE)


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
