"""The HA readiness path: apiserver count, etcd quorum, scheduler / controller-manager leaders.

Each threshold is checked just inside and just past its limit, and with the input
unknown. Expected severities follow from the counts the tests choose (3 etcd members
keep quorum with 2: one may fail), not from ktop's formatters.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import PathResult, Status, Verdict
from ktop.model.cluster import ClusterModel
from ktop.model.events import LOAD_BALANCED, Component, MetricsScraped, Sample, ScrapeFailed, Target
from ktop.model.leaders import LEADER_METRIC, LeaderStatus
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.values import Val
from tests.functional.factories import AT, apiserver, member
from tests.unit.snapshots import healthy

SCHED, CM = Component.SCHEDULER, Component.CONTROLLER_MANAGER
Gauges = tuple[float | None, ...]


def leaders(
    sched: tuple[float | None, ...], cm: tuple[float | None, ...]
) -> tuple[LeaderStatus, ...]:
    def rows(values: tuple[float | None, ...], name: str) -> tuple[tuple[str, Val], ...]:
        return tuple(
            (
                f"{name}-{i}",
                Val.of(v) if v is not None else Val.unknown(f"{LEADER_METRIC} not exposed"),
            )
            for i, v in enumerate(values)
        )

    return (LeaderStatus(SCHED, rows(sched, "sched")), LeaderStatus(CM, rows(cm, "cm")))


def ha_ready() -> ClusterSnapshot:
    """Three apiserver identities, three etcd members with a leader, one leader each."""
    s = healthy()
    members = (member("etcd-0", leader=True), member("etcd-1"), member("etcd-2"))
    return replace(
        s,
        apiservers=replace(s.apiservers, identities=3),
        etcd=replace(s.etcd, members=members),
        leaders=leaders((1, 0), (0, 1)),
    )


def ha(s: ClusterSnapshot) -> PathResult:
    return next(p for p in triage(s).paths if p.id == "HA")


def status(s: ClusterSnapshot, eid: str) -> tuple[Status, float | None, str]:
    e = next(e for e in ha(s).evidence if e.id == eid)
    return e.status, e.value, e.detail


def test_a_ready_control_plane_is_clear_and_says_what_it_cannot_see() -> None:
    p = ha(ha_ready())
    assert p.verdict is Verdict.CLEAR
    assert "standby's informer sync cannot be seen" in p.conclusion
    assert status(ha_ready(), "ha.scheduler_leader")[:2] == (Status.OK, 1.0)
    assert "sched-0 leads" in status(ha_ready(), "ha.scheduler_leader")[2]
    assert status(ha_ready(), "ha.controller_manager_leader")[:2] == (Status.OK, 1.0)
    assert status(ha_ready(), "ha.standby_sync")[0] is Status.UNKNOWN


@pytest.mark.parametrize(
    ("identities", "expected"),
    [(3, Status.OK), (2, Status.OK), (1, Status.WARN)],
)
def test_apiserver_identities(identities: int, expected: Status) -> None:
    s = ha_ready()
    s = replace(s, apiservers=replace(s.apiservers, identities=identities))
    assert status(s, "ha.apiservers")[:2] == (expected, float(identities))


def test_without_identity_leases_the_scraped_instances_count() -> None:
    s = ha_ready()
    one_down = (apiserver(0, rps=1, start=AT), apiserver(1, rps=1, start=AT, error="refused"))
    s = replace(s, apiservers=replace(s.apiservers, identities=None, instances=one_down))
    st, value, detail = status(s, "ha.apiservers")
    assert (st, value) == (Status.WARN, 1.0)
    assert detail == "1 of 2 instances scraped answer (identity Leases not read)"
    # no identity Lease at all (a cluster before 1.26) is not zero apiservers
    s = replace(s, apiservers=replace(s.apiservers, identities=0))
    assert status(s, "ha.apiservers")[:2] == (Status.WARN, 1.0)
    both_down = tuple(replace(r, error="refused") for r in one_down)
    s = replace(s, apiservers=replace(s.apiservers, instances=both_down))
    assert status(s, "ha.apiservers")[:2] == (Status.BAD, 0.0)
    assert ha(s).verdict is Verdict.SUSPECT


def test_only_the_load_balanced_address_is_unknown() -> None:
    s = ha_ready()
    lb = replace(apiserver(0, rps=1, start=AT), instance=LOAD_BALANCED)
    s = replace(s, apiservers=replace(s.apiservers, identities=None, instances=(lb,)))
    st, value, detail = status(s, "ha.apiservers")
    assert st is Status.UNKNOWN and value is None
    assert "identity Leases not read" in detail
    assert ha(s).verdict is Verdict.UNKNOWN


@pytest.mark.parametrize(
    ("down", "no_leader", "margin", "expected", "verdict"),
    [
        ((), (), 1.0, Status.OK, Verdict.CLEAR),  # 3 of 3, quorum 2: one may fail
        # a member refusing connections while the others answer is lost, not unknown (a
        # warning here; it makes the ETCD path suspect, which explains HA)
        (("etcd-2",), (), 0.0, Status.WARN, Verdict.CLEAR),
        # two refuse: the leader the third still reports cannot keep a quorum
        (("etcd-1", "etcd-2"), (), -1.0, Status.BAD, Verdict.SUSPECT),
        # one refuses, one answers without a leader: 1 of 3 counts, quorum lost
        (("etcd-2",), ("etcd-1",), -1.0, Status.BAD, Verdict.SUSPECT),
        ((), ("etcd-1", "etcd-2"), -1.0, Status.BAD, Verdict.SUSPECT),  # 1 of 3: quorum lost
    ],
)
def test_etcd_quorum_margin(
    down: tuple[str, ...],
    no_leader: tuple[str, ...],
    margin: float | None,
    expected: Status,
    verdict: Verdict,
) -> None:
    s = ha_ready()
    members = tuple(
        replace(m, error="connection refused")
        if m.instance in down
        else replace(m, has_leader=Val.of(0))
        if m.instance in no_leader
        else m
        for m in s.etcd.members
    )
    s = replace(s, etcd=replace(s.etcd, members=members))
    assert status(s, "ha.etcd_quorum")[:2] == (expected, margin)
    assert ha(s).verdict is verdict
    for name in down:
        assert f"{name}: connection refused" in status(s, "ha.etcd_quorum")[2]


def test_a_single_etcd_member_has_no_fault_tolerance() -> None:
    s = ha_ready()
    s = replace(s, etcd=replace(s.etcd, members=(member("etcd-0", leader=True),)))
    st, value, detail = status(s, "ha.etcd_quorum")
    assert (st, value) == (Status.WARN, 0.0)
    assert "single member" in detail


def test_a_member_without_a_leader_is_not_counted() -> None:
    s = ha_ready()
    members = (*s.etcd.members[:2], replace(s.etcd.members[2], has_leader=Val.of(0)))
    s = replace(s, etcd=replace(s.etcd, members=members))
    assert status(s, "ha.etcd_quorum")[:2] == (Status.WARN, 0.0)
    assert ha(s).verdict is Verdict.SUSPECT  # etcd.has_leader: a member without a leader


def test_etcd_unread_is_unknown() -> None:
    s = ha_ready()
    s = replace(s, etcd=replace(s.etcd, members=(), unknown_reason="etcd metrics forbidden"))
    assert status(s, "ha.etcd_quorum") == (Status.UNKNOWN, None, "etcd metrics forbidden")


@pytest.mark.parametrize(
    ("sched", "expected", "verdict"),
    [
        ((0, 1), Status.OK, Verdict.CLEAR),
        ((0, 0), Status.BAD, Verdict.SUSPECT),  # two read, none leads
        ((0,), Status.WARN, Verdict.CLEAR),  # the one read is a standby: leader not read
        ((None, None), Status.UNKNOWN, Verdict.UNKNOWN),  # leader election not exposed
    ],
)
def test_scheduler_leader(sched: Gauges, expected: Status, verdict: Verdict) -> None:
    s = replace(ha_ready(), leaders=leaders(sched, (1,)))
    assert status(s, "ha.scheduler_leader")[0] is expected
    assert ha(s).verdict is verdict


def test_controller_manager_not_read_is_unknown_with_the_reason() -> None:
    s = replace(ha_ready(), leaders=(LeaderStatus(SCHED, (("s", Val.of(1)),)),))
    st, _, detail = status(s, "ha.controller_manager_leader")
    assert st is Status.UNKNOWN and detail == "no controller-manager metrics read"
    s = replace(ha_ready(), leaders=(*leaders((1,), ())[:1], LeaderStatus(CM, (), "forbidden")))
    assert status(s, "ha.controller_manager_leader") == (Status.UNKNOWN, None, "forbidden")


def test_the_model_reads_the_gauge_per_scraped_instance() -> None:
    m = ClusterModel()
    name = (("name", "kube-scheduler"),)
    for inst, v in (("sched-a", 1.0), ("sched-b", 0.0)):
        sample = Sample(LEADER_METRIC, name, v)
        m.apply_all([MetricsScraped(AT, Target(SCHED, inst), (sample,))])
    m.apply_all([ScrapeFailed(AT, Target(CM, "cm-a"), "connection refused")])
    snap = m.snapshot()
    by = {s.component: s for s in snap.leaders}
    assert by[SCHED].leaders == ("sched-a",)
    assert by[SCHED].known == (("sched-a", 1.0), ("sched-b", 0.0))
    assert [(i, v.reason) for i, v in by[CM].instances] == [("cm-a", "connection refused")]
