"""The evidence triage paths read, kept as data: what is read, how it is computed, the
threshold and its source (``docs/triage.md`` is generated from it through the paths of
:mod:`.paths`). Evidence IDs never change meaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ktop.analysis import catalogue as c
from ktop.analysis.catalogue import Threshold
from ktop.analysis.findings import Severity
from ktop.model.events import Area
from ktop.model.limits import PENDING_MIN_PODS, PENDING_PER_NODE
from ktop.model.signals import BY_METRIC
from ktop.model.snapshot_apf import TALKER_WINDOW_S


@dataclass(frozen=True, slots=True)
class EvidenceSpec:
    """One piece of evidence a path reads."""

    id: str
    title: str
    reads: str
    """What is read (metric, API resource, field)."""
    computed: str
    """How the value is computed from it."""
    unit: str
    pane: Area | None
    threshold: Threshold | None = None
    first_line: bool = True
    suspect_at: Severity | None = Severity.CRITICAL
    """The threshold severity at which this evidence alone makes the path suspect
    (None: it only corroborates, as a heartbeat lag without NotReady nodes)."""
    baseline: bool = False
    """True when the threshold is relative to the cluster's own normal (a baseline)."""
    reading: str = ""
    """The registry reading (``ktop/model/signals.py``) this evidence grades, when it is
    one: its worst readable subject, by the reading's own threshold (the generic reader of
    ``ktop/analysis/triage/evidence_readings.py``)."""


def of_reading(
    evidence_id: str, title: str, metric: str, reads: str, computed: str, **kw: Any
) -> EvidenceSpec:
    """The evidence that grades one registry reading: its unit, pane and threshold are
    the reading's.
    """
    r = BY_METRIC[metric]
    return EvidenceSpec(
        evidence_id, title, reads, computed, r.unit, r.area, r.threshold, reading=metric, **kw
    )


# ----------------------------------------------------------------- evidence

LIFETIME_NOT_GRADED = "a single scrape's lifetime value is context, not graded"
MANY_PODS = (
    f"many for the cluster's size (more than one per {1 / (PENDING_PER_NODE.warn or 1):.0f} "
    f"nodes and more than {PENDING_MIN_PODS}) or for its own baseline (more than "
    f"{PENDING_MIN_PODS} and past {c.BASELINE_RATIO.warn:g}x its median); fewer are a note"
)
"""How a count of waiting or refused pods is judged (``many_pods`` in the evidence)."""

