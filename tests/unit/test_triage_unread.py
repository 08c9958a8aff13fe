"""Unknown evidence never becomes a bad verdict: an etcd member that was not read is
neither up nor down (with only a kubeconfig, no member read gave "0 of 1 members answer
with a leader ... (quorum lost)"), and a share of nothing is not a number.

Expected margins follow from the member counts chosen (3 members keep quorum with 2).
"""

from __future__ import annotations

from dataclasses import replace

from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Evidence, PathResult, Status, TriageReport, Verdict
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, ScrapeFailed, Target
from ktop.model.values import Val
from tests.functional.factories import AT, member
from tests.unit.snapshots import healthy


def path(report: TriageReport, pid: str) -> PathResult:
    return next(p for p in report.paths if p.id == pid)


def evidence(report: TriageReport, pid: str, eid: str) -> Evidence:
    return next(e for e in path(report, pid).evidence if e.id == eid)


def test_no_etcd_member_read_is_etcd_unknown_never_quorum_lost() -> None:
    """Only a kubeconfig: the etcd pods could not be found, so no member was read."""
    m = ClusterModel()
    why = "pods in kube-system (component=etcd): 403 Forbidden"
    m.apply_all([ScrapeFailed(AT, Target(Component.ETCD, "(pod proxy)"), why)])
    s = replace(healthy(), etcd=m.snapshot().etcd)
    r = triage(s)
    q = evidence(r, "HA", "ha.etcd_quorum")
    assert q.status is Status.UNKNOWN and q.value is None
    assert "quorum lost" not in q.detail and why in q.detail
    assert q.detail.startswith("etcd unknown: no member read")
    assert path(r, "HA").verdict is Verdict.UNKNOWN


def test_members_that_were_not_read_are_neither_up_nor_down() -> None:
    ok = (member("etcd-0", leader=True), member("etcd-1"))
    loopback = replace(member("etcd-2"), error="serves metrics on loopback only")
    s = replace(healthy(), etcd=replace(healthy().etcd, members=(*ok, loopback)))
    # 2 of 3 answer with a leader: quorum 2 holds; whether one more may fail depends on
    # the member not read (margin 0 or 1), so the margin is unknown, not a warning
    q = evidence(triage(s), "HA", "ha.etcd_quorum")
    assert q.status is Status.UNKNOWN and "etcd-2" in q.detail
    # one of three read: quorum may hold or not, never "quorum lost"
    one = (member("etcd-0", leader=True), loopback, replace(loopback, instance="etcd-1"))
    s = replace(healthy(), etcd=replace(healthy().etcd, members=one))
    q = evidence(triage(s), "HA", "ha.etcd_quorum")
    assert q.status is Status.UNKNOWN and "quorum lost" not in q.detail
    assert path(triage(s), "HA").verdict is not Verdict.SUSPECT
    # members that answered without a leader are read: two of three is quorum lost
    lost = (member("etcd-0"), *(replace(member(f"etcd-{i}"), has_leader=Val.of(0)) for i in (1, 2)))
    s = replace(healthy(), etcd=replace(healthy().etcd, members=lost))
    q = evidence(triage(s), "HA", "ha.etcd_quorum")
    assert (q.status, q.value) == (Status.BAD, -1.0) and "quorum lost" in q.detail


def test_shares_of_nothing_are_not_numbers() -> None:
    r = triage(healthy())
    share = evidence(r, "P6", "sched.constraint_share")
    assert share.status is Status.OK and share.value is None  # no unschedulable pod
    flow = evidence(r, "API-429", "apf.dominant_flow")
    assert flow.status is Status.OK and flow.value is None  # no request queued
    empty = replace(healthy().nodes, total=0, ready=0, zones=())
    e = evidence(triage(replace(healthy(), nodes=empty)), "P4", "nodes.zone_disruption")
    assert e.status is Status.UNKNOWN and e.value is None
