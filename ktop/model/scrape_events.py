"""Events of the control plane's endpoints: metrics scrapes and the APF debug dumps.

Plain data only, as every event (:mod:`ktop.model.events`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.model.scrape_targets import Sample, Target


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
