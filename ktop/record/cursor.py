"""A position in a recording: a model and the events still to fold into it.

A cursor decodes a chunk record by record as it moves, so a seek decodes nothing past its
target; of the runs of Lease renewals only each Lease's last renewal is stored, and scrapes
are folded in bulk (:meth:`Cursor.fold`). A fault in a chunk loses only the rest of that
chunk (a gap, noted by the recording); what decoded before it still replays. Every string
folded is made printable as the hub makes it (:mod:`ktop.model.scrub_events`): a seek or
the triage of a hostile recording folds no control character either.
"""

from __future__ import annotations

import collections
import itertools
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.scrub_events import printable_event, printable_samples
from ktop.model.series import ScrapeRun
from ktop.model.state import keyframe_nodes
from ktop.record.codec import US, ChunkDecoder, Item, LeaseRun, ScrapeValues
from ktop.record.format import FrameHeader, Kind
from ktop.record.payload import DECODE_ERRORS, stream, unpack
from ktop.record.strict import RecordError, array, checked, finite_time

SEEK_STEP_S = 10.0
"""A seek folds in steps this long, reporting its progress after each."""
SEEK_STEPS = 1_000
"""A seek folds in at most this many steps (longer ones, over a longer span): its work is
the events it folds, never the time they span."""


_READS_SERIES = frozenset({ev.MetricsScraped, ev.TargetGone})
"""The events whose folding reads or drops a target's series: scrapes gathered for a bulk
fold are folded before them."""
_LEASE_BLIND = frozenset(
    {
        ev.MetricsScraped,
        ev.ScrapeFailed,
        ev.ApfDumpRead,
        ev.ApfRequestsRead,
        ev.NodeUpserted,
        ev.PendingPodUpserted,
        ev.PendingPodDeleted,
        ev.WarningEvent,
        ev.QuotaUpserted,
        ev.QuotaDeleted,
        ev.ClockTick,
        ev.SelfCost,
        ev.SimPace,
    }
)
"""Frequent events whose folding neither reads nor changes Lease renew times (a node's
record placed by its Lease is placed again from the Leases after renewals taken in bulk):
the Leases' last renewals gathered by a seek may be stored after them. Any other event
(a node deleted, a single renewal, sampling begun, or one not listed) has them stored
first."""


