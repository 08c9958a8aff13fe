"""A running etcd defragmentation: read per member from real dumps, named by triage as
the probable cause of a stall, shown on the etcd panel and drill-down.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.analysis.etcd_defrag import defrag_stall
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.report import to_json
from ktop.analysis.triage.types import Role, Status, TriageReport, Verdict
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, MetricsScraped, Target
from ktop.model.exposition import parse_exposition
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_etcd import EtcdMemberRow, EtcdSnapshot
from ktop.model.values import Val
from ktop.model.wanted import FAMILIES
from ktop.sources.sim.simulator import Simulator
from ktop.ui.render.etcd import panel, tables
from ktop.ui.render.level import SYMBOL, Level

FIXTURES = Path(__file__).parent.parent / "fixtures"
REAL = "nri-k8s-1.35_etcd_metrics.prom"
"""etcd 3.6.6, not defragmenting (``etcd_disk_defrag_inflight 0``)."""
DEFRAG = "nri-k8s-1.35_etcd_metrics.defrag-inflight.prom"
"""The same scrape with the gauge set to 1 (see its .source.txt)."""
OLD = "qubership_etcd-3.4.3_follower_metrics.prom"
"""etcd 3.4.3: before the gauge existed."""
SENTENCE = "etcd-1 is defragmenting: reads and writes on it block until it ends"
DEFRAG_FROM_S = 30.0


def _member(fixture: str) -> EtcdMemberRow:
    parsed = parse_exposition((FIXTURES / fixture).read_text(), FAMILIES[Component.ETCD])
    assert parsed.errors == ()
    model = ClusterModel()
    model.apply(MetricsScraped(1_000.0, Target(Component.ETCD, "etcd-0:2379"), parsed.samples))
    (row,) = model.observe().etcd.members
    return row


def _independent_gauge(fixture: str, name: str) -> float | None:
    """The gauge as prometheus_client's own parser reads it (None: absent)."""
    for fam in text_string_to_metric_families((FIXTURES / fixture).read_text()):
        for s in fam.samples:
            if s.name == name:
                return float(s.value)
    return None


# ----------------------------------------------------------------- the model


@pytest.mark.parametrize(("fixture", "defragmenting"), [(REAL, False), (DEFRAG, True)])
def test_the_member_reads_the_gauge_of_a_real_dump(fixture: str, defragmenting: bool) -> None:
    expected = _independent_gauge(fixture, "etcd_disk_defrag_inflight")
    assert expected == (1.0 if defragmenting else 0.0)
    row = _member(fixture)
    assert row.defrag_inflight == Val.of(expected)
    assert row.defragmenting is defragmenting


def test_an_etcd_before_the_gauge_is_unknown_with_its_reason() -> None:
    assert _independent_gauge(OLD, "etcd_disk_defrag_inflight") is None
    row = _member(OLD)
    assert not row.defrag_inflight.known and not row.defragmenting
    assert row.defrag_inflight.reason == (
        "etcd_disk_defrag_inflight not exposed (added in etcd 3.4.18)"
    )


# ----------------------------------------------------------------- triage


def _played(*, defrag: bool, scenario: str = "steady", until_s: float = 150.0) -> ClusterSnapshot:
    """``scenario`` played with etcd-1 defragmenting from 30 s on (or not)."""
    sim = Simulator(scenario, nodes=60, zones=3, seed=3)
    if defrag:
        sim.etcd.plan = replace(sim.plan, etcd_defrag=(1, DEFRAG_FROM_S, 10_000.0))
    model = ClusterModel()
    model.apply_all(sim.start())
    t = 0.0
    while t < until_s:
        model.apply_all(sim.advance(5.0))
        model.observe()  # one history frame per step, as the hub publishes
        t += 5.0
    return model.observe()


@pytest.fixture(scope="module")
def stalled() -> ClusterSnapshot:
    return _played(defrag=True)


def _etcd_path(report: TriageReport) -> tuple[str, Verdict, dict[str, Status]]:
    p = next(p for p in report.paths if p.id == "ETCD")
    return p.conclusion, p.verdict, {e.id: e.status for e in p.evidence}


def test_a_defragmenting_member_that_stalls_is_named_as_the_probable_cause(
    stalled: ClusterSnapshot,
) -> None:
    etcd1 = next(m for m in stalled.etcd.members if m.instance == "etcd-1:2379")
    assert etcd1.defragmenting
    assert etcd1.wal_fsync_p99_s.or_(0.0) > 0.5  # the simulated disk work waits
    report = triage(stalled)
    assert report.cause is not None and report.cause.id == "ETCD"
    conclusion, verdict, status = _etcd_path(report)
    assert verdict is Verdict.SUSPECT and status["etcd.defrag_inflight"] is Status.BAD
    # named before the generic slow-disk reading it explains
    assert conclusion.startswith(SENTENCE + " (WAL fsync p99 ")
    assert conclusion.index(SENTENCE) < conclusion.index("WAL fsync p99:")
    line = to_json(report, stalled, source={"kind": "test"})["headline"]
    assert line.startswith(f"Probable cause: ETCD etcd health: member etcd-1:2379 ({SENTENCE})")
    # since when: the gauge's own history, from when the defragmentation began
    onset = report.cause.onset
    assert onset is not None and onset - stalled.at <= -100.0


