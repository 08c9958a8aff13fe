"""List then watch one resource, for as long as the source runs.

* The list is paginated (``limit``, ``continue``): never an unpaginated LIST.
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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ktop.model.events import Event, FeedFailed, FeedProgress, FeedSynced, ObjectsSkipped
from ktop.sources.base import Emit
from ktop.sources.live.errors import ApiError
from ktop.sources.live.node_split import Place, SubList
from ktop.sources.live.reads import Resource
from ktop.sources.live.transport import JSON, TABLE, KubeTransport
from ktop.structured import load_json

__all__ = [
    "ADDED",
    "NO_OBJECT",
    "ORDINAL",
    "PLACE",
    "Backoff",
    "GoneError",
    "Handler",
    "ListWatch",
    "Resource",
]

Item = dict[str, Any]
"""An object as JSON, or for Tables ``{"metadata": ..., "cells": {column: value}}``."""


def _expected(seen: set[str], meta: dict[str, Any]) -> int | None:
    """Objects listed so far plus the page's ``remainingItemCount`` (None when absent:
    the apiserver leaves it out for a list with a label or field selector).
    """
    remaining = meta.get("remainingItemCount")
    if type(remaining) is int and remaining >= 0:
        return len(seen) + remaining
    return None


class Handler(Protocol):
    """Turns a resource's objects into events."""

    def key(self, item: Item) -> str:
        """A unique key (``namespace/name`` or ``name``)."""
        ...

    def upsert(self, at: float, item: Item) -> Sequence[Event]:
        """Events for an added or changed object."""
        ...

    def delete(self, at: float, key: str) -> Sequence[Event]:
        """Events for a deleted object."""
        ...


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


PLACE = "ktopPlace"
"""Set on an item of a list whose label selector decides the objects' place (the node list
split by zone): the place, which the row itself does not carry."""
ROWS_ONLY_PAGES = 10
"""A page of Table rows without objects holds this many times the resource's page size
(a node row is about 250 bytes: 5,000 of them are about 1.3 MB)."""

CACHE_READ_MAX_NODES = 100_000
"""Up to this many nodes (the first page's count), each zone list of the split is read in
one request served from the apiserver's watch cache (``resourceVersionMatch=NotOlderThan``
at the first page's version, no ``limit``) instead of in pages. A continued page is an
exact read at the first page's version, which the watch cache serves only while it holds
a snapshot of that version; otherwise (measured on Kubernetes 1.35 with 100,000 static
nodes) the apiserver reads it from etcd, decoding every node the page's selector passes
over: three zone lists in pages of 5,000 then took 39-47 s and 255,000 node decodes; one
request a zone, 1.1-4.1 s for the three and no etcd read. Its cost is ktop's memory: a
zone's rows (about 260 bytes a node) decoded at once, at most this many."""

ZONE_LISTS_IN_FLIGHT = 2
"""Zone lists of the split asked for at once: one is decoded while the apiserver serves
the next (the rest lists, small, all go beside them); more would hold more zones' rows in
memory together."""

NO_OBJECT = "noObject"
"""Set on an item made from a Table row without its object: only ``metadata.name`` (from
the ``Name`` column) and the cells are known."""
ADDED = "ktopAdded"
"""Set on an object a watch reports ``ADDED``: it began to match after the list the watch
continues (so it was not among that list's rows)."""
ORDINAL = "ktopOrdinal"
"""Set on a row without its object in a list of a namespaced resource: the row's place
(from 1) among the list's rows of the same name, which tells rows of one name in several
namespaces apart (a row names no namespace)."""


def _table_items(table: dict[str, Any], columns: list[str]) -> Iterator[Item]:
    """Table rows as items, one at a time; a row that is not an object becomes one whose
    metadata is not a mapping, which the handler rejects (and the list counts) like any
    unreadable object. A row without an object (``includeObject=None``) is named by its
    ``Name`` cell and marked :data:`NO_OBJECT`. Each row is dropped from the table as it
    is converted: a zone's rows read whole are let go row by row, not all at the end.
    """
    defs = table.get("columnDefinitions")
    if isinstance(defs, list) and defs:
        columns[:] = [str(c.get("name", "")) if isinstance(c, dict) else "" for c in defs]
    rows = table.get("rows")
    if not isinstance(rows, list):
        return
    for i, row in enumerate(rows):
        rows[i] = None
        if not isinstance(row, dict):
            yield {"metadata": row}
            continue
        cells = row.get("cells")
        obj = row.get("object")
        named = dict(zip(columns, cells if isinstance(cells, list) else [], strict=False))
        if obj is None and isinstance(named.get("Name"), str):
            yield {"metadata": {"name": named["Name"]}, "cells": named, NO_OBJECT: True}
            continue
        meta = obj.get("metadata") if isinstance(obj, dict) else obj
        yield {"metadata": {} if meta is None else meta, "cells": named}


