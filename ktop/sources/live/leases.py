"""Node Leases, sampled instead of watched.

A watch of every node Lease carries every kubelet's renewal: at 10,000 nodes
1,000 events a second, most of each the Lease's ``managedFields`` (about
0.6 MB/s, see docs/cost.md). Lease lag is needed where something is wrong, so
after one whole (paginated) list the sampler reads, every ``period_s``:

* one page of ``per_round`` Leases, in rotation (a ``continue`` token carries
  on from the previous page; the sweep starts again at the end or on 410);
* by name, the Lease of every node that is not Ready and of every node whose
  Lease lagged more than :data:`LAGGING_S` when last read, unless more lag than
  a page holds (at most ``by_name_per_round`` of them per round, in rotation):
  a LIST with
  ``fieldSelector=metadata.name=NAME`` and ``limit=1``, so the reads stay
  lists ktop already may make.

At start the sampler does not wait for every Lease: it reads one page (the
Leases a page holds, :attr:`~ktop.sources.live.reads.Resource.page_size`), and the
feed counts as listed; the rest of the first sweep follows a page every
:data:`SWEEP_S`, off the start's critical path (at 100,000 nodes the whole Lease
list is 55 MB of JSON, the last and largest read of the start), and the rotation
then goes on at ``per_round`` every ``period_s``. Until the first sweep is done the
nodes pane says how many Leases were read of how many nodes; the not-Ready nodes'
Leases are read by name as always.

A Lease read long ago says nothing about its lag now, so the source first
emits :class:`~ktop.model.events.LeasesSampled`: the model then keeps each
Lease's lag as it was when read, and the nodes pane says it is sampled and how.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from ktop.model.events import Event, FeedFailed, FeedSynced, LeaseRenewed, LeasesSampled
from ktop.scrub import Secrets
from ktop.sources.base import Emit
from ktop.sources.live.errors import ApiError
from ktop.sources.live.handlers import LeasesHandler
from ktop.sources.live.listwatch import ListWatch
from ktop.sources.live.reads import Resource
from ktop.sources.live.scrape import failure_reason
from ktop.sources.live.transport import JSON, KubeTransport

LAGGING_S = 20.0
"""A Lease read with more lag than this (two of the kubelet's 10 s renewals) is read
again every round until it is not lagging."""
SWEEP_S = 1.0
"""The pause between pages of the first sweep (after the first page, until the rotation
reaches the end once): at 100,000 nodes and pages of 500, every Lease read within about
200 s, at about one request a second."""


class LeaseSampler:
    """Reads node Leases in rounds (see the module docstring)."""

    def __init__(
        self,
        t: KubeTransport,
        resource: Resource,
        clock: Callable[[], float],
        not_ready: Callable[[], set[str]],
        *,
        period_s: float = 10.0,
        per_round: int = 200,
        by_name_per_round: int = 50,
        secrets: Secrets | None = None,
    ) -> None:
        self.t = t
        self.secrets = secrets if secrets is not None else Secrets()
        """The session's credentials, which a failure's reason is scrubbed with."""
        self.r = resource
        self.clock = clock
        self.not_ready = not_ready
        self.period_s = period_s
        self.per_round = per_round
        self.by_name_per_round = by_name_per_round
        self.handler = LeasesHandler()
        self.lw = ListWatch(t, resource, self.handler, clock)
        """Converts each Lease read (skipping and counting unreadable ones)."""
        self.lag: dict[str, float] = {}
        """Each Lease's lag when last read."""
        self.cont = ""
        self._turn: list[str] = []
        """Names still to read by name, when there were more than a round's worth."""
        self.failing = False
        self.sweeping = False
        """The first sweep is under way: a page every :data:`SWEEP_S`, not every round."""
        self._by_name_due = 0.0
        """When the not-Ready and lagging nodes' Leases are next read by name (every
        ``period_s``, also while the first sweep reads a page every :data:`SWEEP_S`)."""

    def _seen(self, emit: Emit) -> Emit:
        def out(events: Sequence[Event]) -> None:
            for e in events:
                if isinstance(e, LeaseRenewed):
                    self.lag[e.node] = e.at - e.renew_time
            emit(events)

        return out

    async def lease_list(self, emit: Emit) -> None:
        """Say that Leases are sampled, then read the first page of Leases: the feed is
        listed, and the first sweep goes on from there (:meth:`run`) when there are more.
        """
        emit([LeasesSampled(self.clock(), self.per_round, self.period_s)])
        body = await self._list([("limit", self.r.page_size)])
        seen = self._seen(emit)
        self._emit_items(body, seen)
        meta = body.get("metadata")
        self.cont = str(meta.get("continue") or "") if isinstance(meta, dict) else ""
        self.sweeping = bool(self.cont)
        emit([FeedSynced(self.clock(), self.r.feed)])

    async def run(self, emit: Emit) -> None:
        """Read the first page, then the rest of the first sweep a page every
        :data:`SWEEP_S`, then a sample every round, until cancelled.
        """
        await self.lease_list(emit)
        seen = self._seen(emit)
        while True:
            await asyncio.sleep(SWEEP_S if self.sweeping else self.period_s)
            try:
                await self.round(seen)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                self.failing = True
                what = str(e) if isinstance(e, ApiError) else failure_reason(e, self.secrets)
                emit([FeedFailed(self.clock(), self.r.feed, f"{self.r.what}: {what}")])
            else:
                if self.failing:
                    self.failing = False
                    emit([FeedSynced(self.clock(), self.r.feed)])

    async def _list(self, query: list[tuple[str, str | int]]) -> dict[str, Any]:
        try:
            body = (await self.t.get(self.r.path, query, JSON, timeout_s=30)).json()
        except ApiError as e:
            raise ApiError(e.status, "list", self.r.what, e.message, e.from_kubernetes) from e
        if not isinstance(body, dict):
            raise ValueError(f"list of {self.r.what} is not a JSON object")
        return body

    def _emit_items(self, body: dict[str, Any], emit: Emit) -> set[str]:
        """Emit the renewals of a page's Leases; returns the names read.

        A Lease with a field of the wrong type is skipped and counted (as a list or
        watch skips it), so one bad Lease neither fails the round nor stops the rotation.
        """
        now = self.clock()
        events: list[Event] = []
        names: set[str] = set()
        before = self.lw.skipped
        items = body.get("items")
        for item in items if isinstance(items, list) else []:
            name = self.lw.upsert_item(now, item, events)
            if name is not None:
                names.add(name)
        events.extend(self.lw.skipped_event(before, now))
        emit(events)
        return names

    async def round(self, emit: Emit) -> None:
        """One page in rotation (a whole page while the first sweep is under way), then
        the not-Ready and lagging nodes' Leases by name (at most every ``period_s``).
        """
        sweeping = self.sweeping
        size = self.r.page_size if sweeping else self.per_round
        query: list[tuple[str, str | int]] = [("limit", size)]
        if self.cont:
            query.append(("continue", self.cont))
        try:
            body = await self._list(query)
        except ApiError as e:
            if e.status != 410 or not self.cont:
                raise
            self.cont = ""  # the token expired: start the sweep again
            body = await self._list([("limit", size)])
        read = self._emit_items(body, emit)
        meta = body.get("metadata")
        self.cont = str(meta.get("continue") or "") if isinstance(meta, dict) else ""
        if not self.cont:
            self.sweeping = False  # the first sweep reached the end: rounds from now on
        now = self.clock()
        if sweeping and now < self._by_name_due:
            return  # by name every period_s, not every page of the first sweep
        self._by_name_due = now + self.period_s
        if not self._turn:
            lagging = {n for n, lag in self.lag.items() if lag > LAGGING_S}
            if len(lagging) > self.per_round:
                # More lag than a page holds: one request each would cost more than the
                # rotation, which reaches them anyway (not-Ready nodes are still read).
                lagging = set()
            self._turn = sorted((self.not_ready() | lagging) - read)
        batch, self._turn = (
            self._turn[: self.by_name_per_round],
            self._turn[self.by_name_per_round :],
        )
        for name in batch:
            got = self._emit_items(
                await self._list([("fieldSelector", f"metadata.name={name}"), ("limit", 1)]), emit
            )
            if not got:
                self.lag.pop(name, None)  # no Lease (the node is gone, or has none yet)
