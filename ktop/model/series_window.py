"""The points of one target's kept series over the observation window, and the
PromQL-like math over them (:class:`SeriesWindow`; scrapes are folded in by
:class:`~ktop.model.series.TargetSeries`).

Counters and histogram buckets keep the points of the observation window; the math
follows Prometheus where it matters:

* ``increase`` sums the differences of consecutive points and treats a
  drop as a counter reset (the new value is the increase since the reset);
* ``rate`` is that increase over the time the points span (no
  extrapolation to the window edges, unlike PromQL);
* ``quantile`` applies ``histogram_quantile`` to the per-bucket increases.

With a single point there is no window yet: rates are unknown and
quantiles fall back to the cumulative buckets, marked ``lifetime``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ktop.model.histogram import Buckets
from ktop.model.scrape_targets import LOAD_BALANCED, Labels, Target
from ktop.model.values import Val

Match = Mapping[str, str | frozenset[str]]
"""Label matchers: a value, or a set of accepted values."""

Key = tuple[str, ...]
"""A group key: the values of the ``by`` labels, in order."""

NEEDS_TWO = "needs two scrapes"
SWITCHED = "the load balancer switched instance"
"""Why a load-balanced target's rates are unknown after its identity changed."""
NO_RATE = "no rate can be computed"
"""Why a counter with a NaN or infinite point has no rate."""
IDENTITY = "process_start_time_seconds"
"""The sample that tells one process from another (it changes only on a restart)."""


@dataclass(slots=True)
class SeriesPoints:
    """One kept series' points within the window, oldest first, as two columns: their
    times and their values (no object per point: a model of a large cluster holds
    hundreds of thousands of points, which Python's cycle collector would otherwise walk).
    """

    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def append(self, at: float, value: float) -> None:
        """One more point, after the others."""
        self.times.append(at)
        self.values.append(value)

    def prune(self, horizon: float) -> None:
        """Drop the points older than ``horizon``."""
        times = self.times
        if times and times[0] < horizon:
            drop = bisect_left(times, horizon)
            del times[:drop], self.values[:drop]

    @property
    def points(self) -> list[tuple[float, float]]:
        """The points as ``(time, value)`` pairs (a copy)."""
        return list(zip(self.times, self.values, strict=True))


def _matches(labels: Labels, match: Match | None) -> bool:
    return not match or matches(dict(labels), match)


def matches(d: Mapping[str, str], match: Match) -> bool:
    """Whether labels (as a mapping) meet the matchers."""
    for k, want in match.items():
        got = d.get(k, "")
        if isinstance(want, frozenset):
            if got not in want:
                return False
        elif got != want:
            return False
    return True


def group_key(labels: Labels, by: Sequence[str]) -> Key:
    """The group a series falls in: the values of its ``by`` labels (empty when absent)."""
    d = dict(labels)
    return tuple(d.get(k, "") for k in by)


def _increase(values: Sequence[float]) -> float:
    total = 0.0
    prev: float | None = None
    for v in values:
        if prev is not None:
            total += v - prev if v >= prev else v
        prev = v
    return total


