"""Parsing of ``/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1``,
folded per client as it is read.

Like the other APF dumps it is tabwriter text with cells joined by ``",\\t"``: split
on ``,`` and trim. The first line names the columns, which have changed over the
releases (``StartTime`` since 1.28, when executing requests began to be listed
too; the request details only with ``includeRequestDetails``), so every column is
looked up by name. A row is one request: queued (its index in the queue is 0 or
more) or executing (``-1``).

A dump of a saturated level can hold thousands of rows; ktop keeps only their fold
per (priority level, flow schema, user, flow distinguisher): counts, seats, the
oldest wait and the commonest verb and resource (:class:`~ktop.model.events.ApfTalker`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from ktop.model.events import ApfTalker

REQUESTS_PATH = "/debug/api_priority_and_fairness/dump_requests"
REQUESTS_QUERY = (("includeRequestDetails", "1"),)
"""The query that adds user, verb, path, namespace and resource to every row (1.19+)."""

MAX_TALKERS = 200
"""Clients kept per reading, the heaviest first; the rest are summed per priority level
into one :data:`OTHERS` row, so that shares still add up to the level's whole."""
OTHERS = "(others)"

_REQUIRED = ("PriorityLevelName", "FlowSchemaName", "RequestIndexInQueue", "ArriveTime")
_ZERO_TIME = "0001-01-01T00:00:00Z"
"""What Go prints for an unset time (``StartTime`` of a queued request)."""


class ApfRequestsError(ValueError):
    """The text is not a ``dump_requests`` dump."""


@dataclass(frozen=True, slots=True)
class RequestsDump:
    """One dump, folded per client."""

    talkers: tuple[ApfTalker, ...]
    requests: int
    executing_listed: bool
    skipped: int


@dataclass(slots=True)
class _Fold:
    executing: int = 0
    executing_seats: int = 0
    waiting: int = 0
    waiting_seats: int = 0
    oldest_arrival: float | None = None
    what: Counter[str] = field(default_factory=Counter)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split(",")]


def parse_time(text: str) -> float | None:
    """An RFC 3339 time (nanoseconds allowed) as Unix seconds; ``None`` for Go's zero
    time or anything unreadable.
    """
    if not text or text == _ZERO_TIME:
        return None
    t = text.strip()
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    head, dot, rest = t.partition(".")
    if dot:  # Python reads at most microseconds
        digits = len(rest) - len(rest.lstrip("0123456789"))
        rest = rest[:digits][:6] + rest[digits:]
        t = f"{head}.{rest}"
    try:
        return datetime.fromisoformat(t).timestamp()
    except ValueError:
        return None


def _int(text: str) -> int:
    return int(text) if text.lstrip("-").isdigit() else int(float(text))


def what_of(verb: str, resource: str, subresource: str) -> str:
    """``list pods``, ``get pods/status``; the verb alone for non-resource paths."""
    if not resource:
        return verb
    return f"{verb} {resource}/{subresource}" if subresource else f"{verb} {resource}"


def parse_requests(text: str, at: float) -> RequestsDump:
    """Parse and fold a ``dump_requests`` text read at Unix time ``at``.

    Raises :class:`ApfRequestsError` when there is no header line with the
    required columns. Rows with the wrong number of cells or unreadable numbers are
    counted in ``skipped``, not read.
    """
    lines = iter(text.splitlines())
    header: list[str] | None = None
    for line in lines:
        cells = _cells(line)
        if all(c in cells for c in _REQUIRED):
            header = cells
            break
        if line.strip():
            raise ApfRequestsError(
                f"no dump_requests header (columns {', '.join(_REQUIRED)}); read {line[:60]!r}"
            )
    if header is None:
        raise ApfRequestsError("empty text: no dump_requests header")
    col = {name: i for i, name in enumerate(header)}
    executing_listed = "StartTime" in col

    def cell(cells: list[str], name: str) -> str:
        i = col.get(name)
        return cells[i] if i is not None else ""

    folds: dict[tuple[str, str, str, str], _Fold] = {}
    requests = skipped = 0
    for line in lines:
        if not line.strip():
            break  # the end of this block (a saved session may hold more after it)
        cells = _cells(line)
        if len(cells) != len(header):
            skipped += 1
            continue
        try:
            index = _int(cell(cells, "RequestIndexInQueue"))
            seats = _int(cell(cells, "InitialSeats") or "1")
        except ValueError:
            skipped += 1
            continue
        requests += 1
        user = cell(cells, "UserName")
        key = (
            cell(cells, "PriorityLevelName"),
            cell(cells, "FlowSchemaName"),
            user,
            cell(cells, "FlowDistingsher") or cell(cells, "FlowDistinguisher"),
        )
        f = folds.setdefault(key, _Fold())
        if index < 0:
            f.executing += 1
            f.executing_seats += max(seats, 0)
        else:
            f.waiting += 1
            f.waiting_seats += max(seats, 0)
            arrived = parse_time(cell(cells, "ArriveTime"))
            if arrived is not None and (f.oldest_arrival is None or arrived < f.oldest_arrival):
                f.oldest_arrival = arrived
        f.what[
            what_of(
                cell(cells, "Verb"), cell(cells, "Resource"), cell(cells, "SubResource")
            ).lower()
        ] += 1
    talkers = [
        ApfTalker(
            priority_level=pl,
            flow_schema=fs,
            user=user,
            distinguisher=dist,
            executing=f.executing,
            executing_seats=f.executing_seats,
            waiting=f.waiting,
            waiting_seats=f.waiting_seats,
            oldest_wait_s=0.0 if f.oldest_arrival is None else max(0.0, at - f.oldest_arrival),
            what=min(f.what.items(), key=lambda kv: (-kv[1], kv[0]))[0] if f.what else "",
        )
        for (pl, fs, user, dist), f in folds.items()
    ]
    talkers.sort(key=lambda t: (-(t.executing_seats + t.waiting_seats), t.priority_level, t.user))
    return RequestsDump(_capped(talkers), requests, executing_listed, skipped)


def _capped(talkers: list[ApfTalker]) -> tuple[ApfTalker, ...]:
    """The heaviest :data:`MAX_TALKERS` clients, and one :data:`OTHERS` row per priority
    level summing the rest (so a level's shares still add up to its whole).
    """
    if len(talkers) <= MAX_TALKERS:
        return tuple(talkers)
    rest: dict[str, list[int]] = {}
    oldest: dict[str, float] = {}
    for t in talkers[MAX_TALKERS:]:
        acc = rest.setdefault(t.priority_level, [0, 0, 0, 0])
        for i, v in enumerate((t.executing, t.executing_seats, t.waiting, t.waiting_seats)):
            acc[i] += v
        oldest[t.priority_level] = max(oldest.get(t.priority_level, 0.0), t.oldest_wait_s)
    others = tuple(
        ApfTalker(
            priority_level=pl,
            flow_schema="",
            user=OTHERS,
            distinguisher="",
            executing=rest[pl][0],
            executing_seats=rest[pl][1],
            waiting=rest[pl][2],
            waiting_seats=rest[pl][3],
            oldest_wait_s=oldest[pl],
            what="",
        )
        for pl in sorted(rest)
    )
    return tuple(talkers[:MAX_TALKERS]) + others
