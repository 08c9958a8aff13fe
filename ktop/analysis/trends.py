"""What a signal's history says: its normal (baseline), since when it breaches, which way it goes.

Pure functions of :class:`~ktop.model.history.HistoryView` points, for the
analysis layer. Nothing here is computed in the UI.

* :func:`baseline` is the cluster's own normal: the median and the spread
  (median absolute deviation, scaled by 1.4826 to be comparable to a
  standard deviation) of a signal over a *quiet window*: the retained
  history minus the most recent :data:`BASELINE_MIN_AGE_S` (where an
  incident under investigation would be). Triage's baseline-relative
  evidence reads it through :func:`signal_baseline`.
* :func:`trend` says since when a signal has been beyond a threshold
  (the start of the latest run of breaching points, a run that only ends once the
  signal has been clear for :data:`CLEAR_HOLD_S`: a cause in progress whose reading dips
  under its limit for a few frames keeps its onset, and stays a breach, *held*, until
  it has been clear that long) and whether
  the last ``recent_s`` are worse, better or the same as the ``recent_s``
  before them (a change of less than ``STEADY_RATIO`` is steady).
"""

from __future__ import annotations

import operator
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import repeat

from ktop.model.history import HistoryView, Point
from ktop.model.reading import split_key
from ktop.model.signals import BY_METRIC
from ktop.model.text import fmt_age, fmt_clock

MAD_SCALE = 1.4826
"""Makes the median absolute deviation estimate a standard deviation for normal data."""
BASELINE_MIN_AGE_S = 60.0
"""History points younger than this (seconds before the snapshot) are not part of a
baseline: the incident under investigation is recent, the cluster's normal is older."""
DEFAULT_RECENT_S = 60.0
STEADY_RATIO = 0.1
"""Relative changes smaller than this are ``steady``."""
MIN_BASELINE_POINTS = 10
CLEAR_HOLD_S = 60.0
"""A breach ends once its signal has been clear this long: until then it is held (its
onset kept, its evidence still suspect), so a cause in progress whose reading dips under
its limit for a few frames (a rolling restart between two instances) neither flips to no
incident nor starts again later."""


@dataclass(frozen=True, slots=True)
class Baseline:
    """A signal's normal over a quiet window."""

    median: float
    spread: float
    """Scaled median absolute deviation (0 for a signal that never moved)."""
    samples: int
    start: float
    end: float
    """The quiet window (source clock)."""

    def deviation(self, value: float) -> float | None:
        """How many spreads ``value`` is from the median (None when the spread is 0)."""
        if self.spread == 0:
            return None
        return (value - self.median) / self.spread


def baseline(
    points: Sequence[Point],
    now: float,
    *,
    exclude_recent_s: float = BASELINE_MIN_AGE_S,
    min_points: int = MIN_BASELINE_POINTS,
) -> Baseline | None:
    """Median and spread of the points older than ``now - exclude_recent_s``.

    None when fewer than ``min_points`` points are that old.
    """
    end = now - exclude_recent_s
    quiet = [(t, v) for t, v in points if t <= end]
    if not quiet:
        return None
    return _baseline_of([v for _, v in quiet], quiet[0][0], quiet[-1][0], min_points)


def _baseline_of(values: list[float], start: float, end: float, min_points: int) -> Baseline | None:
    """Median and scaled MAD of ``values`` (the quiet window ``start``..``end``)."""
    if len(values) < max(1, min_points):
        return None
    med = statistics.median(values)
    mad = statistics.median(map(abs, map(operator.sub, values, repeat(med))))
    return Baseline(med, mad * MAD_SCALE, len(values), start, end)


def signal_baseline(view: HistoryView, signal_key: str, now: float) -> Baseline | None:
    """:func:`baseline` of one signal of a snapshot's history (read without building its
    points, from values mostly sorted already: an hour of history is read for every
    published snapshot, and sorting sorted values is one pass).
    """
    values, start, end = view.sorted_until(signal_key, now - BASELINE_MIN_AGE_S)
    return _baseline_of(values, start, end, MIN_BASELINE_POINTS)


