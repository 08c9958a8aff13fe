"""Chunk records: events to msgpack arrays and back, with compact runs.

A chunk's payload (after decompression) is a sequence of msgpack arrays,
one per record, whose first item is a tag:

* an event's class name (``"MetricsScraped"``...) followed by its fields in
  declaration order (nested records as arrays, enums as strings);
* ``"~L"``: a run of consecutive ``LeaseRenewed`` events, stored as
  columns: node names (a new name, or how many name references back the
  same name was used in this chunk), renew times in microseconds as deltas,
  observation times;
* ``"~N"``: a run of consecutive ``NodeUpserted`` events whose record did
  not change (kubelet heartbeats), stored as names and times only;
* ``"~S"``: a ``MetricsScraped`` whose samples have the names and labels of the
  previous scrape of the same target in this chunk, in the same order (every scrape
  but a target's first, as a rule), stored as the values only;

Heartbeats therefore cost a few bytes each instead of a whole object. A
``~N`` heartbeat means "the record as last written", so after lost data (a
gap) the decoder no longer trusts the records it holds: a heartbeat of such
a node reads as Ready ``Unknown`` until a whole record or the next keyframe
re-establishes it (:meth:`ChunkDecoder.reestablish`).
The exact layout is in docs/recording-format.md.
"""

from __future__ import annotations

import itertools
import math
import operator
import struct
import sys
import typing
from array import array as array_of
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ktop.model import events as ev
from ktop.model.plaindata import encoder
from ktop.record.strict import RecordError, array, checked, expected, finite_time, number

EVENT_TYPES: dict[str, type[Any]] = {cls.__name__: cls for cls in typing.get_args(ev.Event)}
"""Every event class by the tag that names it in a recording."""
LEASE_RUN = "~L"
NODE_TOUCH_RUN = "~N"
SCRAPE_VALUES = "~S"
US = 1_000_000
_NUMBER_TYPES = frozenset({int, float})
_INT = {int}


@dataclass(frozen=True, slots=True)
class Marker:
    """A note the user attached to a moment of the recording."""

    at: float
    note: str


def exact_us(t: float) -> int | None:
    """``t`` in whole microseconds when that is exact, else ``None``."""
    us = round(t * US)
    return us if us / US == t else None


class NameTable:
    """Names of one chunk: the first use writes the name, a later use how far back it was.

    A reference is the number of name references made since the previous one
    to the same name (1 = the reference just before). Kubelets renew in a
    nearly fixed order, so these distances cluster tightly and compress far
    better than indexes.
    """

    def __init__(self) -> None:
        self._last: dict[str, int] = {}
        self._n = 0

    def ref(self, name: str) -> int | str:
        """The distance back to the previous use of ``name`` in this chunk, else the name."""
        prev = self._last.get(name)
        self._last[name] = self._n
        self._n += 1
        return name if prev is None else self._n - 1 - prev


def _times(ats: list[float], reference: list[float] | None) -> Any:
    """Observation times: nil = same as ``reference``, one number = all equal, else a list."""
    enc = encoder(float)
    if reference is not None and ats == reference:
        return None
    if all(a == ats[0] for a in ats):
        return enc(ats[0])
    return [enc(a) for a in ats]


