"""The finding catalogue, kept as data: stable codes, areas, thresholds, sources.

Codes never change meaning once published; a retired code is not reused.
Every numeric threshold ktop uses (in rules, in the colours on screen and in
the generated docs) is defined here once, with its unit and its source.
Thresholds are starting points (the seeds insist the real baseline is the
cluster's own normal window); where a threshold comes from an upstream alert,
``source`` names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.analysis.findings import Severity
from ktop.model.area_scheduler import NEAR_LIMIT
from ktop.model.events import Area
from ktop.model.snapshot import STALE_AFTER_S
from ktop.model.values import Val


@dataclass(frozen=True, slots=True)
class Threshold:
    """Numeric limits for one reading: when it is INFO, WARNING or CRITICAL.

    A reading is compared with ``critical`` first, then ``warn``, then ``info``;
    the first limit it passes gives its severity, otherwise it is OK. Higher is
    worse unless ``below`` is set; ``inclusive`` makes the limit itself count.
    """

    name: str
    """What is measured, in words (``WAL fsync p99``)."""
    unit: str
    """``s``, ``ratio``, ``/s``, ``count`` or ``x`` (a multiple of the mean)."""
    source: str
    warn: float | None = None
    critical: float | None = None
    info: float | None = None
    below: bool = False
    inclusive: bool = False

    def _passes(self, x: float, limit: float | None) -> bool:
        if limit is None:
            return False
        if self.below:
            return x <= limit if self.inclusive else x < limit
        return x >= limit if self.inclusive else x > limit

    @property
    def fires_at(self) -> float:
        """The first limit a reading passes to raise a finding (trends measure from it)."""
        limits = [x for x in (self.info, self.warn, self.critical) if x is not None]
        if not limits:
            raise ValueError(f"threshold {self.name!r} has no limit")
        return max(limits) if self.below else min(limits)

    def grade(self, x: float) -> Severity:
        """Severity of a known reading."""
        if self._passes(x, self.critical):
            return Severity.CRITICAL
        if self._passes(x, self.warn):
            return Severity.WARNING
        if self._passes(x, self.info):
            return Severity.INFO
        return Severity.OK

    def grade_val(self, v: Val) -> Severity:
        """Severity of a reading that may be unknown: unknown is never OK.

        A reading that is empty because there was nothing to measure is OK.
        """
        if v.value is None:
            return Severity.OK if v.empty else Severity.UNKNOWN
        return self.grade(v.value)

    def describe(self) -> str:
        """``> 0.5 s warning, > 1 s critical`` for docs and help."""
        op = ("<=" if self.inclusive else "<") if self.below else (">=" if self.inclusive else ">")
        parts = [
            f"{op} {_num(limit)}{_unit(self.unit)} {word}"
            for limit, word in (
                (self.info, "info"),
                (self.warn, "warning"),
                (self.critical, "critical"),
            )
            if limit is not None
        ]
        return f"{self.name}: " + ", ".join(parts)


def _num(x: float) -> str:
    return f"{x:g}"


def _unit(unit: str) -> str:
    return {"ratio": "", "count": "", "x": "x", "/s": "/s"}.get(unit, f" {unit}")


# --------------------------------------------------------------------------
# Thresholds (one definition each)

APF_REJECTIONS = Threshold(
    "rejections per second in a priority level",
    "/s",
    "triage P1 (000 §4.3): APF only decides who waits; any rejection is a client-visible 429",
    critical=0.0,
)
APF_WAIT_P99 = Threshold(
    "APF queue wait p99",
    "s",
    "triage P1; request_wait_duration_seconds buckets 1 s and 5 s (ktop starting point)",
    warn=1.0,
    critical=5.0,
)
APF_SEATS = Threshold(
    "seats in use / seat limit",
    "ratio",
    "triage P1: a level at its concurrency limit queues everything new",
    warn=0.9,
    inclusive=True,
)
API_SKEW = Threshold(
    "busiest instance / mean across instances",
    "x",
    "triage: uneven apiserver load (003 §3.2); ktop starting point",
    warn=1.5,
    critical=2.5,
)
API_UPTIME = Threshold(
    "apiserver uptime",
    "s",
    "triage: uneven load step 3 (line imbalance up with restarts)",
    warn=600.0,
    below=True,
)
API_THROTTLED = Threshold(
    "HTTP 429 responses per second",
    "/s",
    "triage P1, P5: 429s and client retries",
    warn=0.0,
)
API_TERMINATIONS = Threshold(
    "requests terminated per second",
    "/s",
    "apiserver_request_terminations_total; mixin KubeAPITerminatedRequests",
    warn=0.0,
)
ETCD_LEADER_CHANGES = Threshold(
    "leader changes in the window",
    "count",
    "etcd mixin etcdHighNumberOfLeaderChanges (>= 4 in 15 m)",
    warn=0.0,
    critical=3.0,
)
ETCD_FSYNC_P99 = Threshold(
    "WAL fsync p99",
    "s",
    "etcd mixin etcdHighFsyncDurations",
    warn=0.5,
    critical=1.0,
)
ETCD_COMMIT_P99 = Threshold(
    "backend commit p99",
    "s",
    "etcd mixin etcdHighCommitDurations",
    warn=0.25,
    critical=0.5,
)
ETCD_QUOTA = Threshold(
    "db size / quota",
    "ratio",
    "etcd mixin etcdDatabaseQuotaLowSpace",
    warn=0.8,
    critical=0.95,
)
ETCD_FRAGMENTATION = Threshold(
    "fragmentation (1 - in use / size)",
    "ratio",
    "etcd mixin etcdDatabaseHighFragmentationRatio",
    warn=0.5,
)
ETCD_FRAG_MIN_IN_USE = Threshold(
    "db in use (fragmentation is only reported above this)",
    "bytes",
    "etcd mixin etcdDatabaseHighFragmentationRatio (104857600 bytes)",
    warn=104857600.0,
)
ETCD_FAILED_PROPOSALS = Threshold(
    "failed proposals per second",
    "/s",
    "etcd mixin etcdHighNumberOfFailedProposals",
    warn=0.0,
)
ETCD_PEER_RTT_P99 = Threshold(
    "peer round-trip p99",
    "s",
    "etcd mixin etcdMemberCommunicationSlow",
    warn=0.15,
)
SCHED_UNSCHEDULABLE = Threshold(
    "pods unschedulable",
    "count",
    "triage P2, P6",
    warn=0.0,
)
SCHED_GATED = Threshold(
    "pods held by scheduling gates",
    "count",
    "triage P2: quota and admission are a different layer",
    info=0.0,
)
SCHED_QUOTA_REJECTIONS = Threshold(
    "pod creations refused for exceeded quota",
    "count",
    "triage P2",
    warn=0.0,
)
SCHED_QUOTA_USED = Threshold(
    "ResourceQuota used / hard",
    "ratio",
    "triage P2: at 100 % new pods asking for the resource are refused",
    info=NEAR_LIMIT,
    warn=1.0,
    inclusive=True,
)
NODE_DOMAIN_SHARE = Threshold(
    "share of unhealthy nodes in the worst zone (at least 3 unhealthy, 2 zones)",
    "ratio",
    "triage P4: correlation before blame (000 §8.1)",
    info=0.9,
    inclusive=True,
)
NODE_DOMAIN_MIN_UNHEALTHY = 3
"""Fewer unhealthy nodes than this say nothing about a failure domain."""
ETCD_NO_LEADER_BELOW = 0.5
"""``etcd_server_has_leader`` is 0 or 1: a member's history below this is "no leader"."""
NODE_UNHEALTHY_ABOVE = 0.0
"""A zone's history of not-Ready nodes above this is a disruption under way."""
NODE_LEASE_LAG_P99 = Threshold(
    "node Lease lag p99",
    "s",
    "kubelet renews every 10 s (2 missed renewals: warning); lease duration 40 s: critical",
    warn=20.0,
    critical=40.0,
)
API_WRITE_P99 = Threshold(
    "mutating request latency p99",
    "s",
    "sig-scalability SLO: mutating single-object calls <= 1 s (p99); half of it is a warning",
    warn=0.5,
    critical=1.0,
)
FLOW_DOMINANCE = Threshold(
    "one flow schema's share of its priority level's queue",
    "ratio",
    "triage: queueing and more 429s (who sends the requests)",
    warn=0.5,
    inclusive=True,
)
BASELINE_RATIO = Threshold(
    "reading / its median in the baseline",
    "x",
    "triage: thresholds relative to the cluster's own normal window (seeds); ktop starting point",
    warn=1.5,
    critical=2.0,
)
POD_START_FAILURES = Threshold(
    "bound pods not started with a start Warning",
    "count",
    "triage P3",
    warn=0.0,
)
CONSTRAINT_SHARE = Threshold(
    "unschedulable pods refused by constraints or shape rather than plain cpu/memory",
    "ratio",
    "triage P6: fragmentation and policy constraints",
    warn=0.5,
    inclusive=True,
)
HEARTBEAT_SHARE = Threshold(
    "Lease renewals / apiserver writes",
    "ratio",
    "triage axes (002): Lease renewals about 70 % of writes in one node-bound case",
    info=0.5,
    inclusive=True,
)
HA_INSTANCES = Threshold(
    "apiserver instances running",
    "count",
    "triage HA readiness (003 §3.3): a single instance has no fail-over",
    warn=2.0,
    critical=1.0,
    below=True,
)
HA_ETCD_MARGIN = Threshold(
    "etcd members that may still fail before quorum is lost",
    "count",
    "etcd: N members keep quorum with N // 2 + 1 answering (000 §4.4, 003 §6)",
    warn=1.0,
    critical=0.0,
    below=True,
)
HA_LEADERS = Threshold(
    "instances of a leader-elected component that hold its Lease",
    "count",
    "client-go leader election: exactly one instance leads (leader_election_master_status)",
    critical=1.0,
    below=True,
)
STALE_AFTER = Threshold(
    "age of an area's stalest input",
    "s",
    "ktop: a scrape or feed silent for 6 polls is stale",
    warn=STALE_AFTER_S,
)
"""Not a finding: an area whose stalest input is older than this is shown stale."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One catalogue entry.

    A rule with ``thresholds`` takes its severity from the first one; a rule
    without gets ``severity`` whenever its condition holds.
    """

    code: str
    area: Area
    summary: str
    condition: str
    """The condition in words, for rules without numeric thresholds."""
    source: str
    thresholds: tuple[Threshold, ...] = ()
    severity: Severity = Severity.WARNING

    @property
    def threshold(self) -> str:
        """The rule's limits in words (generated from its thresholds)."""
        if not self.thresholds:
            return f"{self.condition} ({self.severity.name.lower()})"
        return "; ".join(t.describe() for t in self.thresholds)