def test_a_slow_disk_without_a_defragmentation_is_not_blamed_on_one() -> None:
    snap = _played(defrag=False, scenario="etcd-slow-disk", until_s=140.0)
    assert all(m.defrag_inflight == Val.of(0.0) for m in snap.etcd.members)
    report = triage(snap)
    conclusion, verdict, status = _etcd_path(report)
    assert verdict is Verdict.SUSPECT and status["etcd.defrag_inflight"] is Status.OK
    assert "defragmenting" not in conclusion
    assert (
        report.named == "" and "defragmenting" not in to_json(report, snap, source={})["headline"]
    )


def test_an_unknown_gauge_names_no_defragmentation(stalled: ClusterSnapshot) -> None:
    why = "etcd_disk_defrag_inflight not exposed (added in etcd 3.4.18)"
    members = tuple(replace(m, defrag_inflight=Val.unknown(why)) for m in stalled.etcd.members)
    snap = replace(stalled, etcd=replace(stalled.etcd, members=members))
    report = triage(snap)
    conclusion, verdict, status = _etcd_path(report)
    assert verdict is Verdict.SUSPECT  # the slow disk alone still makes etcd suspect
    assert status["etcd.defrag_inflight"] is Status.UNKNOWN
    evidence = next(
        e
        for p in report.paths
        if p.id == "ETCD"
        for e in p.evidence
        if e.id == "etcd.defrag_inflight"
    )
    assert evidence.detail == why
    assert "defragmenting" not in conclusion and report.named == ""


def test_a_defragmentation_without_a_stall_is_a_warning_not_the_cause() -> None:
    members = (
        _row("etcd-0:2379", leader=True, defrag=0.0),
        _row("etcd-1:2379", leader=False, defrag=1.0),
    )
    etcd = EtcdSnapshot(members, "etcd-0:2379", True)
    assert defrag_stall(etcd) is None
    snap = replace(_played(defrag=False, until_s=20.0), etcd=etcd)
    report = triage(snap)
    conclusion, verdict, status = _etcd_path(report)
    assert status["etcd.defrag_inflight"] is Status.WARN
    assert verdict is not Verdict.SUSPECT and report.named == ""
    assert "is defragmenting" not in conclusion
    assert all(p.role is not Role.CAUSE or p.id != "ETCD" for p in report.paths)


def test_a_leader_change_while_defragmenting_is_a_stall() -> None:
    members = (
        _row("etcd-0:2379", leader=True, defrag=0.0, changes=1.0),
        _row("etcd-1:2379", leader=False, defrag=1.0, changes=1.0),
    )
    stall = defrag_stall(EtcdSnapshot(members, "etcd-0:2379", True))
    assert stall is not None and stall.instance == "etcd-1:2379"
    assert stall.detail() == f"{SENTENCE} (1 leader change)"


# ----------------------------------------------------------------- the screen


def _row(name: str, *, leader: bool, defrag: float | None, changes: float = 0.0) -> EtcdMemberRow:
    return EtcdMemberRow(
        instance=name,
        is_leader=Val.of(1.0 if leader else 0.0),
        has_leader=Val.of(1.0),
        leader_changes=Val.of(changes),
        wal_fsync_p50_s=Val.of(0.001),
        wal_fsync_p99_s=Val.of(0.002),
        backend_commit_p99_s=Val.of(0.004),
        proposals_pending=Val.of(0.0),
        proposals_failed_per_s=Val.of(0.0),
        db_size_bytes=Val.of(3e9),
        db_in_use_bytes=Val.of(1e9),
        quota_bytes=Val.of(8e9),
        fragmentation=Val.of(2 / 3),
        peer_rtt_p99_s=Val.of(0.001),
        last_ok=100.0,
        defrag_inflight=Val.unknown("not exposed") if defrag is None else Val.of(defrag),
    )


def test_the_panel_and_drill_down_show_the_member_defragmenting() -> None:
    members = (
        _row("etcd-0:2379", leader=True, defrag=0.0),
        _row("etcd-1:2379", leader=False, defrag=1.0),
        _row("etcd-2:2379", leader=False, defrag=None),
    )
    etcd = EtcdSnapshot(members, "etcd-0:2379", True)
    view = panel(etcd, None, 10, 80)
    lines = [line.plain for line in view.lines]
    assert [ln.split()[0:2] for ln in lines[1:4]] == [
        ["etcd-0*", "2.0ms"],
        ["etcd-1", "defrag"],
        ["etcd-2", "2.0ms"],
    ]
    members_table = tables(etcd, 100.0)[0]
    role = [c.key for c in members_table.columns].index("leader")
    warned = f"{SYMBOL[Level.WARN]} defrag"  # graded, so never by colour alone
    assert [r.cells[role].plain for r in members_table.rows] == ["leader", warned, "follower"]
    status = [r.cells[0].plain for r in members_table.rows]
    assert status[1] == SYMBOL[Level.WARN]
