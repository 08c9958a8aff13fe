"""Nodes and pending pods folded by the model: zone states, lease lag, reasons."""

from __future__ import annotations

import pytest

from ktop.analysis.rules import evaluate
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_LEASES,
    FEED_NODES,
    FEED_PENDING_PODS,
    FeedFailed,
    FeedSynced,
    LeaseRenewed,
    NodeRecord,
    NodeUpserted,
    PendingPodRecord,
    PendingPodUpserted,
    PodWait,
    Readiness,
    WarningEvent,
    row_namespace,
)
from ktop.model.snapshot_nodes import ZoneState
from ktop.ui.render import scheduler as render_scheduler

T0 = 10_000.0


def _node(i: int, zone: str, ready: Readiness, rack: str = "r1") -> NodeRecord:
    return NodeRecord(f"n{zone}{i}", "reg", zone, rack, ready, T0 - 100 + i)


def _model(nodes: list[NodeRecord], leases: dict[str, float]) -> ClusterModel:
    m = ClusterModel()
    m.apply_all(NodeUpserted(T0, n) for n in nodes)
    m.apply_all(LeaseRenewed(T0, k, v) for k, v in leases.items())
    m.apply_all([FeedSynced(T0, FEED_NODES), FeedSynced(T0, FEED_LEASES)])
    return m


def test_zone_states_follow_the_controller_rule() -> None:
    nodes = (
        [_node(i, "a", Readiness.TRUE) for i in range(10)]
        + [_node(i, "b", Readiness.UNKNOWN) for i in range(6)]
        + [_node(i, "b", Readiness.TRUE) for i in range(6, 10)]
        + [_node(i, "c", Readiness.FALSE) for i in range(4)]
    )
    snap = _model(nodes, {}).snapshot().nodes
    states = {z.zone: z.state for z in snap.zones}
    assert states == {
        "a": ZoneState.NORMAL,
        "b": ZoneState.PARTIAL_DISRUPTION,  # 6 of 10 not ready >= 0.55 and > 2
        "c": ZoneState.FULL_DISRUPTION,
    }
    assert (snap.total, snap.ready, snap.not_ready, snap.unknown) == (24, 14, 4, 6)
    zb = next(z for z in snap.zones if z.zone == "b")
    assert zb.unhealthy == 6 and zb.total == 10


def test_excluded_nodes_do_not_count_towards_zone_state() -> None:
    excluded = [
        NodeRecord(f"x{i}", "reg", "a", "r", Readiness.FALSE, None, exclude_disruption=True)
        for i in range(5)
    ]
    snap = _model([*excluded, _node(0, "a", Readiness.TRUE)], {}).snapshot().nodes
    assert snap.zones[0].state is ZoneState.NORMAL


def test_lease_lag_and_not_ready_list() -> None:
    nodes = [_node(i, "a", Readiness.TRUE) for i in range(3)] + [_node(9, "a", Readiness.UNKNOWN)]
    leases = {"na0": T0 - 5, "na1": T0 - 10, "na2": T0 - 1, "na9": T0 - 120}
    snap = _model(nodes, leases).snapshot().nodes
    assert snap.zones[0].lease_lag_max_s.value == pytest.approx(120)
    assert [n.name for n in snap.not_ready_nodes] == ["na9"]
    assert snap.not_ready_nodes[0].lease_lag_s.value == pytest.approx(120)


def test_nodes_unknown_until_listed_and_failed_feed_keeps_reason() -> None:
    m = ClusterModel()
    snap = m.snapshot()
    assert not snap.nodes.nodes_known
    assert any(f.code == "KT-NODE-010" for f in evaluate(snap))
    m.apply(FeedFailed(T0, FEED_NODES, "403 Forbidden: list nodes"))
    snap = m.snapshot()
    assert not snap.nodes.nodes_known and "403" in snap.nodes.nodes_reason


MSG_GPU = (
    "0/6 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
    "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "4 Insufficient nvidia.com/gpu. preemption: 0/6 nodes are available: "
    "2 Preemption is not helpful for scheduling, 4 No preemption victims found for incoming pod."
)


def test_pending_reasons_are_aggregated_and_quota_kept_apart() -> None:
    m = ClusterModel()
    pods = [
        PendingPodRecord("ml", f"train-{i}", T0 - 60 + i, PodWait.UNSCHEDULABLE, "", MSG_GPU)
        for i in range(5)
    ]
    pods.append(PendingPodRecord("batch", "gated-0", T0 - 30, PodWait.GATED))
    m.apply_all(PendingPodUpserted(T0, p) for p in pods)
    m.apply(FeedSynced(T0, FEED_PENDING_PODS))
    m.apply(
        WarningEvent(
            T0,
            "FailedCreate",
            "batch",
            "ReplicaSet",
            "rs",
            'pods "x" is forbidden: exceeded quota: compute',
            3,
        )
    )
    s = m.snapshot().scheduler
    assert s.pending_by_wait[PodWait.UNSCHEDULABLE] == 5
    assert s.pending_by_wait[PodWait.GATED] == 1
    top = {r.reason: r for r in s.reasons}
    gpu = next(r for k, r in top.items() if "nvidia.com/gpu" in k)
    assert gpu.pods == 5 and gpu.nodes == 4 and len(gpu.sample_pods) == 3
    assert s.quota_rejections == 3
    assert s.oldest_pending_s.value == pytest.approx(60)
    codes = {f.code for f in evaluate(m.snapshot())}
    assert {"KT-SCHED-001", "KT-SCHED-002", "KT-SCHED-003"} <= codes