class ChunkEncoder:
    """Turns batches of events into chunk records (one chunk at a time)."""

    def __init__(self, nodes: dict[str, ev.NodeRecord]) -> None:
        self.names = NameTable()
        self.nodes = nodes
        """The last record of every node as a reader will know it (shared across chunks)."""
        self.layouts: dict[ev.Target, tuple[tuple[str, ev.Labels], ...]] = {}
        """The sample names and labels of each target's last scrape in this chunk."""
        self.scrape_values = True
        """Whether a scrape laid out as its target's previous one is written as its values
        only (``~S``, format version 2 on)."""

    def new_chunk(self) -> None:
        """Start a new chunk: names and sample layouts are written out again."""
        self.names = NameTable()
        self.layouts = {}

    def records(self, events: Sequence[ev.Event]) -> Iterator[list[Any]]:
        """The records for ``events``, in order."""
        i, n = 0, len(events)
        while i < n:
            e = events[i]
            if type(e) is ev.LeaseRenewed and exact_us(e.renew_time) is not None:
                j = i + 1
                while (
                    j < n
                    and type(events[j]) is ev.LeaseRenewed
                    and exact_us(typing.cast(ev.LeaseRenewed, events[j]).renew_time) is not None
                ):
                    j += 1
                yield self._lease_run(typing.cast(Sequence[ev.LeaseRenewed], events[i:j]))
                i = j
                continue
            if type(e) is ev.NodeUpserted and self.nodes.get(e.node.name) == e.node:
                j = i + 1
                while j < n:
                    nxt = events[j]
                    if (
                        type(nxt) is not ev.NodeUpserted
                        or self.nodes.get(nxt.node.name) != nxt.node
                    ):
                        break
                    j += 1
                run = typing.cast(Sequence[ev.NodeUpserted], events[i:j])
                yield [
                    NODE_TOUCH_RUN,
                    [self.names.ref(x.node.name) for x in run],
                    _times([x.at for x in run], None),
                ]
                i = j
                continue
            if type(e) is ev.MetricsScraped:
                layout = tuple([(x.name, x.labels) for x in e.samples])
                same = self.layouts.get(e.target) == layout
                self.layouts[e.target] = layout
                if same and not e.parse_errors and self.scrape_values:
                    enc = encoder(float)
                    yield [
                        SCRAPE_VALUES,
                        enc(e.at),
                        encoder(ev.Target)(e.target),
                        [enc(x.value) for x in e.samples],
                    ]
                    i += 1
                    continue
            if type(e) is ev.NodeUpserted:
                self.nodes[e.node.name] = e.node
            elif type(e) is ev.NodeDeleted:
                self.nodes.pop(e.name, None)
            yield [type(e).__name__, *encoder(type(e))(e)]
            i += 1

    def _lease_run(self, run: Sequence[ev.LeaseRenewed]) -> list[Any]:
        renews: list[int] = []
        prev = 0
        for x in run:
            us = round(x.renew_time * US)
            renews.append(us - prev)
            prev = us
        packed: list[int] | bytes = renews
        if all(0 <= d <= 0xFFFF for d in renews[1:]):
            # Renewals arrive in time order a few ms apart: 16-bit deltas, smaller once compressed.
            column = array_of("H", renews[1:])
            if sys.byteorder == "big":
                column.byteswap()  # the file is little-endian
            packed = struct.pack("<q", renews[0]) + column.tobytes()
        return [
            LEASE_RUN,
            [self.names.ref(x.node) for x in run],
            packed,
            _times([x.at for x in run], [x.renew_time for x in run]),
        ]


@dataclass(slots=True)
class LeaseRun:
    """A run of consecutive ``LeaseRenewed`` events as decoded columns, not yet events.

    A seek folds the run whole (:meth:`~ktop.model.cluster.ClusterModel.renew_leases`);
    playing turns it into events (:meth:`events`).
    """

    names: list[str]
    renews: list[float]
    ats: list[float]
    """When each renewal was seen (the events' times)."""
    latest: float
    """The latest of ``ats``."""

    @property
    def at(self) -> float:
        """The time of the run's first event."""
        return self.ats[0]

    def __len__(self) -> int:
        return len(self.names)

    def events(self) -> list[ev.LeaseRenewed]:
        """The run as events, in order."""
        return list(map(ev.LeaseRenewed, self.ats, self.names, self.renews))

    def split(self, until: float) -> int:
        """How many of the run's events come before the first one later than ``until``."""
        if self.latest <= until:
            return len(self.names)
        for i, at in enumerate(self.ats):
            if at > until:
                return i
        return len(self.names)  # pragma: no cover - latest is one of ats

    def head(self, end: int) -> LeaseRun:
        """The run's first ``end`` events (at least one)."""
        ats = self.ats[:end]
        return LeaseRun(self.names[:end], self.renews[:end], ats, max(ats))

    def tail(self, start: int) -> LeaseRun:
        """The run from its ``start``-th event on."""
        ats = self.ats[start:]
        return LeaseRun(self.names[start:], self.renews[start:], ats, max(ats))


@dataclass(slots=True)
class ScrapeValues:
    """A ``~S`` scrape decoded as its values, not yet an event: a seek folds a target's
    scrapes in bulk (:class:`~ktop.model.series.ScrapeRun`); playing turns it into its
    event (:meth:`event`).
    """

    at: float
    target: ev.Target
    names: tuple[str, ...]
    labels: tuple[ev.Labels, ...]
    """The names and labels of the samples (the layout: shared by the target's scrapes
    laid out alike in the chunk)."""
    values: list[float]

    def event(self) -> ev.MetricsScraped:
        """The scrape as its event."""
        return ev.MetricsScraped(
            self.at, self.target, tuple(map(ev.Sample, self.names, self.labels, self.values))
        )