@dataclass(slots=True)
class _Held:
    """What a seek holds back to fold in bulk: scrapes per target, and the runs of Lease
    renewals written packed (of which only each Lease's last renewal is stored).
    """

    scrapes: dict[ev.Target, ScrapeRun] = field(default_factory=dict)
    leases: list[LeaseRun] = field(default_factory=list)


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
            self._source = _chunk(self.rec, self._decoder, h)
            return True
        return False

    def _reestablish(self, h: FrameHeader) -> list[ev.Event]:
        """After lost data: the events that bring node records back to the keyframe's."""
        node = checked(ev.NodeRecord)
        try:
            body = unpack(self.rec._payload(h), h.length)
            state = body["state"]
            if state.get("version", 1) == 1:  # node records as rows: each checked
                records = [node(r) for r in array(state.get("nodes", {}).get("nodes", []))]
            else:
                records = keyframe_nodes(state)
            nodes = {n.name: n for n in records}
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
        """Fold the events up to ``until`` into the model (every string printable, as the
        hub folds them); return them.
        """
        events = [printable_event(e) for e in self.take(until)]
        self.model.apply_all(events)
        self.folded += len(events)
        return events

    def fold(self, until: float, progress: Callable[[float], None] | None = None) -> int:
        """Fold the events up to ``until`` into the model, as :meth:`advance` does, without
        returning them; how many there were. With ``progress`` (a seek), in steps of
        :data:`SEEK_STEP_S`, telling it the fraction done after each.

        Lease renewals are not folded event by event: of the runs written packed, only each
        Lease's last renewal is kept, and stored (:meth:`ClusterModel.renew_latest`) before
        anything else could read or change the Leases; other runs are folded whole
        (:meth:`ClusterModel.renew_leases`). Scrapes without parse errors are gathered per
        target and folded in bulk (:meth:`ClusterModel.fold_scrapes`) before anything else
        could read that target's series. The same state, at a cost per node or series
        rather than per renewal or sample.
        """
        held = _Held()  # gathered across the steps: folded in bulk
        n = 0
        if progress is not None:
            for t, done in self._steps(until):
                n += self._fold(t, held)
                progress(done)
        n += self._fold(until, held)
        self._flush(held.scrapes)
        self._settle(held.leases)
        return n

    def _steps(self, until: float) -> Iterator[tuple[float, float]]:
        """Where a seek to ``until`` stops to report its progress, with the fraction done:
        every :data:`SEEK_STEP_S` from the next event (not from the model's clock, which is
        0 in a keyframe made before the first event), at most :data:`SEEK_STEPS` of them;
        a stretch without events is passed in one step.
        """
        begin = self.next_time()
        if begin is None or begin >= until:
            return
        begin = max(begin, self.position)
        step = max(SEEK_STEP_S, (until - begin) / SEEK_STEPS)
        t = begin
        while t + step < until:
            t += step
            yield t, (t - begin) / (until - begin)
            nxt = self.next_time()
            if nxt is None:
                return
            if nxt > t + step:  # nothing to fold before it: go there at once
                t = begin + (nxt - begin) // step * step

    def _fold(self, until: float, held: _Held) -> int:
        """:meth:`fold`, leaving what it gathered last in ``held`` (not folded yet: a seek in
        steps gathers across its steps, :meth:`_flush` and :meth:`_settle` fold it).
        """
        model = self.model
        apply = model.apply
        arrived = model.scrape_arrived
        runs, leases = held.scrapes, held.leases
        n = 0
        while True:
            item = self._head
            if item is None:
                item = next(self._source, None)
                if item is None:
                    if self._load_next():
                        continue
                    break
            kind = type(item)
            if kind is LeaseRun:
                lease_run = typing.cast(LeaseRun, item)
                cut = lease_run.latest > until
                if cut:  # cut at ``until``: the rest waits
                    k = lease_run.split(until)
                    self._head = lease_run.tail(k) if k else lease_run
                    if not k:
                        break
                    lease_run = lease_run.head(k)
                else:
                    self._head = None
                n += len(lease_run.names)
                if lease_run.micros is not None and model.nodes.sampling is None:
                    leases.append(lease_run)
                    model.renewals_seen(lease_run.latest, lease_run.last)
                else:
                    self._settle(leases)
                    model.renew_leases(
                        lease_run.names, lease_run.renews, lease_run.ats, lease_run.latest
                    )
                if cut:
                    break
                continue
            if item.at > until:
                self._head = item
                break
            self._head = None
            if kind is ScrapeValues:
                scrape = typing.cast(ScrapeValues, item)
                run = runs.get(scrape.target)
                if run is None or run.names is not scrape.names or run.labels is not scrape.labels:
                    if run is not None:
                        model.fold_scrapes(run)
                    names, labels = printable_samples(scrape.names, scrape.labels)
                    run = runs[scrape.target] = ScrapeRun(scrape.target, names, labels)
                arrived(scrape.target, scrape.at)
                run.add(scrape.at, scrape.values)
            else:
                if runs and kind in _READS_SERIES:
                    self._flush(runs)
                if leases and kind not in _LEASE_BLIND:
                    self._settle(leases)
                apply(printable_event(typing.cast(ev.Event, item)))
            n += 1
        self.folded += n
        return n

    def _flush(self, runs: dict[ev.Target, ScrapeRun]) -> None:
        """Fold the scrapes gathered in ``runs``; empty it."""
        for run in runs.values():
            self.model.fold_scrapes(run)
        runs.clear()

    def _settle(self, leases: list[LeaseRun]) -> None:
        """Store each Lease's last renew time of the runs (written packed) gathered in
        ``leases``; empty it. The runs are read from the last: a run whose every Lease
        renews again later is skipped without making its times.
        """
        if not leases:
            return
        latest: dict[str, float] = {}
        renewed_later = latest.__contains__
        for run in reversed(leases):
            names = run.names
            if not all(map(renewed_later, names)):
                micros = list(run.renew_micros())
                collections.deque(map(latest.setdefault, reversed(names), reversed(micros)), 0)
        known = self.model.nodes.leases
        if known.keys() >= latest.keys():  # none new: the Leases keep their order
            order: Iterable[str] = latest
        else:  # a new Lease takes its place at its first renewal, as one by one
            order = dict.fromkeys(itertools.chain.from_iterable(r.names for r in leases))
        self.model.renew_latest({name: latest[name] / US for name in order})
        leases.clear()

    def next_time(self) -> float | None:
        """The time of the next event, or ``None`` at the end."""
        item = self._peek()
        return None if item is None else item.at


def _chunk(rec: Frames, decoder: ChunkDecoder, h: FrameHeader) -> Iterator[Item]:
    """A chunk's events (runs of Lease renewals kept as columns), decoded as asked for; at
    a fault, those before it (the rest is lost, like a gap). Each record's items are
    passed on up to the first whose time is outside the frame's (a run cut before it);
    the fault is raised after them, as is one more event than the frame's count.

    A function, not a method: the suspended generator holds no reference to its cursor,
    so a dropped cursor (and its model) is freed at once, without the cycle collector.
    """
    decoder.new_chunk()
    decode = decoder.items
    first, last, limit = h.first, h.last, h.count
    count = 0
    last_at = first
    try:
        for record in stream(rec._payload(h), h.length):
            for item in decode(record):
                if type(item) is LeaseRun:
                    run = item
                    if not first <= run.earliest <= run.latest <= last:
                        k = next(j for j, a in enumerate(run.ats) if not first <= a <= last)
                        if k:
                            count += k
                            last_at = run.ats[k - 1]
                            yield run.head(k)
                        raise RecordError(
                            f"expected event times from {first} to {last} (the frame's), "
                            f"got LeaseRenewed at {run.ats[k]}"
                        )
                    count += len(run.names)
                    last_at = run.last
                else:
                    at = item.at
                    if not first <= at <= last:
                        raise RecordError(
                            f"expected event times from {first} to {last} (the frame's), "
                            f"got {type(item).__name__} at {at}"
                        )
                    count += 1
                    last_at = at
                yield item
            if count > limit:
                raise RecordError(f"expected {limit} events (the frame's count), got more")
    except DECODE_ERRORS as exc:
        decoder.lose()  # keep what decoded; the rest is a loss like a gap
        rec.lose_chunk(h, last_at, exc)
