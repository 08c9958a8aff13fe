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

from collections.abc import Iterator

from ktop.model import limits
from ktop.model.events import Area, Component
from ktop.model.extractors import (
    attempts,
    inflight,
    lease_lag,
    per_instance,
    per_level,
    per_member,
    per_zone,
    queues,
    reason_pods,
    reclaimable,
    slo_budget,
    slo_ratio,
    uptime,
    waiting_pods,
    whole,
    zone_of,
    zones_size,
    zones_unhealthy,
)
from ktop.model.promql import (
    DB_QUOTA,
    FRAGMENTATION,
    REQUEST_SKEW,
    UPTIME,
    WATCH_SKEW,
    WATCHES,
    ZONE_SIZE,
    ZONE_UNHEALTHY,
    p99_by,
    rate_by,
    select,
)
from ktop.model.reading import Chart, Reading, key
from ktop.model.series import WINDOW_S
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.values import Val

_API = Component.APISERVER
_ETCD = Component.ETCD
_SCHED = Component.SCHEDULER
PL = "priority_level"
INST = "instance"


SIGNALS: tuple[Reading, ...] = (
    Reading(
        "apf.in_queue",
        "in queue",
        "",
        _API,
        PL,
        f"sum by ({PL}) ({select('apiserver_flowcontrol_current_inqueue_requests')})",
        area=Area.APF,
        extract=per_level("in_queue"),
        threshold=limits.APF_IN_QUEUE,
        chart=Chart("sum", "in queue, all priority levels", 2),
    ),
    Reading(
        "apf.executing",
        "executing",
        "",
        _API,
        PL,
        f"sum by ({PL}) ({select('apiserver_flowcontrol_current_executing_requests')})",
        area=Area.APF,
        extract=per_level("executing"),
        chart=Chart("sum", "executing, all priority levels", 4),
    ),
    Reading(
        "apf.rejected_per_s",
        "rejected/s",
        "/s",
        _API,
        PL,
        rate_by(select("apiserver_flowcontrol_rejected_requests_total"), PL),
        area=Area.APF,
        extract=per_level("rejected_total_per_s"),
        threshold=limits.APF_REJECTIONS,
        chart=Chart("sum", "rejected/s, all priority levels", 1),
    ),
    Reading(
        "apf.wait_p99_s",
        "wait p99",
        "s",
        _API,
        PL,
        p99_by("apiserver_flowcontrol_request_wait_duration_seconds", PL),
        area=Area.APF,
        extract=per_level("wait_p99_s"),
        threshold=limits.APF_WAIT_P99,
        chart=Chart("max", "wait p99, worst priority level", 3),
    ),
    Reading(
        "api.requests_per_s",
        "requests/s",
        "/s",
        _API,
        INST,
        rate_by(select("apiserver_request_total"), INST),
        area=Area.APISERVERS,
        extract=per_instance("requests_per_s"),
        chart=Chart("sum", "requests/s, all instances", 1),
    ),
    Reading(
        "api.inflight",
        "inflight",
        "",
        _API,
        INST,
        f"sum by ({INST}) ({select('apiserver_current_inflight_requests')})",
        area=Area.APISERVERS,
        extract=inflight,
        chart=Chart("sum", "inflight, all instances", 3),
    ),
    Reading(
        "api.watches",
        "watches",
        "",
        _API,
        INST,
        WATCHES,
        area=Area.APISERVERS,
        extract=per_instance("watches"),
        chart=Chart("sum", "watches, all instances", 4),
    ),
    Reading(
        "api.cpu_cores",
        "CPU cores",
        "",
        _API,
        INST,
        rate_by(select("process_cpu_seconds_total"), INST),
        area=Area.APISERVERS,
        extract=per_instance("cpu_cores"),
        chart=Chart("max", "CPU cores, busiest instance", 5),
    ),
    Reading(
        "api.rss_bytes",
        "memory",
        "B",
        _API,
        INST,
        f"sum by ({INST}) ({select('process_resident_memory_bytes')})",
        area=Area.APISERVERS,
        extract=per_instance("rss_bytes"),
        chart=Chart("max", "memory, largest instance", 6),
    ),
    Reading(
        "api.throttled_per_s",
        "429/s",
        "/s",
        _API,
        INST,
        rate_by(select("apiserver_request_total", ',code="429"'), INST),
        area=Area.APISERVERS,
        extract=per_instance("throttled_per_s"),
        threshold=limits.API_THROTTLED,
        chart=Chart("sum", "429/s, all instances", 2),
    ),
    Reading(
        "api.terminations_per_s",
        "terminated/s",
        "/s",
        _API,
        INST,
        rate_by(select("apiserver_request_terminations_total"), INST),
        area=Area.APISERVERS,
        extract=per_instance("terminations_per_s"),
        threshold=limits.API_TERMINATIONS,
    ),
    Reading(
        "api.uptime_s",
        "uptime",
        "s",
        _API,
        INST,
        UPTIME,
        higher_is_worse=False,
        area=Area.APISERVERS,
        extract=uptime,
    ),
    Reading(
        "api.slo_ratio",
        "p99 / SLO",
        "x",
        None,
        INST,
        "",
        area=Area.APISERVERS,
        extract=slo_ratio,
        threshold=limits.API_SLO,
        chart=Chart("max", "API call p99 / SLO limit, worst instance and kind", 7),
    ),
    Reading(
        "api.slo_budget",
        "SLO budget burned",
        "ratio",
        None,
        INST,
        "",
        area=Area.APISERVERS,
        extract=slo_budget,
        threshold=limits.API_SLO_BUDGET,
    ),
    Reading(
        "api.request_skew",
        "request skew",
        "x",
        _API,
        "",
        REQUEST_SKEW,
        area=Area.APISERVERS,
        extract=whole(lambda s: s.apiservers.request_skew),
        threshold=limits.API_SKEW,
    ),
    Reading(
        "api.watch_skew",
        "watch skew",
        "x",
        _API,
        "",
        WATCH_SKEW,
        area=Area.APISERVERS,
        extract=whole(lambda s: s.apiservers.watch_skew),
        threshold=limits.API_SKEW,
    ),
    Reading(
        "etcd.fsync_p99_s",
        "WAL fsync p99",
        "s",
        _ETCD,
        INST,
        p99_by("etcd_disk_wal_fsync_duration_seconds", INST),
        area=Area.ETCD,
        extract=per_member("wal_fsync_p99_s"),
        threshold=limits.ETCD_FSYNC_P99,
        chart=Chart("max", "WAL fsync p99, worst member", 1),
    ),
    Reading(
        "etcd.commit_p99_s",
        "commit p99",
        "s",
        _ETCD,
        INST,
        p99_by("etcd_disk_backend_commit_duration_seconds", INST),
        area=Area.ETCD,
        extract=per_member("backend_commit_p99_s"),
        threshold=limits.ETCD_COMMIT_P99,
        chart=Chart("max", "backend commit p99, worst member", 2),
    ),
    Reading(
        "etcd.proposals_pending",
        "proposals pending",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({select('etcd_server_proposals_pending')})",
        area=Area.ETCD,
        extract=per_member("proposals_pending"),
        chart=Chart("sum", "proposals pending, all members", 3),
    ),
    Reading(
        "etcd.db_size_bytes",
        "db size",
        "B",
        _ETCD,
        INST,
        f"sum by ({INST}) ({select('etcd_mvcc_db_total_size_in_bytes')})",
        area=Area.ETCD,
        extract=per_member("db_size_bytes"),
        chart=Chart("max", "db size, largest member", 4),
    ),
    Reading(
        "etcd.is_leader",
        "leader",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({select('etcd_server_is_leader')})",
        higher_is_worse=False,
        area=Area.ETCD,
        extract=per_member("is_leader"),
    ),
    Reading(
        "etcd.proposals_failed_per_s",
        "failed proposals/s",
        "/s",
        _ETCD,
        INST,
        rate_by(select("etcd_server_proposals_failed_total"), INST),
        area=Area.ETCD,
        extract=per_member("proposals_failed_per_s"),
        threshold=limits.ETCD_FAILED_PROPOSALS,
    ),
    Reading(
        "etcd.db_quota_ratio",
        "db / quota",
        "ratio",
        _ETCD,
        INST,
        DB_QUOTA,
        area=Area.ETCD,
        extract=per_member("db_quota_ratio"),
        threshold=limits.ETCD_QUOTA,
    ),
    Reading(
        "etcd.fragmentation",
        "fragmentation",
        "ratio",
        _ETCD,
        INST,
        FRAGMENTATION,
        area=Area.ETCD,
        extract=per_member("fragmentation"),
        threshold=limits.ETCD_FRAGMENTATION,
    ),
    Reading(
        "etcd.reclaimable_bytes",
        "reclaimable",
        "B",
        _ETCD,
        INST,
        "sum by (instance) ("
        + select("etcd_mvcc_db_total_size_in_bytes")
        + " - "
        + select("etcd_mvcc_db_total_size_in_use_in_bytes")
        + ")",
        area=Area.ETCD,
        extract=reclaimable,
    ),
    Reading(
        "etcd.peer_rtt_p99_s",
        "peer round-trip p99",
        "s",
        _ETCD,
        INST,
        p99_by("etcd_network_peer_round_trip_time_seconds", INST),
        area=Area.ETCD,
        extract=per_member("peer_rtt_p99_s"),
        threshold=limits.ETCD_PEER_RTT_P99,
    ),
    Reading(
        "etcd.defrag_inflight",
        "defragmenting",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({select('etcd_disk_defrag_inflight')})",
        area=Area.ETCD,
        extract=per_member("defrag_inflight"),
        threshold=limits.ETCD_DEFRAG_INFLIGHT,
    ),
    Reading(
        "etcd.has_leader",
        "has leader",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({select('etcd_server_has_leader')})",
        higher_is_worse=False,
        area=Area.ETCD,
        extract=per_member("has_leader"),
    ),
    Reading(
        "sched.pending",
        "pending",
        "",
        _SCHED,
        "queue",
        f"sum by (queue) ({select('scheduler_pending_pods')})",
        area=Area.SCHEDULER,
        extract=queues,
        chart=Chart("sum", "pending pods, all queues", 1),
    ),
    Reading(
        "sched.attempts_per_s",
        "attempts/s",
        "/s",
        _SCHED,
        "result",
        rate_by(select("scheduler_schedule_attempts_total"), "result"),
        area=Area.SCHEDULER,
        extract=attempts,
        chart=Chart("sum", "scheduling attempts/s", 3),
    ),
    Reading(
        "sched.bindings_per_s",
        "bound/s",
        "/s",
        _API,
        "",
        "sum(rate("
        + select("apiserver_request_total", ',verb="POST",subresource="binding",code="201"')
        + "[{w}s]))",
        higher_is_worse=False,
        area=Area.SCHEDULER,
        extract=whole(lambda s: s.scheduler.bindings_per_s),
        chart=Chart("sum", "pods bound/s (the apiservers' count)", 4),
    ),
    Reading(
        "sched.reason_pods",
        "pods blocked",
        "",
        None,
        "reason",
        area=Area.SCHEDULER,
        extract=reason_pods,
        chart=Chart("max", "pods blocked by the top reason", 2),
    ),
    Reading(
        "sched.waiting_pods",
        "pending pods",
        "",
        None,
        "wait",
        area=Area.SCHEDULER,
        extract=waiting_pods,
    ),
    Reading(
        "nodes.unhealthy",
        "not Ready",
        "",
        Component.CONTROLLER_MANAGER,
        "zone",
        ZONE_UNHEALTHY,
        subject_of=zone_of,
        area=Area.NODES,
        extract=zones_unhealthy,
        chart=Chart("sum", "not Ready nodes (NotReady + Unknown), all zones", 1),
    ),
    Reading(
        "nodes.zone_size",
        "nodes",
        "",
        Component.CONTROLLER_MANAGER,
        "zone",
        ZONE_SIZE,
        subject_of=zone_of,
        higher_is_worse=False,
        area=Area.NODES,
        extract=zones_size,
    ),
    Reading(
        "nodes.not_ready",
        "NotReady",
        "",
        None,
        "zone",
        area=Area.NODES,
        extract=per_zone("not_ready"),
        chart=Chart("sum", "NotReady nodes, all zones", 2),
    ),
    Reading(
        "nodes.unknown",
        "Unknown",
        "",
        None,
        "zone",
        area=Area.NODES,
        extract=per_zone("unknown"),
        chart=Chart("sum", "Unknown nodes, all zones", 3),
    ),
    Reading(
        "nodes.lease_lag_p99_s",
        "Lease lag p99",
        "s",
        None,
        area=Area.NODES,
        extract=lease_lag,
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
