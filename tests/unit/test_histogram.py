"""bucket_quantile: Prometheus histogram_quantile semantics."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from ktop.model.histogram import bucket_quantile

FIXTURES = Path(__file__).parent.parent / "fixtures"
INF = math.inf


def _wal_fsync_buckets(fixture: str) -> list[tuple[float, float]]:
    """The etcd WAL fsync buckets, read with a regex (independent of the parser)."""
    pattern = re.compile(r'^etcd_disk_wal_fsync_duration_seconds_bucket\{le="([^"]+)"\} (\S+)$')
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    return [
        (float(m.group(1)), float(m.group(2)))
        for line in text.splitlines()
        if (m := pattern.match(line))
    ]


def _reference_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """A plain walk over (lower, upper) bucket pairs, for sorted monotonic buckets
    with positive bounds: interpolate inside the first bucket whose cumulative
    count reaches the rank; the +Inf bucket answers its lower bound."""
    total = buckets[-1][1]
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for upper_bound, count in buckets:
        if count >= rank:
            if upper_bound == INF:
                return lower_bound
            share = (rank - lower_count) / (count - lower_count)
            return lower_bound + (upper_bound - lower_bound) * share
        lower_bound, lower_count = upper_bound, count
    raise AssertionError("the +Inf bucket holds every observation")


SIMPLE = [(1.0, 1.0), (2.0, 3.0), (4.0, 4.0), (INF, 4.0)]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        (0.5, 1.5),  # rank 2 -> bucket (1, 2] holding 2; halfway
        (0.25, 1.0),  # rank 1 -> first bucket, 0 + 1 * 1/1
        (0.125, 0.5),  # rank 0.5 -> first bucket interpolates from 0
        (0.75, 2.0),  # rank 3 -> end of (1, 2]
        (1.0, 4.0),  # rank 4 -> bucket (2, 4] holding 1, at its end
    ],
)
def test_hand_computed(q: float, expected: float) -> None:
    assert bucket_quantile(q, SIMPLE) == pytest.approx(expected)


def test_order_of_input_does_not_matter() -> None:
    assert bucket_quantile(0.5, list(reversed(SIMPLE))) == pytest.approx(1.5)


def test_rank_in_inf_bucket_returns_largest_finite_bound() -> None:
    # rank 5 of 10, only 2 observations are <= 2
    assert bucket_quantile(0.5, [(1.0, 1.0), (2.0, 2.0), (INF, 10.0)]) == 2.0


def test_lowest_bucket_at_or_below_zero_returns_its_bound() -> None:
    buckets = [(-1.0, 5.0), (0.0, 5.0), (1.0, 10.0), (INF, 10.0)]
    assert bucket_quantile(0.2, buckets) == -1.0
    # rank 7 -> (0, 1] holding 5, 2 of them: 0 + 1 * 2/5
    assert bucket_quantile(0.7, buckets) == pytest.approx(0.4)


def test_non_monotonic_counts_are_made_monotonic() -> None:
    # After ensureMonotonic the counts are 2, 2, 4, 4: rank 2.4 falls in (2, 4]
    # holding 2, 0.4 in: 2 + 2 * 0.4/2 = 2.4 (without it: 2 + 2 * 1.4/3).
    buckets = [(1.0, 2.0), (2.0, 1.0), (4.0, 4.0), (INF, 4.0)]
    assert bucket_quantile(0.6, buckets) == pytest.approx(2.4)


def test_equal_bounds_are_merged() -> None:
    # Merged: (1, 2), (2, 4), (+Inf, 4): rank 2 -> 0 + 1 * 2/2 (without it: 1.333).
    buckets = [(1.0, 1.0), (1.0, 1.0), (2.0, 4.0), (INF, 4.0)]
    assert bucket_quantile(0.5, buckets) == pytest.approx(1.0)


def test_tiny_float_differences_are_ignored() -> None:
    # correctPrecisionErrors: 5.0000000000001 counts as 5, so q=1 ends in the first
    # bucket (1.0); taken literally it would fall in (1, 2] and give 2.0.
    buckets = [(1.0, 5.0), (2.0, 5.0000000000001), (INF, 5.0000000000001)]
    assert bucket_quantile(1.0, buckets) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "buckets",
    [
        [],
        [(1.0, 3.0), (2.0, 5.0)],  # no +Inf bucket
        [(INF, 5.0)],  # fewer than two buckets
        [(1.0, 0.0), (INF, 0.0)],  # no observations
    ],
)
def test_nothing_to_compute_gives_none(buckets: list[tuple[float, float]]) -> None:
    assert bucket_quantile(0.5, buckets) is None


def test_q_out_of_range_and_nan() -> None:
    assert bucket_quantile(-0.1, SIMPLE) == -INF
    assert bucket_quantile(1.1, SIMPLE) == INF
    value = bucket_quantile(math.nan, SIMPLE)
    assert value is not None
    assert math.isnan(value)


def test_q_zero() -> None:
    assert bucket_quantile(0.0, SIMPLE) == 0.0
    # Prometheus computes 0/0 here (empty lowest bucket, rank 0) and returns NaN.
    value = bucket_quantile(0.0, [(1.0, 0.0), (2.0, 4.0), (INF, 4.0)])
    assert value is not None
    assert math.isnan(value)


@pytest.mark.parametrize(
    "fixture", ["nri-k8s-1.35_etcd_metrics.prom", "qubership_etcd-3.4.3_follower_metrics.prom"]
)
@pytest.mark.parametrize("q", [0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0])
def test_real_wal_fsync_against_reference(fixture: str, q: float) -> None:
    buckets = _wal_fsync_buckets(fixture)
    assert len(buckets) == 15
    assert bucket_quantile(q, buckets) == pytest.approx(_reference_quantile(q, buckets))


def test_real_wal_fsync_by_hand() -> None:
    nri = _wal_fsync_buckets("nri-k8s-1.35_etcd_metrics.prom")
    # 855 fsyncs. p50: rank 427.5 <= 705 in le=0.001 -> 0.001 * 427.5/705.
    assert bucket_quantile(0.5, nri) == pytest.approx(0.001 * 427.5 / 705)
    # p99: rank 846.45 in (0.004, 0.008] (842 -> 848) -> 0.004 + 0.004 * 4.45/6 = 0.0069667.
    assert bucket_quantile(0.99, nri) == pytest.approx(0.0069667, rel=1e-4)
    # p99.9: rank 854.145 in (0.128, 0.256] (853 -> 855) -> 0.128 + 0.128 * 1.145/2 = 0.20128.
    assert bucket_quantile(0.999, nri) == pytest.approx(0.20128)
    qubership = _wal_fsync_buckets("qubership_etcd-3.4.3_follower_metrics.prom")
    # 3745994 fsyncs. p99: rank 3708534.06 in (0.064, 0.128] (3688871 -> 3712177)
    # -> 0.064 + 0.064 * 19663.06/23306 = 0.117996.
    assert bucket_quantile(0.99, qubership) == pytest.approx(0.117996, rel=1e-5)
    # The lowest bucket is empty: p1 (rank 37459.94) lies in (0.001, 0.002] holding 190419.
    assert bucket_quantile(0.01, qubership) == pytest.approx(0.001 + 0.001 * 37459.94 / 190419)
