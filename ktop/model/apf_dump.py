"""Parsing of ``/debug/api_priority_and_fairness/dump_priority_levels``.

The apiserver writes this through a ``tabwriter`` with cells joined by
``",\\t"``, so it reads as CSV padded with spaces: split on ``,`` and trim.
The first line names the columns. Kubernetes <= 1.26 wrote six columns and
printed ``<none>`` in every cell of the ``exempt`` row (it had no queue
set); 1.27 added four cumulative counters. Columns are looked up by name,
so their order does not matter and unknown extra columns are ignored.

The text may hold other blocks too (``dump_queues``, ``dump_requests``,
``### GET ...`` separators, as in a saved debugging session): only the
priority-levels block is read, up to a blank line or the next header.
"""

from __future__ import annotations

from ktop.model.events import ApfLevelDump


class ApfDumpError(ValueError):
    """The dump is not in any known format."""


MAX_LINE_CHARS = 4096
"""A row longer than this is not a priority level (real rows are < 200 characters)."""
MAX_TEXT_CHARS = 16 << 20
"""A dump larger than this is refused (real ones are a few KiB)."""


NONE_CELL = "<none>"
"""What <= 1.26 printed for every cell of a level without a queue set."""

_NAME = "PriorityLevelName"
_REQUIRED = (
    "PriorityLevelName",
    "ActiveQueues",
    "IsIdle",
    "IsQuiescing",
    "WaitingRequests",
    "ExecutingRequests",
)
_COUNTERS = (
    "DispatchedRequests",
    "RejectedRequests",
    "TimedoutRequests",
    "CancelledRequests",
)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split(",")]


def _is_levels_header(cells: list[str]) -> bool:
    return len(cells) >= len(_REQUIRED) and all(c in cells for c in _REQUIRED)


def parse_priority_levels(text: str) -> tuple[ApfLevelDump, ...]:
    """Parse a ``dump_priority_levels`` text (6-column <=1.26 or 10-column >=1.27 form).

    Counters absent from the 6-column form, and any ``<none>`` cell, are
    ``None``. Raises :class:`ApfDumpError` when no priority-levels header is
    found or a row of the block cannot be read (the message says which line
    and why).
    """
    if len(text) > MAX_TEXT_CHARS:
        raise ApfDumpError(f"dump is larger than {MAX_TEXT_CHARS} characters")
    lines = text.splitlines()
    start = None
    columns: dict[str, int] = {}
    for index, line in enumerate(lines):
        if not line.lstrip().startswith(_NAME) or len(line) > MAX_LINE_CHARS:
            continue
        cells = _cells(line)
        if cells[0] == _NAME and _is_levels_header(cells):
            start = index
            columns = {name: i for i, name in enumerate(cells)}
            break
    if start is None:
        first = next((ln.strip() for ln in lines if ln.strip()), "")
        raise ApfDumpError(
            "no dump_priority_levels header (a line starting "
            f"'{_NAME}, ActiveQueues, IsIdle, ...') found; first line: {first[:80]!r}"
        )
    width = len(columns)
    levels: list[ApfLevelDump] = []
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if not line.strip() or line.lstrip().startswith("#"):
            break
        if len(line) > MAX_LINE_CHARS:
            raise ApfDumpError(f"line {index + 1}: longer than {MAX_LINE_CHARS} characters")
        cells = _cells(line)
        if cells[0] == _NAME:
            break  # the header of another dump
        if len(cells) != width:
            raise ApfDumpError(
                f"line {index + 1}: {len(cells)} cells where the header has {width}: {line[:120]!r}"
            )
        try:
            levels.append(_level(cells, columns))
        except ValueError as exc:
            raise ApfDumpError(f"line {index + 1}: {exc}") from None
    return tuple(levels)


def _level(cells: list[str], columns: dict[str, int]) -> ApfLevelDump:
    def cell(name: str) -> str | None:
        col = columns.get(name)
        if col is None:
            return None
        value = cells[col]
        return None if value == NONE_CELL else value

    counters = [_int(name, cell(name)) for name in _COUNTERS]
    return ApfLevelDump(
        priority_level=cells[columns[_NAME]],
        active_queues=_int("ActiveQueues", cell("ActiveQueues")),
        is_idle=_bool("IsIdle", cell("IsIdle")),
        is_quiescing=_bool("IsQuiescing", cell("IsQuiescing")),
        waiting_requests=_int("WaitingRequests", cell("WaitingRequests")),
        executing_requests=_int("ExecutingRequests", cell("ExecutingRequests")),
        dispatched_requests=counters[0],
        rejected_requests=counters[1],
        timedout_requests=counters[2],
        cancelled_requests=counters[3],
    )


def _int(column: str, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{column} is not an integer: {value!r}") from None


def _bool(column: str, value: str | None) -> bool | None:
    if value is None:
        return None
    if value == "true":
        return True
    if value == "false":
        return False
    raise ValueError(f"{column} is not true or false: {value!r}")