APF_REJECTED = of_reading(
    "apf.rejected",
    "APF rejections",
    "apf.rejected_per_s",
    "apiserver_flowcontrol_rejected_requests_total by priority level and reason",
    "rate over the window, summed over instances; the worst priority level",
)
APF_WAIT = of_reading(
    "apf.wait_p99",
    "APF queue wait p99",
    "apf.wait_p99_s",
    "apiserver_flowcontrol_request_wait_duration_seconds",
    "histogram_quantile(0.99) of the window's bucket increase; the worst priority level; "
    + LIFETIME_NOT_GRADED,
)
APF_FLOW = EvidenceSpec(
    "apf.dominant_flow",
    "Flow schema dominating the busiest queue",
    "apiserver_flowcontrol_current_inqueue_requests by priority level and flow schema",
    "largest flow schema's share of the most-queued priority level",
    "ratio",
    Area.APF,
    c.FLOW_DOMINANCE,
    suspect_at=Severity.WARNING,
)
APF_TALKER = EvidenceSpec(
    "apf.top_talker",
    "Client holding the busiest priority level",
    "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1 of every "
    "apiserver instance (user, flow distinguisher, seats, queue position per request)",
    "the heaviest client's share of the executing seats (1.28+; else of the queue) of the "
    f"priority level with the most queued requests, averaged over {TALKER_WINDOW_S:g} s of "
    "dumps and summed over instances",
    "ratio",
    Area.APF,
    c.TALKER_DOMINANCE,
    first_line=False,
    suspect_at=None,
)
API_THROTTLED = of_reading(
    "api.throttled",
    "HTTP 429 responses",
    "api.throttled_per_s",
    'apiserver_request_total{code="429"}',
    "rate over the window, summed over instances",
    suspect_at=Severity.WARNING,
)
API_SLO = EvidenceSpec(
    "api.slo",
    "API call latency against its SLO",
    "apiserver_request_sli_duration_seconds by verb and scope (the total "
    "apiserver_request_duration_seconds where no SLI is exposed)",
    "p99 over the window / the SLO's limit (mutating 1 s; reads 1 s one object, 5 s "
    "namespace, 30 s cluster), the worst instance and kind; " + LIFETIME_NOT_GRADED,
    "x",
    Area.APISERVERS,
    c.API_SLO,
    first_line=False,
    suspect_at=None,
)
API_SLO_BUDGET = EvidenceSpec(
    "api.slo_budget",
    "API call SLO error budget burned",
    "apiserver_request_sli_duration_seconds by verb and scope: the calls slower than each "
    "SLO's limit and all its calls, today (Prometheus' increase since 00:00 UTC) or since "
    "ktop's first scrape",
    "(slow calls / calls) / 1 % (the SLO lets 1 % of its calls be slower); the worst "
    "instance and kind",
    "ratio",
    Area.APISERVERS,
    c.API_SLO_BUDGET,
    first_line=False,
    suspect_at=None,
)
API_WRITE = EvidenceSpec(
    "api.write_p99",
    "Mutating request latency p99",
    "apiserver_request_duration_seconds for POST, PUT, PATCH, DELETE",
    "histogram_quantile(0.99) over the window; the worst instance; " + LIFETIME_NOT_GRADED,
    "s",
    Area.APISERVERS,
    c.API_WRITE_P99,
)
API_CPU = EvidenceSpec(
    "api.cpu_vs_baseline",
    "apiserver CPU against its baseline",
    "process_cpu_seconds_total",
    "rate per instance / its median in the baseline; the worst instance",
    "x",
    Area.APISERVERS,
    c.BASELINE_RATIO,
    baseline=True,
)
API_MEMORY = EvidenceSpec(
    "api.memory_vs_baseline",
    "apiserver memory against its baseline",
    "process_resident_memory_bytes",
    "per instance / its median in the baseline; the worst instance",
    "x",
    Area.APISERVERS,
    c.BASELINE_RATIO,
    baseline=True,
)
API_REQUESTS = EvidenceSpec(
    "api.requests_vs_baseline",
    "apiserver request rate against its baseline",
    "apiserver_request_total",
    "rate summed over instances / their medians in the baseline, summed",
    "x",
    Area.APISERVERS,
    c.BASELINE_RATIO,
    first_line=False,
    baseline=True,
)
API_WEBHOOKS = EvidenceSpec(
    "api.webhooks",
    "Admission webhook latency and rejections",
    "apiserver_admission_webhook_admission_duration_seconds, _rejection_count",
    "not collected by ktop yet",
    "s",
    None,
    first_line=False,
)
API_SKEW = EvidenceSpec(
    "api.request_skew",
    "Request rate skew across instances",
    'apiserver_request_total{code!="429"} per instance',
    "the busiest instance's rate of answered requests against the mean of the others', or "
    "that mean against the idlest instance's, whichever is larger (429s aside)",
    "x",
    Area.APISERVERS,
    c.API_SKEW,
    suspect_at=Severity.WARNING,
)
API_WATCH_SKEW = EvidenceSpec(
    "api.watch_skew",
    "Registered watch skew across instances",
    'apiserver_longrunning_requests{verb="WATCH"} per instance',
    "the busiest instance's count against the mean of the others', or that mean against the "
    "idlest instance's, whichever is larger",
    "x",
    Area.APISERVERS,
    c.API_SKEW,
    suspect_at=Severity.WARNING,
)
API_RESTART = EvidenceSpec(
    "api.recent_restart",
    "Most recent apiserver restart",
    "process_start_time_seconds per instance",
    "snapshot time - the latest start time; a warning when that start is within the look-"
    "back (a one-shot's --look-back, the dashboard's 5 minutes), the start its onset",
    "s",
    Area.APISERVERS,
    first_line=False,
    suspect_at=Severity.WARNING,
)
API_REACHABLE = EvidenceSpec(
    "cp.apiservers",
    "apiserver instances not answering",
    "scrape of every apiserver instance",
    "instances whose scrape failed (of the instances read)",
    "count",
    Area.APISERVERS,
)
SCHED_UNSCHEDULABLE = EvidenceSpec(
    "sched.unschedulable",
    "Pods that fit no node",
    "Pending pods with PodScheduled=False reason Unschedulable",
    "count of pods, " + MANY_PODS,
    "count",
    Area.SCHEDULER,
    PENDING_PER_NODE,
    suspect_at=Severity.WARNING,
)
SCHED_QUOTA = EvidenceSpec(
    "sched.quota_rejections",
    "Pod creations refused for exceeded quota",
    "Warning events FailedCreate ... exceeded quota",
    "event count over the window, many for the cluster's size as pods are; fewer are a note",
    "count",
    Area.SCHEDULER,
    PENDING_PER_NODE,
    suspect_at=Severity.WARNING,
)
SCHED_QUEUE = EvidenceSpec(
    "sched.active_queue",
    "Scheduler active and backoff queues",
    'scheduler_pending_pods{queue="active"|"backoff"}',
    "sum over schedulers; with attempts/s it tells 'cannot keep up' from 'cannot fit'",
    "count",
    Area.SCHEDULER,
    first_line=False,
)
SCHED_BINDINGS = EvidenceSpec(
    "sched.bindings",
    "Pods bound per second (the apiservers' count)",
    'apiserver_request_total{verb="POST",subresource="binding",code="201"}',
    "rate over the window, summed over apiserver instances: the scheduler's throughput, "
    "readable where the scheduler itself is not (managed control planes); beside the "
    "pods waiting it tells 'cannot keep up' from 'cannot fit'",
    "/s",
    Area.SCHEDULER,
    first_line=False,
    suspect_at=None,
)
SCHED_CONSTRAINTS = EvidenceSpec(
    "sched.constraint_share",
    "Unschedulable pods refused by constraints or shape",
    "FailedScheduling messages, parsed per reason",
    "pods of the largest constraint reason (affinity, taints, topology, volumes, extended "
    "resources) / unschedulable pods; a note while the unschedulable pods are not many "
    "(as sched.unschedulable judges them)",
    "ratio",
    Area.SCHEDULER,
    c.CONSTRAINT_SHARE,
    suspect_at=Severity.WARNING,
)
SCHED_QUOTA_FULL = EvidenceSpec(
    "sched.quota_full",
    "ResourceQuotas at their hard limit",
    "ResourceQuota status.used / status.hard",
    "the fullest quota resource",
    "ratio",
    Area.SCHEDULER,
    c.SCHED_QUOTA_USED,
    first_line=False,
)
UTILISATION = EvidenceSpec(
    "nodes.utilisation",
    "Requested / allocatable resources",
    "pod requests and node allocatable",
    "not collected by ktop yet",
    "ratio",
    None,
    first_line=False,
)
PODS_NOT_STARTED = EvidenceSpec(
    "pods.bound_not_started",
    "Pods bound to a node but not started",
    "Pending pods with spec.nodeName set",
    "count of pods",
    "count",
    Area.SCHEDULER,
)
POD_START_FAILURES = EvidenceSpec(
    "pods.start_failures",
    "Start Warnings on those pods",
    "Warning events Failed/BackOff (image), FailedCreatePodSandBox, FailedMount, "
    "FailedAttachVolume",
    "pods by cause of their latest Warning, with their nodes and zones; " + MANY_PODS,
    "count",
    Area.SCHEDULER,
    PENDING_PER_NODE,
    suspect_at=Severity.WARNING,
)
NODES_NOT_READY = EvidenceSpec(
    "nodes.zone_disruption",
    "Zones in Partial or Full disruption",
    "Node Ready condition, zone labels",
    "the node lifecycle controller's ComputeZoneState per zone",
    "count",
    Area.NODES,
)
NODES_DOMAIN = EvidenceSpec(
    "nodes.domain_share",
    "Share of NotReady nodes in the worst zone",
    "Node Ready condition, zone labels",
    "not-Ready nodes in the worst zone / all not-Ready nodes; confined (past the threshold) is "
    "warn, a note with fewer not-Ready nodes or a single zone",
    "ratio",
    Area.NODES,
    c.NODE_DOMAIN_SHARE,
)
NODES_LEASE = EvidenceSpec(
    "nodes.lease_lag_p99",
    "Node Lease lag p99",
    "Leases in kube-node-lease, spec.renewTime",
    "snapshot time - renewTime, p99 over nodes",
    "s",
    Area.NODES,
    c.NODE_LEASE_LAG_P99,
    suspect_at=Severity.CRITICAL,
)
NODE_REGISTRATION = EvidenceSpec(
    "nodes.registration_rate",
    "Node registration rate",
    "Node creation timestamps",
    "not collected by ktop yet",
    "/s",
    None,
    first_line=False,
)
DNS = EvidenceSpec(
    "dns.errors",
    "DNS errors",
    "CoreDNS metrics",
    "not collected by ktop",
    "/s",
    None,
    first_line=False,
)
HA_APISERVERS = EvidenceSpec(
    "ha.apiservers",
    "apiserver instances running",
    "apiserver identity Leases in kube-system (apiserver-*), else the instances scraped",
    "count of identities (or of instances answering)",
    "count",
    Area.APISERVERS,
    c.HA_INSTANCES,
)
HA_ETCD = EvidenceSpec(
    "ha.etcd_quorum",
    "etcd members that may still fail",
    "scrape of every etcd member, etcd_server_has_leader",
    "members answering with a leader - (members // 2 + 1); a member not answering while "
    "another does is lost, not unknown; no member read is unknown",
    "count",
    Area.ETCD,
    c.HA_ETCD_MARGIN,
)
HA_SCHEDULER = EvidenceSpec(
    "ha.scheduler_leader",
    "Scheduler instances holding the leader Lease",
    'leader_election_master_status{name="kube-scheduler"} per scraped instance',
    "instances reporting 1",
    "count",
    Area.SCHEDULER,
    c.HA_LEADERS,
)
HA_CONTROLLER_MANAGER = EvidenceSpec(
    "ha.controller_manager_leader",
    "Controller-manager instances holding the leader Lease",
    'leader_election_master_status{name="kube-controller-manager"} per scraped instance',
    "instances reporting 1",
    "count",
    Area.NODES,
    c.HA_LEADERS,
)
_RESTART_COMPUTED = (
    "snapshot time - the latest start time of the instances scraped; a warning when that "
    "start is within the look-back, the first start in it its onset (a standby that took "
    "over cold lists everything at the worst moment)"
)
HA_SCHEDULER_RESTART = EvidenceSpec(
    "ha.scheduler_restart",
    "Most recent scheduler restart",
    "process_start_time_seconds per scheduler instance scraped",
    _RESTART_COMPUTED,
    "s",
    Area.SCHEDULER,
    first_line=False,
    suspect_at=None,
)
HA_CONTROLLER_MANAGER_RESTART = EvidenceSpec(
    "ha.controller_manager_restart",
    "Most recent controller-manager restart",
    "process_start_time_seconds per controller-manager instance scraped",
    _RESTART_COMPUTED,
    "s",
    Area.NODES,
    first_line=False,
    suspect_at=None,
)
HA_STANDBY = EvidenceSpec(
    "ha.standby_sync",
    "Standby scheduler / controller-manager readiness",
    "the standbys' informer sync, resourceVersion and queue",
    "not observable from outside the standby process; not collected by ktop",
    "",
    None,
    first_line=False,
)
HEARTBEAT_SHARE = EvidenceSpec(
    "axis.heartbeat_share",
    "Lease renewals in apiserver writes",
    "nodes / lease renew interval; apiserver writes per second",
    "heartbeat writes per second / apiserver writes per second",
    "ratio",
    Area.NODES,
    c.HEARTBEAT_SHARE,
)
