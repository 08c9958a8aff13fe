"""Bounded history of every signal, kept per aggregate.

The model records one *frame* per snapshot (at most one per ``step_s`` of
the source clock): the time and every signal's value
(:func:`ktop.model.signals.read_signals`). Frames live in chunks of
:data:`CHUNK_FRAMES`; a full chunk is sealed and never written again, and
chunks older than ``retention_s`` are dropped, so memory is bounded by
``retention_s / step_s`` frames times the number of signals, whatever the
number of nodes (signals are per priority level, instance, zone: never per
node). Values are 4-byte floats; times 8-byte floats.

A snapshot holds a :class:`HistoryView`: the sealed chunks themselves (they
never change) and a copy of the open one, so the view never changes after
it was taken.

The state is plain data: :meth:`History.to_state` gives a dict of lists of
floats and strings (``None`` where a signal had no value), and
:meth:`History.from_state` restores it, so a recording can store it as it is.
"""

from __future__ import annotations

import math
import threading
from array import array
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CHUNK_FRAMES = 60
"""Frames per chunk (one minute at the default 1 s refresh)."""
DEFAULT_RETENTION_S = 3600.0
DEFAULT_STEP_S = 1.0
_NAN = math.nan

Point = tuple[float, float]
"""``(time, value)`` on the source clock."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive frames: their times and, per signal key, a value or NaN per frame.

    Not modified once handed out (sealed chunks are shared between views).
    """

    times: array[float]
    values: Mapping[str, array[float]]
    _known: dict[str, tuple[array[float], array[float]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Per signal key, the times and values of its known points (NaN left out), made on
    first read and kept: the chunk never changes, and a history of an hour is read for
    every published snapshot (baselines, trends)."""

    def known(self, signal_key: str) -> tuple[array[float], array[float]]:
        """The times and values of one signal's points in this chunk (NaN left out)."""
        hit = self._known.get(signal_key)
        if hit is None:
            vals = self.values.get(signal_key)
            times, kept = array("d"), array("d")
            if vals is not None:
                for t, v in zip(self.times, vals, strict=False):
                    if not math.isnan(v):
                        times.append(t)
                        kept.append(v)
            hit = self._known[signal_key] = (times, kept)
        return hit

    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        arrays = [self.times, *self.values.values()]
        return sum(a.buffer_info()[1] * a.itemsize for a in arrays)


@dataclass(frozen=True, slots=True)
class HistoryView:
    """An immutable view of the history at one snapshot."""

    chunks: tuple[Chunk, ...] = ()
    step_s: float = DEFAULT_STEP_S
    retention_s: float = DEFAULT_RETENTION_S
    backfilled: tuple[float, float] | None = None
    """The span of the points added from elsewhere (:meth:`History.backfill`, e.g.
    Prometheus), oldest and newest; None when every point was measured by ktop."""

    @property
    def first_at(self) -> float | None:
        """Time of the oldest frame, or None when there are none."""
        for c in self.chunks:
            if len(c.times):
                return c.times[0]
        return None

    @property
    def last_at(self) -> float | None:
        """Time of the newest frame, or None when there are none."""
        for c in reversed(self.chunks):
            if len(c.times):
                return c.times[-1]
        return None

    def signal_keys(self) -> list[str]:
        """Every signal key with at least one frame, in first-seen order."""
        seen: dict[str, None] = {}
        for c in self.chunks:
            for k in c.values:
                seen.setdefault(k, None)
        return list(seen)

    def points(self, signal_key: str, since: float = -math.inf) -> tuple[Point, ...]:
        """The ``(time, value)`` points of one signal at or after ``since``, oldest first."""
        out: list[Point] = []
        for c in self.chunks:
            if signal_key not in c.values or not len(c.times) or c.times[-1] < since:
                continue
            times, vals = c.known(signal_key)
            if not len(times):
                continue
            if times[0] >= since:
                out.extend(zip(times, vals, strict=True))
            else:
                i = bisect_left(times, since)
                out.extend(zip(times[i:], vals[i:], strict=True))
        return tuple(out)

    def sorted_until(self, signal_key: str, end: float) -> tuple[list[float], float, float]:
        """The values of one signal's points at or before ``end``, sorted, with the times
        of the first and last of them (NaN when there is none). The chunks wholly at or
        before ``end`` are sorted once (:data:`_SORTED`, until a chunk is sealed or
        dropped: about once a minute) and the few points after them are inserted in a copy.
        """
        whole: list[Chunk] = []
        for c in self.chunks:
            if not len(c.times) or c.times[-1] > end:
                break
            whole.append(c)
        prefix = self._sorted_prefix(signal_key, whole)
        out = list(prefix.values)
        first, last = prefix.first_at, prefix.last_at
        if len(whole) < len(self.chunks):  # the chunk the end falls in, up to the end
            times, vals = self.chunks[len(whole)].known(signal_key)
            n = bisect_right(times, end)
            for v in vals[:n]:
                insort(out, v)
            if n:
                first = times[0] if math.isnan(first) else first
                last = times[n - 1]
        return out, first, last

    @staticmethod
    def _sorted_prefix(signal_key: str, whole: list[Chunk]) -> _SortedPrefix:
        with _SORTED_LOCK:
            hit = _SORTED.get(signal_key)
        if (
            hit is not None
            and whole
            and hit.first is whole[0]
            and hit.last is whole[-1]
            and hit.chunks == len(whole)
        ):
            return hit
        values: list[float] = []
        first_at = last_at = _NAN
        for c in whole:
            times, vals = c.known(signal_key)
            if len(times):
                first_at = times[0] if math.isnan(first_at) else first_at
                last_at = times[-1]
                values.extend(vals)
        values.sort()
        first, last = (whole[0], whole[-1]) if whole else (None, None)
        made = _SortedPrefix(first, last, len(whole), values, first_at, last_at)
        with _SORTED_LOCK:
            _SORTED[signal_key] = made
        return made

    def latest(self, signal_key: str) -> float | None:
        """The newest value of a signal, or None."""
        pts = self.points(signal_key, since=(self.last_at or 0.0) - 10 * self.step_s)
        return pts[-1][1] if pts else None

    def nbytes(self) -> int:
        """Bytes held by all chunks' arrays."""
        return sum(c.nbytes() for c in self.chunks)


EMPTY_HISTORY = HistoryView()


@dataclass(frozen=True, slots=True)
class _SortedPrefix:
    """One signal's values over a run of whole chunks, sorted (never modified)."""

    first: Chunk | None
    last: Chunk | None
    chunks: int
    values: list[float]
    first_at: float
    """The time of the run's first known point (NaN when it has none)."""
    last_at: float


_SORTED: dict[str, _SortedPrefix] = {}
"""Per signal key, the latest sorted run of whole chunks a baseline read (one per key:
about 30 KB for an hour of one signal; held chunks keep their ids from being reused)."""
_SORTED_LOCK = threading.Lock()


@dataclass(slots=True)
class _Open:
    times: array[float] = field(default_factory=lambda: array("d"))
    values: dict[str, array[float]] = field(default_factory=dict)


class History:
    """The mutable history the model appends to; hands out :class:`HistoryView`."""

    def __init__(
        self, retention_s: float = DEFAULT_RETENTION_S, step_s: float = DEFAULT_STEP_S
    ) -> None:
        if retention_s <= 0 or step_s <= 0:
            raise ValueError("history retention and step must be positive")
        self.retention_s = retention_s
        self.step_s = step_s
        self._sealed: list[Chunk] = []
        self._open = _Open()
        self._max_sealed = math.ceil(retention_s / step_s / CHUNK_FRAMES) + 1
        self.backfilled: tuple[float, float] | None = None
        """The span of the points :meth:`backfill` added (oldest, newest)."""

    @property
    def last_at(self) -> float | None:
        """Time of the newest frame."""
        if len(self._open.times):
            return self._open.times[-1]
        return self._sealed[-1].times[-1] if self._sealed else None

    def record(self, at: float, values: Mapping[str, float]) -> bool:
        """Append a frame unless it holds no value or the last one is less than ``step_s`` old.

        Returns whether the frame was kept.
        """
        if not values:
            return False  # nothing known yet (e.g. before any source reported)
        last = self.last_at
        if last is not None and at - last < self.step_s * 0.999:
            return False
        self._append(at, values)
        self._trim(at)
        return True

    def _append(self, at: float, values: Mapping[str, float]) -> None:
        o = self._open
        n = len(o.times)
        o.times.append(at)
        for k, v in values.items():
            arr = o.values.get(k)
            if arr is None:
                arr = o.values[k] = array("f", [_NAN] * n)
            arr.append(v)
        for arr in o.values.values():
            if len(arr) == n:
                arr.append(_NAN)
        if len(o.times) >= CHUNK_FRAMES:
            self._sealed.append(Chunk(o.times, o.values))
            self._open = _Open()

    def _trim(self, now: float) -> None:
        horizon = now - self.retention_s
        while self._sealed and (
            self._sealed[0].times[-1] < horizon or len(self._sealed) > self._max_sealed
        ):
            self._sealed.pop(0)

    def view(self) -> HistoryView:
        """An immutable view: sealed chunks shared, the open chunk copied."""
        chunks = list(self._sealed)
        o = self._open
        if len(o.times):
            chunks.append(
                Chunk(array("d", o.times), {k: array("f", v) for k, v in o.values.items()})
            )
        return HistoryView(tuple(chunks), self.step_s, self.retention_s, self.backfilled)

    def frames(self) -> list[tuple[float, dict[str, float]]]:
        """Every frame as ``(time, {key: value})``, oldest first (NaN left out)."""
        out: list[tuple[float, dict[str, float]]] = []
        for c in self.view().chunks:
            for i, t in enumerate(c.times):
                row = {k: v[i] for k, v in c.values.items() if not math.isnan(v[i])}
                out.append((t, row))
        return out

    def backfill(self, series: Mapping[str, Sequence[Point]]) -> int:
        """Add points from the past (e.g. read from Prometheus).

        For each signal, only points older than the first value the history
        already holds for it are added: what ktop measured itself wins.
        Returns how many points were added.
        """
        frames = self.frames()
        first: dict[str, float] = {}
        for t, row in frames:
            for k in row:
                first.setdefault(k, t)
        by_time: dict[float, dict[str, float]] = {t: row for t, row in frames}
        added = 0
        span = self.backfilled
        for k, pts in series.items():
            cut = first.get(k, math.inf)
            for t, v in pts:
                if t < cut and math.isfinite(v):
                    row = by_time.setdefault(t, {})
                    if k not in row:
                        row[k] = v
                        added += 1
                        span = (t, t) if span is None else (min(span[0], t), max(span[1], t))
        if added:
            self.backfilled = span
            self._rebuild(sorted(by_time.items()))
        return added

    def _rebuild(self, frames: Iterable[tuple[float, Mapping[str, float]]]) -> None:
        self._sealed, self._open = [], _Open()
        last: float | None = None
        for t, row in frames:
            self._append(t, row)
            last = t
        if last is not None:
            self._trim(last)

    def nbytes(self) -> int:
        """Bytes held by the history's arrays."""
        return self.view().nbytes()

    # ----------------------------------------------------------- plain data

    def to_state(self) -> dict[str, Any]:
        """The whole history as plain data (floats, strings, lists, None for gaps)."""
        view = self.view()
        keys = view.signal_keys()
        times: list[float] = []
        cols: dict[str, list[float | None]] = {k: [] for k in keys}
        for c in view.chunks:
            times.extend(c.times)
            n = len(c.times)
            for k in keys:
                arr = c.values.get(k)
                col = cols[k]
                if arr is None:
                    col.extend([None] * n)
                else:
                    col.extend(None if math.isnan(v) else v for v in arr)
        return {
            "retention_s": self.retention_s,
            "step_s": self.step_s,
            "times": times,
            "series": cols,
            "backfilled": list(self.backfilled) if self.backfilled else None,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> History:
        """Restore a history saved by :meth:`to_state`."""
        h = cls(float(state["retention_s"]), float(state["step_s"]))
        times = [float(t) for t in state["times"]]
        series: Mapping[str, Sequence[float | None]] = state["series"]
        for k, col in series.items():
            if len(col) != len(times):
                raise ValueError(f"history state: series {k!r} has {len(col)} values")
        frames: list[tuple[float, dict[str, float]]] = []
        for i, t in enumerate(times):
            row: dict[str, float] = {}
            for k, col in series.items():
                v = col[i]
                if v is not None:
                    row[k] = float(v)
            frames.append((t, row))
        h._rebuild(frames)
        span = state.get("backfilled")
        if span:
            h.backfilled = (float(span[0]), float(span[1]))
        return h
