"""The signals ktop keeps a history of, and how each is read.

One table (:data:`SIGNALS`) says, for every signal: what it measures, its
unit, the label that tells its subjects apart (priority level, instance,
zone ...), and the PromQL that computes the same number from Prometheus
(empty when Prometheus does not hold it, e.g. node conditions read from the
API). :func:`read_signals` takes the same numbers from a snapshot, so the
live history and the Prometheus backfill fill the same keys.

A signal key is ``"<metric>|<subject>"`` (subject empty for cluster-wide
signals), a plain string so that history can be serialized as it is.
History is kept per aggregate (a priority level, an instance, a zone),
never per node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ktop.model.area_metrics_only import split_zone_key
from ktop.model.events import Component, PodWait
from ktop.model.series import WINDOW_S
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.values import Val, sum_vals

QUANTILE = 0.99
"""The quantile of every ``p99`` signal."""


@dataclass(frozen=True, slots=True)
class SignalSpec:
    """One signal: what it is and how Prometheus computes it.

    ``promql`` has two placeholders: ``{job}`` (the component's job regular
    expression) and ``{w}`` (the observation window in seconds). It groups
    by ``subject_label`` (or by nothing for cluster-wide signals). Rates
    are ``rate(counter[w])`` and quantiles ``histogram_quantile(q, sum by
    (subject, le) (rate(bucket[w])))``: the same as ktop's own windowed math
    (``ktop/model/series.py``), see docs/panes.md.
    """

    metric: str
    label: str
    unit: str
    component: Component | None
    subject_label: str = ""
    promql: str = ""
    higher_is_worse: bool = True
    subject_of: Callable[[str], str] | None = None
    """Turns the value of ``subject_label`` in Prometheus' answer into the subject the
    snapshot uses (None: the same string)."""


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

SIGNALS: tuple[SignalSpec, ...] = (
    SignalSpec(
        "apf.in_queue",
        "in queue",
        "",
        _API,
        PL,
        f"sum by ({PL}) ({_sel('apiserver_flowcontrol_current_inqueue_requests')})",
    ),
    SignalSpec(
        "apf.executing",
        "executing",
        "",
        _API,
        PL,
        f"sum by ({PL}) ({_sel('apiserver_flowcontrol_current_executing_requests')})",
    ),
    SignalSpec(
        "apf.rejected_per_s",
        "rejected/s",
        "/s",
        _API,
        PL,
        _rate(_sel("apiserver_flowcontrol_rejected_requests_total"), PL),
    ),
    SignalSpec(
        "apf.wait_p99_s",
        "wait p99",
        "s",
        _API,
        PL,
        _p99("apiserver_flowcontrol_request_wait_duration_seconds", PL),
    ),
    SignalSpec(
        "api.requests_per_s",
        "requests/s",
        "/s",
        _API,
        INST,
        _rate(_sel("apiserver_request_total"), INST),
    ),
    SignalSpec(
        "api.inflight",
        "inflight",
        "",
        _API,
        INST,
        f"sum by ({INST}) ({_sel('apiserver_current_inflight_requests')})",
    ),
    SignalSpec(
        "api.watches",
        "watches",
        "",
        _API,
        INST,
        _WATCHES,
    ),
    SignalSpec(
        "api.cpu_cores",
        "CPU cores",
        "",
        _API,
        INST,
        _rate(_sel("process_cpu_seconds_total"), INST),
    ),
    SignalSpec(
        "api.rss_bytes",
        "memory",
        "B",
        _API,
        INST,
        f"sum by ({INST}) ({_sel('process_resident_memory_bytes')})",
    ),
    SignalSpec(
        "api.throttled_per_s",
        "429/s",
        "/s",
        _API,
        INST,
        _rate(_sel("apiserver_request_total", ',code="429"'), INST),
    ),
    SignalSpec(
        "api.terminations_per_s",
        "terminated/s",
        "/s",
        _API,
        INST,
        _rate(_sel("apiserver_request_terminations_total"), INST),
    ),
    SignalSpec("api.request_skew", "request skew", "x", _API, "", _REQUEST_SKEW),
    SignalSpec("api.watch_skew", "watch skew", "x", _API, "", _WATCH_SKEW),
    SignalSpec(
        "etcd.fsync_p99_s",
        "WAL fsync p99",
        "s",
        _ETCD,
        INST,
        _p99("etcd_disk_wal_fsync_duration_seconds", INST),
    ),
    SignalSpec(
        "etcd.commit_p99_s",
        "commit p99",
        "s",
        _ETCD,
        INST,
        _p99("etcd_disk_backend_commit_duration_seconds", INST),
    ),
    SignalSpec(
        "etcd.proposals_pending",
        "proposals pending",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({_sel('etcd_server_proposals_pending')})",
    ),
    SignalSpec(
        "etcd.db_size_bytes",
        "db size",
        "B",
        _ETCD,
        INST,
        f"sum by ({INST}) ({_sel('etcd_mvcc_db_total_size_in_bytes')})",
    ),
    SignalSpec(
        "etcd.is_leader",
        "leader",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({_sel('etcd_server_is_leader')})",
        higher_is_worse=False,
    ),
    SignalSpec(
        "etcd.proposals_failed_per_s",
        "failed proposals/s",
        "/s",
        _ETCD,
        INST,
        _rate(_sel("etcd_server_proposals_failed_total"), INST),
    ),
    SignalSpec("etcd.db_quota_ratio", "db / quota", "x", _ETCD, INST, _DB_QUOTA),
    SignalSpec(
        "etcd.fragmentation",
        "fragmentation",
        "x",
        _ETCD,
        INST,
        _FRAGMENTATION,
    ),
    SignalSpec(
        "etcd.peer_rtt_p99_s",
        "peer round-trip p99",
        "s",
        _ETCD,
        INST,
        _p99("etcd_network_peer_round_trip_time_seconds", INST),
    ),
    SignalSpec(
        "etcd.has_leader",
        "has leader",
        "",
        _ETCD,
        INST,
        f"sum by ({INST}) ({_sel('etcd_server_has_leader')})",
        higher_is_worse=False,
    ),
    SignalSpec(
        "sched.pending",
        "pending",
        "",
        _SCHED,
        "queue",
        f"sum by (queue) ({_sel('scheduler_pending_pods')})",
    ),
    SignalSpec(
        "sched.attempts_per_s",
        "attempts/s",
        "/s",
        _SCHED,
        "result",
        _rate(_sel("scheduler_schedule_attempts_total"), "result"),
    ),
    SignalSpec("sched.reason_pods", "pods blocked", "", None, "reason"),
    SignalSpec("sched.waiting_pods", "pending pods", "", None, "wait"),
    SignalSpec(
        "nodes.unhealthy",
        "not Ready",
        "",
        Component.CONTROLLER_MANAGER,
        "zone",
        _ZONE_UNHEALTHY,
        subject_of=_zone_of,
    ),
    SignalSpec("nodes.not_ready", "NotReady", "", None, "zone"),
    SignalSpec("nodes.unknown", "Unknown", "", None, "zone"),
    SignalSpec("nodes.lease_lag_p99_s", "Lease lag p99", "s", None),
)
"""Every signal with a history, in display order."""

BY_METRIC: dict[str, SignalSpec] = {s.metric: s for s in SIGNALS}

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
    for row in s.apf.levels:
        pl = row.priority_level
        yield key("apf.in_queue", pl), row.in_queue
        yield key("apf.executing", pl), row.executing
        yield key("apf.rejected_per_s", pl), row.rejected_total_per_s
        yield key("apf.wait_p99_s", pl), row.wait_p99_s
    for a in s.apiservers.instances:
        i = a.instance
        yield key("api.requests_per_s", i), a.requests_per_s
        yield key("api.inflight", i), sum_vals([a.inflight_readonly, a.inflight_mutating])
        yield key("api.watches", i), a.watches
        yield key("api.cpu_cores", i), a.cpu_cores
        yield key("api.rss_bytes", i), a.rss_bytes
        yield key("api.throttled_per_s", i), a.throttled_per_s
        yield key("api.terminations_per_s", i), a.terminations_per_s
    yield key("api.request_skew"), s.apiservers.request_skew
    yield key("api.watch_skew"), s.apiservers.watch_skew
    for m in s.etcd.members:
        i = m.instance
        yield key("etcd.fsync_p99_s", i), m.wal_fsync_p99_s
        yield key("etcd.commit_p99_s", i), m.backend_commit_p99_s
        yield key("etcd.proposals_pending", i), m.proposals_pending
        yield key("etcd.db_size_bytes", i), m.db_size_bytes
        yield key("etcd.is_leader", i), m.is_leader
        yield key("etcd.proposals_failed_per_s", i), m.proposals_failed_per_s
        yield key("etcd.db_quota_ratio", i), m.db_quota_ratio
        yield key("etcd.fragmentation", i), m.fragmentation
        yield key("etcd.peer_rtt_p99_s", i), m.peer_rtt_p99_s
        yield key("etcd.has_leader", i), m.has_leader
    sched = s.scheduler
    for q, v in sched.queue.items():
        yield key("sched.pending", q), v
    for r, v in sched.attempts_per_s.items():
        yield key("sched.attempts_per_s", r), v
    if sched.pods_known:
        for reason in sched.reasons[:TOP_REASONS]:
            yield key("sched.reason_pods", reason.reason), Val.of(reason.pods)
        for wait in PodWait:
            yield key("sched.waiting_pods", wait.value), Val.of(sched.pending_by_wait.get(wait, 0))
    n = s.nodes
    if n.nodes_known:
        for z in n.zones:
            yield key("nodes.unhealthy", z.zone), Val.of(z.unhealthy)
            yield key("nodes.not_ready", z.zone), Val.of(z.not_ready)
            yield key("nodes.unknown", z.zone), Val.of(z.unknown)
        yield key("nodes.lease_lag_p99_s"), n.lease_lag_p99_s
    elif n.metrics_only is not None:
        # metrics-only: the node lifecycle controller's own count per zone
        for zh in n.metrics_only.zones:
            yield key("nodes.unhealthy", zh.zone), Val.of(zh.unhealthy)


DOC_START = "<!-- signals:start -->"
DOC_END = "<!-- signals:end -->"


def markdown_table(window_s: float = WINDOW_S) -> str:
    """The signals table of docs/panes.md (generated from :data:`SIGNALS`)."""
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
