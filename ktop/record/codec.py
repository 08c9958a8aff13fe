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

Heartbeats therefore cost a few bytes each instead of a whole object. A
``~N`` heartbeat means "the record as last written", so after lost data (a
gap) the decoder no longer trusts the records it holds: a heartbeat of such
a node reads as Ready ``Unknown`` until a whole record or the next keyframe
re-establishes it (:meth:`ChunkDecoder.reestablish`).
The exact layout is in docs/recording-format.md.
"""

from __future__ import annotations

import struct
import sys
import typing
from array import array as array_of
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ktop.model import events as ev
from ktop.model.plaindata import encoder
from ktop.record.strict import RecordError, array, checked, expected, number

EVENT_TYPES: dict[str, type[Any]] = {cls.__name__: cls for cls in typing.get_args(ev.Event)}
"""Every event class by the tag that names it in a recording."""
LEASE_RUN = "~L"
NODE_TOUCH_RUN = "~N"
US = 1_000_000


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

    def new_chunk(self) -> None:
        """Start a new chunk: names are written out again."""
        self.names = NameTable()

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
        """Start a new chunk: its name table starts empty."""
        self.names = []

    def _name(self, ref: Any) -> str:
        if type(ref) is str:
            name = ref
        elif type(ref) is int and 0 < ref <= len(self.names):
            name = self.names[len(self.names) - ref]
        else:
            raise RecordError(
                f"expected a node name or a reference 1-{len(self.names)}, got {str(ref)[:40]!r}"
            )
        self.names.append(name)
        return name

    @staticmethod
    def _ats(spec: Any, n: int, reference: list[float] | None) -> list[float]:
        if spec is None:
            if reference is None:
                raise RecordError("expected observation times, got nil")
            return reference
        if type(spec) is list:
            if len(spec) != n:
                raise RecordError(f"expected {n} observation times, got {len(spec)}")
            return [number(a) for a in spec]
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
            deltas = [struct.unpack("<q", deltas[:8])[0], *column]
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
        items = array(rec, "a record [tag, ...]")
        if not items or type(items[0]) is not str:
            raise RecordError("expected a record [tag, ...] whose tag is a string")
        tag = items[0]
        if tag == LEASE_RUN:
            if len(items) < 4:
                raise RecordError(f"{LEASE_RUN}: expected [tag, names, renews, ats]")
            names = [self._name(r) for r in array(items[1], "names: an array")]
            renews = self._renews(items[2], len(names))
            ats = self._ats(items[3], len(names), renews)
            for name, at, renew in zip(names, ats, renews, strict=True):
                yield ev.LeaseRenewed(at, name, renew)
        elif tag == NODE_TOUCH_RUN:
            if len(items) < 3:
                raise RecordError(f"{NODE_TOUCH_RUN}: expected [tag, names, ats]")
            names = [self._name(r) for r in array(items[1], "names: an array")]
            ats = self._ats(items[2], len(names), None)
            for name, at in zip(names, ats, strict=True):
                node = self.nodes.get(name)
                if node is None:
                    self.lost += 1
                    continue
                if name in self.stale:
                    node = self.nodes[name] = unknown_after_gap(node)
                yield ev.NodeUpserted(at, node)
        else:
            cls = EVENT_TYPES.get(tag)
            if cls is None:
                return  # an event type from a newer ktop: this version has no use for it
            e = checked(cls)(items[1:])
            if cls is ev.NodeUpserted:
                self.nodes[e.node.name] = e.node
                self.stale.discard(e.node.name)
            elif cls is ev.NodeDeleted:
                self.nodes.pop(e.name, None)
                self.stale.discard(e.name)
            yield e