class Direction(StrEnum):
    """Which way a signal is going, judged by whether higher is worse."""

    WORSE = "worse"
    BETTER = "better"
    STEADY = "steady"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Trend:
    """Since when a signal breaches, and which way it is going."""

    since: float | None
    """Start of the current breach (source clock); None when the last point does not breach."""
    since_before_history: bool
    """The breach began before the oldest point held: ``since`` is a lower bound."""
    direction: Direction
    change: float | None
    """Relative change of the recent mean against the one before (None when unknown)."""
    clear_since: float | None = None
    """The breach is held: the signal has been clear since then (less than
    :data:`CLEAR_HOLD_S`); None while it breaches, or with no breach."""

    @property
    def held(self) -> bool:
        """True when the latest points are clear but not yet for :data:`CLEAR_HOLD_S`."""
        return self.since is not None and self.clear_since is not None


def trend(
    points: Sequence[Point],
    *,
    threshold: float,
    higher_is_worse: bool = True,
    recent_s: float = DEFAULT_RECENT_S,
    hold_s: float = CLEAR_HOLD_S,
) -> Trend:
    """Since when the points breach ``threshold`` (strictly; a run broken only by clear
    stretches shorter than ``hold_s``) and which way they go.
    """
    if not points:
        return Trend(None, False, Direction.UNKNOWN, None)

    since, before, clear_since = None, False, None
    bounds = _run_bounds(points, _breaches(threshold, higher_is_worse), hold_s)
    if bounds is not None and points[-1][0] - points[bounds[1]][0] < hold_s:
        start, last = bounds
        since, before = points[start][0], start == 0
        clear_since = points[last + 1][0] if last + 1 < len(points) else None
    now = points[-1][0]
    recent = [v for t, v in points if t > now - recent_s]
    earlier = [v for t, v in points if now - 2 * recent_s < t <= now - recent_s]
    if not recent or not earlier:
        return Trend(since, before, Direction.UNKNOWN, None, clear_since)
    a, b = statistics.fmean(earlier), statistics.fmean(recent)
    scale = max(abs(a), abs(b))
    change = 0.0 if scale == 0 else (b - a) / scale
    if abs(change) < STEADY_RATIO:
        direction = Direction.STEADY
    elif (change > 0) == higher_is_worse:
        direction = Direction.WORSE
    else:
        direction = Direction.BETTER
    return Trend(since, before, direction, change, clear_since)


@dataclass(frozen=True, slots=True)
class Run:
    """The latest run of breaching points of a signal (clear stretches shorter than
    :data:`CLEAR_HOLD_S` inside it), over or not.
    """

    start: float
    end: float
    """Its last breaching point."""
    before_history: bool
    """It began at the oldest point held: ``start`` is an upper bound of its start."""


def _breaches(threshold: float, higher_is_worse: bool) -> Callable[[float], bool]:
    """Whether a value is beyond ``threshold`` (strictly), in the signal's bad direction."""
    if higher_is_worse:
        return lambda v: v > threshold
    return lambda v: v < threshold


def _run_bounds(
    points: Sequence[Point], breaches: Callable[[float], bool], hold_s: float
) -> tuple[int, int] | None:
    """The indices of the first and the last point of the latest breach run (clear
    stretches shorter than ``hold_s`` inside it); None when no point breaches.
    """
    last = next((i for i in range(len(points) - 1, -1, -1) if breaches(points[i][1])), None)
    if last is None:
        return None
    start = last
    for i in range(last - 1, -1, -1):
        if not breaches(points[i][1]):
            continue
        if points[start][0] - points[i][0] > hold_s:
            break
        start = i
    return start, last


def last_run(
    points: Sequence[Point],
    threshold: float,
    *,
    higher_is_worse: bool = True,
    hold_s: float = CLEAR_HOLD_S,
) -> Run | None:
    """The latest run of points beyond ``threshold`` (strictly), over or not; None when no
    point breaches.
    """
    bounds = _run_bounds(points, _breaches(threshold, higher_is_worse), hold_s)
    if bounds is None:
        return None
    start, last = bounds
    return Run(points[start][0], points[last][0], start == 0)


def signal_last_run(view: HistoryView, signal_key: str, threshold: float) -> Run | None:
    """:func:`last_run` of one signal of a history (its whole list of points), worse in
    the direction its spec says.
    """
    worse = BY_METRIC[split_key(signal_key)[0]].higher_is_worse
    return last_run(view.points(signal_key), threshold, higher_is_worse=worse)


