"""A position in a recording: a model and the events still to fold into it.

A cursor decodes a chunk record by record as it moves, so a seek decodes nothing past its
target; runs of Lease renewals are folded whole and scrapes written as their values are
folded in bulk (:meth:`Cursor.fold`). A fault in a chunk loses only the rest of that chunk
(a gap, noted by the recording); what decoded before it still replays.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from typing import Protocol

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.series import ScrapeRun
from ktop.record.codec import ChunkDecoder, LeaseRun, ScrapeValues
from ktop.record.format import FrameHeader, Kind
from ktop.record.payload import DECODE_ERRORS, stream, unpack
from ktop.record.strict import RecordError, array, checked, finite_time

Item = ev.Event | LeaseRun | ScrapeValues
"""What a chunk decodes to: events, runs of Lease renewals, scrapes as their values."""
SEEK_STEP_S = 10.0
"""A seek folds in steps this long, reporting its progress after each."""


_READS_SERIES = frozenset({ev.MetricsScraped, ev.TargetGone})
"""The events whose folding reads or drops a target's series: scrapes gathered for a bulk
fold are folded before them."""


class Frames(Protocol):
    """What a cursor reads: an open recording's intact frames and their payloads, and where
    it notes what could not be decoded (:class:`ktop.record.reader.Recording`).
    """

    frames: list[FrameHeader]
    lost_before: set[int]

    def _payload(self, h: FrameHeader) -> bytes:
        """Frame ``h``'s payload, decompressed (within its kind's limit)."""
        ...

    def fault(self, h: FrameHeader, problem: object) -> str:
        """Note that frame ``h`` could not be used (once); the line that says so."""
        ...

    def lose_chunk(self, h: FrameHeader, after: float, problem: object) -> None:
        """The rest of chunk ``h`` (after time ``after``) cannot be decoded: a gap."""
        ...


def _in_frame(items: list[Item], h: FrameHeader) -> tuple[list[Item], str]:
    """The items up to the first event outside the frame's times (a run cut before it), and
    that event (``"LeaseRenewed at 12.5"``), or an empty string when there is none.
    """
    first, last = h.first, h.last
    for i, e in enumerate(items):
        if type(e) is LeaseRun:
            if not first <= min(e.ats) <= e.latest <= last:
                k = next(j for j, a in enumerate(e.ats) if not first <= a <= last)
                kept = [*items[:i], e.head(k)] if k else items[:i]
                return kept, f"LeaseRenewed at {e.ats[k]}"
        elif not first <= e.at <= last:
            return items[:i], f"{type(e).__name__} at {e.at}"
    return items, ""


class Cursor:
    """A position in a recording: a model and the events still to fold.

    Chunks are decoded record by record as the cursor moves, so a seek decodes nothing
    past its target.
    """

    restarted = False
    """Never set: one recording's events continue one model (a record directory's cursor,
    ``ktop/record/recording_set.py``, sets it when it moves on to another file)."""

    def __init__(self, rec: Frames, model: ClusterModel, frame_pos: int) -> None:
        self.rec = rec
        self.model = model
        self._frames = rec.frames
        self._pos = frame_pos
        self._decoder = ChunkDecoder(dict(model.nodes.nodes))
        self._source: Iterator[Item] = iter(())
        """The rest of the frame being read, decoded as it is asked for."""
        self._head: Item | None = None
        """The next item, taken from ``_source`` but not yet passed on."""
        self.folded = 0
        """Events folded by :meth:`advance` and :meth:`fold` (a seek folds only those after
        its keyframe)."""

    @property
    def position(self) -> float:
        """The model's clock."""
        return self.model.now

    @property
    def finished(self) -> bool:
        """Whether every event has been folded."""
        return self._peek() is None

    def _peek(self) -> Item | None:
        """The next item (decoding as far as needed), or ``None`` at the end."""
        while self._head is None:
            self._head = next(self._source, None)
            if self._head is None and not self._load_next():
                return None
        return self._head

    def _load_next(self) -> bool:
        while self._pos < len(self._frames):
            h = self._frames[self._pos]
            if self._pos in self.rec.lost_before:
                self._decoder.lose()
            self._pos += 1
            if h.kind is Kind.KEYFRAME and self._decoder.stale:
                self._source = iter(self._reestablish(h))
                return True
            if h.kind is not Kind.CHUNK:
                continue
            self._source = self._chunk(h)
            return True
        return False

    def _chunk(self, h: FrameHeader) -> Iterator[Item]:
        """A chunk's events (runs of Lease renewals kept as columns), decoded as asked for; at
        a fault, those before it (the rest is lost, like a gap).
        """
        self._decoder.new_chunk()
        count = 0
        last_at = h.first
        try:
            for rec in stream(self.rec._payload(h)):
                items, late = _in_frame(list(self._decoder.decode_runs(rec)), h)
                if items:
                    tail = items[-1]
                    last_at = tail.ats[-1] if type(tail) is LeaseRun else tail.at
                    count += sum(len(e) if type(e) is LeaseRun else 1 for e in items)
                    yield from items
                if late:
                    raise RecordError(
                        f"expected event times from {h.first} to {h.last} (the frame's), got {late}"
                    )
                if count > h.count:
                    raise RecordError(f"expected {h.count} events (the frame's count), got more")
        except DECODE_ERRORS as exc:
            self._decoder.lose()  # keep what decoded; the rest is a loss like a gap
            self.rec.lose_chunk(h, last_at, exc)

    def _reestablish(self, h: FrameHeader) -> list[ev.Event]:
        """After lost data: the events that bring node records back to the keyframe's."""
        node = checked(ev.NodeRecord)
        try:
            body = unpack(self.rec._payload(h))
            rows = array(body["state"].get("nodes", {}).get("nodes", []))
            nodes = {n.name: n for n in (node(r) for r in rows)}
            at = finite_time(body.get("at", h.first))
        except DECODE_ERRORS as exc:
            self.rec.fault(h, exc)
            return []  # stays stale until a later keyframe
        return list(self._decoder.reestablish(at, nodes))

    def _items(self, until: float) -> Iterator[Item]:
        """The next events up to ``until`` (stopping at the first later one), in order; a run
        of Lease renewals as one item (cut at ``until``).
        """
        peek = self._peek
        while (item := peek()) is not None:
            if type(item) is LeaseRun:
                n = item.split(until)
                if n < len(item):
                    if n:
                        self._head = item.tail(n)
                        yield item.head(n)
                    return
            elif item.at > until:
                return
            self._head = None
            yield item

    def take(self, until: float) -> list[ev.Event]:
        """The next events up to time ``until`` (stopping at the first later one), in order."""
        out: list[ev.Event] = []
        for item in self._items(until):
            if type(item) is LeaseRun:
                out += item.events()
            elif type(item) is ScrapeValues:
                out.append(item.event())
            else:
                out.append(typing.cast(ev.Event, item))
        return out

    def advance(self, until: float) -> list[ev.Event]:
        """Fold the events up to ``until`` into the model; return them."""
        events = self.take(until)
        self.model.apply_all(events)
        self.folded += len(events)
        return events

    def fold(self, until: float, progress: Callable[[float], None] | None = None) -> int:
        """Fold the events up to ``until`` into the model, as :meth:`advance` does, without
        returning them; how many there were. With ``progress`` (a seek), in steps of
        :data:`SEEK_STEP_S`, telling it the fraction done after each.

        Runs of Lease renewals are folded whole (:meth:`ClusterModel.renew_leases`), not
        event by event, and scrapes written as their values are gathered per target and
        folded in bulk (:meth:`ClusterModel.fold_scrapes`) before anything else could read
        that target's series: the same state, at a cost per node or series rather than per
        renewal or sample.
        """
        runs: dict[ev.Target, ScrapeRun] = {}  # gathered across the steps: folded in bulk
        n = 0
        begin = t = self.position
        while progress is not None and t + SEEK_STEP_S < until:
            t += SEEK_STEP_S
            n += self._fold(t, runs)
            progress((t - begin) / max(1e-9, until - begin))
        n += self._fold(until, runs)
        self._flush(runs)
        return n

    def _fold(self, until: float, runs: dict[ev.Target, ScrapeRun]) -> int:
        """:meth:`fold`, leaving the scrapes gathered last in ``runs`` (not folded yet: a
        seek in steps gathers them across its steps, :meth:`_flush` folds them).
        """
        model = self.model
        apply = model.apply
        renew = model.renew_leases
        arrived = model.scrape_arrived
        n = 0
        for item in self._items(until):
            kind = type(item)
            if kind is LeaseRun:
                lease_run = typing.cast(LeaseRun, item)
                renew(lease_run.names, lease_run.renews, lease_run.ats)
                n += len(lease_run)
                continue
            if kind is ScrapeValues:
                scrape = typing.cast(ScrapeValues, item)
                run = runs.get(scrape.target)
                if run is None or run.names is not scrape.names or run.labels is not scrape.labels:
                    if run is not None:
                        model.fold_scrapes(run)
                    run = runs[scrape.target] = ScrapeRun(
                        scrape.target, scrape.names, scrape.labels
                    )
                arrived(scrape.target, scrape.at)
                run.add(scrape.at, scrape.values)
            else:
                if runs and kind in _READS_SERIES:
                    self._flush(runs)
                apply(typing.cast(ev.Event, item))
            n += 1
        self.folded += n
        return n

    def _flush(self, runs: dict[ev.Target, ScrapeRun]) -> None:
        """Fold the scrapes gathered in ``runs``; empty it."""
        for run in runs.values():
            self.model.fold_scrapes(run)
        runs.clear()

    def next_time(self) -> float | None:
        """The time of the next event, or ``None`` at the end."""
        item = self._peek()
        return None if item is None else item.at
