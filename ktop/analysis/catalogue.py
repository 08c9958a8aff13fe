"""The finding catalogue, kept as data: stable codes, areas, thresholds, sources.

Codes never change meaning once published; a retired code is not reused.
Thresholds are starting points (the seeds insist the real baseline is the
cluster's own normal window); where a threshold comes from an upstream
alert, ``source`` names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.model.events import Area


@dataclass(frozen=True, slots=True)
class Rule:
    """One catalogue entry."""

    code: str
    area: Area
    summary: str
    threshold: str
    source: str


CATALOGUE: tuple[Rule, ...] = (
    Rule(
        "KT-APF-001",
        Area.APF,
        "A priority level rejects requests",
        "> 0 rejections/s",
        "triage P1; mixin runbook KubeAPITerminatedRequests",
    ),
    Rule(
        "KT-APF-002",
        Area.APF,
        "Requests queue in a priority level",
        "p99 wait > 1 s",
        "triage P1 (000 §4.3)",
    ),
    Rule("KT-APF-010", Area.APF, "APF state unknown", "no apiserver APF data", "triage rule 1"),
    Rule(
        "KT-API-001",
        Area.APISERVERS,
        "Request load is skewed across apiservers",
        "max/mean requests/s > 2",
        "triage: uneven load (003 §3.2)",
    ),
    Rule(
        "KT-API-002",
        Area.APISERVERS,
        "Watches are skewed across apiservers",
        "max/mean watches > 2",
        "triage: uneven load (003 §3.2)",
    ),
    Rule(
        "KT-API-003",
        Area.APISERVERS,
        "An apiserver restarted within the window",
        "process start time inside the window",
        "triage: uneven load, step 3",
    ),
    Rule(
        "KT-API-004",
        Area.APISERVERS,
        "Clients are throttled (HTTP 429)",
        "> 0 429/s",
        "triage P1, P5",
    ),
    Rule(
        "KT-API-010",
        Area.APISERVERS,
        "An apiserver instance cannot be read",
        "scrape failed",
        "triage rule 1",
    ),
    Rule(
        "KT-ETCD-001", Area.ETCD, "etcd has no leader", "has_leader == 0", "etcd mixin etcdNoLeader"
    ),
    Rule(
        "KT-ETCD-002",
        Area.ETCD,
        "etcd leader changed within the window",
        ">= 1 change",
        "etcd mixin etcdHighNumberOfLeaderChanges (>= 4 in 15 m is critical)",
    ),
    Rule(
        "KT-ETCD-003",
        Area.ETCD,
        "WAL fsync is slow",
        "p99 > 0.5 s (critical > 1 s)",
        "etcd mixin etcdHighFsyncDurations",
    ),
    Rule(
        "KT-ETCD-004",
        Area.ETCD,
        "Backend commit is slow",
        "p99 > 0.25 s",
        "etcd mixin etcdHighCommitDurations",
    ),
    Rule(
        "KT-ETCD-005",
        Area.ETCD,
        "etcd database is close to its quota",
        "> 80 % (critical > 95 %)",
        "etcd mixin etcdDatabaseQuotaLowSpace",
    ),
    Rule(
        "KT-ETCD-006",
        Area.ETCD,
        "etcd database is fragmented",
        "fragmentation > 50 % and in use > 100 MB",
        "etcd mixin etcdDatabaseHighFragmentationRatio",
    ),
    Rule(
        "KT-ETCD-007",
        Area.ETCD,
        "Proposals are failing",
        "> 0 failed proposals/s",
        "etcd mixin etcdHighNumberOfFailedProposals",
    ),
    Rule(
        "KT-ETCD-010",
        Area.ETCD,
        "An etcd member cannot be read",
        "scrape failed or none",
        "triage rule 1",
    ),
    Rule(
        "KT-SCHED-001",
        Area.SCHEDULER,
        "Pods cannot be placed on any node",
        "unschedulable pods > 0",
        "triage P2, P6",
    ),
    Rule(
        "KT-SCHED-002",
        Area.SCHEDULER,
        "Pods are held by scheduling gates (admission, quota)",
        "gated pods > 0",
        "triage P2: quota is a different layer",
    ),
    Rule(
        "KT-SCHED-003",
        Area.SCHEDULER,
        "Pods were refused for exceeded quota",
        "FailedCreate exceeded quota in window",
        "triage P2",
    ),
    Rule(
        "KT-SCHED-004",
        Area.SCHEDULER,
        "A ResourceQuota is at or near its hard limit",
        ">= 90 % used (warning at 100 %)",
        "triage P2: quota is a different layer from placement",
    ),
    Rule(
        "KT-SCHED-010",
        Area.SCHEDULER,
        "Scheduler state unknown",
        "no scheduler metrics or pods not listed",
        "triage rule 1",
    ),
    Rule(
        "KT-NODE-001",
        Area.NODES,
        "A zone is in FullDisruption",
        "zone state",
        "node lifecycle controller ComputeZoneState",
    ),
    Rule(
        "KT-NODE-002",
        Area.NODES,
        "A zone is in PartialDisruption",
        "zone state",
        "node lifecycle controller ComputeZoneState",
    ),
    Rule(
        "KT-NODE-003",
        Area.NODES,
        "NotReady nodes are confined to one failure domain",
        ">= 90 % of unhealthy nodes in one zone",
        "triage P4: correlation before blame",
    ),
    Rule(
        "KT-NODE-004",
        Area.NODES,
        "Node heartbeats (Leases) lag",
        "p99 lease lag > 40 s",
        "triage P4; kubelet lease duration 40 s",
    ),
    Rule("KT-NODE-010", Area.NODES, "Node state unknown", "nodes not listed", "triage rule 1"),
)

BY_CODE = {r.code: r for r in CATALOGUE}
"""Catalogue entries by code."""
