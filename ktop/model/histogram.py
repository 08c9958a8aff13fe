"""Histogram quantiles with Prometheus' ``histogram_quantile`` semantics.

This follows ``bucketQuantile`` in ``promql/quantile.go`` step by step:
sort by upper bound, require a ``+Inf`` bucket, merge buckets with the same
bound (``coalesceBuckets``), undo tiny float precision dips
(``correctPrecisionErrors``, tolerance 1e-12), force monotonic counts
(``ensureMonotonic``), then interpolate linearly inside the bucket that
holds the rank. Where Prometheus returns NaN because there is nothing to
compute from, this returns ``None``.

:class:`Buckets` holds one group's bucket counts over the window (as the series read
them) and gives its quantiles as values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ktop.model.values import Val

_PRECISION_TOLERANCE = 1e-12


def bucket_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float | None:
    """The q-quantile of cumulative ``(upper_bound, count)`` buckets.

    Same rules as Prometheus: linear interpolation inside the bucket, the
    lowest bucket interpolates from 0 (when its bound is positive), a
    quantile that falls in the ``+Inf`` bucket returns the largest finite
    bound, ``None`` when there are no observations.

    Also ``None`` when there is no ``+Inf`` bucket or fewer than two
    distinct bounds. ``q < 0`` gives ``-inf`` and ``q > 1`` gives ``+inf``
    (checked first, as Prometheus does); ``q`` NaN gives NaN. A quantile
    that falls in a lowest bucket holding no observations (only possible
    for ``q == 0``) is NaN, as in Prometheus (0/0).
    """
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    if not buckets:
        return None
    ordered = sorted(buckets, key=lambda b: b[0])
    if ordered[-1][0] != math.inf:
        return None
    bounds, counts = _coalesce(ordered)
    _correct_precision_errors(counts)
    _ensure_monotonic(counts)
    if len(bounds) < 2:
        return None
    observations = counts[-1]
    if observations == 0:
        return None
    rank = q * observations
    last = len(bounds) - 1
    b = next((i for i in range(last) if counts[i] >= rank), last)
    if b == last:
        return bounds[-2]
    if b == 0 and bounds[0] <= 0:
        return bounds[0]
    start = 0.0
    end = bounds[b]
    count = counts[b]
    if b > 0:
        start = bounds[b - 1]
        count -= counts[b - 1]
        rank -= counts[b - 1]
    if count == 0:
        return math.nan
    return start + (end - start) * (rank / count)


def _coalesce(ordered: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Merge buckets with the same upper bound (their counts are added)."""
    bounds: list[float] = []
    counts: list[float] = []
    for bound, count in ordered:
        if bounds and bounds[-1] == bound:
            counts[-1] += count
        else:
            bounds.append(float(bound))
            counts.append(float(count))
    return bounds, counts


def _correct_precision_errors(counts: list[float]) -> None:
    """Treat relative differences of at most 1e-12 between neighbours as equal."""
    prev = counts[0]
    for i in range(1, len(counts)):
        curr = counts[i]
        delta = abs(curr - prev)
        if delta == 0:
            continue
        if curr != 0 and delta / curr <= _PRECISION_TOLERANCE:
            counts[i] = prev
        else:
            prev = curr


def _ensure_monotonic(counts: list[float]) -> None:
    """Raise every count to the largest count of the buckets below it."""
    highest = counts[0]
    for i in range(1, len(counts)):
        if counts[i] > highest:
            highest = counts[i]
        elif counts[i] < highest:
            counts[i] = highest


@dataclass(frozen=True, slots=True)
class Buckets:
    """Histogram bucket counts (upper bound -> count) of one group."""

    counts: Mapping[float, float]
    lifetime: bool

    def quantile(self, q: float) -> Val:
        """The q-quantile of these buckets: empty when they hold no observations; unknown
        when a count is NaN or infinite (no rank can be placed among them).
        """
        odd = [c for c in self.counts.values() if not math.isfinite(c)]
        if odd:
            what = "NaN" if any(math.isnan(c) for c in odd) else "infinite"
            return Val.unknown(f"a bucket count is {what}: no quantile can be computed")
        value = bucket_quantile(q, sorted(self.counts.items()))
        if value is None or math.isnan(value):
            # The histogram was read; nothing was observed (e.g. no request waited).
            return Val.nothing("no observations in window")
        return Val.of(value, lifetime=self.lifetime)

    def merged(self, other: Buckets) -> Buckets:
        """The sum of two bucket sets (e.g. the same histogram on two instances)."""
        counts = dict(self.counts)
        for bound, count in other.counts.items():
            counts[bound] = counts.get(bound, 0.0) + count
        return Buckets(counts, self.lifetime or other.lifetime)


def merge_buckets(parts: Iterable[Buckets]) -> Buckets | None:
    """Sum bucket sets; ``None`` when there are none."""
    out: Buckets | None = None
    for b in parts:
        out = b if out is None else out.merged(b)
    return out
