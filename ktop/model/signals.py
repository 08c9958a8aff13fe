"""The registry of readings: every number ktop keeps a history of, charts and grades.

One table (:data:`SIGNALS`) defines each reading once: its id (the metric part of its
history key, also its JSON name), its title and unit, the label that tells its subjects
apart (priority level, instance, zone ...), the pure function that reads it from a
snapshot, the threshold it is graded by (from :mod:`ktop.model.limits`), the chart it
gets in its area's drill-down, and the PromQL that computes the same number from
Prometheus (empty when Prometheus does not hold it, e.g. node conditions read from the
API). Everything else derives from it: the history (:func:`read_signals`), the
Prometheus backfill, the trend charts and sparklines (``ktop/ui/render/trend.py``), the
colour of a reading on screen (:meth:`Reading.status`), the trend of a finding, and the
signals table of docs/panes.md.

A signal key is ``"<metric>|<subject>"`` (subject empty for cluster-wide
signals), a plain string so that history can be serialized as it is.
History is kept per aggregate (a priority level, an instance, a zone),
never per node.

How to add a reading: docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from ktop.model import limits
from ktop.model.area_metrics_only import split_zone_key
from ktop.model.events import Area, Component, PodWait
from ktop.model.grading import Severity, Threshold
from ktop.model.series import WINDOW_S
from ktop.model.snapshot import ClusterSnapshot, EtcdMemberRow
from ktop.model.values import Val, sum_vals

QUANTILE = 0.99
"""The quantile of every ``p99`` signal."""


Combine = Literal["sum", "max"]
Extract = Callable[[ClusterSnapshot], Iterable[tuple[str, Val]]]
"""Reads a reading from a snapshot: ``(subject, value)`` for every subject it has."""


@dataclass(frozen=True, slots=True)
class Chart:
    """A reading's chart in its area's drill-down (and sparkline in its overview panel)."""

    combine: Combine
    """How its subjects become one line: summed, or the worst (largest) one."""
    title: str
    rank: int
    """Its place among the area's charts, most telling first (lowest first)."""


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading: what it is, how it is read, graded and charted, and how Prometheus
    computes it.

    ``promql`` has two placeholders: ``{job}`` (the component's job regular
    expression) and ``{w}`` (the observation window in seconds). It groups
    by ``subject_label`` (or by nothing for cluster-wide signals). Rates
    are ``rate(counter[w])`` and quantiles ``histogram_quantile(q, sum by
    (subject, le) (rate(bucket[w])))``: the same as ktop's own windowed math
    (``ktop/model/series.py``), see docs/panes.md.
    """

    metric: str
    """The reading's id: the metric part of its history keys and its JSON name."""
    label: str
    """Its title where it is shown (a chart's axis, a sparkline's label)."""
    unit: str
    component: Component | None
    subject_label: str = ""
    promql: str = ""
    higher_is_worse: bool = True
    subject_of: Callable[[str], str] | None = None
    """Turns the value of ``subject_label`` in Prometheus' answer into the subject the
    snapshot uses (None: the same string)."""
    area: Area | None = None
    extract: Extract | None = None
    threshold: Threshold | None = None
    """What grades it (the screen's colour, a finding's trend); None: it is context."""
    chart: Chart | None = None

    def status(self, v: Val) -> Severity:
        """How ``v`` grades: by the reading's threshold; unknown is never OK (a value
        with nothing to measure is); a reading without a threshold is OK when known.
        """
        if self.threshold is not None:
            return self.threshold.grade_val(v)
        if v.value is None and not v.empty:
            return Severity.UNKNOWN
        return Severity.OK


def _rate(expr: str, by: str) -> str:
    return f"sum by ({by}) (rate({expr}[{{w}}s]))"


def _p99(family: str, by: str, extra: str = "") -> str:
    sel = f'{family}_bucket{{{{job=~"{{job}}"{extra}}}}}'
    return f"histogram_quantile({QUANTILE}, sum by ({by}, le) (rate({sel}[{{w}}s])))"


def _sel(name: str, extra: str = "") -> str:
    return f'{name}{{{{job=~"{{job}}"{extra}}}}}'