class SeriesWindow:
    """The kept series of one target over the window, and the math over them."""

    def __init__(self, target: Target, window_s: float) -> None:
        self.target = target
        self.window_s = window_s
        self._series: dict[str, dict[Labels, SeriesPoints]] = {}
        """Sample name -> labels -> points: a query reads only its own family."""
        self.last_at: float | None = None
        self.scrapes = 0
        self.scrape_times: deque[float] = deque()
        """When each scrape still inside the window came (oldest first)."""
        self._memo: dict[tuple[object, ...], dict[Key, Any]] = {}
        """Query results since the last scrape: every query reads only what ``ingest``
        wrote, so a result holds until the next scrape (areas fed by several targets are
        rebuilt when any one of them is scraped; the others answer from here)."""

    def _memoized(
        self,
        kind: str,
        name: str,
        by: Sequence[str],
        match: Match | None,
        compute: Callable[[], dict[Key, Any]],
    ) -> dict[Key, Any]:
        key = (kind, name, tuple(by), tuple(sorted(match.items())) if match else ())
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = compute()
        return dict(hit)  # callers may change their copy

    def _prune(self, horizon: float) -> None:
        """Drop the points older than ``horizon``, and the series left without any."""
        times_in = self.scrape_times
        while times_in and times_in[0] < horizon:
            times_in.popleft()
        for name, by_labels in list(self._series.items()):
            for labels, series in list(by_labels.items()):
                times = series.times
                if times and times[0] < horizon:
                    series.prune(horizon)
                if not times:
                    del by_labels[labels]
            if not by_labels:
                del self._series[name]

    def _identities(self) -> SeriesPoints:
        series = self._series.get(IDENTITY, {}).get(())
        return series if series is not None else SeriesPoints()

    @property
    def switched(self) -> bool:
        """The last scrape reached another process than the one before (load-balanced
        targets only): no rate is computed across the two. Read from the identity's own
        points, so it needs no state of its own.
        """
        if self.target.instance != LOAD_BALANCED:
            return False
        seen = self._identities()
        times, values = seen.times, seen.values
        return len(times) >= 2 and times[-1] == self.last_at and values[-1] != values[-2]

    @property
    def span_s(self) -> float | None:
        """Seconds from the oldest scrape in the window to the last: what the window's
        values cover (None before a second scrape in it).
        """
        times_in = self.scrape_times
        return times_in[-1] - times_in[0] if len(times_in) >= 2 else None

    @property
    def counters_unknown(self) -> str:
        """Why no counter of this target has a rate yet (empty when they can have one)."""
        if self.switched:
            return SWITCHED
        return NEEDS_TWO if self.scrapes < 2 else ""

    def _select(self, name: str, match: Match | None) -> list[tuple[Labels, SeriesPoints]]:
        return [
            (labels, s)
            for labels, s in self._series.get(name, {}).items()
            if _matches(labels, match)
        ]

    # ---------------------------------------------------------------- gauges

    def gauge_by(self, name: str, by: Sequence[str], match: Match | None = None) -> dict[Key, Val]:
        """Latest value of each series present in the last scrape, summed per group."""
        out: dict[Key, float] = {}
        for labels, s in self._select(name, match):
            if s.times[-1] != self.last_at:
                continue
            k = group_key(labels, by)
            out[k] = out.get(k, 0.0) + s.values[-1]
        return {k: Val.of(v) for k, v in out.items()}

    def gauge(self, name: str, match: Match | None = None) -> Val:
        """Sum of the latest values of matching series; unknown when none exist."""
        return self.gauge_by(name, (), match).get((), Val.unknown(f"{name} not exposed"))

    # -------------------------------------------------------------- counters

    def increase_by(
        self, name: str, by: Sequence[str], match: Match | None = None, *, per_s: bool = False
    ) -> dict[Key, Val]:
        """Increase (or rate) over the window per group, counter resets handled."""
        return self._memoized(
            "rate" if per_s else "increase",
            name,
            by,
            match,
            lambda: self._increase_by(name, by, match, per_s),
        )

    def _increase_by(
        self, name: str, by: Sequence[str], match: Match | None, per_s: bool
    ) -> dict[Key, Val]:
        acc: dict[Key, tuple[float, float]] = {}
        latest: dict[Key, float] = {}
        for labels, s in self._select(name, match):
            times = s.times
            k = group_key(labels, by)
            inc, span = acc.get(k, (0.0, 0.0))
            span = max(span, times[-1] - times[0]) if len(times) > 1 else span
            acc[k] = (inc + _increase(s.values), span)
            latest[k] = max(latest.get(k, times[-1]), times[-1])
        last_at, in_window = self.last_at, len(self.scrape_times)

        def gone(k: Key) -> bool:
            return in_window >= 2 and last_at is not None and latest[k] < last_at

        out: dict[Key, Val] = {}
        for k, (inc, span) in acc.items():
            if span <= 0 and not self.switched and gone(k):
                # No longer exposed (a restart), one point left in a window of two scrapes
                # or more: it counted nothing there, as PromQL's rate leaves it out.
                out[k] = Val.of(0.0)
            elif span <= 0:
                out[k] = Val.unknown(SWITCHED if self.switched else NEEDS_TWO)
            elif not math.isfinite(inc):
                out[k] = Val.unknown(f"{name} is NaN or infinite: {NO_RATE}")
            else:
                out[k] = Val.of(inc / span if per_s else inc)
        return out

    def rate_by(self, name: str, by: Sequence[str], match: Match | None = None) -> dict[Key, Val]:
        """Per-second rate over the window per group."""
        return self.increase_by(name, by, match, per_s=True)

    def _single(self, vals: dict[Key, Val], name: str) -> Val:
        if () in vals:
            return vals[()]
        why = self.counters_unknown
        return Val.unknown(why) if why else Val.of(0.0)

    def rate(self, name: str, match: Match | None = None) -> Val:
        """Per-second rate summed over matching series (0 when the counter is absent
        but the target has been scraped twice: absent counters have not counted yet).
        """
        return self._single(self.rate_by(name, (), match), name)

    def increase(self, name: str, match: Match | None = None) -> Val:
        """Increase over the window summed over matching series."""
        return self._single(self.increase_by(name, (), match), name)

    # ------------------------------------------------------------ histograms

    def buckets_by(
        self, name: str, by: Sequence[str], match: Match | None = None
    ) -> dict[Key, Buckets]:
        """Per group, each bucket's increase over the window (``sum by (by, le)``).

        With a single point the cumulative counts are used and the result is
        marked ``lifetime``.
        """
        return self._memoized("buckets", name, by, match, lambda: self._buckets_by(name, by, match))

    def _buckets_by(self, name: str, by: Sequence[str], match: Match | None) -> dict[Key, Buckets]:
        groups: dict[Key, dict[float, float]] = {}
        lifetime: dict[Key, bool] = {}
        for labels, s in self._select(name + "_bucket", match):
            le = dict(labels).get("le", "")
            try:
                bound = float(le)
            except ValueError:
                continue
            if math.isnan(bound):  # le="NaN" bounds nothing
                continue
            values = s.values
            k = group_key(labels, by)
            count = _increase(values) if len(values) > 1 else values[-1]
            lifetime[k] = lifetime.get(k, False) or len(values) < 2
            buckets = groups.setdefault(k, {})
            buckets[bound] = buckets.get(bound, 0.0) + count
        return {k: Buckets(b, lifetime[k]) for k, b in groups.items()}

    def quantile_by(
        self, q: float, name: str, by: Sequence[str], match: Match | None = None
    ) -> dict[Key, Val]:
        """``histogram_quantile(q, sum by (by, le) (increase(name_bucket[window])))``."""
        return {k: b.quantile(q) for k, b in self.buckets_by(name, by, match).items()}

    def quantile(self, q: float, name: str, match: Match | None = None) -> Val:
        """A quantile over all matching series."""
        return self.quantile_by(q, name, (), match).get((), Val.unknown(f"{name} not exposed"))

    def label_values(self, name: str, label: str) -> list[str]:
        """Distinct values of a label among a family's current series."""
        seen: dict[str, None] = {}
        for labels in self._series.get(name, {}):
            seen.setdefault(dict(labels).get(label, ""), None)
        return list(seen)

    def series_count(self) -> int:
        """How many series are held (for the benchmarks)."""
        return sum(len(by_labels) for by_labels in self._series.values())