_TRIAGE_1 = "triage rule 1: missing evidence is unknown, never healthy"

CATALOGUE: tuple[Rule, ...] = (
    Rule(
        "KT-APF-001",
        Area.APF,
        "A priority level rejects requests",
        "",
        "triage P1",
        (APF_REJECTIONS,),
    ),
    Rule(
        "KT-APF-002",
        Area.APF,
        "Requests queue in a priority level",
        "",
        "triage P1",
        (APF_WAIT_P99,),
    ),
    Rule(
        "KT-APF-003",
        Area.APF,
        "A priority level uses nearly all its seats",
        "",
        "triage P1",
        (APF_SEATS,),
    ),
    Rule(
        "KT-APF-010",
        Area.APF,
        "APF state unknown",
        "no apiserver APF data",
        _TRIAGE_1,
        severity=Severity.UNKNOWN,
    ),
    Rule(
        "KT-API-001",
        Area.APISERVERS,
        "Request load is skewed across apiservers",
        "",
        "triage: uneven load (003 §3.2)",
        (API_SKEW,),
    ),
    Rule(
        "KT-API-002",
        Area.APISERVERS,
        "Watches are skewed across apiservers",
        "",
        "triage: uneven load (003 §3.2)",
        (API_SKEW,),
    ),
    Rule(
        "KT-API-003",
        Area.APISERVERS,
        "An apiserver restarted recently",
        "",
        "triage: uneven load, step 3",
        (API_UPTIME,),
    ),
    Rule(
        "KT-API-004",
        Area.APISERVERS,
        "Clients are throttled (HTTP 429)",
        "",
        "triage P1, P5",
        (API_THROTTLED,),
    ),
    Rule(
        "KT-API-005",
        Area.APISERVERS,
        "An apiserver terminates requests",
        "",
        "triage P1",
        (API_TERMINATIONS,),
    ),
    Rule(
        "KT-API-010",
        Area.APISERVERS,
        "An apiserver instance cannot be read",
        "scrape failed",
        _TRIAGE_1,
        severity=Severity.UNKNOWN,
    ),
    Rule(
        "KT-ETCD-001",
        Area.ETCD,
        "etcd has no leader",
        "etcd_server_has_leader == 0",
        "etcd mixin etcdNoLeader",
        severity=Severity.CRITICAL,
    ),
    Rule(
        "KT-ETCD-002",
        Area.ETCD,
        "etcd leader changed within the window",
        "",
        "etcd health (003 §6)",
        (ETCD_LEADER_CHANGES,),
    ),
    Rule(
        "KT-ETCD-003",
        Area.ETCD,
        "WAL fsync is slow",
        "",
        "etcd health (000 §4.4)",
        (ETCD_FSYNC_P99,),
    ),
    Rule(
        "KT-ETCD-004",
        Area.ETCD,
        "Backend commit is slow",
        "",
        "etcd health (000 §4.4)",
        (ETCD_COMMIT_P99,),
    ),
    Rule(
        "KT-ETCD-005",
        Area.ETCD,
        "etcd database is close to its quota",
        "",
        "etcd health (003 §6)",
        (ETCD_QUOTA,),
    ),
    Rule(
        "KT-ETCD-006",
        Area.ETCD,
        "etcd database is fragmented",
        "",
        "etcd health (003 §6)",
        (ETCD_FRAGMENTATION, ETCD_FRAG_MIN_IN_USE),
    ),
    Rule(
        "KT-ETCD-007",
        Area.ETCD,
        "Proposals are failing",
        "",
        "etcd health (000 §4.4)",
        (ETCD_FAILED_PROPOSALS,),
    ),
    Rule(
        "KT-ETCD-008",
        Area.ETCD,
        "Peer round trips are slow",
        "",
        "etcd health (000 §4.4)",
        (ETCD_PEER_RTT_P99,),
    ),
    Rule(
        "KT-ETCD-010",
        Area.ETCD,
        "An etcd member cannot be read",
        "scrape failed or none",
        _TRIAGE_1,
        severity=Severity.UNKNOWN,
    ),
    Rule(
        "KT-SCHED-001",
        Area.SCHEDULER,
        "Pods cannot be placed on any node",
        "",
        "triage P2, P6",
        (SCHED_UNSCHEDULABLE,),
    ),
    Rule(
        "KT-SCHED-002",
        Area.SCHEDULER,
        "Pods are held by scheduling gates (admission, quota)",
        "",
        "triage P2",
        (SCHED_GATED,),
    ),
    Rule(
        "KT-SCHED-003",
        Area.SCHEDULER,
        "Pods were refused for exceeded quota",
        "",
        "triage P2",
        (SCHED_QUOTA_REJECTIONS,),
    ),
    Rule(
        "KT-SCHED-004",
        Area.SCHEDULER,
        "A ResourceQuota is at or near its hard limit",
        "",
        "triage P2",
        (SCHED_QUOTA_USED,),
    ),
    Rule(
        "KT-SCHED-010",
        Area.SCHEDULER,
        "Scheduler state unknown",
        "no scheduler metrics or pods not listed",
        _TRIAGE_1,
        severity=Severity.UNKNOWN,
    ),
    Rule(
        "KT-NODE-001",
        Area.NODES,
        "A zone is in FullDisruption",
        "no node of the zone is Ready",
        "node lifecycle controller ComputeZoneState",
        severity=Severity.CRITICAL,
    ),
    Rule(
        "KT-NODE-002",
        Area.NODES,
        "A zone is in PartialDisruption",
        "> 2 not Ready and >= 55 % of the zone",
        "node lifecycle controller ComputeZoneState (--unhealthy-zone-threshold 0.55)",
        severity=Severity.WARNING,
    ),
    Rule(
        "KT-NODE-003",
        Area.NODES,
        "NotReady nodes are confined to one failure domain",
        "",
        "triage P4",
        (NODE_DOMAIN_SHARE,),
    ),
    Rule(
        "KT-NODE-004",
        Area.NODES,
        "Node heartbeats (Leases) lag",
        "",
        "triage P4",
        (NODE_LEASE_LAG_P99,),
    ),
    Rule(
        "KT-NODE-010",
        Area.NODES,
        "Node state unknown",
        "nodes not listed",
        _TRIAGE_1,
        severity=Severity.UNKNOWN,
    ),
)