def unknown_after_gap(node: ev.NodeRecord) -> ev.NodeRecord:
    """``node`` as known after lost data: its Ready condition is unknown, not its stale value."""
    return replace(node, ready=ev.Readiness.UNKNOWN, ready_since=None)


class ChunkDecoder:
    """Turns chunk records back into events (one chunk at a time)."""

    def __init__(self, nodes: dict[str, ev.NodeRecord]) -> None:
        self.names: list[str] = []
        self.nodes = nodes
        """The last record of every node as the events decoded so far gave it."""
        self.stale: set[str] = set()
        """Nodes whose record may have changed in lost data (since a gap)."""
        self.lost = 0
        """Heartbeats of nodes whose record this reader never saw (after a gap)."""
        self.layouts: dict[ev.Target, tuple[tuple[str, ...], tuple[ev.Labels, ...]]] = {}
        """The sample names and labels of each target's last scrape in this chunk."""

    def lose(self) -> None:
        """Records were lost (a damaged chunk): every node record known so far may be stale."""
        self.stale = set(self.nodes)

    def reestablish(self, at: float, nodes: dict[str, ev.NodeRecord]) -> list[ev.Event]:
        """Take a keyframe's node records as the truth again; the events that bring a model
        fed by this decoder to them (nothing when no data was lost since the last keyframe).
        """
        if not self.stale:
            return []
        out: list[ev.Event] = [
            ev.NodeUpserted(at, rec) for name, rec in nodes.items() if self.nodes.get(name) != rec
        ]
        out += [ev.NodeDeleted(at, name) for name in self.nodes if name not in nodes]
        self.nodes = dict(nodes)
        self.stale = set()
        return out

    def new_chunk(self) -> None:
        """Start a new chunk: its name table and sample layouts start empty."""
        self.names = []
        self.layouts = {}

    def _scrape_values(self, items: list[Any]) -> ScrapeValues:
        """A ``~S`` record: the values of a scrape laid out as the target's previous one."""
        if len(items) < 4:
            raise RecordError(f"{SCRAPE_VALUES}: expected [tag, at, target, values]")
        try:
            at = finite_time(items[1])
        except RecordError as exc:
            raise RecordError(f"{SCRAPE_VALUES}: at: {exc}") from None
        target = checked(ev.Target)(items[2])
        layout = self.layouts.get(target)
        if layout is None:
            raise RecordError(
                f"{SCRAPE_VALUES}: expected an earlier scrape of {target.component.value} "
                f"{target.instance[:60]!r} in this chunk"
            )
        values = array(items[3], f"{SCRAPE_VALUES}: values: an array")
        names, labels = layout
        if len(values) != len(names):
            raise RecordError(
                f"{SCRAPE_VALUES}: expected {len(names)} values (the earlier scrape's), "
                f"got {len(values)}"
            )
        if not set(map(type, values)) <= _NUMBER_TYPES:
            bad = next(v for v in values if type(v) not in _NUMBER_TYPES)
            raise RecordError(f"{SCRAPE_VALUES}: values: {expected('a number', bad)}")
        return ScrapeValues(at, target, names, labels, list(map(float, values)))

    def _names(self, refs: Any) -> list[str]:
        """The names a run's references stand for (each added to the chunk's references)."""
        names = self.names
        start = len(names)
        refs = array(refs, "names: an array")
        n = len(refs)
        if n and set(map(type, refs)) == _INT and n <= min(refs) and max(refs) <= start:
            # Every reference points before this run (kubelets renew in a nearly fixed
            # order, so the distances are about the node count): looked up in C, not one
            # by one. Each is valid: 0 < ref <= the references made before it.
            names += map(names.__getitem__, map(operator.sub, range(start, start + n), refs))
            return names[start:]
        append = names.append
        for ref in refs:
            if type(ref) is str:
                node = self.nodes.get(ref)  # a known node: its name object (faster lookups)
                append(ref if node is None else node.name)
            elif type(ref) is int and 0 < ref <= len(names):
                append(names[-ref])
            else:
                raise RecordError(
                    f"expected a node name or a reference 1-{len(names)}, got {str(ref)[:40]!r}"
                )
        return names[start:]

    @staticmethod
    def _ats(spec: Any, n: int, reference: list[float] | None) -> list[float]:
        if spec is None:
            if reference is None:
                raise RecordError("expected observation times, got nil")
            return reference
        if type(spec) is list:
            if len(spec) != n:
                raise RecordError(f"expected {n} observation times, got {len(spec)}")
            out = [number(a) for a in spec]
            if any(map(math.isnan, out)):  # min() and max() of a run would not see it
                raise RecordError("expected observation times, got NaN")
            return out
        return [number(spec)] * n

    @staticmethod
    def _renews(deltas: Any, n: int) -> list[float]:
        """The renew times of a lease run: deltas in microseconds, a list or packed."""
        if type(deltas) is bytes:
            if len(deltas) != 8 + 2 * (n - 1) or n < 1:
                raise RecordError(
                    f"expected {8 + 2 * max(0, n - 1)} bytes of packed renew times, "
                    f"got {len(deltas)}"
                )
            column = array_of("H")
            column.frombytes(deltas[8:])
            if sys.byteorder == "big":
                column.byteswap()
            first = struct.unpack("<q", deltas[:8])[0]
            # Unsigned 16-bit deltas: every sum is an exact integer (in C, not item by item).
            return list(
                map(
                    operator.truediv,
                    itertools.accumulate(column, initial=first),
                    itertools.repeat(US),
                )
            )
        items = array(deltas, "renew times: an array or binary data")
        if len(items) != n:
            raise RecordError(f"expected {n} renew times, got {len(items)}")
        renews: list[float] = []
        acc = 0
        for d in items:
            if type(d) is not int:
                raise expected("a renew time delta (an integer)", d)
            acc += d
            renews.append(acc / US)
        return renews

    def decode(self, rec: Any) -> Iterator[ev.Event]:
        """The events one record holds; :class:`RecordError` when it is not a valid record."""
        for item in self.decode_runs(rec):
            if type(item) is LeaseRun:
                yield from item.events()
            elif type(item) is ScrapeValues:
                yield item.event()
            else:
                yield typing.cast(ev.Event, item)

    def decode_runs(self, rec: Any) -> Iterator[ev.Event | LeaseRun | ScrapeValues]:
        """Like :meth:`decode`, but a run of Lease renewals stays one :class:`LeaseRun`, and
        a ``~S`` scrape stays its values (:class:`ScrapeValues`).
        """
        items = array(rec, "a record [tag, ...]")
        if not items or type(items[0]) is not str:
            raise RecordError("expected a record [tag, ...] whose tag is a string")
        tag = items[0]
        if tag == LEASE_RUN:
            if len(items) < 4:
                raise RecordError(f"{LEASE_RUN}: expected [tag, names, renews, ats]")
            names = self._names(items[1])
            renews = self._renews(items[2], len(names))
            ats = self._ats(items[3], len(names), renews)
            if names:
                yield LeaseRun(names, renews, ats, max(ats))
        elif tag == NODE_TOUCH_RUN:
            if len(items) < 3:
                raise RecordError(f"{NODE_TOUCH_RUN}: expected [tag, names, ats]")
            names = self._names(items[1])
            ats = self._ats(items[2], len(names), None)
            for name, at in zip(names, ats, strict=True):
                node = self.nodes.get(name)
                if node is None:
                    self.lost += 1
                    continue
                if name in self.stale:
                    node = self.nodes[name] = unknown_after_gap(node)
                yield ev.NodeUpserted(at, node)
        elif tag == SCRAPE_VALUES:
            yield self._scrape_values(items)
        else:
            cls = EVENT_TYPES.get(tag)
            if cls is None:
                return  # an event type from a newer ktop: this version has no use for it
            e = checked(cls)(items[1:])
            if cls is ev.MetricsScraped:
                self.layouts[e.target] = (
                    tuple([x.name for x in e.samples]),
                    tuple([x.labels for x in e.samples]),
                )
            elif cls is ev.NodeUpserted:
                self.nodes[e.node.name] = e.node
                self.stale.discard(e.node.name)
            elif cls is ev.NodeDeleted:
                self.nodes.pop(e.name, None)
                self.stale.discard(e.name)
            yield e
