"""What a list or watch hands a handler: each object as a :class:`Row`, its JSON with what
ktop knows of it beyond that JSON in typed fields (read without its object, its place,
reported added, its ordinal), and the :class:`Handler` that turns rows into events.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ktop.model.events import Event
from ktop.sources.live.node_split import Place

__all__ = ["UNREADABLE", "Handler", "Item", "Row", "as_row", "table_rows"]

Item = dict[str, Any]
"""An object as JSON, or for Tables ``{"metadata": ..., "cells": {column: value}}``."""

UNREADABLE = (TypeError, ValueError, AttributeError, KeyError, IndexError)
"""What converting an object with a field of the wrong type may raise."""


@dataclass(frozen=True, slots=True)
class Row:
    """One object a list or a watch read, as a handler converts it. One exists per object
    while it is converted, then is let go (a zone's 100,000 rows are folded one by one).
    """

    item: Item
    """The object as JSON; for a Table row ``{"metadata": ..., "cells": {column: value}}``."""
    no_object: bool = False
    """Made from a Table row without its object: only ``metadata.name`` (from the ``Name``
    column) and the cells are known."""
    place: Place | None = None
    """For a row of a list whose label selector decides the objects' place (the node list
    split by zone): that place, which the row itself does not carry."""
    added: bool = False
    """A watch reported the object ``ADDED``: it began to match after the list the watch
    continues (so it was not among that list's rows)."""
    ordinal: int = 1
    """For a row without its object in a list of a namespaced resource: its place (from 1)
    among the list's rows of the same name, which tells rows of one name in several
    namespaces apart (a row names no namespace)."""


def as_row(value: Any) -> Row:
    """``value`` (a Row, or one of a list's items) as a Row; raises TypeError when it is
    not an object, which makes it unreadable like an object with a field of the wrong type.
    """
    if isinstance(value, Row):
        return value
    if not isinstance(value, dict):
        raise TypeError(f"an item is {type(value).__name__}, not an object")
    return Row(value)


def table_rows(
    table: Item,
    columns: list[str],
    *,
    place: Place | None = None,
    names: dict[str, int] | None = None,
    added: bool = False,
) -> Iterator[Row]:
    """A Table's rows as Rows, one at a time, each with ``place`` and ``added``.

    ``columns`` holds the column names, kept from an earlier Table when this one has
    none (a watch event's). A row that is not an object becomes one whose metadata is not
    a mapping, which the handler rejects (and the list counts) like any unreadable
    object. A row without an object (``includeObject=None``) is named by its ``Name`` cell
    (:attr:`Row.no_object`); ``names`` (when given) counts such rows by name, which gives
    each its :attr:`Row.ordinal`. Each row is dropped from the table as it is converted:
    a zone's rows read whole are let go row by row, not all at the end.
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
            yield Row({"metadata": row}, place=place, added=added)
            continue
        cells = row.get("cells")
        obj = row.get("object")
        named = dict(zip(columns, cells if isinstance(cells, list) else [], strict=False))
        name = named.get("Name")
        if obj is None and isinstance(name, str):
            ordinal = 1
            if names is not None:
                names[name] = ordinal = names.get(name, 0) + 1
            item = {"metadata": {"name": name}, "cells": named}
            yield Row(item, no_object=True, place=place, added=added, ordinal=ordinal)
            continue
        meta = obj.get("metadata") if isinstance(obj, dict) else obj
        yield Row(
            {"metadata": {} if meta is None else meta, "cells": named}, place=place, added=added
        )


class Handler(Protocol):
    """Turns a resource's rows into events."""

    def key(self, row: Row) -> str:
        """A unique key (``namespace/name`` or ``name``)."""
        ...

    def upsert(self, at: float, row: Row) -> Sequence[Event]:
        """Events for an added or changed object."""
        ...

    def delete(self, at: float, key: str) -> Sequence[Event]:
        """Events for a deleted object."""
        ...
