"""Windowed metric series per target, and the PromQL-like math over them.

Each scrape of a target appends one point per kept series. Counters and
histogram buckets keep the points of the observation window; the math
follows Prometheus where it matters:

* ``increase`` sums the differences of consecutive points and treats a
  drop as a counter reset (the new value is the increase since the reset);
* ``rate`` is that increase over the time the points span (no
  extrapolation to the window edges, unlike PromQL);
* ``quantile`` applies ``histogram_quantile`` to the per-bucket increases.

With a single point there is no window yet: rates are unknown and
quantiles fall back to the cumulative buckets, marked ``lifetime``.

Reads through a load balancer (:data:`~ktop.model.events.LOAD_BALANCED`) may reach
another instance at every scrape: when the body's instance identity
(``process_start_time_seconds``) changes, the counter points of the previous
process are dropped and rates are unknown ("the load balancer switched instance")
until two scrapes of one process are in, never a rate across two processes.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import sys
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ktop.model.events import LOAD_BALANCED, Component, Labels, Sample, Target
from ktop.model.histogram import bucket_quantile
from ktop.model.values import Val
from ktop.model.wanted import COUNTERS, FAMILIES, HISTOGRAMS

WINDOW_S = 300.0
"""The observation window: rates and quantiles are over this many seconds of samples
(the model's default, the Prometheus backfill's raw window, the signals' PromQL)."""

KEPT_LABELS_CACHE = 16_384
"""Samples whose kept labels are remembered (a 10,000-node lab's apiserver sends about
5,700 kept samples per scrape, the same ones every time)."""

Match = Mapping[str, str | frozenset[str]]
"""Label matchers: a value, or a set of accepted values."""

Key = tuple[str, ...]
"""A group key: the values of the ``by`` labels, in order."""

NEEDS_TWO = "needs two scrapes"
SWITCHED = "the load balancer switched instance"
"""Why a load-balanced target's rates are unknown after its identity changed."""
IDENTITY = "process_start_time_seconds"
"""The sample that tells one process from another (it changes only on a restart)."""


@dataclass(slots=True)
class _Series:
    points: deque[tuple[float, float]] = field(default_factory=deque)


def _reduce(labels: Labels, kept: tuple[str, ...] | None, keep_le: bool) -> Labels:
    if kept is None:
        return labels
    return tuple((k, v) for k, v in labels if k in kept or (keep_le and k == "le"))


def _family(name: str) -> tuple[str, bool]:
    """The family of a sample name and whether it is a histogram bucket."""
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
            if base in HISTOGRAMS:
                return base, suffix == "_bucket"
    return name, False


@functools.lru_cache(maxsize=KEPT_LABELS_CACHE)
def kept_labels(component: Component, name: str, labels: Labels) -> Labels | None:
    """The labels the model keeps of a sample (samples that differ only in the others are
    summed into one series), or None when the model does not read its family.

    Remembered: every scrape brings the same series again, and the parser hands back the
    same label tuples, so most samples cost a lookup; the answer is the tuple the series
    is already kept under, so remembering it holds little more than the lookup itself.
    """
    families = FAMILIES[component]
    family, is_bucket = _family(name)
    if family not in families:
        return None
    return _reduce(labels, families[family], is_bucket)


def counts(name: str) -> bool:
    """Whether a sample name is a counter or part of a histogram (both start at zero)."""
    family, _ = _family(name)
    return family in COUNTERS or family in HISTOGRAMS


def _matches(labels: Labels, match: Match | None) -> bool:
    if not match:
        return True
    d = dict(labels)
    for k, want in match.items():
        got = d.get(k, "")
        if isinstance(want, frozenset):
            if got not in want:
                return False
        elif got != want:
            return False
    return True


def _group(labels: Labels, by: Sequence[str]) -> Key:
    d = dict(labels)
    return tuple(d.get(k, "") for k in by)


def _increase(points: deque[tuple[float, float]]) -> float:
    total = 0.0
    prev: float | None = None
    for _, v in points:
        if prev is not None:
            total += v - prev if v >= prev else v
        prev = v
    return total


@dataclass(frozen=True, slots=True)
class Buckets:
    """Histogram bucket counts (upper bound -> count) of one group."""

    counts: Mapping[float, float]
    lifetime: bool

    def quantile(self, q: float) -> Val:
        """The q-quantile of these buckets, unknown when they hold no observations."""
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


@dataclass(slots=True)
class ScrapeRun:
    """Scrapes of one target whose samples have the same names and labels, in the same
    order (a recording's ``~S`` scrapes), kept as their values until folded in bulk.
    """

    target: Target
    names: Sequence[str]
    labels: Sequence[Labels]
    ats: list[float] = field(default_factory=list)
    rows: list[Sequence[float]] = field(default_factory=list)
    """One row of sample values per scrape, in the order of ``names``."""

    def add(self, at: float, values: Sequence[float]) -> None:
        """One more scrape, after the others."""
        self.ats.append(at)
        self.rows.append(values)

    def samples(self, i: int) -> tuple[Sample, ...]:
        """The samples of the ``i``-th scrape."""
        return tuple(map(Sample, self.names, self.labels, self.rows[i]))


class IngestedRun:
    """What each scrape of a :class:`ScrapeRun` put in its target's series, as columns
    (one value per scrape): read as the target's series read after each scrape.
    """

    def __init__(
        self,
        ts: TargetSeries,
        ats: list[float],
        columns: dict[tuple[str, Labels], list[float]],
        stale: dict[str, float],
    ) -> None:
        self._ts = ts
        self.ats = ats
        self._columns = columns
        self._names = {name for name, _ in columns}
        self._stale = stale
        """Names held but not scraped in the run: the time of their latest point."""

    def present(self, name: str, i: int) -> bool:
        """Whether the target held a series of ``name`` after the run's ``i``-th scrape."""
        if name in self._names:
            return True
        last = self._stale.get(name)
        return last is not None and last >= self.ats[i] - self._ts.window_s

    def gauge_columns(
        self, name: str, by: Sequence[str], match: Match | None
    ) -> dict[Key, list[float]]:
        """:meth:`TargetSeries.gauge_by` after each scrape of the run, as a column of sums
        per group (summed in the order the series read them).
        """
        out: dict[Key, list[float]] = {}
        for labels, _ in self._ts._select(name, match):
            col = self._columns.get((name, labels))
            if col is None:  # not scraped in the run: never in the last scrape
                continue
            k = _group(labels, by)
            acc = out.get(k)
            start = itertools.repeat(0.0) if acc is None else acc
            out[k] = list(map(operator.add, start, col))
        return out


class TargetSeries:
    """All kept series of one target."""

    def __init__(self, target: Target, window_s: float) -> None:
        self.target = target
        self.window_s = window_s
        self._series: dict[str, dict[Labels, _Series]] = {}
        """Sample name -> labels -> points: a query reads only its own family."""
        self.last_at: float | None = None
        self.scrapes = 0
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

    def ingest(self, at: float, samples: Iterable[Sample]) -> None:
        """Add one scrape: sum samples that differ only in dropped labels.

        A scrape not newer than the last one is ignored (e.g. a backfill that
        arrives after live data): points stay in time order.
        """
        if self.last_at is not None and at <= self.last_at:
            return
        component = self.target.component
        summed: dict[tuple[str, Labels], float] = {}
        for s in samples:
            labels = kept_labels(component, s.name, s.labels)
            if labels is None:
                continue
            key = (s.name, labels)
            summed[key] = summed.get(key, 0.0) + s.value
        self._ingest_summed(at, summed)

    def _ingest_summed(self, at: float, summed: dict[tuple[str, Labels], float]) -> None:
        """Add one scrape newer than the last, its samples summed per kept series."""
        self._memo.clear()
        horizon = at - self.window_s
        switching = self._switching(summed.get((IDENTITY, ())))
        for key, value in summed.items():
            by_labels = self._series.get(key[0])
            if by_labels is None:
                by_labels = self._series[sys.intern(key[0])] = {}
            series = by_labels.get(key[1])
            if series is None:
                series = by_labels[key[1]] = _Series()
                if (
                    self.last_at is not None
                    and self.last_at >= horizon
                    and counts(key[0])
                    and not switching  # its counters were another process's
                ):
                    # Absent at the previous scrape: the counter had not counted yet. Without
                    # this zero, everything it counted before it was first seen is lost.
                    series.points.append((self.last_at, 0.0))
            series.points.append((at, value))
        self._prune(horizon)
        self.last_at = at
        self.scrapes += 1

    def _prune(self, horizon: float) -> None:
        """Drop the points older than ``horizon``, and the series left without any."""
        for name, by_labels in list(self._series.items()):
            for labels, series in list(by_labels.items()):
                pts = series.points
                while pts and pts[0][0] < horizon:
                    pts.popleft()
                if not pts:
                    del by_labels[labels]
            if not by_labels:
                del self._series[name]

    def ingest_run(self, run: ScrapeRun) -> IngestedRun | None:
        """Add the scrapes of ``run`` (laid out alike), in order, as :meth:`ingest` of each
        would, at a cost per series rather than per sample; what each scrape read, for the
        SLO counts. ``None`` (nothing done) when the run is not the plain case this handles
        exactly: times not rising past the last scrape's, or a load-balanced target whose
        process changes in it; then ingest the scrapes one by one.
        """
        ats = run.ats
        if (
            not ats
            or not self.window_s >= 0
            or (self.last_at is not None and ats[0] <= self.last_at)
            or any(map(operator.ge, ats, ats[1:]))
        ):
            return None
        component = self.target.component
        slots: dict[tuple[str, Labels], list[int]] = {}
        for i, (name, labels) in enumerate(zip(run.names, run.labels, strict=True)):
            kept = kept_labels(component, name, labels)
            if kept is not None:
                slots.setdefault((name, kept), []).append(i)
        raw = list(zip(*run.rows, strict=True)) if slots else []
        columns: list[list[float]] = []
        for where in slots.values():
            # As ingest sums them: 0.0 + the first sample, then the others in order.
            col = list(map(operator.add, itertools.repeat(0.0), raw[where[0]]))
            for i in where[1:]:
                col = list(map(operator.add, col, raw[i]))
            columns.append(col)
        keys = list(slots)
        if self.target.instance == LOAD_BALANCED and (IDENTITY, ()) in slots:
            seen = self._identities()
            values = ([seen[-1][1]] if seen else []) + columns[keys.index((IDENTITY, ()))]
            if any(map(operator.ne, values, values[1:])):
                return None  # another process in the run: its counters are dropped
        self._ingest_summed(ats[0], {k: c[0] for k, c in zip(keys, columns, strict=True)})
        layout_names = {name for name, _ in keys}
        stale = {  # series of other names: each name held while its latest point is in
            name: max(s.points[-1][0] for s in by_labels.values())
            for name, by_labels in self._series.items()
            if name not in layout_names
        }
        later = ats[1:]
        if later:
            self._memo.clear()
            for (name, labels), col in zip(keys, columns, strict=True):
                # Every series of the layout exists now, and keeps a point of each scrape.
                self._series[name][labels].points.extend(zip(later, col[1:], strict=True))
            self._prune(ats[-1] - self.window_s)
            self.last_at = ats[-1]
            self.scrapes += len(later)
        return IngestedRun(self, list(ats), dict(zip(keys, columns, strict=True)), stale)

    def _identities(self) -> deque[tuple[float, float]]:
        series = self._series.get(IDENTITY, {}).get(())
        return series.points if series is not None else deque()

    def _switching(self, identity: float | None) -> bool:
        """For a load-balanced target whose process changed with this scrape: drop the
        counters' points (another process's) and return True.
        """
        if self.target.instance != LOAD_BALANCED or identity is None:
            return False
        seen = self._identities()
        if not seen or seen[-1][1] == identity:
            return False
        for name in [n for n in self._series if counts(n)]:
            del self._series[name]
        return True

    @property
    def switched(self) -> bool:
        """The last scrape reached another process than the one before (load-balanced
        targets only): no rate is computed across the two. Read from the identity's own
        points, so it needs no state of its own.
        """
        if self.target.instance != LOAD_BALANCED:
            return False
        seen = self._identities()
        return len(seen) >= 2 and seen[-1][0] == self.last_at and seen[-1][1] != seen[-2][1]

    @property
    def counters_unknown(self) -> str:
        """Why no counter of this target has a rate yet (empty when they can have one)."""
        if self.switched:
            return SWITCHED
        return NEEDS_TWO if self.scrapes < 2 else ""

    def _select(self, name: str, match: Match | None) -> list[tuple[Labels, _Series]]:
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
            t, v = s.points[-1]
            if t != self.last_at:
                continue
            k = _group(labels, by)
            out[k] = out.get(k, 0.0) + v
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
        for labels, s in self._select(name, match):
            pts = s.points
            k = _group(labels, by)
            inc, span = acc.get(k, (0.0, 0.0))
            span = max(span, pts[-1][0] - pts[0][0]) if len(pts) > 1 else span
            acc[k] = (inc + _increase(pts), span)
        out: dict[Key, Val] = {}
        for k, (inc, span) in acc.items():
            if span <= 0:
                out[k] = Val.unknown(SWITCHED if self.switched else NEEDS_TWO)
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
            pts = s.points
            k = _group(labels, by)
            count = _increase(pts) if len(pts) > 1 else pts[-1][1]
            lifetime[k] = lifetime.get(k, False) or len(pts) < 2
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
