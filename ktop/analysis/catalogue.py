"""The finding catalogue, kept as data: stable codes, areas, thresholds, sources.

Codes never change meaning once published; a retired code is not reused.
Every numeric threshold ktop uses (in rules, in the colours on screen and in
the generated docs) is defined once, with its unit and its source, in
``ktop/model/limits.py``; the catalogue names which threshold each code grades.
Thresholds are starting points (the seeds insist the real baseline is the
cluster's own normal window); where a threshold comes from an upstream alert,
``source`` names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.analysis.baseline_marks import MARKABLE
from ktop.analysis.findings import Severity
from ktop.analysis.reading_rules import BY_READING_CODE
from ktop.model.areas import AREAS
from ktop.model.events import Area
from ktop.model.grading import Threshold
from ktop.model.limits import (
    APF_REJECTIONS,
    APF_SEATS,
    APF_WAIT_P99,
    API_SKEW,
    API_SLO,
    API_SLO_BUDGET,
    API_TERMINATIONS,
    API_THROTTLED,
    API_UPTIME,
    API_WRITE_P99,
    BASELINE_MARK,
    BASELINE_MARK_FLOOR,
    BASELINE_RATIO,
    CONSTRAINT_SHARE,
    ETCD_COMMIT_P99,
    ETCD_FAILED_PROPOSALS,
    ETCD_FRAG_MIN_IN_USE,
    ETCD_FRAGMENTATION,
    ETCD_FSYNC_P99,
    ETCD_LEADER_CHANGES,
    ETCD_MEMBERS_LOST,
    ETCD_NO_LEADER_BELOW,
    ETCD_PEER_RTT_P99,
    ETCD_QUOTA,
    FLOW_DOMINANCE,
    HA_ETCD_MARGIN,
    HA_INSTANCES,
    HA_LEADERS,
    HEARTBEAT_SHARE,
    NODE_DOMAIN_MIN_UNHEALTHY,
    NODE_DOMAIN_SHARE,
    NODE_LEASE_LAG_P99,
    NODE_UNHEALTHY_ABOVE,
    POD_START_FAILURES,
    SCHED_GATED,
    SCHED_QUOTA_REJECTIONS,
    SCHED_QUOTA_USED,
    SCHED_UNSCHEDULABLE,
    STALE_AFTER,
    TALKER_DOMINANCE,
)

__all__ = [  # the rules' thresholds are defined in ktop.model.limits and re-exported
    "APF_REJECTIONS",
    "APF_SEATS",
    "APF_WAIT_P99",
    "API_SKEW",
    "API_SLO",
    "API_SLO_BUDGET",
    "API_TERMINATIONS",
    "API_THROTTLED",
    "API_UPTIME",
    "API_WRITE_P99",
    "BASELINE_RATIO",
    "BY_CODE",
    "CATALOGUE",
    "CONSTRAINT_SHARE",
    "ETCD_COMMIT_P99",
    "ETCD_FAILED_PROPOSALS",
    "ETCD_FRAGMENTATION",
    "ETCD_FRAG_MIN_IN_USE",
    "ETCD_FSYNC_P99",
    "ETCD_LEADER_CHANGES",
    "ETCD_MEMBERS_LOST",
    "ETCD_NO_LEADER_BELOW",
    "ETCD_PEER_RTT_P99",
    "ETCD_QUOTA",
    "FLEET_BY_CODE",
    "FLEET_CATALOGUE",
    "FLEET_MIN_CELLS",
    "FLEET_ONSET_SPREAD",
    "FLOW_DOMINANCE",
    "HA_ETCD_MARGIN",
    "HA_INSTANCES",
    "HA_LEADERS",
    "HEARTBEAT_SHARE",
    "NODE_DOMAIN_MIN_UNHEALTHY",
    "NODE_DOMAIN_SHARE",
    "NODE_LEASE_LAG_P99",
    "NODE_UNHEALTHY_ABOVE",
    "POD_START_FAILURES",
    "SCHED_GATED",
    "SCHED_QUOTA_REJECTIONS",
    "SCHED_QUOTA_USED",
    "SCHED_UNSCHEDULABLE",
    "STALE_AFTER",
    "TALKER_DOMINANCE",
    "FleetRule",
    "Rule",
    "Threshold",
    "limit",
]


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


def _graded(code: str) -> Rule:
    """The entry of a finding that grades one reading (``ktop/analysis/reading_rules.py``):
    its area and threshold are the reading's.
    """
    rule = BY_READING_CODE[code]
    reading = rule.reading
    assert reading.area is not None and reading.threshold is not None, code
    return Rule(code, reading.area, rule.summary, "", rule.source, (reading.threshold,))


CATALOGUE: tuple[Rule, ...] = (
    _graded("KT-APF-001"),
    _graded("KT-APF-002"),
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
    _graded("KT-API-004"),
    _graded("KT-API-005"),
    _graded("KT-API-006"),
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
    _graded("KT-ETCD-003"),
    _graded("KT-ETCD-004"),
    _graded("KT-ETCD-005"),
    Rule(
        "KT-ETCD-006",
        Area.ETCD,
        "etcd database is fragmented",
        "",
        "etcd health (003 §6)",
        (ETCD_FRAGMENTATION, ETCD_FRAG_MIN_IN_USE),
    ),
    _graded("KT-ETCD-007"),
    _graded("KT-ETCD-008"),
    _graded("KT-ETCD-009"),
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
    _graded("KT-NODE-004"),
    Rule(
        "KT-NODE-010",
        Area.NODES,
        "Node state unknown",
        "nodes not listed",
        _TRIAGE_1,
        severity=Severity.UNKNOWN,
    ),
)

BASELINE_CODES: dict[Area, str] = {
    area: spec.baseline_code
    for area, spec in AREAS.items()
    if any(r.area is area for r in MARKABLE)
}
"""Per area with a reading compared with its own normal (``analysis/baseline_marks``), the
code of its finding when far above it."""

CATALOGUE = CATALOGUE + tuple(
    Rule(
        code,
        area,
        "A reading is far above its own normal, though under its limit",
        f"{BASELINE_MARK:g}x or more the median of its per-chunk medians, and at least "
        f"{BASELINE_MARK_FLOOR:g} of its warning limit",
        "ktop: an absolute limit misses a disk 100x slower than its own normal (seeds: the "
        "real baseline is the cluster's own normal window)",
    )
    for area, code in BASELINE_CODES.items()
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
        "the same probable cause turned suspect in several cells within the onset spread, the "
        "cells share a region, and it is not a rollout (KT-FLEET-002 is checked first)",
        Severity.WARNING,
    ),
    FleetRule(
        "KT-FLEET-002",
        "A shared cause during a rollout",
        "the same probable cause turned suspect in several cells within the onset spread, and "
        "every one of them shows a recent apiserver restart (KT-API-003)",
        Severity.WARNING,
    ),
    FleetRule(
        "KT-FLEET-003",
        "A shared cause outside the cells",
        "the same probable cause turned suspect in several cells within the onset spread, with "
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
