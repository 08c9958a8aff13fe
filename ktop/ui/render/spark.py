"""Sparklines that tell the truth (pure): zero-based, topped by the reading's warning
limit when it has one, each column coloured by the reading's own status.

Textual's sparkline scales from the window's minimum to its maximum and colours by
relative height: a healthy fsync between 2.0 and 2.2 ms is drawn as a red cliff, and a
constant 1,667 NotReady nodes as an empty line. Here the scale starts at zero (or at
the lowest value when some are negative), reaches at least the reading's warning limit
(so a reading far below its limit stays low), and a column's style is the theme's
status style of its value (:meth:`~ktop.model.reading.Reading.status`): ok, warning,
critical; a reading without a threshold is drawn without a status colour. A constant
non-zero value is a full bar, never a bottom line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from ktop.model.grading import Severity
from ktop.model.signals import BY_METRIC
from ktop.model.values import Val
from ktop.ui.render.level import SEVERITY_LEVEL, STYLE, Level
from ktop.ui.render.trend import fmt_value

BARS = "▁▂▃▄▅▆▇█"


@dataclass(frozen=True, slots=True)
class Scale:
    """The range a sparkline draws: ``low`` is its bottom, ``high`` its top."""

    low: float
    high: float

    def words(self, metric: str) -> str:
        """``scale 0 to 500ms`` (its range in the reading's unit)."""
        return f"scale {fmt_value(metric, self.low)} to {fmt_value(metric, self.high)}"


def scale_of(metric: str, values: Sequence[float]) -> Scale:
    """Zero-based (or from the lowest value when some are negative), up to the largest
    value or the reading's warning limit, whichever is higher.
    """
    reading = BY_METRIC[metric]
    finite = [v for v in values if math.isfinite(v)]  # an infinity is a full (or no) bar
    low = min(0.0, *finite) if finite else 0.0
    high = max(finite, default=0.0)
    th = reading.threshold
    if th is not None and not th.below and th.warn is not None and th.warn > 0:
        high = max(high, th.warn)
    if high <= low:
        high = low + 1.0
    return Scale(low, high)


def column_level(metric: str, value: float) -> Level:
    """The status a column is drawn in: its value graded by the reading's threshold."""
    reading = BY_METRIC[metric]
    if reading.threshold is None:
        return Level.NEUTRAL
    sev = reading.status(Val.of(value))
    return Level.OK if sev is Severity.INFO else SEVERITY_LEVEL[sev]


def _filled(v: float, scale: Scale, steps: int) -> int:
    """How many of ``steps`` eighths a column of ``v`` fills: at least ▁; +Inf all."""
    if math.isnan(v) or v == -math.inf:
        return 1
    if v == math.inf:
        return steps
    return max(1, min(steps, round((v - scale.low) / (scale.high - scale.low) * steps)))


def spark_lines(metric: str, values: Sequence[float], height: int = 1) -> list[Text]:
    """``height`` lines of bars, top line first, one column per value.

    Neighbouring columns of one style share one span (a chart redrawn every frame at
    160 columns made a span per column), and each distinct value is graded once.
    """
    height = max(1, height)
    if not values:
        return [Text("") for _ in range(height)]
    scale = scale_of(metric, values)
    steps = len(BARS) * height
    graded: dict[float, str] = {}
    rows: list[list[str]] = [[] for _ in range(height)]  # row 0 is the bottom
    runs: list[list[Any]] = []  # [style, columns] of neighbouring columns alike
    for v in values:
        style = graded.get(v)
        if style is None:
            style = graded[v] = STYLE[column_level(metric, v)]
        filled = _filled(v, scale, steps)
        for row in range(height):
            part = filled - row * len(BARS)
            rows[row].append(" " if part <= 0 else BARS[min(part, len(BARS)) - 1])
        if runs and runs[-1][0] == style:
            runs[-1][1] += 1
        else:
            runs.append([style, 1])
    lines = []
    for chars in reversed(rows):
        line, start = Text(), 0
        for style, count in runs:
            line.append("".join(chars[start : start + count]), style=style)
            start += count
        lines.append(line)
    return lines
