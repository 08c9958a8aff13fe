"""Windowed metric series per target: each scrape folded into its target's series.

Each scrape of a target appends one point per kept series (:class:`TargetSeries`); the
points are held, and the PromQL-like math over them computed, by
:class:`~ktop.model.series_window.SeriesWindow`. Scrapes alike in layout (a recording's
runs, :class:`ScrapeRun`) are folded in bulk.

Reads through a load balancer (:data:`~ktop.model.scrape_targets.LOAD_BALANCED`) may reach
another instance at every scrape: when the body's instance identity
(``process_start_time_seconds``) changes, the counter points of the previous
process are dropped and rates are unknown ("the load balancer switched instance")
until two scrapes of one process are in, never a rate across two processes.
"""

from __future__ import annotations

import functools
import itertools
import operator
import sys
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ktop.model.scrape_targets import LOAD_BALANCED, Component, Labels, Sample, Target
from ktop.model.series_window import (
    IDENTITY,
    Key,
    Match,
    SeriesPoints,
    SeriesWindow,
    group_key,
    matches,
)
from ktop.model.wanted import COUNTERS, FAMILIES, HISTOGRAMS

WINDOW_S = 300.0
"""The observation window: rates and quantiles are over this many seconds of samples
(the model's default, the Prometheus backfill's raw window, the signals' PromQL)."""

KEPT_LABELS_CACHE = 16_384
"""Samples whose kept labels are remembered (a 10,000-node lab's apiserver sends about
5,700 kept samples per scrape, the same ones every time)."""


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
    """One row of sample values per scrape, in the order of ``names`` (integers are read
    as floats)."""

    def add(self, at: float, values: Sequence[float]) -> None:
        """One more scrape, after the others."""
        self.ats.append(at)
        self.rows.append(values)

    def samples(self, i: int) -> tuple[Sample, ...]:
        """The samples of the ``i``-th scrape."""
        return tuple(map(Sample, self.names, self.labels, map(float, self.rows[i])))


class IngestedRun:
    """What each scrape of a :class:`ScrapeRun` put in its target's series, as columns
    (one value per scrape): read as the target's series read after each scrape.
    """

    def __init__(
        self,
        ts: SeriesWindow,
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
            k = group_key(labels, by)
            acc = out.get(k)
            start = itertools.repeat(0.0) if acc is None else acc
            out[k] = list(map(operator.add, start, col))
        return out

    def gauge_columns_each(
        self, name: str, by: Sequence[str], each: Sequence[Match]
    ) -> list[dict[Key, list[float]]]:
        """:meth:`gauge_columns` for each of several matchers, the series read once."""
        outs: list[dict[Key, list[float]]] = [{} for _ in each]
        for labels, _ in self._ts._select(name, None):
            col = self._columns.get((name, labels))
            if col is None:  # not scraped in the run: never in the last scrape
                continue
            d = dict(labels)
            k = tuple(d.get(x, "") for x in by)
            for out, match in zip(outs, each, strict=True):
                if not match or matches(d, match):
                    acc = out.get(k)
                    start = itertools.repeat(0.0) if acc is None else acc
                    out[k] = list(map(operator.add, start, col))
        return outs


class TargetSeries(SeriesWindow):
    """All kept series of one target: scrapes folded into its window."""

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
                series = by_labels[key[1]] = SeriesPoints()
                if (
                    self.last_at is not None
                    and self.last_at >= horizon
                    and counts(key[0])
                    and not switching  # its counters were another process's
                ):
                    # Absent at the previous scrape: the counter had not counted yet. Without
                    # this zero, everything it counted before it was first seen is lost.
                    series.append(self.last_at, 0.0)
            series.append(at, value)
        self.scrape_times.append(at)
        self._prune(horizon)
        self.last_at = at
        self.scrapes += 1

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
            values = list(seen.values[-1:]) + columns[keys.index((IDENTITY, ()))]
            if any(map(operator.ne, values, values[1:])):
                return None  # another process in the run: its counters are dropped
        # As _ingest_summed of each scrape, in order: the first scrape's series made (with
        # their zero, as ingest makes it), every point added, then one pruning at the last
        # scrape's horizon (pruning at the first's too would drop nothing more).
        self._memo.clear()
        horizon = ats[0] - self.window_s
        first = dict(zip(keys, (c[0] for c in columns), strict=True))
        zero_due = (
            self.last_at is not None
            and self.last_at >= horizon
            and not self._switching(first.get((IDENTITY, ())))
        )
        prev = self.last_at
        series_of = self._series
        for (name, labels), col in zip(keys, columns, strict=True):
            by_labels = series_of.get(name)
            if by_labels is None:
                by_labels = series_of[sys.intern(name)] = {}
            series = by_labels.get(labels)
            if series is None:
                series = by_labels[labels] = SeriesPoints()
                if zero_due and counts(name):
                    series.append(typing.cast(float, prev), 0.0)
            series.times.extend(ats)
            series.values.extend(col)
        layout_names = {name for name, _ in keys}
        stale: dict[str, float] = {}
        for name, by_labels in series_of.items():
            # Series of other names: each name held while its latest point is in (those
            # the first scrape's pruning kept).
            if name not in layout_names:
                lasts = [
                    s.times[-1] for s in by_labels.values() if s.times and s.times[-1] >= horizon
                ]
                if lasts:
                    stale[name] = max(lasts)
        self.scrape_times.extend(ats)
        self._prune(ats[-1] - self.window_s)
        self.last_at = ats[-1]
        self.scrapes += len(ats)
        return IngestedRun(self, list(ats), dict(zip(keys, columns, strict=True)), stale)

    def _switching(self, identity: float | None) -> bool:
        """For a load-balanced target whose process changed with this scrape: drop the
        counters' points (another process's) and return True.
        """
        if self.target.instance != LOAD_BALANCED or identity is None:
            return False
        seen = self._identities().values
        if not seen or seen[-1] == identity:
            return False
        for name in [n for n in self._series if counts(n)]:
            del self._series[name]
        return True