_WATCHES = "sum by (instance) (" + _sel("apiserver_longrunning_requests", ',verb="WATCH"') + ")"
_REQ_BY_INST = "sum by (instance) (rate(" + _sel("apiserver_request_total") + "[{w}s]))"
_REQUEST_SKEW = f"max({_REQ_BY_INST}) / avg({_REQ_BY_INST})"
_WATCH_SKEW = f"max({_WATCHES}) / avg({_WATCHES})"
_DB_QUOTA = (
    "sum by (instance) ("
    + _sel("etcd_mvcc_db_total_size_in_bytes")
    + ") / sum by (instance) ("
    + _sel("etcd_server_quota_backend_bytes")
    + ")"
)
_FRAGMENTATION = (
    "1 - sum by (instance) ("
    + _sel("etcd_mvcc_db_total_size_in_use_in_bytes")
    + ") / sum by (instance) ("
    + _sel("etcd_mvcc_db_total_size_in_bytes")
    + ")"
)
# only the leading controller-manager exports the zone gauges: max, not sum, so that a
# hand-over (two leaders' series for a moment) does not count a zone twice
_ZONE_UNHEALTHY = "max by (zone) (" + _sel("node_collector_unhealthy_nodes_in_zone") + ")"


def _zone_of(zone_key: str) -> str:
    """The zone of the node lifecycle controller's ``region:\\x00:zone`` label."""
    return split_zone_key(zone_key)[1]


_API = Component.APISERVER
_ETCD = Component.ETCD
_SCHED = Component.SCHEDULER
PL = "priority_level"
INST = "instance"

# Extractors: how each reading is read from a snapshot (pure, one per shape of area).


