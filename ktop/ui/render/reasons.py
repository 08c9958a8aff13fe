"""Why data is unknown: reasons collected from an area snapshot and its inputs."""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping

from rich.text import Text

from ktop.model.events import Area
from ktop.model.grading import WARMING_UP
from ktop.model.snapshot import ClusterSnapshot, Freshness
from ktop.model.snapshot_apf import ApfSnapshot, TalkersView
from ktop.model.text import fmt_age, short_instance, truncate
from ktop.model.values import Val
from ktop.ui.render.level import STYLE, Level


def val_reasons(obj: object) -> tuple[str, ...]:
    """Reasons of every unknown :class:`Val` inside ``obj``, first seen first, deduplicated.

    Walks dataclasses, tuples and mappings; also picks up ``error``,
    ``unknown_reason``, ``pods_reason``, ``nodes_reason`` and
    ``metrics_reason`` fields. Reasons found inside a row with an
    ``instance`` are prefixed with it (``etcd-1: connection refused``).
    """
    seen: dict[str, None] = {}
    _walk(obj, seen, "")
    return tuple(seen)


_REASON_FIELDS = ("error", "unknown_reason", "pods_reason", "nodes_reason", "metrics_reason")


_LEAVES = (str, int, float, bool, type(None), enum.Enum)
"""Field values that hold no reason: not walked."""


def _inert(tp: object) -> bool:
    """True when a value of type ``tp`` can hold no reason: a leaf, an enum, a union or
    tuple of such, or a dataclass whose fields are all such (a node record, a renew time).
    A tuple of 30,000 node records is then skipped whole instead of walked record by record.
    """
    if isinstance(tp, type) and issubclass(tp, Val):
        return False  # the one leaf that holds a reason
    if tp is type(None) or (isinstance(tp, type) and issubclass(tp, _LEAVES)):
        return True
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType, tuple):
        return all(a is Ellipsis or _inert(a) for a in typing.get_args(tp))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _inert_dataclass(tp)
    return False


