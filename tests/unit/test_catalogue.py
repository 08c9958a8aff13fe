"""Every finding code, at its boundaries: just below and above each threshold, and unknown.

The expected limits are written here from their sources (etcd and kubernetes
mixins, the kubelet's lease timing, the triage paths), not read from the
catalogue, so a changed catalogue number fails these tests. The screen's
colour for the same reading is checked against the same limits.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import pytest

from ktop.analysis.catalogue import BASELINE_CODES, BY_CODE, CATALOGUE
from ktop.analysis.findings import Severity
from ktop.analysis.rules import evaluate
from ktop.model.events import Area, PodWait
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_apiservers import SloRow
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.snapshot_scheduler import QuotaUsage
from ktop.model.values import Val
from tests.unit.snapshots import AT, healthy, with_apf, with_api, with_etcd, with_nodes, with_sched

OK, INFO, WARN, CRIT, UNK = (
    Severity.OK,
    Severity.INFO,
    Severity.WARNING,
    Severity.CRITICAL,
    Severity.UNKNOWN,
)
UNKNOWN = Val.unknown("not collected")

Make = Callable[[Val], ClusterSnapshot]


def worst_of(code: str, snap: ClusterSnapshot) -> Severity:
    """The worst severity ``code`` reaches on ``snap``; OK when it does not fire."""
    return max((f.severity for f in evaluate(snap) if f.code == code), default=OK)


def _seats(x: Val) -> ClusterSnapshot:
    return with_apf(seats_in_use=Val.of(x.or_(0) * 100) if x.known else x, seats_limit=Val.of(100))


def _frag(x: Val) -> ClusterSnapshot:
    return with_etcd(fragmentation=x, db_in_use_bytes=Val.of(200e6))


def _frag_in_use(x: Val) -> ClusterSnapshot:
    return with_etcd(fragmentation=Val.of(0.6), db_in_use_bytes=x)


def _quota(x: Val) -> ClusterSnapshot:
    size = Val.of(x.or_(0) * 8e9) if x.known else x
    return with_etcd(db_size_bytes=size, quota_bytes=Val.of(8e9))


def _uptime(x: Val) -> ClusterSnapshot:
    return with_api(start_time=Val.of(AT - x.value) if x.value is not None else x)


def _skew(x: Val) -> ClusterSnapshot:
    s = healthy()
    return replace(s, apiservers=replace(s.apiservers, request_skew=x))


def _watch_skew(x: Val) -> ClusterSnapshot:
    s = healthy()
    return replace(s, apiservers=replace(s.apiservers, watch_skew=x))


def _budget(x: Val) -> ClusterSnapshot:
    slo = SloRow("mutating", 1.0, Val.of(0.2), Val.of(0.0), budget_burned=x, budget_since=AT - 60)
    return with_api(slos=(slo,))


def _lease(x: Val) -> ClusterSnapshot:
    return with_nodes(lease_lag_p99_s=x)


# code, snapshot maker, [(reading, expected severity)]
BOUNDARIES: list[tuple[str, Make, list[tuple[float, Severity]]]] = [
    ("KT-APF-001", lambda x: with_apf(rejected_per_s={"queue-full": x}), [(0, OK), (0.01, CRIT)]),
    (
        "KT-APF-002",
        lambda x: with_apf(wait_p99_s=x),
        [(1.0, OK), (1.01, WARN), (5.0, WARN), (5.01, CRIT)],
    ),
    ("KT-APF-003", _seats, [(0.89, OK), (0.9, WARN)]),
    ("KT-API-001", _skew, [(2.5, OK), (2.51, WARN), (5.0, WARN), (5.01, CRIT)]),
    ("KT-API-002", _watch_skew, [(2.5, OK), (2.51, WARN), (5.0, WARN), (5.01, CRIT)]),
    ("KT-API-003", _uptime, [(600, OK), (599, WARN)]),
    ("KT-API-004", lambda x: with_api(throttled_per_s=x), [(0, OK), (0.01, WARN)]),
    ("KT-API-005", lambda x: with_api(terminations_per_s=x), [(0, OK), (0.01, WARN)]),
    ("KT-API-006", _budget, [(0.5, OK), (0.51, WARN), (1.0, WARN), (1.01, CRIT)]),
    (
        "KT-ETCD-002",
        lambda x: with_etcd(leader_changes=x),
        [(0, OK), (1, WARN), (3, WARN), (4, CRIT)],
    ),
    (
        "KT-ETCD-003",
        lambda x: with_etcd(wal_fsync_p99_s=x),
        [(0.5, OK), (0.51, WARN), (1.0, WARN), (1.01, CRIT)],
    ),
    (
        "KT-ETCD-004",
        lambda x: with_etcd(backend_commit_p99_s=x),
        [(0.25, OK), (0.26, WARN), (0.5, WARN), (0.51, CRIT)],
    ),
    ("KT-ETCD-005", _quota, [(0.8, OK), (0.81, WARN), (0.95, WARN), (0.96, CRIT)]),
    ("KT-ETCD-006", _frag, [(0.5, OK), (0.51, WARN)]),
    ("KT-ETCD-006", _frag_in_use, [(104857600, OK), (104857601, WARN)]),
    ("KT-ETCD-007", lambda x: with_etcd(proposals_failed_per_s=x), [(0, OK), (0.01, WARN)]),
    ("KT-ETCD-008", lambda x: with_etcd(peer_rtt_p99_s=x), [(0.15, OK), (0.151, WARN)]),
    # etcd maintenance guide: a standing alarm (NOSPACE) makes the cluster refuse writes
    ("KT-ETCD-009", lambda x: with_etcd(alarms=x, alarm_types=("NOSPACE",)), [(0, OK), (1, CRIT)]),
    ("KT-NODE-004", _lease, [(20, OK), (20.5, WARN), (40, WARN), (40.5, CRIT)]),
]


@pytest.mark.parametrize(
    ("code", "make", "cases"), BOUNDARIES, ids=[f"{b[0]}-{i}" for i, b in enumerate(BOUNDARIES)]
)
def test_threshold_boundaries(code: str, make: Make, cases: list[tuple[float, Severity]]) -> None:
    assert worst_of(code, healthy()) is OK
    got = [(x, worst_of(code, make(Val.of(x)))) for x, _ in cases]
    assert got == cases
    # Unknown input: the code does not call the reading healthy or unhealthy.
    assert worst_of(code, make(UNKNOWN)) is OK
    for t in BY_CODE[code].thresholds:
        assert t.grade_val(UNKNOWN) is UNK
        # no observations (nothing measured) is not healthy either
        assert t.grade_val(Val.nothing("nothing waited")) is UNK


def test_no_leader_is_critical_and_unknown_leadership_is_not_ok() -> None:
    assert worst_of("KT-ETCD-001", with_etcd(has_leader=Val.of(1))) is OK
    assert worst_of("KT-ETCD-001", with_etcd(has_leader=Val.of(0))) is CRIT
    dead = with_etcd(has_leader=UNKNOWN, error="connection refused")
    assert worst_of("KT-ETCD-001", dead) is OK
    assert worst_of("KT-ETCD-010", dead) is UNK


def test_unknown_area_codes() -> None:
    s = healthy()
    assert worst_of("KT-APF-010", replace(s, apf=replace(s.apf, unknown_reason="no APF"))) is UNK
    assert worst_of("KT-API-010", with_api(error="503")) is UNK
    assert worst_of("KT-ETCD-010", replace(s, etcd=replace(s.etcd, unknown_reason="none"))) is UNK
    sched = replace(s.scheduler, pods_known=False, pods_reason="forbidden")
    assert worst_of("KT-SCHED-010", replace(s, scheduler=sched)) is UNK
    nodes = replace(s.nodes, nodes_known=False, nodes_reason="forbidden")
    assert worst_of("KT-NODE-010", replace(s, nodes=nodes)) is UNK
    for code in ("KT-APF-010", "KT-API-010", "KT-ETCD-010", "KT-SCHED-010", "KT-NODE-010"):
        assert worst_of(code, s) is OK


def test_scheduler_counts() -> None:
    from ktop.model.snapshot_scheduler import ReasonCount

    one = (ReasonCount("Insufficient cpu", 1, 3, ("a/b",)),)
    assert worst_of("KT-SCHED-001", with_sched(reasons=())) is OK
    unsched = {PodWait.UNSCHEDULABLE: 1}
    assert worst_of("KT-SCHED-001", with_sched(reasons=one, pending_by_wait=unsched)) is WARN
    assert worst_of("KT-SCHED-002", with_sched(pending_by_wait={PodWait.GATED: 0})) is OK
    assert worst_of("KT-SCHED-002", with_sched(pending_by_wait={PodWait.GATED: 1})) is INFO
    assert worst_of("KT-SCHED-003", with_sched(quota_rejections=0)) is OK
    assert worst_of("KT-SCHED-003", with_sched(quota_rejections=1)) is WARN

    def quota(used: float) -> ClusterSnapshot:
        return with_sched(quotas_near_limit=(QuotaUsage("ns", "q", "pods", used, 100),))

    assert [worst_of("KT-SCHED-004", quota(x)) for x in (89, 90, 99, 100)] == [OK, INFO, INFO, WARN]


def test_zone_states_and_confinement() -> None:
    full = with_nodes(zone_a=(0, 10, ZoneState.FULL_DISRUPTION))
    assert worst_of("KT-NODE-001", full) is CRIT
    partial = with_nodes(zone_a=(4, 10, ZoneState.PARTIAL_DISRUPTION))
    assert worst_of("KT-NODE-002", partial) is WARN
    assert worst_of("KT-NODE-001", healthy()) is OK and worst_of("KT-NODE-002", healthy()) is OK

    # 9 of 10 unhealthy in zone-a is confined (>= 90 %); 8 of 10 is not.
    assert worst_of("KT-NODE-003", with_nodes(unhealthy_split=(9, 1))) is INFO
    assert worst_of("KT-NODE-003", with_nodes(unhealthy_split=(8, 2))) is OK
    # two unhealthy nodes say nothing about a domain
    assert worst_of("KT-NODE-003", with_nodes(unhealthy_split=(2, 0))) is OK
    assert worst_of("KT-NODE-003", with_nodes(unhealthy_split=(3, 0))) is INFO


def test_every_code_is_tested_here() -> None:
    tested = {b[0] for b in BOUNDARIES} | {
        "KT-ETCD-001",
        "KT-APF-010",
        "KT-API-010",
        "KT-ETCD-010",
        "KT-SCHED-010",
        "KT-NODE-010",
        "KT-SCHED-001",
        "KT-SCHED-002",
        "KT-SCHED-003",
        "KT-SCHED-004",
        "KT-NODE-001",
        "KT-NODE-002",
        "KT-NODE-003",
        # a reading far above its normal, one code per area: tests/unit/test_baseline_marks.py
        *BASELINE_CODES.values(),
    }
    assert tested == set(BY_CODE)


def test_codes_are_unique_and_well_formed() -> None:
    codes = [r.code for r in CATALOGUE]
    assert len(codes) == len(set(codes)) == len(BY_CODE)
    assert all(re.fullmatch(r"KT-[A-Z]+-\d{3}", c) for c in codes)
    assert {r.area for r in CATALOGUE} == set(Area)


SCREEN: list[tuple[str, list[tuple[float, str]]]] = [
    # a reading of the registry (or a threshold of ktop.model.limits), the levels expected at
    # values around its limits, written out by hand from the published limits
    ("etcd.fsync_p99_s", [(0.5, "NEUTRAL"), (0.51, "WARN"), (1.01, "CRIT")]),
    ("etcd.commit_p99_s", [(0.25, "NEUTRAL"), (0.26, "WARN"), (0.51, "CRIT")]),
    ("api.request_skew", [(2.5, "NEUTRAL"), (2.51, "WARN"), (5.01, "CRIT")]),
    ("apf.wait_p99_s", [(1.0, "NEUTRAL"), (1.01, "WARN"), (5.01, "CRIT")]),
    ("nodes.lease_lag_p99_s", [(20, "NEUTRAL"), (20.5, "WARN"), (40.5, "CRIT")]),
    ("etcd.db_quota_ratio", [(0.8, "NEUTRAL"), (0.81, "WARN"), (0.96, "CRIT")]),
    ("apf.rejected_per_s", [(0, "NEUTRAL"), (0.01, "CRIT")]),
    ("apf.in_queue", [(0, "NEUTRAL"), (1, "WARN")]),
    ("ETCD_LEADER_CHANGES", [(0, "NEUTRAL"), (1, "WARN"), (4, "CRIT")]),
    # the SLO budget's share burned: half of it a warning, past the whole of it critical
    ("API_SLO_BUDGET", [(0.5, "NEUTRAL"), (0.51, "WARN"), (1.0, "WARN"), (1.01, "CRIT")]),
    # inclusive: the limit itself counts (the old screen rule missed this)
    ("APF_SEATS", [(0.89, "NEUTRAL"), (0.9, "WARN")]),
    # lower is worse
    ("HA_INSTANCES", [(2, "NEUTRAL"), (1, "WARN"), (0, "CRIT")]),
]


@pytest.mark.parametrize(("what", "cases"), SCREEN, ids=[s[0] for s in SCREEN])
def test_screen_colours_at_the_same_limits(what: str, cases: list[tuple[float, str]]) -> None:
    from ktop.model import limits
    from ktop.model.signals import BY_METRIC
    from ktop.ui.render import level

    def look(v: Val) -> level.Level:
        if what.isupper():
            return level.graded(getattr(limits, what), v)
        return level.reading_level(BY_METRIC[what], v)

    assert [(x, look(Val.of(x)).name) for x, _ in cases] == cases
    assert look(UNKNOWN) is level.Level.UNKNOWN


def test_fixture_findings_use_catalogued_codes_of_their_area() -> None:
    from tests.functional.factories import findings

    for f in findings():
        assert f.code in BY_CODE, f.code
        assert BY_CODE[f.code].area is f.area