def test_pods_listed_as_rows_make_the_unschedulable_count_an_estimate_said_so() -> None:
    m = ClusterModel()
    whole = [
        PendingPodRecord("ml", f"train-{i}", T0 - 60, PodWait.UNSCHEDULABLE, "", MSG_GPU)
        for i in range(10)
    ]
    whole += [PendingPodRecord("ml", f"new-{i}", T0 - 5, PodWait.NOT_ATTEMPTED) for i in range(30)]
    # 200 rows: 100 names, each in two namespaces (ordinals 1 and 2)
    rows = [
        PendingPodRecord(row_namespace(k), f"job-{i}", T0 - 90, PodWait.NOT_BOUND)
        for i in range(100)
        for k in (1, 2)
    ]
    m.apply_all(PendingPodUpserted(T0, p) for p in [*whole, *rows])
    m.apply(FeedSynced(T0, FEED_PENDING_PODS))
    s = m.snapshot().scheduler
    assert sum(s.pending_by_wait.values()) == 240 and s.pending_rows == 200
    # a quarter of the unbound pods read whole are unschedulable: a quarter of all unbound
    assert s.unschedulable_estimated and s.unschedulable() == round(240 * 10 / 40)
    (f,) = [f for f in evaluate(m.snapshot()) if f.code == "KT-SCHED-001"]
    assert f.title.startswith("about 60 pods unschedulable")
    assert "of the pods read whole" in f.title
    panel = render_scheduler.panel(s, None, 8, 80).plain
    assert "reasons of 40 pods read whole; 200 listed as rows" in panel
    table = render_scheduler.pending_table(s, T0)
    assert table.lazy is not None and table.lazy.count == 240
    shown = [table.lazy.row(i) for i in range(table.lazy.count)]
    row_cells = [[c.plain for c in r.cells] for r in shown if r.key.startswith("?")]
    assert len(row_cells) == 200 and len({r.key for r in shown}) == 240
    assert all(c[0] == "?" and c[4] == "not read (a row)" for c in row_cells)
    reasons, waits, *_ = render_scheduler.tables(s, T0)
    assert {r.key: r.cells[1].plain for r in waits.rows}["not-bound"] == "200"
    assert "of the 40 pods read whole; 200 more listed as rows" in reasons.title


def test_without_rows_the_unschedulable_count_is_counted() -> None:
    m = ClusterModel()
    pods = [
        PendingPodRecord("ml", f"t-{i}", T0, PodWait.UNSCHEDULABLE, "", MSG_GPU) for i in range(7)
    ]
    m.apply_all(PendingPodUpserted(T0, p) for p in pods)
    m.apply(FeedSynced(T0, FEED_PENDING_PODS))
    s = m.snapshot().scheduler
    assert not s.unschedulable_estimated and s.unschedulable() == 7 and s.pending_rows == 0
    assert "read whole" not in render_scheduler.panel(s, None, 8, 80).plain


def test_every_not_ready_node_is_listed_longest_first_beyond_any_cap() -> None:
    nodes = [
        NodeRecord(
            f"n{i:04d}", "reg", "a", f"r{i % 7}", Readiness.FALSE, T0 - 5000 + (i * 37) % 900
        )
        for i in range(1500)
    ]
    leases = {n.name: T0 - 60 - (i % 5) for i, n in enumerate(nodes) if i % 3}
    m = _model([*nodes, _node(0, "a", Readiness.TRUE)], leases)
    listed = m.snapshot().nodes.not_ready_nodes
    expected = [n.name for n in sorted(nodes, key=lambda n: (n.ready_since, n.name))]
    assert len(listed) == 1500
    assert [n.name for n in listed] == expected
    by_name = {n.name: n for n in listed}
    for i, node in enumerate(nodes):
        lag = by_name[node.name].lease_lag_s
        if i % 3:
            assert lag.value == pytest.approx(60 + i % 5)
        else:
            assert lag.value is None and lag.reason == "no lease"
    assert listed[-1].name == expected[-1] and listed[2:4][1].name == expected[3]


def test_the_not_ready_list_is_sorted_again_only_after_a_change() -> None:
    nodes = [_node(i, "a", Readiness.UNKNOWN) for i in range(50)]
    m = _model(nodes, {"na1": T0 - 30})
    first = m.snapshot().nodes.not_ready_nodes
    m.apply_all([LeaseRenewed(T0, "na0", T0 - 99)])  # a not-Ready node's Lease
    second = m.snapshot().nodes.not_ready_nodes
    assert second.records is not first.records
    assert second[0].lease_lag_s.value == pytest.approx(99)
    m.apply_all([NodeUpserted(T0, _node(60, "a", Readiness.TRUE))])  # a Ready node: no change
    third = m.snapshot().nodes.not_ready_nodes
    assert third.records is second.records
    m.apply_all([NodeUpserted(T0, _node(3, "a", Readiness.TRUE))])  # one recovers
    fourth = m.snapshot().nodes.not_ready_nodes
    assert "na3" not in {n.name for n in fourth} and len(fourth) == 49
