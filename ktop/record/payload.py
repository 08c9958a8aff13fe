"""A frame's payload read back: its msgpack values, decompressed within a limit.

A recording is untrusted input, so nothing here trusts a frame: a payload must hold
exactly the msgpack value(s) expected, decompression stops at a limit before making more
bytes, and :data:`DECODE_ERRORS` lists what decoding a crafted frame can raise (each
loses only that frame, never the whole recording).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import msgpack
import zstandard

from ktop.files import MiB
from ktop.input_limits import (
    MAX_EVENTS_PER_BYTE,
    MAX_INFLATE_RATIO,
    MAX_VALUES_PER_BYTE,
    VALUES_FLOOR,
)
from ktop.record.strict import RecordError

DECODE_ERRORS = (
    zstandard.ZstdError,
    ValueError,  # RecordError, msgpack's errors, int/float of a bad value, Enum lookups
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    OverflowError,
    struct.error,
    msgpack.UnpackException,
)
"""What decoding a crafted frame can raise; each loses only that frame."""


def most_values(stored: int) -> int:
    """The most msgpack values a frame of ``stored`` bytes may decode to."""
    return MAX_VALUES_PER_BYTE.value * stored + VALUES_FLOOR


_TOO_LONG = "exceeds max_"
"""How msgpack says an array or a map is longer than its ``max_array_len`` or ``max_map_len``."""


class _Budget:
    """Counts the values msgpack makes (each array or map as it is finished: itself and
    its items) and stops decoding once there are more than ``most``: the objects a frame
    makes in memory are bounded by its stored size, not by what it decompresses to.
    """

    __slots__ = ("left", "most", "stored")

    def __init__(self, stored: int) -> None:
        self.stored = stored
        self.most = most_values(stored)
        self.left = self.most

    def refusal(self) -> RecordError:
        """The error for a frame decoding to more values than it may."""
        return RecordError(
            f"expected {MAX_VALUES_PER_BYTE.expected} ({self.most:,} values from "
            f"{self.stored:,} bytes), it decodes to more"
        )

    def checked(self, exc: Exception) -> RecordError:
        """The msgpack error ``exc`` as a :class:`RecordError` (an array or a map longer
        than :attr:`most` is the frame's refusal).
        """
        if isinstance(exc, RecordError):
            return exc
        if _TOO_LONG in str(exc):
            return self.refusal()
        return RecordError(f"expected msgpack data ({str(exc) or 'not valid msgpack'})")

    def _spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise self.refusal()

    def array(self, items: list[Any]) -> list[Any]:
        """The ``list_hook``: counts an array and its items."""
        self._spend(len(items) + 1)
        return items

    def map(self, entries: dict[Any, Any]) -> dict[Any, Any]:
        """The ``object_hook``: counts a map, its keys and its values."""
        self._spend(2 * len(entries) + 1)
        return entries

    def options(self) -> dict[str, Any]:
        """The unpacker options that bound each array and map and count what they hold."""
        return {
            "raw": False,
            "strict_map_key": False,
            "max_array_len": self.most,
            "max_map_len": self.most,
            "list_hook": self.array,
            "object_hook": self.map,
        }


def unpack(payload: bytes, stored: int | None = None) -> Any:
    """The one msgpack value ``payload`` holds; :class:`RecordError` when it holds more, or
    more values than a frame of ``stored`` bytes may (default: the payload's length).
    """
    budget = _Budget(len(payload) if stored is None else stored)
    try:
        return msgpack.unpackb(payload, **budget.options())
    except msgpack.ExtraData as exc:
        extra = len(exc.extra)
        raise RecordError(
            f"expected one msgpack value, found {extra} more bytes after it "
            f"(at +{len(payload) - extra})"
        ) from None
    except (ValueError, msgpack.UnpackException) as exc:
        raise budget.checked(exc) from None


def stream(payload: bytes, stored: int | None = None) -> Iterator[Any]:
    """The msgpack values ``payload`` holds one after another (a chunk's records), no more
    values in all than a frame of ``stored`` bytes may decode to (default: the payload's
    length).
    """
    budget = _Budget(len(payload) if stored is None else stored)
    unpacker = msgpack.Unpacker(max_buffer_size=len(payload) + 1, **budget.options())
    unpacker.feed(payload)
    try:
        yield from unpacker
    except ValueError as exc:
        raise budget.checked(exc) from None


INFLATE_FLOOR = 8 * MiB
"""What any compressed frame may decompress to, however small (:data:`MAX_INFLATE_RATIO`
per stored byte beyond): twice the records at which the writer cuts a chunk, so that a
chunk of repetitive events (a Prometheus poll every two seconds compresses over 64 to 1)
is read back."""


def most_inflated(stored: int) -> int:
    """The most a compressed frame of ``stored`` bytes may decompress to."""
    return MAX_INFLATE_RATIO.value * stored + INFLATE_FLOOR


EVENTS_FLOOR = 1_000
"""The events any chunk may declare, however small (:data:`MAX_EVENTS_PER_BYTE` per stored
byte beyond)."""


def most_events(stored: int) -> int:
    """The most events a chunk of ``stored`` bytes may declare."""
    return MAX_EVENTS_PER_BYTE.value * stored + EVENTS_FLOOR


def readable_compressed(raw: bytes, stored: int, events: int | None) -> bool:
    """Whether a reader takes ``raw`` (a chunk's records when ``events`` is their count,
    else one value) stored compressed in ``stored`` bytes: within what it inflates, the
    events it may declare and the values it decodes. ktop's own writer stores a frame
    that is not uncompressed instead, so that what it wrote is never refused.
    """
    if len(raw) > most_inflated(stored):
        return False
    if events is not None and events > most_events(stored):
        return False
    if len(raw) <= most_values(stored):
        return True  # every value takes a byte at least
    try:
        if events is None:
            unpack(raw, stored)
        else:
            for _ in stream(raw, stored):
                pass
    except RecordError:
        return False
    return True


def inflate(dctx: zstandard.ZstdDecompressor, raw: bytes, limit: int) -> bytes:
    """A zstandard frame decompressed, refusing more than ``limit`` bytes before making them."""
    declared = zstandard.frame_content_size(raw)
    if declared > limit:
        raise RecordError(
            f"expected at most {limit:,} bytes uncompressed, the frame declares {declared:,}"
        )
    if declared >= 0:
        return dctx.decompress(raw)
    out = bytearray()
    with dctx.stream_reader(raw) as reader:
        while block := reader.read(MiB):
            out += block
            if len(out) > limit:
                raise RecordError(f"expected at most {limit:,} bytes uncompressed")
    return bytes(out)
