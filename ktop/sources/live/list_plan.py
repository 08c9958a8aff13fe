"""The requests a list and its watch make, as data (no server needed to read them).

A list is paginated (``limit``, ``continue``): a resource's pages (:func:`pages`); a
pending-pod list's first page of whole objects, continued as Table rows without objects
(:func:`whole_first`); the node list split by zone (:mod:`ktop.sources.live.node_split`),
whose lists (:func:`sub_list`) are paged too, except a zone's node rows, which are read
whole from the apiserver's watch cache (:func:`from_cache`: ``resourceVersionMatch=
NotOlderThan`` at the first page's version, no ``limit``) up to
:data:`CACHE_READ_MAX_NODES` nodes. Why: ``docs/cost.md`` ("The node list") and
``docs/decisions/0003-nodes-as-tables.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ktop.sources.live.node_split import Place, SubList
from ktop.sources.live.reads import Query, Resource

__all__ = [
    "CACHE_READ_MAX_NODES",
    "ROWS_ONLY_PAGES",
    "ZONE_LISTS_IN_FLIGHT",
    "Pages",
    "Params",
    "from_cache",
    "object_query",
    "pages",
    "sub_list",
    "watch_params",
    "whole_first",
    "zones_from_cache",
]

Params = list[tuple[str, str | int]]
"""A request's query parameters, in the order they are sent."""

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


@dataclass(frozen=True, slots=True)
class Pages:
    """How the pages of one list are asked for, and what its rows are known to be."""

    query: Query
    """The parameters of every page, before ``limit`` and ``continue``."""
    limit: int
    """Objects a page (0: no ``limit``, the list is read whole)."""
    table: bool
    """Asked for as a Table (rows), else as objects."""
    place: Place | None = None
    """The place of every row (a zone list of the split: its selector decides it)."""
    ordinals: bool = False
    """Rows without objects are numbered by name (:attr:`ktop.sources.live.rows.Row.ordinal`)."""

    def params(self, cont: str = "") -> Params:
        """The query of the page that continues ``cont`` ("" for the first page)."""
        query: Params = [*self.query, ("limit", self.limit)] if self.limit else list(self.query)
        if cont:
            query.append(("continue", cont))
        return query


def object_query(resource: Resource, watch: bool = False) -> Query:
    """The resource's own query, with what a Table's rows carry of their objects: their
    metadata, except in a watch of a resource whose watch sends rows alone
    (:attr:`Resource.watch_metadata`).
    """
    if not resource.table:
        return resource.query
    objects = "Metadata" if resource.watch_metadata or not watch else "None"
    return (*resource.query, ("includeObject", objects))


def pages(resource: Resource) -> Pages:
    """The resource's list, as it is read, a page of :attr:`Resource.page_size` at a time."""
    return Pages(object_query(resource), resource.page_size, resource.table)


def whole_first(resource: Resource) -> tuple[Pages, Pages]:
    """A list whose first page is :attr:`Resource.whole_first` whole objects, and the rest
    of the same list (its ``continue`` token) as Table rows without objects, numbered by
    name.
    """
    first = Pages(object_query(resource), resource.whole_first, resource.table)
    rows = Pages(
        (*resource.query, ("includeObject", "None")),
        resource.page_size * ROWS_ONLY_PAGES,
        table=True,
        ordinals=True,
    )
    return first, rows


def sub_list(resource: Resource, sub: SubList) -> Pages:
    """One list of the split, paged: a zone list as rows without objects (the place is
    its selector's), larger pages of them; a rest list with metadata, as the resource's.
    """
    zone = sub.place is not None
    query = (
        *resource.query,
        ("labelSelector", sub.selector),
        ("includeObject", "None" if zone else "Metadata"),
    )
    limit = resource.page_size * ROWS_ONLY_PAGES if zone else resource.page_size
    return Pages(query, limit, resource.table, sub.place)


def zones_from_cache(rv: str, total: int | None) -> bool:
    """Whether the zone lists of a split at ``rv`` are read whole from the watch cache:
    the first page gave a version, and a count of nodes up to :data:`CACHE_READ_MAX_NODES`.
    """
    return rv != "" and total is not None and total <= CACHE_READ_MAX_NODES


def from_cache(zone: Pages, rv: str) -> Pages:
    """A zone list read whole, not older than ``rv``: the watch cache serves it (a 504
    when it has not caught up with ``rv``: the zone is then paged).
    """
    at_least = (("resourceVersion", rv), ("resourceVersionMatch", "NotOlderThan"))
    return replace(zone, query=(*zone.query, *at_least), limit=0)


def watch_params(resource: Resource, rv: str, timeout_s: int) -> Params:
    """The query of a watch from ``rv`` with bookmarks, closed by the server after
    ``timeout_s``.
    """
    return [
        *object_query(resource, watch=True),
        ("resourceVersion", rv),
        ("allowWatchBookmarks", "true"),
        ("timeoutSeconds", timeout_s),
    ]
