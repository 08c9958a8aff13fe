"""Chunk records written: batches of events to msgpack arrays, with compact runs (the
layout and the reading are in :mod:`ktop.record.codec` and docs/recording-format.md).

Runs of Lease renewals become columns (``~L``), runs of unchanged node updates names and
times only (``~N``), and a scrape laid out as its target's previous one in the chunk its
values only (``~S``).
"""

from __future__ import annotations

import struct
import sys
import typing
from array import array as array_of
from collections.abc import Iterator, Sequence
from typing import Any

from ktop.model import events as ev
from ktop.model.plaindata import encoder
from ktop.record.codec import LEASE_RUN, NODE_TOUCH_RUN, SCRAPE_VALUES, US


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