@functools.cache
def _inert_dataclass(cls: type) -> bool:
    own, walked = _fields(cls)
    return not own and not walked


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A dataclass's reason fields, and the other fields that may hold a reason, by name, in
    declaration order (fields whose declared type can hold none are left out).
    """
    names = [f.name for f in dataclasses.fields(cls)]
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):  # a hint that does not resolve: walk every field
        hints = {}
    return (
        tuple(n for n in names if n in _REASON_FIELDS),
        tuple(
            n for n in names if n not in _REASON_FIELDS and not (n in hints and _inert(hints[n]))
        ),
    )


def _add(seen: dict[str, None], prefix: str, reason: str) -> None:
    seen.setdefault(f"{prefix}: {reason}" if prefix and prefix not in reason else reason, None)


def _walk(obj: object, seen: dict[str, None], prefix: str) -> None:
    if isinstance(obj, Val):
        if obj.value is None and obj.reason and not obj.empty:
            _add(seen, prefix, obj.reason)
        return
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        instance = getattr(obj, "instance", "")
        prefix = instance if isinstance(instance, str) and instance else prefix
        own, others = _fields(type(obj))
        # the object's own reasons first: they explain the values below them
        for name in own:
            value = getattr(obj, name)
            if isinstance(value, str) and value:
                _add(seen, prefix, value)
        for name in others:
            value = getattr(obj, name)
            if not isinstance(value, _LEAVES):
                _walk(value, seen, prefix)
        return
    if isinstance(obj, tuple | list):
        for value in obj:
            if not isinstance(value, _LEAVES):
                _walk(value, seen, prefix)
        return
    if isinstance(obj, Mapping):
        for value in obj.values():
            if not isinstance(value, _LEAVES):
                _walk(value, seen, prefix)


def input_errors(freshness: tuple[Freshness, ...]) -> tuple[str, ...]:
    """``name: error`` for every input that failed on its last attempt."""
    return tuple(f"{f.name}: {f.error}" for f in freshness if f.error)


def brief_input_error(f: Freshness) -> str:
    """A short form for panels: the instance without port, and the innermost cause.

    ``apiserver apiserver-1:6443`` failing with ``Get "...": dial tcp ...: connect:
    connection refused`` becomes ``apiserver-1: connection refused``.
    """
    name = short_instance(f.name.split()[-1]) if f.name.strip() else "input"
    return f"{name}: {f.error.rsplit(': ', 1)[-1]}"


_KEPT = 4
"""Snapshots whose reasons are remembered (the one on screen, the one being prepared)."""
_memo: dict[int, tuple[ClusterSnapshot, dict[Area, tuple[str, ...]]]] = {}
"""Per snapshot (by identity, holding it so that its id is not reused): each area's
reasons. Filled by :func:`prepare` in a worker thread, read on the UI loop."""


def prepare(snapshot: ClusterSnapshot) -> None:
    """Find every area's reasons now (in a worker thread, before the frame that shows the
    snapshot): walking 100,000 nodes' racks is then not done on the UI loop.
    """
    for area in Area:
        area_reasons(snapshot, area)


def area_reasons(snapshot: ClusterSnapshot, area: Area) -> tuple[str, ...]:
    """All reasons an area has unknown values: failed inputs first, then values
    (remembered per snapshot: a snapshot is immutable).
    """
    entry = _memo.get(id(snapshot))
    if entry is not None and entry[0] is snapshot and area in entry[1]:
        return entry[1][area]
    found = _area_reasons(snapshot, area)
    if entry is None or entry[0] is not snapshot:
        while len(_memo) >= _KEPT:
            _memo.pop(next(iter(_memo)), None)
        entry = (snapshot, {})
        _memo[id(snapshot)] = entry
    entry[1][area] = found
    return found


def _area_reasons(snapshot: ClusterSnapshot, area: Area) -> tuple[str, ...]:
    failed = [f for f in snapshot.area_freshness(area) if f.error]
    seen: dict[str, None] = dict.fromkeys(input_errors(tuple(failed)))
    part = getattr(snapshot, area.value)
    if isinstance(part, ApfSnapshot):
        # flows and per-instance rows have no seat limit of their own: not shown, not a gap;
        # the top talkers say their own state in the drill-down (they are extra evidence)
        part = dataclasses.replace(part, flows=(), per_instance=(), talkers=TalkersView())
    for reason in val_reasons(part):
        covered = any(f.error in reason for f in failed)
        if not covered:
            seen.setdefault(reason, None)
    return tuple(seen)


def only_warming_up(snapshot: ClusterSnapshot, area: Area) -> bool:
    """True when every reason of the area is a reading still warming up: no input
    failed and nothing is unknown for any other reason. Such a note is not a gap in what
    ktop can see (the reading is graded once it has enough data), so an overview panel
    lets it yield its row to a data row; the drill-down keeps it.
    """
    if any(f.error for f in snapshot.area_freshness(area)):
        return False
    found = area_reasons(snapshot, area)
    return bool(found) and all(_warming_up(r) for r in found)


def _warming_up(reason: str) -> bool:
    return reason.startswith(WARMING_UP) or f": {WARMING_UP} (" in reason


def panel_note(snapshot: ClusterSnapshot, area: Area, width: int) -> Text | None:
    """A one-line note for an overview panel: the first reason, short, and how many more;
    ``? failed: etcd-1: connection refused (+1)`` when an input failed (without the
    word ``failed:`` when only that keeps the reason whole: the border says failed).
    """
    failed = [f for f in snapshot.area_freshness(area) if f.error]
    brief = list(dict.fromkeys(brief_input_error(f) for f in failed))
    reasons = area_reasons(snapshot, area)
    if not reasons:
        return None
    hidden = len(reasons) - 1
    more = f" (+{hidden})" if hidden else ""
    room = max(4, width - 2 - len(more))
    shown = reasons[0]
    if brief:  # the word where it fits; else the reason whole (the border says failed)
        word = f"failed: {brief[0]}"
        shown = word if len(word) <= room or len(brief[0]) > room else brief[0]
    text = "? " + truncate(shown, room) + more
    return Text(text, style=STYLE[Level.UNKNOWN])


def drill_reason_lines(snapshot: ClusterSnapshot, area: Area) -> tuple[Text, ...]:
    """Header lines for a drill-down, one per failed input or unknown reason.

    e.g. ``etcd: failed: etcd-1: connection refused (last read 2m ago)`` for an input
    that failed, ``scheduler: unknown — pending-pods not read by this source`` for a
    value without its input's failure.
    """
    lines: list[Text] = []
    shown: list[str] = []
    for f in snapshot.area_freshness(area):
        if not f.error:
            continue
        age = f.age_s(snapshot.at)
        stale = "never read" if age is None else f"last read {fmt_age(age)} ago"
        text = f"{area.value}: failed: {f.name}: {f.error} ({stale})"
        lines.append(Text(text, style=STYLE[Level.UNKNOWN]))
        shown.append(f"{f.name}: {f.error}")
    for reason in area_reasons(snapshot, area):
        if reason in shown:
            continue
        lines.append(Text(f"{area.value}: unknown — {reason}", style=STYLE[Level.UNKNOWN]))
    for f in snapshot.area_freshness(area):
        if f.note:
            lines.append(
                Text(f"{area.value}: warning — {f.name}: {f.note}", style=STYLE[Level.WARN])
            )
    return tuple(lines)