def _per_level(attr: str) -> Extract:
    def read(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
        for row in s.apf.levels:
            yield row.priority_level, getattr(row, attr)

    return read


def _per_instance(attr: str) -> Extract:
    def read(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
        for row in s.apiservers.instances:
            yield row.instance, getattr(row, attr)

    return read


def _inflight(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    for a in s.apiservers.instances:
        yield a.instance, sum_vals([a.inflight_readonly, a.inflight_mutating])


def _whole(read: Callable[[ClusterSnapshot], Val]) -> Extract:
    """A cluster-wide reading (its subject is empty)."""
    return lambda s: (("", read(s)),)


def _per_member(attr: str) -> Extract:
    def read(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
        for m in s.etcd.members:
            yield m.instance, getattr(m, attr)

    return read


def reclaimable_bytes(m: EtcdMemberRow) -> Val:
    """What a defragmentation would give back: the database's size minus what it uses."""
    size, in_use = m.db_size_bytes.value, m.db_in_use_bytes.value
    if size is None or in_use is None:
        return Val.unknown(m.db_size_bytes.reason or m.db_in_use_bytes.reason or "db size unknown")
    return Val.of(max(size - in_use, 0.0))


def _reclaimable(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    for m in s.etcd.members:
        yield m.instance, reclaimable_bytes(m)


def _queues(s: ClusterSnapshot) -> Iterable[tuple[str, Val]]:
    return s.scheduler.queue.items()


def _attempts(s: ClusterSnapshot) -> Iterable[tuple[str, Val]]:
    return s.scheduler.attempts_per_s.items()


def _reason_pods(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    if s.scheduler.pods_known:
        for reason in s.scheduler.reasons[:TOP_REASONS]:
            yield reason.reason, Val.of(reason.pods)


def _waiting_pods(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    if s.scheduler.pods_known:
        for wait in PodWait:
            yield wait.value, Val.of(s.scheduler.pending_by_wait.get(wait, 0))


def _zones_unhealthy(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    n = s.nodes
    if n.nodes_known:
        for z in n.zones:
            yield z.zone, Val.of(z.unhealthy)
    elif n.metrics_only is not None:
        # metrics-only: the node lifecycle controller's own count per zone
        for zh in n.metrics_only.zones:
            yield zh.zone, Val.of(zh.unhealthy)


def _per_zone(attr: str) -> Extract:
    def read(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
        if s.nodes.nodes_known:
            for z in s.nodes.zones:
                yield z.zone, Val.of(getattr(z, attr))

    return read


def _lease_lag(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    if s.nodes.nodes_known:
        yield "", s.nodes.lease_lag_p99_s


SIGNALS: tuple[Reading, ...] = (
    Reading(
        "apf.in_queue",
        "in queue",
        "",
        _API,
        PL,
        f"sum by ({PL}) ({_sel('apiserver_flowcontrol_current_inqueue_requests')})",
        area=Area.APF,
        extract=_per_level("in_queue"),
        threshold=limits.APF_IN_QUEUE,
        chart=Chart("sum", "in queue, all priority levels", 2),
    ),
    Reading(
        "apf.executing",
        "executing",
        "",
        _API,
        PL,
        f"sum by ({PL}) ({_sel('apiserver_flowcontrol_current_executing_requests')})",
        area=Area.APF,
        extract=_per_level("executing"),
        chart=Chart("sum", "executing, all priority levels", 4),
    ),
    Reading(
        "apf.rejected_per_s",
        "rejected/s",
        "/s",
        _API,
        PL,
        _rate(_sel("apiserver_flowcontrol_rejected_requests_total"), PL),
        area=Area.APF,
        extract=_per_level("rejected_total_per_s"),
        threshold=limits.APF_REJECTIONS,
        chart=Chart("sum", "rejected/s, all priority levels", 1),
    ),
    Reading(
        "apf.wait_p99_s",
        "wait p99",
        "s",
        _API,
        PL,
        _p99("apiserver_flowcontrol_request_wait_duration_seconds", PL),
        area=Area.APF,
        extract=_per_level("wait_p99_s"),
        threshold=limits.APF_WAIT_P99,
        chart=Chart("max", "wait p99, worst priority level", 3),
    ),
    Reading(
        "api.requests_per_s",
        "requests/s",
        "/s",
        _API,
        INST,
        _rate(_sel("apiserver_request_total"), INST),
        area=Area.APISERVERS,
        extract=_per_instance("requests_per_s"),
        chart=Chart("sum", "requests/s, all instances", 1),
    ),
    Reading(
        "api.inflight",
        "inflight",
        "",
        _API,
        INST,
        f"sum by ({INST}) ({_sel('apiserver_current_inflight_requests')})",
        area=Area.APISERVERS,
        extract=_inflight,
        chart=Chart("sum", "inflight, all instances", 3),
    ),
    Reading(
        "api.watches",
        "watches",
        "",
        _API,
        INST,
        _WATCHES,
        area=Area.APISERVERS,
        extract=_per_instance("watches"),
        chart=Chart("sum", "watches, all instances", 4),
    ),
    Reading(
        "api.cpu_cores",
        "CPU cores",
        "",
        _API,
        INST,
        _rate(_sel("process_cpu_seconds_total"), INST),
        area=Area.APISERVERS,
        extract=_per_instance("cpu_cores"),
        chart=Chart("max", "CPU cores, busiest instance", 5),
    ),
    Reading(
        "api.rss_bytes",
        "memory",
        "B",
        _API,
        INST,
        f"sum by ({INST}) ({_sel('process_resident_memory_bytes')})",
        area=Area.APISERVERS,
        extract=_per_instance("rss_bytes"),
        chart=Chart("max", "memory, largest instance", 6),
    ),
    Reading(
        "api.throttled_per_s",
        "429/s",
        "/s",
        _API,
        INST,
        _rate(_sel("apiserver_request_total", ',code="429"'), INST),
        area=Area.APISERVERS,
        extract=_per_instance("throttled_per_s"),
        threshold=limits.API_THROTTLED,
        chart=Chart("sum", "429/s, all instances", 2),
    ),
    Reading(
        "api.terminations_per_s",
        "terminated/s",
        "/s",
        _API,
        INST,
        _rate(_sel("apiserver_request_terminations_total"), INST),
        area=Area.APISERVERS,
        extract=_per_instance("terminations_per_s"),
        threshold=limits.API_TERMINATIONS,
    ),
    Reading(
        "api.request_skew",
        "request skew",
        "x",
        _API,
        "",
        _REQUEST_SKEW,
        area=Area.APISERVERS,
        extract=_whole(lambda s: s.apiservers.request_skew),
        threshold=limits.API_SKEW,
    ),
    Reading(
        "api.watch_skew",
        "watch skew",
        "x",
        _API,
        "",
        _WATCH_SKEW,
        area=Area.APISERVERS,
        extract=_whole(lambda s: s.apiservers.watch_skew),
        threshold=limits.API_SKEW,
    ),
    Reading(
        "etcd.fsync_p99_s",
        "WAL fsync p99",
        "s",
        _ETCD,
        INST,
        _p99("etcd_disk_wal_fsync_duration_seconds", INST),
        area=Area.ETCD,
        extract=_per_member("wal_fsync_p99_s"),
        threshold=limits.ETCD_FSYNC_P99,
        chart=Chart("max", "WAL fsync p99, worst member", 1),
    ),
    Reading(
        "etcd.commit_p99_s",
        "commit p99",
        "s",
        _ETCD,
        INST,
        _p99("etcd_disk_backend_commit_duration_seconds", INST),
        area=Area.ETCD,
        extract=_per_member("backend_commit_p99_s"),
        threshold=limits.ETCD_COMMIT_P99,
        chart=Chart("max", "backend commit p99, worst member", 2),
    ),
    Reading(
        "etcd.proposals_pending",
        "proposals pending",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({_sel('etcd_server_proposals_pending')})",
        area=Area.ETCD,
        extract=_per_member("proposals_pending"),
        chart=Chart("sum", "proposals pending, all members", 3),
    ),
    Reading(
        "etcd.db_size_bytes",
        "db size",
        "B",
        _ETCD,
        INST,
        f"sum by ({INST}) ({_sel('etcd_mvcc_db_total_size_in_bytes')})",
        area=Area.ETCD,
        extract=_per_member("db_size_bytes"),
        chart=Chart("max", "db size, largest member", 4),
    ),
    Reading(
        "etcd.is_leader",
        "leader",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({_sel('etcd_server_is_leader')})",
        higher_is_worse=False,
        area=Area.ETCD,
        extract=_per_member("is_leader"),
    ),
    Reading(
        "etcd.proposals_failed_per_s",
        "failed proposals/s",
        "/s",
        _ETCD,
        INST,
        _rate(_sel("etcd_server_proposals_failed_total"), INST),
        area=Area.ETCD,
        extract=_per_member("proposals_failed_per_s"),
        threshold=limits.ETCD_FAILED_PROPOSALS,
    ),
    Reading(
        "etcd.db_quota_ratio",
        "db / quota",
        "x",
        _ETCD,
        INST,
        _DB_QUOTA,
        area=Area.ETCD,
        extract=_per_member("db_quota_ratio"),
        threshold=limits.ETCD_QUOTA,
    ),
    Reading(
        "etcd.fragmentation",
        "fragmentation",
        "x",
        _ETCD,
        INST,
        _FRAGMENTATION,
        area=Area.ETCD,
        extract=_per_member("fragmentation"),
        threshold=limits.ETCD_FRAGMENTATION,
    ),
    Reading(
        "etcd.reclaimable_bytes",
        "reclaimable",
        "B",
        _ETCD,
        INST,
        "sum by (instance) ("
        + _sel("etcd_mvcc_db_total_size_in_bytes")
        + " - "
        + _sel("etcd_mvcc_db_total_size_in_use_in_bytes")
        + ")",
        area=Area.ETCD,
        extract=_reclaimable,
    ),
    Reading(
        "etcd.peer_rtt_p99_s",
        "peer round-trip p99",
        "s",
        _ETCD,
        INST,
        _p99("etcd_network_peer_round_trip_time_seconds", INST),
        area=Area.ETCD,
        extract=_per_member("peer_rtt_p99_s"),
        threshold=limits.ETCD_PEER_RTT_P99,
    ),
    Reading(
        "etcd.has_leader",
        "has leader",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({_sel('etcd_server_has_leader')})",
        higher_is_worse=False,
        area=Area.ETCD,
        extract=_per_member("has_leader"),
    ),
    Reading(
        "sched.pending",
        "pending",
        "",
        _SCHED,
        "queue",
        f"sum by (queue) ({_sel('scheduler_pending_pods')})",
        area=Area.SCHEDULER,
        extract=_queues,
        chart=Chart("sum", "pending pods, all queues", 1),
    ),
    Reading(
        "sched.attempts_per_s",
        "attempts/s",
        "/s",
        _SCHED,
        "result",
        _rate(_sel("scheduler_schedule_attempts_total"), "result"),
        area=Area.SCHEDULER,
        extract=_attempts,
        chart=Chart("sum", "scheduling attempts/s", 3),
    ),
    Reading(
        "sched.reason_pods",
        "pods blocked",
        "",
        None,
        "reason",
        area=Area.SCHEDULER,
        extract=_reason_pods,
        chart=Chart("max", "pods blocked by the top reason", 2),
    ),
    Reading(
        "sched.waiting_pods",
        "pending pods",
        "",
        None,
        "wait",
        area=Area.SCHEDULER,
        extract=_waiting_pods,
    ),
    Reading(
        "nodes.unhealthy",
        "not Ready",
        "",
        Component.CONTROLLER_MANAGER,
        "zone",
        _ZONE_UNHEALTHY,
        subject_of=_zone_of,
        area=Area.NODES,
        extract=_zones_unhealthy,
        chart=Chart("sum", "not Ready nodes (NotReady + Unknown), all zones", 1),
    ),
    Reading(
        "nodes.not_ready",
        "NotReady",
        "",
        None,
        "zone",
        area=Area.NODES,
        extract=_per_zone("not_ready"),
        chart=Chart("sum", "NotReady nodes, all zones", 2),
    ),
    Reading(
        "nodes.unknown",
        "Unknown",
        "",
        None,
        "zone",
        area=Area.NODES,
        extract=_per_zone("unknown"),
        chart=Chart("sum", "Unknown nodes, all zones", 3),
    ),
    Reading(
        "nodes.lease_lag_p99_s",
        "Lease lag p99",
        "s",
        None,
        area=Area.NODES,
        extract=_lease_lag,
        threshold=limits.NODE_LEASE_LAG_P99,
        chart=Chart("max", "Lease lag p99", 4),
    ),
)
"""Every signal with a history, in display order."""

BY_METRIC: dict[str, Reading] = {s.metric: s for s in SIGNALS}
"""Every reading by its id."""


def area_charts(area: Area) -> tuple[Reading, ...]:
    """The readings an area charts, most telling first."""
    charted = [r for r in SIGNALS if r.area is area and r.chart is not None]
    return tuple(sorted(charted, key=lambda r: r.chart.rank if r.chart else 0))


TOP_REASONS = 5
"""How many FailedScheduling reasons get a history (the most pods first)."""


def key(metric: str, subject: str = "") -> str:
    """The history key of one signal of one subject."""
    return f"{metric}|{subject}"


def split_key(signal_key: str) -> tuple[str, str]:
    """``(metric, subject)`` of a history key."""
    metric, _, subject = signal_key.partition("|")
    return metric, subject


def _known(items: Iterator[tuple[str, Val]]) -> Iterator[tuple[str, float]]:
    for k, v in items:
        if v.value is not None:
            yield k, v.value
        elif v.empty:
            yield k, 0.0


def read_signals(s: ClusterSnapshot) -> dict[str, float]:
    """Every signal's current value in a snapshot (unknown values are left out;
    values with nothing to measure, such as an idle level's wait, count as 0).
    """
    return dict(_known(_pairs(s)))


def _pairs(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    for reading in SIGNALS:
        if reading.extract is not None:
            for subject, v in reading.extract(s):
                yield key(reading.metric, subject), v


def markdown_table(window_s: float = WINDOW_S) -> str:
    """The signals table of docs/panes.md (from :data:`SIGNALS`; ``make docs`` writes it)."""
    rows = [
        f"| signal | per | unit | PromQL used for the backfill (window {window_s:.0f} s) |",
        "|---|---|---|---|",
    ]
    for s in SIGNALS:
        per = s.subject_label or "cluster"
        if s.promql:
            job = "<job>" if s.component is None else f"<{s.component.value} job>"
            query = "`" + s.promql.format(job=job, w=int(window_s)).replace("|", "\\|") + "`"
        else:
            query = "not in Prometheus (read from the API): history starts with ktop"
        rows.append(f"| `{s.metric}` {s.label} | {per} | {s.unit or '-'} | {query} |")
    return "\n".join(rows)
