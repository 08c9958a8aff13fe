"""Triage paths on hand-built snapshots: each path suspect on its symptom, clear on a near miss.

Expected numbers are written from the inputs by hand (e.g. 200 waiting pods at
100 pods/s is a 2 s recovery floor), never read back from ktop's formatters.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ktop.analysis.triage.baseline import BaselineSource
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.paths import BY_ID, PATHS
from ktop.analysis.triage.types import PathResult, Status, TriageReport, Verdict
from ktop.model.events import PodWait
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.snapshot_scheduler import ReasonCount, StartFailure
from ktop.model.values import Val
from tests.functional.factories import apf_row
from tests.unit.snapshots import healthy, with_apf, with_etcd, with_nodes, with_sched

SUSPECT, CLEAR, UNKNOWN = Verdict.SUSPECT, Verdict.CLEAR, Verdict.UNKNOWN


def path(report: TriageReport, pid: str) -> PathResult:
    return next(p for p in report.paths if p.id == pid)


def verdict(snap: ClusterSnapshot, pid: str, baseline: BaselineSource | None = None) -> Verdict:
    return path(triage(snap, baseline), pid).verdict


def test_catalogue_ids_are_stable_and_complete() -> None:
    ids = [p.id for p in PATHS]
    assert len(ids) == len(set(ids))
    for pid in ("P1", "P2", "P3", "P4", "P5", "P6", "SKEW", "HA", "ETCD", "AXIS"):
        assert pid in BY_ID
    assert {"API-WRITE", "API-CPU", "API-LIST", "API-429", "API-RELIST"} <= set(BY_ID)
    for p in PATHS:
        assert p.evidence and p.symptom and p.direction and p.verdict and p.source


def test_healthy_cluster_has_no_suspect() -> None:
    r = triage(healthy())
    assert r.suspects == ()
    # baseline-relative paths say there is no baseline rather than guess
    assert path(r, "API-CPU").verdict is UNKNOWN
    assert "no baseline yet" in path(r, "API-CPU").conclusion
    assert "no baseline yet" in r.baseline


def test_paths_sorted_most_severe_first() -> None:
    r = triage(with_apf(wait_p99_s=Val.of(6.0)))
    order = [p.verdict for p in r.paths]
    rank = {SUSPECT: 0, UNKNOWN: 1, CLEAR: 2}
    assert order == sorted(order, key=rank.__getitem__)
    assert r.paths[0].verdict is SUSPECT


@pytest.mark.parametrize(("wait", "expected"), [(0.9, CLEAR), (5.5, SUSPECT)])
def test_p1_apf_wait(wait: float, expected: Verdict) -> None:
    assert verdict(with_apf(wait_p99_s=Val.of(wait)), "P1") is expected


def test_p1_names_etcd_as_the_shared_bottleneck() -> None:
    r = triage(with_etcd(backend_commit_p99_s=Val.of(0.8)))
    p1 = path(r, "P1")
    assert p1.verdict is SUSPECT and p1.conclusion.startswith("etcd is the shared bottleneck")


def test_unknown_first_line_evidence_is_never_clear() -> None:
    s = healthy()
    s = replace(s, apf=replace(s.apf, unknown_reason="APF metrics forbidden"))
    p1 = path(triage(s), "P1")
    assert p1.verdict is UNKNOWN
    ev = {e.id: e for e in p1.evidence}
    assert ev["apf.rejected"].status is Status.UNKNOWN
    assert ev["apf.rejected"].value is None and ev["apf.rejected"].detail == "APF metrics forbidden"
    nodes_down = replace(
        healthy(), nodes=replace(healthy().nodes, nodes_known=False, nodes_reason="forbidden")
    )
    assert verdict(nodes_down, "P4") is UNKNOWN


def test_p2_no_resources_fit_vs_near_miss() -> None:
    reasons = (ReasonCount("Insufficient cpu", 40, 20, ("a/b",)),)
    bad = with_sched(pending_by_wait={PodWait.UNSCHEDULABLE: 40}, reasons=reasons)
    p2 = path(triage(bad), "P2")
    assert p2.verdict is SUSPECT and "no resources fit: Insufficient cpu (40 pods)" in p2.conclusion
    assert verdict(with_sched(pending_by_wait={PodWait.GATED: 3}), "P2") is CLEAR
    # P6: plain cpu is not a constraint
    assert verdict(bad, "P6") is CLEAR


def test_p6_constraints_dominate() -> None:
    reasons = (
        ReasonCount("node(s) didn't match pod topology spread constraints", 30, 20, ("a/b",)),
        ReasonCount("Insufficient cpu", 10, 20, ("a/c",)),
    )
    s = with_sched(pending_by_wait={PodWait.UNSCHEDULABLE: 40}, reasons=reasons)
    p6 = path(triage(s), "P6")
    assert p6.verdict is SUSPECT
    assert {e.id: e.value for e in p6.evidence}["sched.constraint_share"] == 30 / 40


def test_p3_groups_by_cause_node_and_zone() -> None:
    fail = StartFailure(
        "sandbox / CNI",
        "FailedCreatePodSandBox",
        12,
        (("n1", 4), ("n2", 4), ("n3", 4)),
        3,
        (("zone-a", 12),),
        ("x/p1",),
    )
    s = with_sched(pending_by_wait={PodWait.BOUND_NOT_STARTED: 12}, start_failures=(fail,))
    p3 = path(triage(s), "P3")
    assert p3.verdict is SUSPECT
    assert "12 of 12 pods in zone zone-a" in p3.conclusion
    one = replace(fail, nodes=(("n1", 12),), node_count=1, zones=(("zone-a", 6), ("zone-b", 6)))
    p3 = path(triage(with_sched(start_failures=(one,))), "P3")
    assert "12 of 12 pods on node n1" in p3.conclusion
    spread = replace(fail, zones=(("zone-a", 6), ("zone-b", 6)))
    p3 = path(triage(with_sched(start_failures=(spread,))), "P3")
    assert p3.conclusion.startswith("sandbox / CNI: 12 of 12 pods across 3 nodes")
    assert "IPAM / CNI" in p3.conclusion
    assert verdict(healthy(), "P3") is CLEAR


def test_p4_one_zone_points_at_its_shared_parts() -> None:
    s = with_nodes(zone_a=(0, 10, ZoneState.FULL_DISRUPTION))
    p4 = path(triage(s), "P4")
    assert p4.verdict is SUSPECT
    assert "10 of 10 NotReady nodes in zone zone-a" in p4.conclusion
    assert "shared parts" in p4.conclusion and "control plane healthy" in p4.conclusion


def test_p4_everywhere_with_unhealthy_etcd_points_at_the_control_path() -> None:
    s = with_nodes(zone_a=(0, 10, ZoneState.FULL_DISRUPTION))
    zb = replace(s.nodes.zones[1], ready=0, not_ready=10, state=ZoneState.FULL_DISRUPTION)
    s = replace(s, nodes=replace(s.nodes, zones=(s.nodes.zones[0], zb), ready=0, not_ready=20))
    m = replace(s.etcd.members[0], has_leader=Val.of(0))
    s = replace(s, etcd=replace(s.etcd, members=(m,)))
    p4 = path(triage(s), "P4")
    assert p4.verdict is SUSPECT and "control path" in p4.conclusion


def test_p4_with_every_apiserver_down_and_no_zone_known_names_the_control_path() -> None:
    """A metrics-only cell whose control plane went away: P4 is suspect from the
    apiservers alone and no node zone is known (it used to crash on the empty zones)."""
    s = healthy()
    down = tuple(replace(r, error="Prometheus reports up == 0") for r in s.apiservers.instances)
    assert down
    nodes = replace(s.nodes, zones=(), nodes_known=False, nodes_reason="metrics-only mode")
    s = replace(s, apiservers=replace(s.apiservers, instances=down), nodes=nodes)
    p4 = path(triage(s), "P4")
    assert p4.verdict is SUSPECT
    assert "node zones not known (metrics-only mode)" in p4.conclusion
    assert "control plane is unhealthy" in p4.conclusion


def test_p4_near_miss_two_not_ready_nodes() -> None:
    s = with_nodes(unhealthy_split=(2, 0))
    assert verdict(s, "P4") is CLEAR


def test_api429_names_the_dominant_flow() -> None:
    s = with_apf(in_queue=Val.of(100), rejected_per_s={"queue-full": Val.of(4.0)})
    flows = (
        apf_row("workload-low", flow="noisy-client", in_queue=80),
        apf_row("workload-low", flow="others", in_queue=20),
    )
    s = replace(s, apf=replace(s.apf, flows=flows))
    p = path(triage(s), "API-429")
    assert p.verdict is SUSPECT
    assert p.conclusion.startswith("noisy-client holds 80 of 100 queued in workload-low")
    assert "back-off" in p.conclusion
    assert {e.id: e.value for e in p.evidence}["apf.dominant_flow"] == 0.8


# 1.8x: a healthy pair of apiservers split 64/36; 2.6x: past the warning
@pytest.mark.parametrize(("skew", "expected"), [(1.8, CLEAR), (2.6, SUSPECT)])
def test_skew(skew: float, expected: Verdict) -> None:
    s = healthy()
    s = replace(s, apiservers=replace(s.apiservers, request_skew=Val.of(skew)))
    assert verdict(s, "SKEW") is expected


@pytest.mark.parametrize(("changes", "expected"), [(0, CLEAR), (1, SUSPECT)])
def test_etcd_leader_changes(changes: int, expected: Verdict) -> None:
    assert verdict(with_etcd(leader_changes=Val.of(changes)), "ETCD") is expected


def test_relist_needs_trigger_and_effect() -> None:
    both = with_etcd(leader_changes=Val.of(1))
    both = replace(both, apf=with_apf(wait_p99_s=Val.of(2.0)).apf)
    assert verdict(both, "API-RELIST") is SUSPECT
    assert verdict(with_etcd(leader_changes=Val.of(1)), "API-RELIST") is CLEAR
    assert verdict(with_apf(wait_p99_s=Val.of(2.0)), "API-RELIST") is CLEAR


def test_axis_node_bound_under_pressure() -> None:
    s = with_apf(wait_p99_s=Val.of(2.0))
    rows = tuple(replace(r, writes_per_s=Val.of(1.0)) for r in s.apiservers.instances)
    s = replace(s, apiservers=replace(s.apiservers, instances=rows))
    # heartbeat 2 writes/s of 2 writes/s in total
    p = path(triage(s), "AXIS")
    assert p.verdict is SUSPECT and "node-bound" in p.conclusion
    assert verdict(healthy(), "AXIS") is CLEAR


def test_capacity_arithmetic() -> None:
    s = with_sched(
        pending_by_wait={PodWait.UNSCHEDULABLE: 150, PodWait.NOT_ATTEMPTED: 50, PodWait.GATED: 9},
        attempts_per_s={"scheduled": Val.of(100.0)},
    )
    cap = {c.id: c for c in triage(s).capacity}
    assert cap["recovery_floor_s"].value == 2.0  # 200 pods / 100 pods/s
    assert cap["heartbeat_writes_per_s"].value == 2.0
    assert cap["capacity_after_zone_loss"].value == 10  # 20 Ready, 10 in the largest zone
    stalled = with_sched(attempts_per_s={"scheduled": Val.unknown("needs two scrapes")})
    floor = {c.id: c for c in triage(stalled).capacity}["recovery_floor_s"]
    assert floor.value is None and floor.detail == "needs two scrapes"
