"""The triage path catalogue, kept as data (``docs/triage.md`` is generated from it).

Each path has a stable ID, its symptom, its evidence in order (:mod:`.evidence_specs`:
what is read, how it is computed, the threshold and its source), how the verdict is
reached, the first direction to take, and the symptoms (other paths) it can explain,
which rank the diagnosis (:mod:`.diagnosis`). IDs never change meaning.
Sections cite the seed documents as ``triage-paths`` restates them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ktop.analysis.triage.evidence_audit import AUDIT_CLIENT, AUDIT_REJECTED
from ktop.analysis.triage.evidence_specs import (
    APF_FLOW,
    APF_REJECTED,
    APF_TALKER,
    APF_WAIT,
    API_CPU,
    API_MEMORY,
    API_REACHABLE,
    API_REQUESTS,
    API_RESTART,
    API_SKEW,
    API_SLO,
    API_SLO_BUDGET,
    API_THROTTLED,
    API_WATCH_SKEW,
    API_WEBHOOKS,
    API_WRITE,
    DNS,
    HA_APISERVERS,
    HA_CONTROLLER_MANAGER,
    HA_CONTROLLER_MANAGER_RESTART,
    HA_ETCD,
    HA_SCHEDULER,
    HA_SCHEDULER_RESTART,
    HA_STANDBY,
    HEARTBEAT_SHARE,
    NODE_REGISTRATION,
    NODES_DOMAIN,
    NODES_LEASE,
    NODES_NOT_READY,
    POD_START_FAILURES,
    PODS_NOT_STARTED,
    SCHED_BINDINGS,
    SCHED_CONSTRAINTS,
    SCHED_QUEUE,
    SCHED_QUOTA,
    SCHED_QUOTA_FULL,
    SCHED_UNSCHEDULABLE,
    UTILISATION,
    EvidenceSpec,
)
from ktop.analysis.triage.evidence_specs_etcd import (
    ETCD_ALARMS,
    ETCD_CHANGES,
    ETCD_COMMIT,
    ETCD_DEFRAG,
    ETCD_FRAG,
    ETCD_FSYNC,
    ETCD_LEADER,
    ETCD_LOST,
    ETCD_PROPOSALS,
    ETCD_QUOTA,
    ETCD_RESTART,
)

__all__ = ["BY_ID", "PATHS", "EvidenceSpec", "Explains", "PathSpec"]


@dataclass(frozen=True, slots=True)
class Explains:
    """One symptom a path, when suspect, can explain: that path is then its consequence."""

    path: str
    """The ID of the path it explains."""
    why: str
    """How the cause produces that symptom, in words."""


@dataclass(frozen=True, slots=True)
class PathSpec:
    """One symptom-to-evidence path."""

    id: str
    title: str
    symptom: str
    evidence: tuple[EvidenceSpec, ...]
    verdict: str
    """How the verdict is reached, in words."""
    direction: str
    source: str
    explains: tuple[Explains, ...] = ()
    """The symptoms (other paths) this path's problem can cause; the relation is acyclic
    (``ktop/analysis/triage/diagnosis.py`` ranks with it)."""

    @property
    def explained_ids(self) -> frozenset[str]:
        """The IDs of the paths it can explain."""
        return frozenset(x.path for x in self.explains)


# ----------------------------------------------------------------- paths

PATHS: tuple[PathSpec, ...] = (
    PathSpec(
        "P1",
        "Every API call is slow",
        "API calls of every kind are slow",
        (
            APF_REJECTED,
            APF_WAIT,
            API_WRITE,
            ETCD_COMMIT,
            replace(API_CPU, first_line=False),
            API_WEBHOOKS,
            APF_TALKER,
            AUDIT_CLIENT,
            API_SLO,
            API_SLO_BUDGET,
        ),
        "suspect when any first-line reading passes its critical threshold; the conclusion "
        "names the shared bottleneck (APF level, etcd, apiserver CPU)",
        "pause non-critical changes; find the one shared bottleneck",
        "triage-paths P1 (000 §12.4)",
        explains=(
            Explains("AXIS", "the axis names where the pressure that slows every call comes from"),
        ),
    ),
    PathSpec(
        "P2",
        "API is fine but many pods are Pending",
        "pods stay Pending while the API answers",
        (SCHED_UNSCHEDULABLE, SCHED_QUOTA, SCHED_QUEUE, SCHED_QUOTA_FULL, SCHED_BINDINGS),
        "suspect when pods fit no node or creations are refused for quota; the conclusion "
        "tells 'no resources fit' (reasons) from 'cannot decide fast enough' (queue)",
        "tell 'no resources fit' apart from 'the scheduler cannot decide fast enough'",
        "triage-paths P2 (000 §12.4, §5)",
        explains=(
            Explains(
                "P6", "the same unschedulable pods, by the constraint or shape that refuses them"
            ),
        ),
    ),
    PathSpec(
        "P3",
        "Pods are bound to nodes but do not start",
        "pods have a node but stay Pending",
        (PODS_NOT_STARTED, POD_START_FAILURES),
        "suspect when bound pods carry start Warnings; grouped by cause (image pull, "
        "sandbox / CNI, volume) and by node and zone",
        "locate the node-side or external dependency",
        "triage-paths P3 (000 §12.4)",
    ),
    PathSpec(
        "P4",
        "Many nodes NotReady at once",
        "many nodes turn NotReady together",
        (NODES_NOT_READY, NODES_DOMAIN, NODES_LEASE, API_REACHABLE, ETCD_LEADER),
        "suspect when a zone is in Partial or Full disruption, or when the node Lease lag "
        "p99 passes the lease duration (the nodes about to turn NotReady); confined to one "
        "zone with a healthy control plane points at that zone's shared parts, everywhere with an "
        "unhealthy control plane at the control path",
        "tell real node failure apart from a broken control path",
        "triage-paths P4 (000 §12.4, §8)",
        explains=(
            Explains("P2", "pods evicted from the NotReady nodes wait for a node elsewhere"),
            Explains("P6", "pods bound by affinity or topology to the lost nodes fit nowhere else"),
            Explains("P3", "pods bound to the NotReady nodes cannot start"),
        ),
    ),
    PathSpec(
        "P5",
        "The faster we scale up, the slower we recover",
        "scaling up makes recovery slower",
        (
            API_THROTTLED,
            APF_REJECTED,
            NODE_REGISTRATION,
            DNS,
            replace(POD_START_FAILURES, first_line=False),
        ),
        "suspect when clients get 429s or APF rejects: retries without back-off turn "
        "queueing into a storm",
        "tighten the entry rate; free capacity on the critical path",
        "triage-paths P5 (000 §12.4, §4.3)",
    ),
    PathSpec(
        "P6",
        "Low overall utilisation but pods keep queueing",
        "pods queue although the cluster looks idle",
        (SCHED_CONSTRAINTS, SCHED_QUOTA_FULL, UTILISATION, SCHED_BINDINGS),
        "suspect when most unschedulable pods are refused by constraints or resource shape "
        "rather than plain cpu or memory",
        "look for fragmentation and policy constraints; revisit pool splits",
        "triage-paths P6 (000 §12.4)",
    ),
    PathSpec(
        "API-WRITE",
        "Write latency is high",
        "mutating calls are slow",
        (API_WRITE, ETCD_COMMIT, API_WEBHOOKS),
        "suspect when mutating p99 passes the SLO; etcd commit tells storage from the "
        "synchronous chain in front of it",
        "shorten the synchronous chain, stop no-op updates",
        "triage-paths API symptoms (000 §4.1, 004 §2)",
    ),
    PathSpec(
        "API-CPU",
        "apiserver CPU high while storage looks normal",
        "apiserver CPU is high, etcd is not",
        (API_CPU, ETCD_COMMIT),
        "suspect when CPU is well above its baseline while etcd commit is fine; needs a baseline",
        "scope subscriptions, fan-out tiers, add replicas only on evidence",
        "triage-paths API symptoms (000 §4.1, 004 §2)",
    ),
    PathSpec(
        "API-LIST",
        "LIST drives memory and latency spikes",
        "apiserver memory and latency spike together",
        (API_MEMORY, API_REQUESTS, APF_WAIT, APF_TALKER, AUDIT_CLIENT),
        "suspect when memory is well above its baseline; needs a baseline",
        "narrow scope, paginate or stream, stagger client start-up",
        "triage-paths API symptoms (000 §4.1, 004 §2)",
        explains=(
            Explains("P1", "concurrent full LISTs fill the queues every request waits in"),
            Explains("API-429", "LISTs hold the seats a priority level rejects for"),
            Explains("AXIS", "the queue waits are the LISTs'"),
        ),
    ),
    PathSpec(
        "API-429",
        "Queueing and more 429s",
        "clients see 429 and queue",
        (APF_REJECTED, APF_FLOW, API_THROTTLED, APF_TALKER, AUDIT_REJECTED, AUDIT_CLIENT),
        "suspect when a priority level rejects (or, given audit logs, when they record 429s "
        "past the 429 rate's warning); the conclusion names the flow schema that dominates "
        "its queue, or the client the audit logs name (the client to classify and limit)",
        "classify and limit, client back-off, freeze non-critical changes",
        "triage-paths API symptoms (000 §4.1, §4.3)",
        explains=(
            Explains("P5", "clients that retry 429s without back-off turn queueing into a storm"),
        ),
    ),
    PathSpec(
        "API-RELIST",
        "Clients relist in a storm after an apiserver restart or etcd leader change",
        "load jumps after a restart or leader change",
        (ETCD_CHANGES, API_RESTART, APF_WAIT, API_REQUESTS),
        "suspect when an etcd leader change or apiserver restart coincides with APF waits "
        "past their warning",
        "bookmarks, jitter, back-off (004 §4)",
        "triage-paths API symptoms (004 §4)",
        explains=(
            Explains("P1", "the relist storm fills the queues every request waits in"),
            Explains(
                "API-429", "the storm's requests are what the priority level queues and rejects"
            ),
            Explains("API-LIST", "a relist is a full LIST per informer"),
            Explains("API-WRITE", "writes wait in the same saturated queues"),
            Explains("API-CPU", "relists cost apiserver CPU (encoding, watch cache)"),
            Explains("P5", "rejected relists are retried"),
            Explains("AXIS", "the pressure is the storm's"),
        ),
    ),
    PathSpec(
        "SKEW",
        "Uneven load across apiserver instances",
        "one apiserver carries most clients",
        (API_SKEW, API_WATCH_SKEW, API_RESTART),
        "suspect when requests or watches are skewed past the warning; the latest restart "
        "is shown to line the imbalance up with it",
        "line the imbalance up with restarts; rebalance long-lived connections",
        "triage-paths uneven load (003 §3.2)",
        explains=(
            Explains("API-CPU", "the instance that carries most clients has the highest CPU"),
            Explains("API-LIST", "the instance that holds most watches holds most memory"),
            Explains("API-WRITE", "the slowest writes are the busiest instance's"),
        ),
    ),
    PathSpec(
        "HA",
        "HA readiness is not control-loop readiness",
        "a standby that holds the lease is not ready",
        (
            HA_APISERVERS,
            HA_ETCD,
            ETCD_LEADER,
            HA_SCHEDULER,
            HA_CONTROLLER_MANAGER,
            HA_SCHEDULER_RESTART,
            HA_CONTROLLER_MANAGER_RESTART,
            HA_STANDBY,
        ),
        "suspect when etcd has lost quorum or its leader, or no instance of the scheduler or "
        "controller-manager leads; a single apiserver or an etcd without a spare member is a "
        "warning. Whether a standby's informers have synced cannot be seen from outside: "
        "a clear verdict covers only what is observable",
        "check the standby's informers and queue before relying on fail-over",
        "triage-paths HA readiness (003 §3.3)",
        explains=(
            Explains("P2", "with no scheduler leading, no pod is scheduled"),
            Explains(
                "P1", "an etcd without quorum or leader stalls every request that reaches storage"
            ),
            Explains("API-WRITE", "an etcd without quorum or leader accepts no write"),
        ),
    ),
    PathSpec(
        "ETCD",
        "etcd health",
        "etcd is slow, leaderless or full",
        (
            ETCD_LOST,
            ETCD_LEADER,
            ETCD_CHANGES,
            ETCD_RESTART,
            ETCD_DEFRAG,
            ETCD_FSYNC,
            ETCD_COMMIT,
            ETCD_ALARMS,
            ETCD_QUOTA,
            ETCD_FRAG,
            ETCD_PROPOSALS,
        ),
        "suspect when a member is lost or has no leader, the leader changed, an alarm stands "
        "(NOSPACE: no write is accepted), a latency or quota reading passes its critical "
        "threshold, or a defragmenting member stalls; the "
        "conclusion then names the alarm, then the defragmentation, before the disk",
        "find who writes before tuning; defrag one member at a time, the leader last",
        "triage-paths etcd health (000 §4.4, 003 §6)",
        explains=(
            Explains("API-WRITE", "every write waits for etcd's commit"),
            Explains("P1", "requests that reach storage wait for a slow etcd"),
            Explains(
                "API-429",
                "requests held by a slow etcd keep their seats; new ones queue and are rejected",
            ),
            Explains("API-LIST", "queue waits grow behind slow storage"),
            Explains("API-RELIST", "a leader change makes clients relist"),
            Explains("HA", "etcd's own leader or quorum loss is what HA reports"),
            Explains("P5", "the 429s of a slow etcd are retried"),
            Explains("AXIS", "etcd commit latency is the pressure"),
        ),
    ),
    PathSpec(
        "AXIS",
        "Which axis is the cluster short on",
        "the control plane is under pressure",
        (HEARTBEAT_SHARE, APF_WAIT, ETCD_COMMIT, replace(API_MEMORY, first_line=False)),
        "suspect when APF waits or etcd commit pass their warning; the conclusion names the "
        "axis: node-bound (Lease renewals dominate writes), churn-bound (other writes "
        "dominate) or state-bound (memory high, writes low)",
        "fix the axis under pressure; adding apiservers does not help a state-bound cluster",
        "triage-paths axes (002)",
    ),
)

BY_ID = {p.id: p for p in PATHS}
"""Paths by ID."""
