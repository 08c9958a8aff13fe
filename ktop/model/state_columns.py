"""The largest keyframe sections as columns (model state version 2): a target's series
values and the Lease renew times as packed doubles, the node records one column per field.

At 10,000 nodes these sections are nine tenths of a keyframe. As columns they compress to
about two thirds, and they are read without a Python object per number until the model
holds it: a seek imports a keyframe in a fraction of the time.

Packed doubles are float64, little-endian, byte-shuffled: the first byte of every number,
then the second byte of every number, and so on (numbers that are close share their high
bytes, which then compress to almost nothing). The layouts are in
docs/recording-format.md (KEYFRAME).
"""

from __future__ import annotations

import sys
from array import array
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from ktop.model import events as ev
from ktop.model.area_nodes import NodesState
from ktop.model.plaindata import builder
from ktop.model.series import TargetSeries
from ktop.model.series_window import SeriesPoints

_WIDTH = 8
UNREACHABLE, NOT_READY, CORDONED, EXCLUDED = 1, 2, 4, 8
"""Bits of a node's ``flags``: its taints, unschedulable, excluded from disruption."""
_FLAG_BITS = [
    (bool(f & UNREACHABLE), bool(f & NOT_READY), bool(f & CORDONED), bool(f & EXCLUDED))
    for f in range(16)
]
"""The four booleans of each value of ``flags``."""
_READINESS = {r.value: r for r in ev.Readiness}
_STR = {str}


def pack_doubles(values: Sequence[float]) -> bytes:
    """``values`` as float64, little-endian, byte-shuffled."""
    column = array("d", values)
    if sys.byteorder == "big":
        column.byteswap()
    raw = column.tobytes()
    return b"".join(raw[i::_WIDTH] for i in range(_WIDTH))


def unpack_doubles(packed: bytes) -> array[float]:
    """The doubles :func:`pack_doubles` packed."""
    if type(packed) is not bytes or len(packed) % _WIDTH:
        raise ValueError("expected packed doubles: binary data, 8 bytes per number")
    n = len(packed) // _WIDTH
    raw = bytearray(len(packed))
    for i in range(_WIDTH):
        raw[i::_WIDTH] = packed[i * n : (i + 1) * n]
    column = array("d")
    column.frombytes(raw)
    if sys.byteorder == "big":
        column.byteswap()
    return column


def series_out(ts: TargetSeries) -> list[Any]:
    """One target's series: scrape times once, a row per series (which times, how many
    points), the values of every row packed together.
    """
    times: dict[float, None] = {}
    for by_labels in ts._series.values():
        for s in by_labels.values():
            times.update(dict.fromkeys(s.times))
    ordered = sorted(times)
    index = {t: i for i, t in enumerate(ordered)}
    rows: list[Any] = []
    values: list[float] = []
    for name, by_labels in ts._series.items():
        for labels, s in by_labels.items():
            idx = [index[t] for t in s.times]
            first = idx[0] if idx else 0
            contiguous = idx == list(range(first, first + len(idx)))
            values += s.values
            rows.append([name, [list(p) for p in labels], first if contiguous else idx, len(idx)])
    target = ts.target
    head = [str(target.component), target.instance, ts.window_s, ts.last_at, ts.scrapes]
    return [*head, ordered, rows, pack_doubles(values)]


def series_in(v: list[Any]) -> TargetSeries:
    """A target's series from :func:`series_out`'s data."""
    component, instance, window_s, last_at, scrapes, times, rows, packed = v[:8]
    ts = TargetSeries(ev.Target(ev.Component(component), instance), float(window_s))
    ts.last_at = None if last_at is None else float(last_at)
    ts.scrapes = int(scrapes)
    ftimes = list(map(float, times))
    ts.scrape_times = deque(ftimes)  # every point's time: the scrapes in the window
    values = unpack_doubles(packed).tolist()
    at = 0
    for name, labels, where, count in rows:
        if type(count) is not int or not 0 <= count <= len(values) - at:
            raise ValueError(f"expected at most {len(values) - at} values, got {count!r}")
        key = tuple([(str(k), str(val)) for k, val in labels])
        if type(where) is int and where >= 0 and where + count <= len(ftimes):
            stamps = ftimes[where : where + count]  # contiguous: the times from ``where`` on
        else:
            idx = list(range(where, where + count)) if type(where) is int else where
            stamps = list(map(ftimes.__getitem__, idx))
            if len(stamps) != count:
                raise ValueError(f"expected {count} times, got {len(stamps)}")
        ts._series.setdefault(str(name), {})[key] = SeriesPoints(stamps, values[at : at + count])
        at += count
    return ts


