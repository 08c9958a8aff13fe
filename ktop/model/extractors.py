"""How each reading is read from a snapshot: pure functions, one per shape of area, each
giving ``(subject, value)`` for every subject it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter

from ktop.model.area_metrics_only import split_zone_key
from ktop.model.events import PodWait
from ktop.model.reading import Extract, Reading
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_etcd import EtcdMemberRow
from ktop.model.snapshot_nodes import ZoneHealth
from ktop.model.values import Val, sum_vals

TOP_REASONS = 5
"""How many FailedScheduling reasons get a history (the most pods first)."""


def zone_of(zone_key: str) -> str:
    """The zone of the node lifecycle controller's ``region:\\x00:zone`` label."""
    return split_zone_key(zone_key)[1]


def per_level(attr: str) -> Extract:
    """Each priority level's ``attr``."""

    def read(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
        for row in s.apf.levels:
            yield row.priority_level, getattr(row, attr)

    return read


def per_instance(attr: str) -> Extract:
    """Each apiserver instance's ``attr``."""

    def read(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
        for row in s.apiservers.instances:
            yield row.instance, getattr(row, attr)

    return read


def slo_ratio(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """Each instance's worst API call latency SLO: p99 / limit."""
    for row in s.apiservers.instances:
        worst = row.worst_slo
        yield row.instance, worst.ratio if worst is not None else Val.unknown("no SLI histogram")


def slo_budget(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """Each instance's most burned API call SLO error budget (today, or since ktop's first
    scrape: ``ktop/model/slo_budget.py``); the first SLO's reason when none is known.
    """
    for row in s.apiservers.instances:
        worst = row.worst_budget
        if worst is not None:
            yield row.instance, worst.budget_burned
        else:
            yield (
                row.instance,
                row.slos[0].budget_burned if row.slos else Val.unknown("no SLI histogram"),
            )


def inflight(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """Each instance's requests in flight, read-only and mutating."""
    for a in s.apiservers.instances:
        yield a.instance, sum_vals([a.inflight_readonly, a.inflight_mutating])


def whole(read: Callable[[ClusterSnapshot], Val]) -> Extract:
    """A cluster-wide reading (its subject is empty)."""
    return lambda s: (("", read(s)),)


@dataclass(frozen=True, slots=True)
class PerMember:
    """The extractor of a per-member etcd reading: ``of`` reads one member's value."""

    of: Callable[[EtcdMemberRow], Val]

    def __call__(self, s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
        """``(instance, value)`` of every member of a snapshot."""
        for m in s.etcd.members:
            yield m.instance, self.of(m)


def per_member(attr: str) -> PerMember:
    """Each etcd member's ``attr``."""
    return PerMember(attrgetter(attr))


def member_value(reading: Reading, m: EtcdMemberRow) -> Val:
    """A per-member reading's value for one member."""
    assert isinstance(reading.extract, PerMember), reading.metric
    return reading.extract.of(m)


def reclaimable_bytes(m: EtcdMemberRow) -> Val:
    """What a defragmentation would give back: the database's size minus what it uses."""
    size, in_use = m.db_size_bytes.value, m.db_in_use_bytes.value
    if size is None or in_use is None:
        return Val.unknown(m.db_size_bytes.reason or m.db_in_use_bytes.reason or "db size unknown")
    return Val.of(max(size - in_use, 0.0))


reclaimable = PerMember(reclaimable_bytes)
"""Each member's reclaimable bytes."""


def queues(s: ClusterSnapshot) -> Iterable[tuple[str, Val]]:
    """Pods in each scheduler queue."""
    return s.scheduler.queue.items()


def attempts(s: ClusterSnapshot) -> Iterable[tuple[str, Val]]:
    """Scheduling attempts per second by result."""
    return s.scheduler.attempts_per_s.items()


def reason_pods(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """Pods per FailedScheduling reason, the most common first."""
    if s.scheduler.pods_known:
        for reason in s.scheduler.reasons[:TOP_REASONS]:
            yield reason.reason, Val.of(reason.pods)


def waiting_pods(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """Pending pods by what they wait for."""
    if s.scheduler.pods_known:
        for wait in PodWait:
            yield wait.value, Val.of(s.scheduler.pending_by_wait.get(wait, 0))


def _controller_zones(s: ClusterSnapshot) -> tuple[ZoneHealth, ...]:
    """The node lifecycle controller's zones when ktop's own are not known: in
    metrics-only mode, or while ktop's node list is under way.
    """
    n = s.nodes
    if n.metrics_only is not None:
        return n.metrics_only.zones
    return n.interim.zones if n.interim is not None else ()


def zones_unhealthy(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """Unhealthy nodes per zone (the lifecycle controller's count in metrics-only mode,
    and while ktop's node list is under way).
    """
    n = s.nodes
    if n.nodes_known:
        for z in n.zones:
            yield z.zone, Val.of(z.unhealthy)
    else:
        # the node lifecycle controller's own count per zone
        for zh in _controller_zones(s):
            yield zh.zone, Val.of(zh.unhealthy)


def uptime(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """Each apiserver instance's seconds since its process started (a drop is a restart).

    Kept as an age, not as the start time: history values are 4-byte floats, whose step
    at today's Unix time is two minutes, while an age of a year is still exact to a second.
    """
    for row in s.apiservers.instances:
        start = row.start_time.value
        yield row.instance, Val.of(max(0.0, s.at - start)) if start is not None else row.start_time


def zones_size(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """Nodes per zone (the lifecycle controller's count in metrics-only mode, and while
    ktop's node list is under way).
    """
    n = s.nodes
    if n.nodes_known:
        for z in n.zones:
            yield z.zone, Val.of(z.total)
    else:
        for zh in _controller_zones(s):
            yield zh.zone, Val.of(zh.size)


def per_zone(attr: str) -> Extract:
    """Each zone's ``attr`` (when the nodes are known)."""

    def read(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
        if s.nodes.nodes_known:
            for z in s.nodes.zones:
                yield z.zone, Val.of(getattr(z, attr))

    return read


def lease_lag(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    """The p99 of node Lease lag."""
    if s.nodes.nodes_known:
        yield "", s.nodes.lease_lag_p99_s
