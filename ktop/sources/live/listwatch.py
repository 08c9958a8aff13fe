"""List then watch one resource, for as long as the source runs.

* The list is paginated (``limit``, ``continue``), except a zone's node rows in the node
  list split by zone, which are read whole from the apiserver's watch cache
  (``resourceVersionMatch=NotOlderThan``): :mod:`ktop.sources.live.list_plan` says which
  requests a list makes (``docs/cost.md``, ``docs/decisions/0003-nodes-as-tables.md``).
* Each object read is a :class:`~ktop.sources.live.rows.Row` that the resource's
  :class:`~ktop.sources.live.rows.Handler` turns into events; an unreadable one is
  skipped and counted.
* The watch starts at the list's resourceVersion, asks for bookmarks, and is
  re-opened from the last resourceVersion seen when the server closes it.
* 410 Gone (on the watch, or an expired ``continue`` token) re-lists after a
  jittered delay; objects missing from the new list are reported deleted.
* Other failures back off exponentially with jitter (capped), and are
  reported as ``FeedFailed`` with a message that names what is missing.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ktop.model.events import Event, FeedFailed, FeedProgress, FeedSynced, ObjectsSkipped
from ktop.sources.base import Emit
from ktop.sources.live import list_plan
from ktop.sources.live.errors import ApiError
from ktop.sources.live.list_plan import Pages
from ktop.sources.live.node_split import SubList
from ktop.sources.live.reads import Resource
from ktop.sources.live.rows import UNREADABLE, Handler, Item, Row, as_row, table_rows
from ktop.sources.live.transport import JSON, TABLE, KubeTransport
from ktop.structured import load_json

__all__ = ["Backoff", "GoneError", "Handler", "ListWatch", "Resource"]


def _expected(seen: set[str], meta: dict[str, Any]) -> int | None:
    """Objects listed so far plus the page's ``remainingItemCount`` (None when absent:
    the apiserver leaves it out for a list with a label or field selector).
    """
    remaining = meta.get("remainingItemCount")
    if type(remaining) is int and remaining >= 0:
        return len(seen) + remaining
    return None


@dataclass(slots=True)
class Backoff:
    """Exponential back-off with full jitter."""

    base_s: float = 1.0
    cap_s: float = 60.0
    attempt: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        """The next delay, growing with each failure."""
        self.attempt += 1
        return self.rng.uniform(0, min(self.cap_s, self.base_s * 2 ** min(self.attempt - 1, 30)))

    def reset(self) -> None:
        """A success: start again from the base delay."""
        self.attempt = 0


class GoneError(Exception):
    """The resourceVersion or continue token expired (410)."""


@dataclass(slots=True)
class _Listing:
    """What the pages of one list share (the lists of its split too)."""

    seen: set[str]
    """Keys of the objects listed so far."""
    emit: Emit
    total: int | None = None
    """Objects the list holds, from its first page (None: each page says its own)."""
    names: dict[str, int] = field(default_factory=dict)
    """Rows without objects counted by name (for their ordinals)."""


class _Page(NamedTuple):
    """What one page of a list said besides its objects."""

    more: str
    """The next continue token ("" at the end)."""
    total: int | None
    """Objects expected in the list (the listing's total, else this page's estimate)."""
    rv: str
    """The list's resourceVersion."""


@dataclass(slots=True)
class _Split:
    """What every list of one split list shares."""

    listing: _Listing
    rv: str
    """The first page's resourceVersion."""
    cached: bool
    """Zone lists are read whole from the watch cache (:func:`list_plan.zones_from_cache`)."""
    zones: asyncio.Semaphore = field(
        default_factory=lambda: asyncio.Semaphore(list_plan.ZONE_LISTS_IN_FLIGHT)
    )