UNREADABLE = (TypeError, ValueError, AttributeError, KeyError, IndexError)
"""What converting an object with a field of the wrong type may raise."""


@dataclass(slots=True)
class _Split:
    """What every list of one split list shares."""

    size: int
    cached: bool
    """Zone lists are read whole from the watch cache (:data:`CACHE_READ_MAX_NODES`)."""
    rv: str
    seen: set[str]
    total: int | None
    emit: Emit
    zones: asyncio.Semaphore = field(
        default_factory=lambda: asyncio.Semaphore(ZONE_LISTS_IN_FLIGHT)
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
        """Convert one object into ``events``; an unreadable one is counted and skipped.

        Returns its key, or None when it was skipped.
        """
        try:
            if not isinstance(item, dict):
                raise TypeError(f"an item is {type(item).__name__}, not an object")
            key = self.h.key(item)
            events.extend(self.h.upsert(now, item))
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

    def _base_query(self, watch: bool = False) -> list[tuple[str, str | int]]:
        q: list[tuple[str, str | int]] = list(self.r.query)
        if self.r.table:
            objects = "Metadata" if self.r.watch_metadata or not watch else "None"
            q.append(("includeObject", objects))
        return q

    def _items(self, body: dict[str, Any], table: bool) -> Iterable[Item]:
        if table:
            return _table_items(body, self._columns)
        items = body.get("items")
        return list(items) if isinstance(items, list) else []

    async def list_all(self, emit: Emit) -> None:
        """A paginated list; report upserts, and deletions of objects no longer listed.

        With a :attr:`split` (nodes), the first page (with metadata) decides whether the
        rest is listed as the split's lists instead (:mod:`ktop.sources.live.node_split`);
        the watch then starts at the first page's version, so it misses nothing.
        """
        seen: set[str] = set()
        self.split_used = False
        base, size = self._base_query(), self.r.page_size
        if self.r.whole_first:
            await self._rows_after_whole(base, seen, emit)
            return
        first: list[Item] | None = [] if self.split is not None else None
        cont, total, rv = await self._pages(base, size, None, seen, None, emit, first)
        lists = self.split(first) if cont and self.split is not None and first else None
        del first
        if lists is None:
            while cont:
                cont, _, rv = await self._pages(base, size, None, seen, total, emit, cont=cont)
        else:
            self.split_used = True
            cached = rv != "" and total is not None and total <= CACHE_READ_MAX_NODES
            split = _Split(size, cached, rv, seen, total, emit)
            await self._sub_lists(lists, split)
        self._synced(rv, seen, emit)

    async def _sub_lists(self, lists: Sequence[SubList], split: _Split) -> None:
        """The lists of a split, at once: zone lists (at most :data:`ZONE_LISTS_IN_FLIGHT`
        together) and rest lists beside them. A failing one fails them all, as itself.
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
        q = [*self.r.query, ("labelSelector", sub.selector)]
        q.append(("includeObject", "Metadata" if sub.place is None else "None"))
        rows = split.size if sub.place is None else split.size * ROWS_ONLY_PAGES
        args = (split.seen, split.total, split.emit)
        more = None
        if split.cached and sub.place is not None:
            more = await self._from_cache(q, split.rv, sub.place, *args)
        elif sub.resplit is not None:
            first: list[Item] = []
            more, _, _ = await self._pages(q, rows, None, *args, first)
            lists = sub.resplit(first) if more else None
            del first
            if lists is not None:
                await self._sub_lists(lists, split)
                return
        while more != "":
            more, _, _ = await self._pages(q, rows, sub.place, *args, cont=more or "")

    async def _from_cache(
        self,
        query: list[tuple[str, str | int]],
        rv: str,
        place: Place,
        seen: set[str],
        total: int | None,
        emit: Emit,
    ) -> str | None:
        """One zone list read whole from the watch cache, not older than ``rv`` (see
        :data:`CACHE_READ_MAX_NODES`). Returns a continue token ("" when complete), or None
        when the cache had not caught up with ``rv`` (504): then the caller pages.
        """
        at_least = [("resourceVersion", rv), ("resourceVersionMatch", "NotOlderThan")]
        try:
            more, _, _ = await self._pages([*query, *at_least], 0, place, seen, total, emit)
        except ApiError as e:
            if e.status != 504:
                raise
            return None
        return more

    async def _rows_after_whole(
        self, base: list[tuple[str, str | int]], seen: set[str], emit: Emit
    ) -> None:
        """A list whose first page is :attr:`Resource.whole_first` whole objects and whose
        rest continues (the same list, the same resourceVersion) as Table rows without
        objects, each marked with its :data:`ORDINAL`.
        """
        cont, total, rv = await self._pages(base, self.r.whole_first, None, seen, None, emit)
        rows = [*self.r.query, ("includeObject", "None")]
        names: dict[str, int] = {}
        while cont:
            cont, _, _ = await self._pages(
                rows,
                self.r.page_size * ROWS_ONLY_PAGES,
                None,
                seen,
                total,
                emit,
                cont=cont,
                table=True,
                names=names,
            )
        self._synced(rv, seen, emit)

    def _synced(self, rv: str, seen: set[str], emit: Emit) -> None:
        """The list is complete at ``rv``: objects not in it are reported deleted."""
        self.rv = rv
        now = self.clock()
        gone: list[Event] = []
        for key in self.keys - seen:
            gone.extend(self.h.delete(now, key))
        self.keys = seen
        emit([*gone, FeedSynced(now, self.r.feed)])

    async def _pages(
        self,
        base: list[tuple[str, str | int]],
        size: int,
        place: Place | None,
        seen: set[str],
        total: int | None,
        emit: Emit,
        first: list[Item] | None = None,
        cont: str = "",
        table: bool | None = None,
        names: dict[str, int] | None = None,
    ) -> tuple[str, int | None, str]:
        """One page of a list (continuing ``cont``; ``size`` 0: no ``limit``): its objects
        upserted into ``seen`` (rows marked with :data:`PLACE` ``place`` when given),
        progress reported against ``total`` (else the page's own count). Returns the next
        continue token ("" at the end), the total expected and the list's resourceVersion.
        ``first`` collects the items. ``table`` asks for a Table (default: as the resource
        is read); ``names`` counts rows without objects by name, to mark each with its
        :data:`ORDINAL`.
        """
        table = self.r.table if table is None else table
        query = [*base, ("limit", size)] if size else list(base)
        if cont:
            query.append(("continue", cont))
        try:
            resp = await self.t.get(self.r.path, query, TABLE if table else JSON, timeout_s=60)
        except ApiError as e:
            if e.status == 410:
                raise GoneError(str(e)) from e
            raise ApiError(e.status, "list", self.r.what, e.message, e.from_kubernetes) from e
        body = resp.json()
        del resp  # let the page go before the next arrives: two decoded pages are tens of MB
        if not isinstance(body, dict):
            raise ValueError(f"list of {self.r.what} is not a JSON object")
        now = self.clock()
        events: list[Event] = []
        before = self.skipped
        items = self._items(body, table)
        if first is not None:
            items = list(items)
            first.extend(items)
        for item in items:
            if place is not None and isinstance(item, dict):
                item[PLACE] = place
            if names is not None and item.get(NO_OBJECT):
                name = item["metadata"]["name"]
                names[name] = item[ORDINAL] = names.get(name, 0) + 1
            key = self.upsert_item(now, item, events)
            if key is not None:
                seen.add(key)
        events.extend(self.skipped_event(before, now))
        meta = body.get("metadata") or {}
        if not isinstance(meta, dict):
            meta = {}
        more = str(meta.get("continue") or "")
        if total is None:
            total = _expected(seen, meta)
        if more or self.split_used:  # more to come: say how far the list is (the pane shows it)
            events.append(FeedProgress(now, self.r.feed, len(seen), total))
        emit(events)
        return more, total, str(meta.get("resourceVersion") or "")

    async def watch_once(self, emit: Emit) -> None:
        """One watch stream, until the server closes it; raises GoneError on 410."""
        timeout = self.watch_timeout_s + self.rng.randint(0, self.watch_timeout_s // 5)
        query = [
            *self._base_query(watch=True),
            ("resourceVersion", self.rv),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", timeout),
        ]
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
        items = _table_items(obj, self._columns) if self.r.table else [obj]
        now = self.clock()
        events: list[Event] = []
        before = self.skipped
        for item in items:
            if kind == "DELETED":
                try:
                    key = self.h.key(item)
                except UNREADABLE:
                    continue
                self.keys.discard(key)
                events.extend(self.h.delete(now, key))
            else:
                if kind == "ADDED":
                    item[ADDED] = True
                added = self.upsert_item(now, item, events)
                if added is not None:
                    self.keys.add(added)
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
