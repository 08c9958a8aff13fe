"""Trend data for sparklines and charts: a snapshot's history cut to a window and a width.

Pure functions (no Textual): which signals each area charts, their points
combined over subjects (summed, or the worst), resampled to one value per
column, and the labels of the time axis. The widgets only draw them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ktop.model.areas import AREAS
from ktop.model.events import Area
from ktop.model.history import HistoryView, Point
from ktop.model.reading import Combine, split_key
from ktop.model.series import WINDOW_S
from ktop.model.signals import BY_METRIC
from ktop.model.text import fmt_bytes, fmt_clock, fmt_duration, fmt_pct, fmt_si

WINDOWS: tuple[tuple[str, float], ...] = (("5m", WINDOW_S), ("15m", 900.0), ("1h", 3600.0))
"""The trend windows the window key cycles through, shortest first."""


@dataclass(frozen=True, slots=True)
class ChartSpec:
    """One chart: a signal's metric, combined over its subjects."""

    metric: str
    combine: Combine
    title: str


AREA_CHARTS: dict[Area, tuple[ChartSpec, ...]] = {
    area: tuple(ChartSpec(r.metric, r.chart.combine, r.chart.title) for r in spec.charts if r.chart)
    for area, spec in AREAS.items()
}
"""Full-width charts of each drill-down and sparklines of each overview panel (as many as
fit), most telling first: the charts the readings registry gives each area."""


def combined(view: HistoryView, metric: str, combine: Combine, since: float) -> list[Point]:
    """One point per frame: the metric's subjects summed, or their largest value."""
    by_time: dict[float, float] = {}
    for k in view.signal_keys():
        if split_key(k)[0] != metric:
            continue
        for t, v in view.points(k, since):
            prev = by_time.get(t)
            if prev is None:
                by_time[t] = v
            else:
                by_time[t] = prev + v if combine == "sum" else max(prev, v)
    return sorted(by_time.items())


def resample(points: Sequence[Point], start: float, end: float, width: int) -> list[float]:
    """One value per column over ``[start, end]``: the largest point in each column's
    time slot; a slot without points repeats the previous value; slots before the
    first point are left out (the line starts where the history does).
    """
    if width <= 0 or end <= start:
        return []
    slot = (end - start) / width
    cols: list[float | None] = [None] * width
    for t, v in points:
        if t < start or t > end:
            continue
        i = min(width - 1, int((t - start) / slot))
        cur = cols[i]
        cols[i] = v if cur is None else max(cur, v)
    out: list[float] = []
    last: float | None = None
    for c in cols:
        if c is not None:
            last = c
        if last is not None:
            out.append(last)
    return out


def fmt_value(metric: str, v: float) -> str:
    """A signal value in its unit."""
    unit = BY_METRIC[metric].unit
    if unit == "s":
        return fmt_duration(v)
    if unit == "B":
        return fmt_bytes(v)
    if unit == "x":
        return f"{v:.2f}x"
    if unit == "ratio":
        return fmt_pct(v)
    return fmt_si(v) + ("/s" if unit == "/s" else "")


@dataclass(frozen=True, slots=True)
class ChartData:
    """What a chart or sparkline draws, and its labels."""

    spec: ChartSpec
    values: tuple[float, ...]
    """One value per column (may be shorter than the width: history starts later)."""
    latest: float | None
    low: float | None
    high: float | None
    start: float
    end: float

    @property
    def summary(self) -> str:
        """``now 12/s · min 0/s · max 40/s`` (or ``no history yet``)."""
        if self.latest is None or self.low is None or self.high is None:
            return "no history yet"
        m = self.spec.metric
        return (
            f"now {fmt_value(m, self.latest)} · min {fmt_value(m, self.low)}"
            f" · max {fmt_value(m, self.high)}"
        )


def chart_data(
    view: HistoryView, spec: ChartSpec, now: float, window_s: float, width: int
) -> ChartData:
    """A chart's values over the last ``window_s`` seconds, ``width`` columns wide."""
    start = now - window_s
    pts = combined(view, spec.metric, spec.combine, start)
    values = resample(pts, start, now, width)
    vals = [v for _, v in pts]
    return ChartData(
        spec,
        tuple(values),
        vals[-1] if vals else None,
        min(vals) if vals else None,
        max(vals) if vals else None,
        start,
        now,
    )


def window_label(window_s: float) -> str:
    """``5m``, ``15m``, ``1h`` for the known windows."""
    for label, seconds in WINDOWS:
        if math.isclose(seconds, window_s):
            return label
    return fmt_duration(window_s)


def time_axis(start: float, end: float, width: int, marks: Mapping[int, str] | None = None) -> str:
    """An axis line: the clock at the left edge, the middle, and ``now`` at the right;
    ``marks`` (column -> one character) are written in their columns, and a label that
    would cover one is left out (``now`` stands in for the right one).
    """
    marks = {c: m for c, m in (marks or {}).items() if 0 <= c < width}
    if width <= 0:
        return ""
    chars = ["·"] * width
    left = fmt_clock(start)
    right = f"now {fmt_clock(end)}"
    mid = f"-{fmt_duration((end - start) / 2)}"

    def free(at: int, text: str) -> bool:
        return (
            at >= 0 and at + len(text) <= width and not any(at <= c < at + len(text) for c in marks)
        )

    def put(at: int, text: str) -> None:
        chars[at : at + len(text)] = list(text)

    if width < len(left) + len(right) + 2:
        label = right if free(width - len(right), right) else ""
        if not marks:
            return right.rjust(max(0, width))[:width]
        if label:
            put(width - len(label), label)
    else:
        for text in (right, "now"):
            if free(width - len(text), text):
                put(width - len(text), text)
                break
        if free(0, left):
            put(0, left)
        gap = width - len(left) - len(right)
        lpad = (gap - len(mid)) // 2
        if gap >= len(mid) + 4 and free(len(left) + lpad, mid):
            put(len(left) + lpad, mid)
    for c, m in marks.items():
        chars[c] = m
    return "".join(chars)
