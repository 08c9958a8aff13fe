"""Turning simulated component state into ``Sample`` tuples.

Counters are plain floats that only grow (a restart replaces the whole
component state, which is how a real counter reset looks). Histograms keep
cumulative bucket counts and are exported as ``_bucket{le=...}`` (with
``+Inf``), ``_sum`` and ``_count``, like a Prometheus client does. Bucket
counts are fractional internally (expected counts) and exported rounded
down, which keeps them cumulative across buckets and monotonic over time.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence

from ktop.model.events import Labels, Sample

_SQRT2 = math.sqrt(2.0)
_LABELS: dict[tuple[tuple[str, str], ...], Labels] = {}


def labels(**pairs: str) -> Labels:
    """A sorted, interned label tuple (keyword names are label names)."""
    return intern_labels(tuple(pairs.items()))


def intern_labels(pairs: Sequence[tuple[str, str]]) -> Labels:
    """Sort ``pairs`` by name and return the shared tuple for them."""
    key = tuple(sorted(pairs))
    found = _LABELS.get(key)
    if found is None:
        _LABELS[key] = key
        found = key
    return found


def with_label(base: Labels, name: str, value: str) -> Labels:
    """``base`` plus one more label, sorted and interned."""
    return intern_labels((*base, (name, value)))


def format_le(bound: float) -> str:
    """A bucket bound as Prometheus clients print it (``1``, ``0.005``, ``+Inf``)."""
    if math.isinf(bound):
        return "+Inf"
    text = repr(float(bound))
    return text[:-2] if text.endswith(".0") else text


def lognormal_cdf(log_bound: float, mu: float, sigma: float) -> float:
    """P(X <= bound) for a log-normal X with parameters ``mu`` and ``sigma``."""
    return 0.5 * (1.0 + math.erf((log_bound - mu) / (sigma * _SQRT2)))


class Histogram:
    """A cumulative histogram fed with expected (fractional) counts."""

    __slots__ = ("_bucket_labels", "_log_bounds", "bounds", "counts", "total", "total_sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self._log_bounds = tuple(math.log(b) if b > 0 else -math.inf for b in self.bounds)
        self.counts = [0.0] * len(self.bounds)
        self.total = 0.0
        self.total_sum = 0.0
        self._bucket_labels: dict[Labels, tuple[Labels, ...]] = {}

    def observe_lognormal(self, n: float, median: float, sigma: float) -> None:
        """Add ``n`` observations from a log-normal with this median and shape."""
        if n <= 0.0:
            return
        mu = math.log(median)
        counts = self.counts
        for i, lb in enumerate(self._log_bounds):
            if lb == -math.inf:
                continue
            counts[i] += n * lognormal_cdf(lb, mu, sigma)
        self.total += n
        self.total_sum += n * median * math.exp(sigma * sigma / 2.0)

    def observe(self, n: float, value: float) -> None:
        """Add ``n`` observations of exactly ``value``."""
        if n <= 0.0:
            return
        counts = self.counts
        for i in range(bisect_left(self.bounds, value), len(counts)):
            counts[i] += n
        self.total += n
        self.total_sum += n * value

    def export(self, name: str, base: Labels, out: list[Sample]) -> None:
        """Append ``name_bucket`` (with ``+Inf``), ``name_sum`` and ``name_count``."""
        bucket_labels = self._bucket_labels.get(base)
        if bucket_labels is None:
            bucket_labels = tuple(
                with_label(base, "le", format_le(b)) for b in (*self.bounds, math.inf)
            )
            self._bucket_labels[base] = bucket_labels
        bucket = name + "_bucket"
        floor = math.floor
        for lab, count in zip(bucket_labels, self.counts, strict=False):
            out.append(Sample(bucket, lab, float(floor(count))))
        total = float(floor(self.total))
        out.append(Sample(bucket, bucket_labels[-1], total))
        out.append(Sample(name + "_sum", base, self.total_sum))
        out.append(Sample(name + "_count", base, total))


class Counters:
    """Named counters keyed by label tuples; values only grow."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict[Labels, float] = {}

    def add(self, key: Labels, n: float) -> None:
        """Add ``n`` (ignored unless positive)."""
        if n > 0.0:
            self.values[key] = self.values.get(key, 0.0) + n

    def export(self, name: str, out: list[Sample], *, whole: bool = True) -> None:
        """Append one sample per series (rounded down to whole counts unless ``whole=False``)."""
        floor = math.floor
        for key, value in self.values.items():
            out.append(Sample(name, key, float(floor(value)) if whole else value))


def gauge(out: list[Sample], name: str, lab: Labels, value: float) -> None:
    """Append a gauge sample."""
    out.append(Sample(name, lab, float(value)))


EMPTY: Labels = ()