BY_CODE = {r.code: r for r in CATALOGUE}
"""Catalogue entries by code."""


def limit(code: str, index: int = 0) -> Threshold:
    """The ``index``-th threshold of a code."""
    return BY_CODE[code].thresholds[index]


# --------------------------------------------------------------------------
# Fleet: what the fleet view (``ktop fleet``) concludes across cells


FLEET_ONSET_SPREAD = Threshold(
    "spread of one triage path's onsets across cells",
    "s",
    "ktop starting point for 'within the same minutes'",
    warn=300.0,
    below=True,
    inclusive=True,
)
"""Cells whose same path turned suspect within this many seconds share a cause."""
FLEET_MIN_CELLS = 2
"""A shared cause needs the same suspect path in at least this many cells."""


@dataclass(frozen=True, slots=True)
class FleetRule:
    """One fleet catalogue entry: a conclusion across cells, not about one area."""

    code: str
    summary: str
    condition: str
    severity: Severity


FLEET_CATALOGUE: tuple[FleetRule, ...] = (
    FleetRule(
        "KT-FLEET-001",
        "A shared cause in one region",
        "the same triage path turned suspect in several cells within the onset spread, the "
        "cells share a region, and it is not a rollout (KT-FLEET-002 is checked first)",
        Severity.WARNING,
    ),
    FleetRule(
        "KT-FLEET-002",
        "A shared cause during a rollout",
        "the same triage path turned suspect in several cells within the onset spread, and "
        "every one of them shows a recent apiserver restart (KT-API-003)",
        Severity.WARNING,
    ),
    FleetRule(
        "KT-FLEET-003",
        "A shared cause outside the cells",
        "the same triage path turned suspect in several cells within the onset spread, with "
        "no common region and no rollout: a dependency they share (DNS, network, identity, "
        "registry, the metrics pipeline)",
        Severity.WARNING,
    ),
    FleetRule(
        "KT-FLEET-010",
        "A cell cannot be read",
        "the cell's source could not connect, or failed; its row is unknown with the reason",
        Severity.UNKNOWN,
    ),
)

FLEET_BY_CODE = {r.code: r for r in FLEET_CATALOGUE}
"""Fleet catalogue entries by code."""
