"""Histogram quantiles with Prometheus' ``histogram_quantile`` semantics."""

from __future__ import annotations

from collections.abc import Sequence


def bucket_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float | None:
    """The q-quantile of cumulative ``(upper_bound, count)`` buckets.

    Same rules as Prometheus: linear interpolation inside the bucket, the
    lowest bucket interpolates from 0 (when its bound is positive), a
    quantile that falls in the ``+Inf`` bucket returns the largest finite
    bound, ``None`` when there are no observations.
    """
    raise NotImplementedError
