"""Readings far above their own normal while still under their limit.

An etcd WAL fsync p99 of 219 ms is under the mixin's 500 ms warning, yet about a hundred
times what that disk does on a normal day: the absolute limit says nothing, the cluster's
own history does. Every graded reading of the registry (``ktop/model/signals.py``) whose
current value is under its warning is compared with its signal's *normal*: the median of
the per-chunk medians of its history (sealed chunks only, so the last minute, where the
incident is, never counts). At :data:`BASELINE_MARK` times that normal or more, and at
least :data:`LIMIT_FLOOR` of its warning limit (so that noise near zero is not a mark),
it is marked, with the ratio.

Sealed chunks never change: each is summarised once (:data:`_MEMO`, bounded), so a
snapshot costs a few lookups per signal, not a pass over an hour of points.
"""

from __future__ import annotations

import math
import statistics
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ktop.model.grading import Severity
from ktop.model.history import Chunk, HistoryView
from ktop.model.limits import BASELINE_MARK
from ktop.model.limits import BASELINE_MARK_FLOOR as LIMIT_FLOOR
from ktop.model.reading import Reading, key
from ktop.model.signals import SIGNALS
from ktop.model.snapshot import ClusterSnapshot

MIN_CHUNKS = 3
"""A normal needs this many sealed chunks of history (three minutes at the default step)."""
MEMO_CHUNKS = 256


@dataclass(frozen=True, slots=True)
class BaselineMark:
    """One reading of one subject far above its normal."""

    reading: Reading
    subject: str
    value: float
    normal: float
    """The median of the per-chunk medians of its history."""

    @property
    def ratio(self) -> float:
        """Value / normal."""
        return self.value / self.normal


_MEMO: OrderedDict[int, tuple[Chunk, dict[str, float]]] = OrderedDict()
_LOCK = threading.Lock()


def _medians(chunk: Chunk) -> dict[str, float]:
    """Each signal key's median over one sealed chunk (keys with no value left out)."""
    with _LOCK:
        hit = _MEMO.get(id(chunk))
        if hit is not None and hit[0] is chunk:
            _MEMO.move_to_end(id(chunk))
            return hit[1]
    out = {}
    for k, vals in chunk.values.items():
        known = [v for v in vals if not math.isnan(v)]
        if known:
            out[k] = statistics.median(known)
    with _LOCK:
        _MEMO[id(chunk)] = (chunk, out)
        while len(_MEMO) > MEMO_CHUNKS:
            _MEMO.popitem(last=False)
    return out


def normal(view: HistoryView, signal_key: str) -> float | None:
    """The median of the signal's per-chunk medians over the sealed chunks (None with
    fewer than :data:`MIN_CHUNKS` chunks holding it).
    """
    sealed = view.chunks[:-1]  # the last chunk is the open one: the recent minute
    medians = [m[signal_key] for c in sealed if signal_key in (m := _medians(c))]
    return statistics.median(medians) if len(medians) >= MIN_CHUNKS else None


def markable(reading: Reading) -> bool:
    """A reading that can be far above its normal: extracted from snapshots, graded by a
    warning limit it passes upwards, and not itself a ratio against a mean.
    """
    th = reading.threshold
    if reading.extract is None or reading.area is None or th is None or th.warn is None:
        return False
    return reading.higher_is_worse and not th.below and th.unit != "x"


MARKABLE: tuple[Reading, ...] = tuple(r for r in SIGNALS if markable(r))
"""The readings compared with their own normal."""


def baseline_marks(s: ClusterSnapshot) -> tuple[BaselineMark, ...]:
    """Every graded reading under its warning limit yet far above its own normal."""
    out = []
    for reading in MARKABLE:
        th = reading.threshold
        assert reading.extract is not None and th is not None and th.warn is not None
        for subject, v in reading.extract(s):
            value = v.value
            if value is None or v.lifetime or th.grade(value) >= Severity.WARNING:
                continue
            if value < LIMIT_FLOOR * th.warn:
                continue
            base = normal(s.history, key(reading.metric, subject))
            if base is not None and base > 0 and value >= BASELINE_MARK * base:
                out.append(BaselineMark(reading, subject, value, base))
    return tuple(out)