def nodes_out(state: NodesState) -> dict[str, Any]:
    """The nodes, their Leases and the Lease sampling, as columns."""
    nodes = list(state.nodes.values())
    names = [n.name for n in nodes]
    domains: dict[tuple[str, str, str], int] = {}
    domain = [domains.setdefault((n.region, n.zone, n.rack), len(domains)) for n in nodes]
    since = [n.ready_since for n in nodes]
    lease_names = list(state.leases)
    return {
        "names": names,
        "domains": [list(d) for d in domains],
        "domain": domain,
        "ready": [n.ready.value for n in nodes],
        "since": pack_doubles([0.0 if s is None else s for s in since]),
        "since_none": [i for i, s in enumerate(since) if s is None],
        "flags": [
            UNREACHABLE * n.unreachable_taint
            | NOT_READY * n.not_ready_taint
            | CORDONED * n.unschedulable
            | EXCLUDED * n.exclude_disruption
            for n in nodes
        ],
        "lease_names": None if lease_names == names else lease_names,
        "lease_renews": pack_doubles(list(state.leases.values())),
        "sampling": None if state.sampling is None else list(state.sampling),
    }


def _indexes(items: Any) -> list[int]:
    """Positions in a column (no negative ones, which would count from the end)."""
    if type(items) is not list or not set(map(type, items)) <= {int} or min(items, default=0) < 0:
        raise ValueError("nodes: expected an array of positions")
    return items


def _column(section: dict[str, Any], key: str, n: int) -> list[Any]:
    got = section.get(key, [])
    if type(got) is not list or len(got) != n:
        raise ValueError(f"nodes: expected {n} items in {key}")
    return got


def node_records(section: dict[str, Any]) -> list[ev.NodeRecord]:
    """The node records of :func:`nodes_out`'s data, in order."""
    return nodes_in(section)[0]


def nodes_in(section: dict[str, Any]) -> tuple[list[ev.NodeRecord], Iterator[tuple[Any, ...]]]:
    """The node records of :func:`nodes_out`'s data, in order, and what their domains'
    counts count of each (as :meth:`NodesState.load` reads it), from the columns.
    """
    names = section.get("names", [])
    if type(names) is not list or not set(map(type, names)) <= _STR:
        raise ValueError("nodes: expected an array of names")
    n = len(names)
    domains = [tuple(d) for d in section.get("domains", [])]
    if any(len(d) != 3 or not set(map(type, d)) <= _STR for d in domains):
        raise ValueError("nodes: expected domains [region, zone, rack] of strings")
    where = list(map(domains.__getitem__, _indexes(_column(section, "domain", n))))
    ready = list(map(_READINESS.__getitem__, _column(section, "ready", n)))
    since: list[float | None] = list(unpack_doubles(section.get("since", b"")))
    if len(since) != n:
        raise ValueError(f"nodes: expected {n} ready-since times")
    for i in _indexes(section.get("since_none", [])):
        since[i] = None
    bits = list(map(_FLAG_BITS.__getitem__, _indexes(_column(section, "flags", n))))
    domain_columns = list(zip(*where, strict=True)) if n else [(), (), ()]
    flag_columns = list(zip(*bits, strict=True)) if n else [(), (), (), ()]
    make = builder(ev.NodeRecord)
    records = list(map(make, names, *domain_columns, ready, since, *flag_columns))
    return records, zip(*domain_columns, ready, flag_columns[2], flag_columns[3], strict=True)


def leases_in(section: dict[str, Any], records: list[ev.NodeRecord]) -> dict[str, float]:
    """The Leases' renew times of :func:`nodes_out`'s data (keyed by the node's name
    object where the Lease has a node: renewals look up the same object).
    """
    renews = unpack_doubles(section.get("lease_renews", b"")).tolist()
    names = section.get("lease_names")
    if names is None:
        names = [r.name for r in records]
    elif type(names) is not list or not set(map(type, names)) <= _STR:
        raise ValueError("nodes: expected an array of Lease names")
    else:
        same = {r.name: r.name for r in records}
        names = [same.get(name, name) for name in names]
    if len(names) != len(renews):
        raise ValueError(f"nodes: expected {len(names)} Lease renew times, got {len(renews)}")
    return dict(zip(names, renews, strict=True))
