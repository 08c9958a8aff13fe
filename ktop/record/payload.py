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


def unpack(payload: bytes) -> Any:
    """The one msgpack value ``payload`` holds; :class:`RecordError` when it holds more."""
    try:
        return msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except msgpack.ExtraData as exc:
        extra = len(exc.extra)
        raise RecordError(
            f"expected one msgpack value, found {extra} more bytes after it "
            f"(at +{len(payload) - extra})"
        ) from None
    except (ValueError, msgpack.UnpackException) as exc:
        raise RecordError(f"expected msgpack data ({str(exc) or 'not valid msgpack'})") from None


def stream(payload: bytes) -> Iterator[Any]:
    """The msgpack values ``payload`` holds one after another (a chunk's records)."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=len(payload) + 1)
    unpacker.feed(payload)
    yield from unpacker


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
