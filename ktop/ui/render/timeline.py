"""The incident timeline as lines (the ``i`` screen, ``ktop triage`` text and Markdown)
and as marks on the trend charts' time axis (pure).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from ktop.analysis.triage.timeline import (
    KIND_AREA,
    KIND_MARK,
    KIND_WORD,
    EventKind,
    TimelineEvent,
)
from ktop.model.events import Area
from ktop.model.text import fmt_age, fmt_clock, truncate
from ktop.ui.render.level import SEVERITY_LEVEL, SEVERITY_SYMBOL, STYLE

NO_EVENTS = (
    "nothing changed in the history held: no restart, leader change, zone transition, "
    "threshold crossing or marker"
)


def legend() -> str:
    """``R apiserver restart  L etcd leader ...``."""
    return "  ".join(f"{KIND_MARK[k]} {KIND_WORD[k]}" for k in EventKind)


def when(e: TimelineEvent, now: float) -> str:
    """``12:03:10 (4m ago)``; ``<12:03:10`` when it happened before the history."""
    clock = ("<" if e.before_history else "") + fmt_clock(e.at)
    return f"{clock} ({fmt_age(max(0.0, now - e.at))} ago)"


def plain_line(e: TimelineEvent, now: float) -> str:
    """``12:03:10 (4m ago) R ▲ apiserver-1:6443: apiserver (re)started``."""
    return f"{when(e, now)} {KIND_MARK[e.kind]} {SEVERITY_SYMBOL[e.severity]} {e.line}"


def timeline_text(events: Sequence[TimelineEvent], now: float, width: int) -> Text:
    """The screen's list: one line per event, oldest first, coloured by its severity."""
    if not events:
        return Text(NO_EVENTS, style="dim")
    out = Text()
    for i, e in enumerate(events):
        if i:
            out.append("\n")
        head = f"{when(e, now)} {KIND_MARK[e.kind]} "
        out.append(head, style="dim")
        style = STYLE[SEVERITY_LEVEL[e.severity]]
        out.append(f"{SEVERITY_SYMBOL[e.severity]} ", style=style)
        out.append(truncate(e.line, max(8, width - len(head) - 2)))
    return out


def belongs(e: TimelineEvent, area: Area, metric: str) -> bool:
    """Whether a chart of ``metric`` in ``area`` marks the event: its area's changes, the
    crossings of its own reading, the diagnosis and the markers.
    """
    if e.kind is EventKind.THRESHOLD:
        return e.metric == metric
    kind_area = KIND_AREA[e.kind]
    return kind_area is None or kind_area is area


def axis_marks(
    events: Sequence[TimelineEvent], area: Area, metric: str, start: float, end: float, width: int
) -> dict[int, str]:
    """Column -> mark of the events a chart shows within ``start``..``end`` (the later
    event wins a shared column; the worst when at the same time).
    """
    marks: dict[int, tuple[float, int, str]] = {}
    if width <= 0 or end <= start:
        return {}
    for e in events:
        if not start <= e.at <= end or not belongs(e, area, metric):
            continue
        col = min(width - 1, int((e.at - start) / (end - start) * width))
        rank = (e.at, int(e.severity), KIND_MARK[e.kind])
        if col not in marks or rank[:2] >= marks[col][:2]:
            marks[col] = rank
    return {col: mark for col, (_, _, mark) in marks.items()}