class ListWatch:
    """Keeps one resource's objects flowing into events."""

    def __init__(
        self,
        transport: KubeTransport,
        resource: Resource,
        handler: Handler,
        clock: Callable[[], float],
        *,
        watch_timeout_s: int = 300,
        rng: random.Random | None = None,
        split: Callable[[list[Item]], Sequence[SubList] | None] | None = None,
    ) -> None:
        self.t = transport
        self.r = resource
        self.h = handler
        self.clock = clock
        self.watch_timeout_s = watch_timeout_s
        self.rng = rng or random.Random()
        self.backoff = Backoff(rng=self.rng)
        self.keys: set[str] = set()
        self.rv = ""
        self._columns: list[str] = []
        self.relists = 0
        self.skipped = 0
        """Objects skipped because a field had the wrong type (since start)."""
        self._skip_example = ""
        self.split: Callable[[list[Item]], Sequence[SubList] | None] | None = split
        """Given the first page's items, the lists to read instead of the rest of the pages
        (None: go on page by page)."""
        self.split_used = False
        """The last list was split (its progress is reported after every page)."""

    def upsert_item(self, now: float, item: Any, events: list[Event]) -> str | None:
        """Convert one object (a :class:`Row`, or one of a list's items) into ``events``;
        an unreadable one is counted and skipped.

        Returns its key, or None when it was skipped.
        """
        try:
            row = as_row(item)
            key = self.h.key(row)
            events.extend(self.h.upsert(now, row))
        except UNREADABLE as exc:
            self.skipped += 1
            self._skip_example = f"{type(exc).__name__}: {str(exc)[:120]}"
            return None
        return key

    def skipped_event(self, before: int, now: float) -> list[Event]:
        """An :class:`ObjectsSkipped` when objects were skipped since the count was ``before``."""
        if self.skipped == before:
            return []
        return [ObjectsSkipped(now, self.r.feed, self.skipped, self._skip_example)]

    def _accept(self) -> str:
        return TABLE if self.r.table else JSON

    def _entries(self, body: dict[str, Any], pages: Pages, listing: _Listing) -> Iterable[Any]:
        """A page's objects: Rows of a Table (with the list's place and ordinals), else
        the page's items as they are (each made a Row as it is converted).
        """
        if pages.table:
            names = listing.names if pages.ordinals else None
            return table_rows(body, self._columns, place=pages.place, names=names)
        items = body.get("items")
        return list(items) if isinstance(items, list) else []

    async def list_all(self, emit: Emit) -> None:
        """The list, page by page; report upserts, and deletions of objects no longer listed.

        With a :attr:`split` (nodes), the first page (with metadata) decides whether the
        rest is listed as the split's lists instead (:mod:`ktop.sources.live.node_split`);
        the watch then starts at the first page's version, so it misses nothing.
        """
        listing = _Listing(set(), emit)
        self.split_used = False
        if self.r.whole_first:
            await self._rows_after_whole(listing)
            return
        pages = list_plan.pages(self.r)
        first: list[Item] | None = [] if self.split is not None else None
        page = await self._page(pages, listing, first=first)
        listing.total, rv = page.total, page.rv
        lists = self.split(first) if page.more and self.split is not None and first else None
        del first
        if lists is None:
            while page.more:
                page = await self._page(pages, listing, page.more)
                rv = page.rv
        else:
            self.split_used = True
            cached = list_plan.zones_from_cache(rv, listing.total)
            await self._sub_lists(lists, _Split(listing, rv, cached))
        self._synced(rv, listing)

    async def _sub_lists(self, lists: Sequence[SubList], split: _Split) -> None:
        """The lists of a split, at once: zone lists (at most
        :data:`~ktop.sources.live.list_plan.ZONE_LISTS_IN_FLIGHT` together) and rest lists
        beside them. A failing one fails them all, as itself.
        """

        async def one(sub: SubList) -> None:
            if sub.place is None:  # a rest list: small, asked for beside the others
                await self._sub_list(sub, split)
                return
            async with split.zones:
                await self._sub_list(sub, split)

        try:
            async with asyncio.TaskGroup() as group:
                for sub in lists:
                    group.create_task(one(sub))
        except ExceptionGroup as failed:  # the first failure, as a list of one would raise
            raise failed.exceptions[0] from None

    async def _sub_list(self, sub: SubList, split: _Split) -> None:
        """One list of the split, to its end: a zone list (rows without objects) read
        whole from the watch cache when it may be, else in pages; the list of nodes in
        zones not yet known split again by its first page when that page allows it.
        """
        pages = list_plan.sub_list(self.r, sub)
        more = None
        if split.cached and sub.place is not None:
            more = await self._from_cache(list_plan.from_cache(pages, split.rv), split.listing)
        elif sub.resplit is not None:
            first: list[Item] = []
            more = (await self._page(pages, split.listing, first=first)).more
            lists = sub.resplit(first) if more else None
            del first
            if lists is not None:
                await self._sub_lists(lists, split)
                return
        while more != "":
            more = (await self._page(pages, split.listing, more or "")).more

    async def _from_cache(self, zone: Pages, listing: _Listing) -> str | None:
        """One zone list read whole from the watch cache (``zone`` from
        :func:`~ktop.sources.live.list_plan.from_cache`). Returns a continue token ("" when
        complete), or None when the cache had not caught up (504): then the caller pages.
        """
        try:
            return (await self._page(zone, listing)).more
        except ApiError as e:
            if e.status != 504:
                raise
            return None

    async def _rows_after_whole(self, listing: _Listing) -> None:
        """A list whose first page is :attr:`Resource.whole_first` whole objects and whose
        rest continues (the same list, the same resourceVersion) as Table rows without
        objects, each with its :attr:`~ktop.sources.live.rows.Row.ordinal`.
        """
        whole, rows = list_plan.whole_first(self.r)
        page = await self._page(whole, listing)
        listing.total, rv = page.total, page.rv
        while page.more:
            page = await self._page(rows, listing, page.more)
        self._synced(rv, listing)

    def _synced(self, rv: str, listing: _Listing) -> None:
        """The list is complete at ``rv``: objects not in it are reported deleted."""
        self.rv = rv
        now = self.clock()
        gone: list[Event] = []
        for key in self.keys - listing.seen:
            gone.extend(self.h.delete(now, key))
        self.keys = listing.seen
        listing.emit([*gone, FeedSynced(now, self.r.feed)])

    async def _page(
        self, pages: Pages, listing: _Listing, cont: str = "", first: list[Item] | None = None
    ) -> _Page:
        """One page of a list (continuing ``cont``): its objects upserted into the
        listing's keys, progress reported against its total (else the page's own count).
        ``first`` collects the page's items.
        """
        resp = await self._get(pages, cont)
        body = resp.json()
        del resp  # let the page go before the next arrives: two decoded pages are tens of MB
        if not isinstance(body, dict):
            raise ValueError(f"list of {self.r.what} is not a JSON object")
        now = self.clock()
        events: list[Event] = []
        before = self.skipped
        entries = self._entries(body, pages, listing)
        if first is not None:
            entries = list(entries)
            first.extend(e.item if isinstance(e, Row) else e for e in entries)
        for entry in entries:
            key = self.upsert_item(now, entry, events)
            if key is not None:
                listing.seen.add(key)
        events.extend(self.skipped_event(before, now))
        meta = body.get("metadata") or {}
        if not isinstance(meta, dict):
            meta = {}
        more = str(meta.get("continue") or "")
        total = listing.total if listing.total is not None else _expected(listing.seen, meta)
        if more or self.split_used:  # more to come: say how far the list is (the pane shows it)
            events.append(FeedProgress(now, self.r.feed, len(listing.seen), total))
        listing.emit(events)
        return _Page(more, total, str(meta.get("resourceVersion") or ""))

    async def _get(self, pages: Pages, cont: str) -> Any:
        """The response to one page's request; a 410 is a :class:`GoneError`, another
        failure an :class:`ApiError` that names the list.
        """
        accept = TABLE if pages.table else JSON
        try:
            return await self.t.get(self.r.path, pages.params(cont), accept, timeout_s=60)
        except ApiError as e:
            if e.status == 410:
                raise GoneError(str(e)) from e
            raise ApiError(e.status, "list", self.r.what, e.message, e.from_kubernetes) from e

    async def watch_once(self, emit: Emit) -> None:
        """One watch stream, until the server closes it; raises GoneError on 410."""
        timeout = self.watch_timeout_s + self.rng.randint(0, self.watch_timeout_s // 5)
        query = list_plan.watch_params(self.r, self.rv, timeout)
        try:
            async with self.t.watch(self.r.path, query, self._accept()) as lines:
                async for line in lines:
                    self._on_event(load_json(line, f"a watch line of {self.r.what}"), emit)
                    self.backoff.reset()
        except ApiError as e:
            if e.status == 410:
                raise GoneError(str(e)) from e
            if e.verb == "watch" and e.what == self.r.path:
                raise ApiError(e.status, "watch", self.r.what, e.message, e.from_kubernetes) from e
            raise

    def _on_event(self, ev: Any, emit: Emit) -> None:
        if not isinstance(ev, dict):
            raise ValueError(f"watch of {self.r.what} sent a line that is not a JSON object")
        kind = ev.get("type")
        obj = ev.get("object") or {}
        if not isinstance(obj, dict):
            obj = {"metadata": obj}
        if kind == "ERROR":
            raw_code = obj.get("code")
            code = raw_code if isinstance(raw_code, int) and not isinstance(raw_code, bool) else 0
            if code == 410:
                raise GoneError(str(obj.get("message", "410 Gone")))
            raise ApiError(code, "watch", self.r.what, str(obj.get("message", "")))
        meta = obj.get("metadata")
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        rv = rv if isinstance(rv, str) else ""
        if rv:
            self.rv = rv
        if kind == "BOOKMARK":
            return
        added = kind == "ADDED"
        rows = (
            table_rows(obj, self._columns, added=added) if self.r.table else [Row(obj, added=added)]
        )
        now = self.clock()
        events: list[Event] = []
        before = self.skipped
        for row in rows:
            if kind == "DELETED":
                try:
                    key = self.h.key(row)
                except UNREADABLE:
                    continue
                self.keys.discard(key)
                events.extend(self.h.delete(now, key))
            else:
                key_added = self.upsert_item(now, row, events)
                if key_added is not None:
                    self.keys.add(key_added)
        events.extend(self.skipped_event(before, now))
        emit(events)

    async def run(self, emit: Emit) -> None:
        """List (unless a resourceVersion to resume from is known), then watch, forever.

        Failures become FeedFailed events, never exceptions.
        """
        need_list = not self.rv
        while True:
            try:
                if need_list:
                    await self.list_all(emit)
                    need_list = False
                    self.backoff.reset()
                await self.watch_once(emit)
            except asyncio.CancelledError:
                raise
            except GoneError:
                self.relists += 1
                need_list = True
                emit(
                    [FeedFailed(self.clock(), self.r.feed, f"410 Gone on {self.r.what}: relisting")]
                )
                # Jitter, so that many clients cut off together do not relist together.
                await asyncio.sleep(self.rng.uniform(0.5, 3.0))
            except ApiError as e:
                emit([FeedFailed(self.clock(), self.r.feed, str(e))])
                if e.status in (401, 403):
                    need_list = True
                await asyncio.sleep(self.backoff.next_delay())
            except Exception as e:  # network errors, timeouts, bad JSON: retry
                reason = f"{self.r.what}: {type(e).__name__}: {e}".rstrip(": ")
                emit([FeedFailed(self.clock(), self.r.feed, reason)])
                await asyncio.sleep(self.backoff.next_delay())
