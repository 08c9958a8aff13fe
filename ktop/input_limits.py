"""The limits of every parser ktop runs on input it did not write, in one place.

A file's size is bounded by :mod:`ktop.files` before it is read; what is inside is bounded
here: how long a number may be, how deep a document may nest, how long a line, a label or
a word may be, how much time a recording may span. Each parser imports its limit from here
and names it in its error ("expected ..."), and ``docs/security.md``'s table of parser
limits is generated from :data:`LIMITS` (``make docs``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class InputLimit:
    """One bound on what a parser reads, and what the input was expected to be."""

    name: str
    """Short name, as in the docs table."""
    value: int
    unit: str
    applies_to: str
    """Which inputs it bounds."""
    expected: str
    """What a well-formed input looks like, for the error message ("expected ...")."""


MAX_NUMBER_DIGITS = InputLimit(
    "number length",
    100,
    "digits",
    "JSON and TOML: config.toml, themes, bundle files, exec plugin output",
    "numbers of at most 100 digits",
)
MAX_NESTING = InputLimit(
    "nesting",
    64,
    "levels",
    "TOML (config.toml, themes); JSON is bounded by its parser's recursion limit",
    "tables and arrays nested at most 64 levels deep",
)
MAX_REDACT_WORD = InputLimit(
    "redacted word",
    253,
    "characters",
    "free text of a recording copied with --redact (messages, reasons, marker notes): "
    "a longer word is replaced whole, which bounds the work per character",
    "words of at most 253 characters (the longest DNS or Kubernetes name)",
)

MAX_RECORDING_SPAN = InputLimit(
    "recording span",
    366 * 86_400,
    "seconds",
    "recordings: from the first chunk's first time to the last frame's last time",
    "a recording spanning at most 366 days",
)
MAX_INFLATE_RATIO = InputLimit(
    "decompressed size",
    64,
    "bytes per stored byte (and 8 MiB)",
    "recordings: each compressed frame (ktop's own compress about 18 to 1)",
    "a frame decompressing to at most 64 bytes per stored byte",
)
MAX_EVENTS_PER_BYTE = InputLimit(
    "events per byte",
    4,
    "events per stored byte (and 1,000)",
    "recordings: the events a chunk declares (ktop's own hold under 0.1 per byte)",
    "a chunk of at most 4 events per stored byte",
)
MAX_VALUES_PER_BYTE = InputLimit(
    "decoded values",
    8,
    "msgpack values per stored byte (and 65,536)",
    "recordings: each frame's msgpack values, nested ones included (ktop's own hold under 3.5 "
    "per byte)",
    "a frame decoding to at most 8 msgpack values per stored byte",
)
VALUES_FLOOR = 65_536
"""The msgpack values any frame may decode to, however small (:data:`MAX_VALUES_PER_BYTE`
per stored byte beyond)."""
BYTES_PER_VALUE = 48
"""The most memory one decoded msgpack value takes in Python, its slot in its array or map
included (an empty array: 56 bytes and a slot, counted twice: as a value and an item)."""
READ_MEMORY_PER_BYTE = MAX_VALUES_PER_BYTE.value * BYTES_PER_VALUE + 2 * MAX_INFLATE_RATIO.value
"""Reading a recording (opening it, seeking, ``replay --info``, ``triage --recording``) takes
at most this many bytes of memory per byte of the file, beyond :data:`READ_MEMORY_FLOOR`:
one frame's decoded values, and its decompressed payload twice (at most
:data:`MAX_INFLATE_RATIO` per stored byte)."""
READ_MEMORY_FLOOR = 32 << 20
"""The memory reading a recording may take whatever its size: the model it rebuilds, and
the floors of one frame (8 MiB decompressed, twice; :data:`VALUES_FLOOR` values)."""

MAX_JOURNAL_EVENTS = InputLimit(
    "journal event count",
    100_000_000,
    "events",
    "a recording's chunk journal (FILE.ktrec.tail): each entry's count of events",
    "an event count from 0 to 100,000,000, never less than the entry before",
)

LIMITS: tuple[InputLimit, ...] = (
    MAX_NUMBER_DIGITS,
    MAX_NESTING,
    MAX_RECORDING_SPAN,
    MAX_INFLATE_RATIO,
    MAX_EVENTS_PER_BYTE,
    MAX_VALUES_PER_BYTE,
    MAX_JOURNAL_EVENTS,
    MAX_REDACT_WORD,
)
"""Every parser limit, in the order the docs list them."""


def limits_markdown() -> str:
    """The table of :data:`LIMITS` for ``docs/security.md`` (``make docs`` writes it)."""
    rows = [f"| {lim.name} | {lim.value:,} {lim.unit} | {lim.applies_to} |" for lim in LIMITS]
    return "\n".join(["| limit | at most | applies to |", "|---|---|---|", *rows])
