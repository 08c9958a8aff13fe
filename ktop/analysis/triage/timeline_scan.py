"""What the incident timeline needs from a history, read once per chunk.

A history of an hour holds 3,600 frames of a hundred signals; reading every point for
every published snapshot would cost a third of a second. Sealed chunks never change
(:class:`~ktop.model.history.Chunk`), so each is scanned once and its summary kept
(:data:`_MEMO`, bounded); only the open chunk (at most a minute of frames) is read again.
A summary holds, per signal key, the first and last points, the points where a step
signal changed, the drops of an uptime, and the first points past a threshold's warning
and critical limits. :func:`scan` joins the summaries of a view's chunks in order.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ktop.model.grading import Severity
from ktop.model.history import Chunk, HistoryView, Point
from ktop.model.reading import split_key
from ktop.model.signals import BY_METRIC

STEP_METRICS = frozenset(
    {"etcd.is_leader", "etcd.has_leader", "nodes.zone_size", "nodes.unhealthy"}
)
"""Signals the timeline follows change by change (states and counts)."""
UPTIME_METRICS = frozenset({"api.uptime_s"})
"""Signals whose drops are restarts."""
RESTART_TOLERANCE_S = 5.0
"""An uptime that falls by more than this between two frames is a restart (less is the
jitter of two clocks: the frame's and the scrape's)."""
MEMO_CHUNKS = 256
"""Sealed chunks whose summaries are kept (an hour of history at 1 s is 61)."""


@dataclass(slots=True)
class KeyScan:
    """One signal key's summary over one chunk (or, joined, over a whole view)."""

    first: Point
    last: Point
    changes: list[Point] = field(default_factory=list)
    """Step signals: the points whose value differs from the point before (the first
    point of the view included)."""
    drops: list[Point] = field(default_factory=list)
    """Uptimes: the points that fell by more than :data:`RESTART_TOLERANCE_S`."""
    warn: Point | None = None
    """The first point graded warning or worse."""
    crit: Point | None = None
    """The first point graded critical."""


def _scan_points(metric: str, pts: Sequence[Point]) -> KeyScan:
    out = KeyScan(pts[0], pts[-1])
    reading = BY_METRIC.get(metric)
    th = reading.threshold if reading is not None else None
    step, uptime = metric in STEP_METRICS, metric in UPTIME_METRICS
    prev: float | None = None
    for t, v in pts:
        if step and v != prev:
            out.changes.append((t, v))
        if uptime and prev is not None and v < prev - RESTART_TOLERANCE_S:
            out.drops.append((t, v))
        if th is not None and out.crit is None:
            sev = th.grade(v)
            if sev >= Severity.WARNING and out.warn is None:
                out.warn = (t, v)
            if sev is Severity.CRITICAL:
                out.crit = (t, v)
        prev = v
    return out


def scan_chunk(chunk: Chunk) -> dict[str, KeyScan]:
    """Every key's summary over one chunk (keys without a point are left out)."""
    out: dict[str, KeyScan] = {}
    for k, vals in chunk.values.items():
        pts = [(t, v) for t, v in zip(chunk.times, vals, strict=False) if not math.isnan(v)]
        if pts:
            out[k] = _scan_points(split_key(k)[0], pts)
    return out


_MEMO: OrderedDict[int, tuple[Chunk, dict[str, KeyScan]]] = OrderedDict()
"""Summaries of sealed chunks by identity (the chunk is held, so its id is not reused)."""
_LOCK = threading.Lock()


def _sealed_scan(chunk: Chunk) -> dict[str, KeyScan]:
    with _LOCK:
        hit = _MEMO.get(id(chunk))
        if hit is not None and hit[0] is chunk:
            _MEMO.move_to_end(id(chunk))
            return hit[1]
    result = scan_chunk(chunk)
    with _LOCK:
        _MEMO[id(chunk)] = (chunk, result)
        while len(_MEMO) > MEMO_CHUNKS:
            _MEMO.popitem(last=False)
    return result


def _join(a: KeyScan, b: KeyScan, metric: str) -> KeyScan:
    """``a`` followed by ``b`` (``b`` later), both of ``metric``."""
    changes = a.changes + [p for i, p in enumerate(b.changes) if i or p[1] != a.last[1]]
    drops = list(a.drops)
    if metric in UPTIME_METRICS and b.first[1] < a.last[1] - RESTART_TOLERANCE_S:
        drops.append(b.first)
    drops += b.drops
    return KeyScan(
        a.first,
        b.last,
        changes,
        drops,
        a.warn or b.warn,
        a.crit or b.crit,
    )


def _join_into(out: dict[str, KeyScan], part: dict[str, KeyScan]) -> None:
    for k, s in part.items():
        prev = out.get(k)
        out[k] = s if prev is None else _join(prev, s, split_key(k)[0])


_PREFIX: list[tuple[tuple[Chunk, ...], dict[str, KeyScan]]] = []
"""The last join of a view's sealed chunks (they change once a chunk is sealed, about
once a minute): the chunks, held, and their joined summaries (never modified)."""


def _sealed_prefix(sealed: tuple[Chunk, ...]) -> dict[str, KeyScan]:
    with _LOCK:
        hit = _PREFIX[0] if _PREFIX else None
    if (
        hit is not None
        and len(hit[0]) == len(sealed)
        and all(a is b for a, b in zip(hit[0], sealed, strict=True))
    ):
        return hit[1]
    out: dict[str, KeyScan] = {}
    for chunk in sealed:
        _join_into(out, _sealed_scan(chunk))
    with _LOCK:
        _PREFIX[:] = [(sealed, out)]
    return out


def scan(view: HistoryView) -> dict[str, KeyScan]:
    """Every key's summary over the whole view (the last chunk is the open one)."""
    if not view.chunks:
        return {}
    out = dict(_sealed_prefix(view.chunks[:-1]))
    _join_into(out, scan_chunk(view.chunks[-1]))
    return out
