"""Chunk records: msgpack arrays read back into events, with compact runs.

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

This module holds the record tags and the reading (:class:`ChunkDecoder`); the writing is
:mod:`ktop.record.encoder`. The exact layout is in docs/recording-format.md.
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
from ktop.record.strict import RecordError, array, checked, expected, finite_time, number

EVENT_TYPES: dict[str, type[Any]] = {cls.__name__: cls for cls in typing.get_args(ev.Event)}
"""Every event class by the tag that names it in a recording."""
LEASE_RUN = "~L"
NODE_TOUCH_RUN = "~N"
SCRAPE_VALUES = "~S"
US = 1_000_000
EXACT_IN_DOUBLE = 2**53
"""Integers below this are exact as doubles (a sum of such is exact while it stays below)."""
_NUMBER_TYPES = frozenset({int, float})


@dataclass(frozen=True, slots=True)
class Marker:
    """A note the user attached to a moment of the recording."""

    at: float
    note: str


class LeaseRun:
    """A run of consecutive ``LeaseRenewed`` events as decoded columns, not yet events.

    A seek folds the run whole (:meth:`~ktop.model.cluster.ClusterModel.renew_leases`, or
    only each Lease's last renewal of many runs: :attr:`micros`); playing turns it into
    events (:meth:`events`).
    """

    __slots__ = ("_ats", "_renews", "earliest", "latest", "micros", "names")

    def __init__(
        self,
        names: list[str],
        renews: list[float] | None,
        ats: list[float] | None,
        earliest: float,
        latest: float,
        micros: tuple[int, Sequence[int]] | None = None,
    ) -> None:
        self.names = names
        self._renews = renews
        self._ats = ats
        self.earliest = earliest
        """The earliest of :attr:`ats`."""
        self.latest = latest
        """The latest of :attr:`ats`."""
        self.micros = micros
        """For a run as written packed and seen as renewed (``ats`` nil): the first renew
        time in microseconds and the (unsigned) deltas to the next ones; its times are
        made only when asked for."""

    @classmethod
    def of(cls, names: list[str], renews: list[float], ats: list[float]) -> LeaseRun:
        """A run of at least one renewal, its earliest and latest times found."""
        return cls(names, renews, ats, min(ats), max(ats))

    @classmethod
    def packed(cls, names: list[str], first: int, deltas: Sequence[int]) -> LeaseRun:
        """A run of renewals seen as renewed, their times in microseconds the running sum
        of ``first`` and unsigned ``deltas`` (so in time order).
        """
        return cls(names, None, None, first / US, (first + sum(deltas)) / US, (first, deltas))

    @property
    def renews(self) -> list[float]:
        """The renew times."""
        if self._renews is None:
            self._renews = [us / US for us in self.renew_micros()]  # as us / US of the integer
        return self._renews

    @property
    def ats(self) -> list[float]:
        """When each renewal was seen (the events' times)."""
        return self.renews if self._ats is None else self._ats

    @property
    def last(self) -> float:
        """When the run's last renewal was seen."""
        return self.latest if self._ats is None else self._ats[-1]

    def renew_micros(self) -> Iterator[float]:
        """The renew times in microseconds, of a :attr:`micros` run (as floats when every
        sum is exact in a double, which is faster: until the year 2255).
        """
        if self.micros is None:
            raise ValueError("expected a run of packed renew times")
        first, deltas = self.micros
        if abs(first) + 0xFFFF * len(deltas) < EXACT_IN_DOUBLE:
            return itertools.accumulate(deltas, initial=float(first))
        return itertools.accumulate(deltas, initial=first)

    @property
    def at(self) -> float:
        """The time of the run's first event."""
        return self.earliest if self._ats is None else self._ats[0]

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
        return LeaseRun.of(self.names[:end], self.renews[:end], self.ats[:end])

    def tail(self, start: int) -> LeaseRun:
        """The run from its ``start``-th event on."""
        return LeaseRun.of(self.names[start:], self.renews[start:], self.ats[start:])


Layout = tuple[tuple[str, ...], tuple[ev.Labels, ...]]
"""A scrape's sample names and labels, in order."""


@dataclass(slots=True)
class ScrapeValues:
    """A scrape without parse errors decoded as its values, not yet an event: a seek folds a
    target's scrapes in bulk (:class:`~ktop.model.series.ScrapeRun`); playing turns it
    into its event (:meth:`event`). A ``~S`` record is one, and so is a ``MetricsScraped``
    written whole (which also keeps the event: ``whole``).
    """

    at: float
    target: ev.Target
    names: tuple[str, ...]
    labels: tuple[ev.Labels, ...]
    """The names and labels of the samples (the layout: shared by the target's scrapes
    laid out alike in the chunk)."""
    values: list[float]
    """One number per sample (as written: an integral value may be an int)."""
    whole: ev.MetricsScraped | None = None
    """The event, when the record was one."""

    def event(self) -> ev.MetricsScraped:
        """The scrape as its event."""
        if self.whole is not None:
            return self.whole
        values = map(float, self.values)
        return ev.MetricsScraped(
            self.at, self.target, tuple(map(ev.Sample, self.names, self.labels, values))
        )


Item = ev.Event | LeaseRun | ScrapeValues
"""What a chunk record decodes to: events, runs of Lease renewals, scrapes as their values."""


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
        self.layouts: dict[ev.Target, Layout] = {}
        """The sample names and labels of each target's last scrape in this chunk."""
        self.known: dict[ev.Target, Layout] = {}
        """Each target's last layout in any chunk: a scrape laid out alike in a later chunk
        shares its tuples, so a seek folds the target's scrapes of both in one run."""

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
        return ScrapeValues(at, target, names, labels, values)

    def _names(self, refs: Any) -> list[str]:
        """The names a run's references stand for (each added to the chunk's references)."""
        names = self.names
        start = len(names)
        refs = array(refs, "names: an array")
        try:
            if refs and min(refs) > 1:
                # Every one a reference (1, which a boolean could pass for, and names go
                # the slow way): looked up at once, in C. The list grows by one name at a
                # time as it is extended, so each reference counts back from its own place,
                # into this run too. A bad one (past the chunk's first name, not a whole
                # number) fails here: what it added is taken back, the loop below says why.
                names += map(names.__getitem__, map(operator.neg, refs))
                return names[start:]
        except (TypeError, IndexError):
            del names[start:]
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
    def _packed(deltas: bytes, n: int) -> tuple[int, Sequence[int]]:
        """Packed renew times: the first in microseconds and the 16-bit deltas after it."""
        if len(deltas) != 8 + 2 * (n - 1) or n < 1:
            raise RecordError(
                f"expected {8 + 2 * max(0, n - 1)} bytes of packed renew times, got {len(deltas)}"
            )
        first = struct.unpack_from("<q", deltas)[0]
        column = array_of("H", deltas[8:])
        if sys.byteorder == "big":
            column.byteswap()  # the file is little-endian
        return first, column

    @staticmethod
    def _renews(deltas: Any, n: int) -> list[float]:
        """The renew times of a lease run written as a list of deltas in microseconds."""
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

    def _lease_run(self, items: list[Any]) -> list[Item]:
        """A ``~L`` record: its run of renewals (none when it is empty)."""
        if len(items) < 4:
            raise RecordError(f"{LEASE_RUN}: expected [tag, names, renews, ats]")
        names = self._names(items[1])
        n = len(names)
        deltas = items[2]
        if type(deltas) is bytes:
            first, column = self._packed(deltas, n)
            if items[3] is None:  # seen as renewed: times made only when asked for
                return [LeaseRun.packed(names, first, column)]
            # Unsigned 16-bit deltas: every sum is an exact integer.
            renews = [us / US for us in itertools.accumulate(column, initial=first)]
        else:
            renews = self._renews(deltas, n)
        ats = self._ats(items[3], n, renews)
        return [LeaseRun.of(names, renews, ats)] if names else []

    def _touches(self, items: list[Any]) -> list[Item]:
        """A ``~N`` record: the heartbeats of the nodes it names."""
        if len(items) < 3:
            raise RecordError(f"{NODE_TOUCH_RUN}: expected [tag, names, ats]")
        names = self._names(items[1])
        ats = self._ats(items[2], len(names), None)
        out: list[Item] = []
        for name, at in zip(names, ats, strict=True):
            node = self.nodes.get(name)
            if node is None:
                self.lost += 1
                continue
            if name in self.stale:
                node = self.nodes[name] = unknown_after_gap(node)
            out.append(ev.NodeUpserted(at, node))
        return out

    def decode(self, rec: Any) -> Iterator[ev.Event]:
        """The events one record holds; :class:`RecordError` when it is not a valid record."""
        for item in self.items(rec):
            if type(item) is LeaseRun:
                yield from item.events()
            elif type(item) is ScrapeValues:
                yield item.event()
            else:
                yield typing.cast(ev.Event, item)

    def items(self, rec: Any) -> list[Item]:
        """Like :meth:`decode`, but a run of Lease renewals stays one :class:`LeaseRun`, and
        a scrape without parse errors stays its values (:class:`ScrapeValues`).
        """
        items = array(rec, "a record [tag, ...]")
        if not items or type(items[0]) is not str:
            raise RecordError("expected a record [tag, ...] whose tag is a string")
        tag = items[0]
        if tag == LEASE_RUN:
            return self._lease_run(items)
        if tag == NODE_TOUCH_RUN:
            return self._touches(items)
        if tag == SCRAPE_VALUES:
            return [self._scrape_values(items)]
        cls = EVENT_TYPES.get(tag)
        if cls is None:
            return []  # an event type from a newer ktop: this version has no use for it
        e = checked(cls)(items[1:])
        if cls is ev.MetricsScraped:
            names = tuple([x.name for x in e.samples])
            labels = tuple([x.labels for x in e.samples])
            known = self.known.get(e.target)
            if known is not None and known[0] == names and known[1] == labels:
                names, labels = known
            else:
                self.known[e.target] = (names, labels)
            self.layouts[e.target] = (names, labels)
            if not e.parse_errors:
                values = [x.value for x in e.samples]
                return [ScrapeValues(e.at, e.target, names, labels, values, e)]
        elif cls is ev.NodeUpserted:
            self.nodes[e.node.name] = e.node
            self.stale.discard(e.node.name)
        elif cls is ev.NodeDeleted:
            self.nodes.pop(e.name, None)
            self.stale.discard(e.name)
        return [e]
