"""Baselines and trends: numbers worked out by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktop.analysis.rules import evaluate
from ktop.analysis.trends import Direction, baseline, signal_baseline, signal_trend, trend
from ktop.model.events import PodWait
from ktop.model.history import History
from ktop.model.signals import BY_METRIC, read_signals
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import MetricsOnlyNodes, ZoneHealth, ZoneState
from ktop.model.values import Val
from tests.unit.snapshots import AT, healthy, with_api, with_etcd, with_nodes, with_sched

T0 = 1_000.0


def test_baseline_is_median_and_scaled_mad_of_the_quiet_window() -> None:
    quiet = [
        (T0 + i, v) for i, v in enumerate([1.0, 2.0, 3.0, 4.0, 100.0, 2.0, 3.0, 2.0, 3.0, 2.0])
    ]
    incident = [(T0 + 400 + i, 500.0) for i in range(50)]
    now = T0 + 450
    b = baseline(quiet + incident, now, exclude_recent_s=300)
    assert b is not None
    # sorted quiet values: 1 2 2 2 2 3 3 3 4 100 -> median 2.5;
    # |v - 2.5|: 1.5 .5 .5 .5 .5 .5 .5 .5 1.5 97.5 -> median 0.5
    assert b.median == 2.5
    assert b.spread == pytest.approx(0.5 * 1.4826)
    assert (b.samples, b.start, b.end) == (10, T0, T0 + 9)
    assert b.deviation(500.0) == pytest.approx((500 - 2.5) / (0.5 * 1.4826))


def test_no_baseline_without_enough_quiet_history() -> None:
    assert baseline([(T0 + i, 1.0) for i in range(5)], T0 + 400, exclude_recent_s=300) is None


def test_trend_since_start_of_current_breach_and_getting_worse() -> None:
    pts = [(T0 + i, 0.0) for i in range(100)]
    pts += [(T0 + 100 + i, 1.0 + i) for i in range(120)]  # breaching and rising
    t = trend(pts, threshold=0.5, recent_s=60)
    assert t.since == T0 + 100
    assert not t.since_before_history
    assert t.direction is Direction.WORSE


def test_trend_better_when_falling_and_bound_when_history_starts_in_breach() -> None:
    pts = [(T0 + i, 200.0 - i) for i in range(120)]
    t = trend(pts, threshold=10.0, recent_s=60)
    assert t.since == T0 and t.since_before_history
    assert t.direction is Direction.BETTER


def test_trend_steady_and_not_breaching() -> None:
    pts = [(T0 + i, 5.0) for i in range(120)]
    t = trend(pts, threshold=10.0, recent_s=60)
    assert t.since is None
    assert t.direction is Direction.STEADY


def test_lower_is_worse_signals() -> None:
    pts = [(T0 + i, 1.0) for i in range(60)] + [(T0 + 60 + i, 0.0) for i in range(60)]
    t = trend(pts, threshold=0.5, higher_is_worse=False, recent_s=60)
    assert t.since == T0 + 60
    assert t.direction is Direction.WORSE


def test_trend_unknown_without_two_periods() -> None:
    t = trend([(T0, 3.0), (T0 + 1, 4.0)], threshold=1.0, recent_s=60)
    assert t.direction is Direction.UNKNOWN and t.since == T0


# ------------------------------------------------------------- findings with a history

QUIET_S = 60
BAD_S = 150


def _metrics_only(unhealthy: int) -> ClusterSnapshot:
    """Nodes known only from the node lifecycle controller: zone-a of 10 nodes."""
    state = ZoneState.FULL_DISRUPTION if unhealthy == 10 else ZoneState.NORMAL
    z = ZoneHealth("r", "zone-a", 10, unhealthy, Val.of(100 - 10 * unhealthy), state)
    view = MetricsOnlyNodes("metrics only", (z,), "", (), "not read", ())
    s = healthy()
    nodes = replace(s.nodes, nodes_known=False, nodes_reason="metrics only", metrics_only=view)
    return replace(s, nodes=nodes)


HISTORY_CASES: list[tuple[str, ClusterSnapshot, ClusterSnapshot]] = [
    ("KT-API-005", healthy(), with_api(terminations_per_s=Val.of(0.5))),
    (
        "KT-ETCD-006",
        with_etcd(fragmentation=Val.of(0.1), db_in_use_bytes=Val.of(200e6)),
        with_etcd(fragmentation=Val.of(0.7), db_in_use_bytes=Val.of(200e6)),
    ),
    ("KT-ETCD-008", healthy(), with_etcd(peer_rtt_p99_s=Val.of(0.3))),
    ("KT-SCHED-002", healthy(), with_sched(pending_by_wait={PodWait.GATED: 5})),
    ("KT-NODE-003", healthy(), with_nodes(unhealthy_split=(9, 1))),
    ("KT-NODE-001", _metrics_only(0), _metrics_only(10)),
]


@pytest.mark.parametrize(("code", "quiet", "bad"), HISTORY_CASES, ids=[c[0] for c in HISTORY_CASES])
def test_findings_that_now_have_a_history(
    code: str, quiet: ClusterSnapshot, bad: ClusterSnapshot
) -> None:
    """A minute quiet, then the problem: the finding's trend starts at the first bad frame.

    The history is what the model records (each snapshot's signals, one frame a second).
    """
    h = History()
    for i in range(QUIET_S + BAD_S):
        h.record(AT + i, read_signals(quiet if i < QUIET_S else bad))
    now = AT + QUIET_S + BAD_S - 1
    snap = replace(bad, at=now, history=h.view())
    f = next(f for f in evaluate(snap) if f.code == code)
    assert f.trend is not None, f
    assert f.trend.since == AT + QUIET_S and not f.trend.since_before_history
    assert f.trend.direction is Direction.STEADY


def test_metrics_only_zones_have_a_history() -> None:
    assert read_signals(_metrics_only(3))["nodes.unhealthy|zone-a"] == 3


@given(
    st.lists(st.tuples(st.floats(0, 100, width=32), st.integers(1, 150)), min_size=1, max_size=6),
    st.floats(0, 100),
    st.sampled_from(["api.cpu_cores|a", "sched.bindings_per_s|"]),
    st.integers(0, 400),
)
def test_a_history_signal_reads_as_its_whole_list_of_points(
    runs: list[tuple[float, int]], threshold: float, key: str, gap_at: int
) -> None:
    """signal_trend and signal_baseline read the history without its whole list of points
    when they can; they give what trend and baseline give on that list (runs of one value:
    breaches that began long ago, or within the last two minutes)."""
    values = [v for v, n in runs for _ in range(n)]
    h = History(retention_s=3600)
    for i, v in enumerate(values):
        h.record(T0 + i, {key: v} if i != gap_at else {"other|": 1.0})
    view = h.view()
    points = view.points(key)
    if not points:
        return
    worse = BY_METRIC[key.partition("|")[0]].higher_is_worse
    assert signal_trend(view, key, threshold) == trend(
        points, threshold=threshold, higher_is_worse=worse
    )
    now = T0 + len(values)
    assert signal_baseline(view, key, now) == baseline(points, now)