def signal_trend(view: HistoryView, signal_key: str, threshold: float) -> Trend:
    """:func:`trend` of one signal of a history, worse in the direction its spec says.

    Reads the last two ``recent_s`` windows first; the whole history only when the
    breach runs back past them (where it started is then further back).
    """
    worse = BY_METRIC[split_key(signal_key)[0]].higher_is_worse
    last = view.last_at
    if last is not None:
        tail = view.points(signal_key, since=last - 2 * DEFAULT_RECENT_S - view.step_s)
        if tail:
            t = trend(tail, threshold=threshold, higher_is_worse=worse)
            whole = tail[0][0] <= tail[-1][0] - 2 * DEFAULT_RECENT_S
            if whole and (t.since is None or t.since - CLEAR_HOLD_S > tail[0][0]):
                return t
    return trend(view.points(signal_key), threshold=threshold, higher_is_worse=worse)


DIRECTION_WORDS: dict[Direction, str] = {
    Direction.WORSE: "getting worse",
    Direction.BETTER: "getting better",
    Direction.STEADY: "steady",
    Direction.UNKNOWN: "trend unknown (not enough history)",
}
"""Which way a signal goes, in the words every view uses."""


def since_words(t: Trend, now: float) -> str:
    """``since 12:03:10 (4m ago)``, or why there is no such time."""
    if t.since is None:
        return "no longer beyond its threshold in the latest frame"
    if t.since_before_history:
        out = f"since before the history starts ({fmt_clock(t.since)})"
    else:
        out = f"since {fmt_clock(t.since)} ({fmt_age(now - t.since)} ago)"
    return out + held_words(t, now)


def held_words(t: Trend, now: float) -> str:
    """``, clear for 20s (held until 60s clear)`` for a held breach; empty otherwise."""
    if t.clear_since is None or t.since is None:
        return ""
    return f", clear for {fmt_age(now - t.clear_since)} (held until {CLEAR_HOLD_S:.0f}s clear)"


def describe(t: Trend, now: float) -> str:
    """``since 12:03:10 (4m ago), getting worse``."""
    return f"{since_words(t, now)}, {DIRECTION_WORDS[t.direction]}"


def compact(t: Trend) -> str:
    """A table cell: ``12:03:10 worse``; ``<12:03:10`` when the breach began before the
    history; ``ended`` when the latest frame no longer breaches.
    """
    if t.since is None:
        return "ended"
    start = ("<" if t.since_before_history else "") + fmt_clock(t.since)
    return f"{start} {t.direction.value}" if t.direction is not Direction.UNKNOWN else start


NORMAL_GAP_S = 20.0
"""The newest points kept out of a signal's recent normal: two scrape intervals of 10 s,
where a change under investigation first shows."""
MIN_NORMAL_POINTS = 3
NORMAL_QUANTILE = 0.25
"""A recent normal is this quantile (the lower quartile) of its points: an incident that
has grown through part of them does not yet raise it."""


def first_reading(view: HistoryView, signal_key: str, now: float) -> float | None:
    """The signal's oldest point older than :data:`NORMAL_GAP_S` before ``now``: what
    it read before the newest scrapes, while the history is too short for a recent
    normal (None with no such point).
    """
    for at, value in view.points(signal_key):
        return value if at <= now - NORMAL_GAP_S else None
    return None


def recent_normal(view: HistoryView, signal_key: str, now: float) -> float | None:
    """A signal's recent normal: the lower quartile of the oldest half (by time) of its
    points older than :data:`NORMAL_GAP_S` before ``now`` (the history ktop keeps and any
    Prometheus backfill); None with fewer than :data:`MIN_NORMAL_POINTS` of them.

    Unlike :func:`signal_baseline`, which waits for points a minute old, it exists a few
    frames into a run, so that a reading far above its normal is seen while the incident
    is young; the oldest half and the lower quartile keep the incident's own points out
    of it until it has lasted most of the history.
    """
    first = view.first_at
    end = now - NORMAL_GAP_S
    if first is None or end <= first:
        return None
    values, _, _ = view.sorted_until(signal_key, first + (end - first) / 2)
    if len(values) < MIN_NORMAL_POINTS:
        return None
    return values[int(NORMAL_QUANTILE * (len(values) - 1))]
