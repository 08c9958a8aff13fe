"""Events of the source itself: what it is, how its feeds fare, its clock and pace, what
it costs the cluster, and what it reads from Prometheus besides scrapes.

Plain data only, as every event (:mod:`ktop.model.events`).
"""

from __future__ import annotations

from dataclasses import dataclass


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
class ProviderDetected:
    """Who runs the control plane (``ktop/model/providers.py``), and the fact that said
    so (or ``--provider``): where the components are read from follows from it.
    """

    at: float
    provider: str
    """A :class:`~ktop.model.providers.Provider` value."""
    because: str


@dataclass(frozen=True, slots=True)
class FeedSynced:
    """A feed (e.g. ``nodes``, ``leases``, ``pending-pods``) finished its initial list."""

    at: float
    feed: str


@dataclass(frozen=True, slots=True)
class FeedProgress:
    """A feed's initial list is under way: a page arrived (until its ``FeedSynced``)."""

    at: float
    feed: str
    listed: int
    """Objects listed so far."""
    expected: int | None = None
    """Objects listed so far plus the apiserver's ``remainingItemCount`` (an estimate:
    the list goes on while objects come and go); None when the apiserver does not say."""


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
