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
  (the start of the latest unbroken run of breaching points) and whether
  the last ``recent_s`` are worse, better or the same as the ``recent_s``
  before them (a change of less than ``STEADY_RATIO`` is steady).
"""

from __future__ import annotations

import operator
import statistics
from collections.abc import Sequence
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


def trend(
    points: Sequence[Point],
    *,
    threshold: float,
    higher_is_worse: bool = True,
    recent_s: float = DEFAULT_RECENT_S,
) -> Trend:
    """Since when the points breach ``threshold`` (strictly) and which way they go."""
    if not points:
        return Trend(None, False, Direction.UNKNOWN, None)

    def breaches(v: float) -> bool:
        return v > threshold if higher_is_worse else v < threshold

    since: float | None = None
    start_index = len(points)
    for i in range(len(points) - 1, -1, -1):
        if not breaches(points[i][1]):
            break
        start_index = i
    if start_index < len(points):
        since = points[start_index][0]
    before = since is not None and start_index == 0
    now = points[-1][0]
    recent = [v for t, v in points if t > now - recent_s]
    earlier = [v for t, v in points if now - 2 * recent_s < t <= now - recent_s]
    if not recent or not earlier:
        return Trend(since, before, Direction.UNKNOWN, None)
    a, b = statistics.fmean(earlier), statistics.fmean(recent)
    scale = max(abs(a), abs(b))
    change = 0.0 if scale == 0 else (b - a) / scale
    if abs(change) < STEADY_RATIO:
        direction = Direction.STEADY
    elif (change > 0) == higher_is_worse:
        direction = Direction.WORSE
    else:
        direction = Direction.BETTER
    return Trend(since, before, direction, change)


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
            if whole and (t.since is None or t.since > tail[0][0]):
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
        return f"since before the history starts ({fmt_clock(t.since)})"
    return f"since {fmt_clock(t.since)} ({fmt_age(now - t.since)} ago)"


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
