"""Baselines and trends: numbers worked out by hand."""

from __future__ import annotations

import pytest

from ktop.model.trends import Direction, baseline, trend

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
