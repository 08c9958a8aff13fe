"""The byte layout of a recording: preamble, frames, trailer (see docs/recording-format.md).

A recording is a preamble followed by frames. Every frame has a fixed
40-byte header that carries its own checksum and the checksum of its
payload, so a reader can tell a complete frame from a cut or damaged one
and can find the next frame by its sync bytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from enum import Enum

MAGIC = b"KTOPREC\x00"
"""The first 8 bytes of every recording."""
FORMAT_VERSION = 3
"""The version this ktop writes (2: a scrape may be its values only, ``~S``; 3: keyframes
hold the series and the nodes as columns, model state version 2)."""
READABLE_VERSIONS = frozenset({1, 2, 3})
"""The versions this ktop reads (older files are read as they always were)."""
PREAMBLE = struct.Struct("<8sHH")
"""magic, format version, reserved (0)."""

SYNC = b"KTfr"
FRAME = struct.Struct("<4sBBHIIddII")
"""sync, kind, codec, reserved, payload length, record count, first time, last time,
payload CRC-32, header CRC-32 (of the 36 bytes before it)."""
FRAME_SIZE = FRAME.size

LATEST_TIME = 253_402_300_799.0
"""The last second of the year 9999: a time in a recording is between 0 and this (later
times cannot be shown as dates)."""

TRAILER = struct.Struct("<4sQI")
"""``KTix``, offset of the index frame, CRC-32 of the 12 bytes before it."""
TRAILER_SYNC = b"KTix"


class Kind(Enum):
    """What a frame holds."""

    HEADER = ord("H")
    CHUNK = ord("C")
    KEYFRAME = ord("K")
    INDEX = ord("I")
    MARKER = ord("M")


class Codec(Enum):
    """How a frame's payload is compressed."""

    NONE = 0
    ZSTD = 1


class FormatError(Exception):
    """The file is not a recording this ktop can read; the message says why."""


@dataclass(frozen=True, slots=True)
class FrameHeader:
    """A decoded frame header (positions are byte offsets in the file)."""

    kind: Kind
    codec: Codec
    length: int
    count: int
    first: float
    last: float
    crc: int
    offset: int
    """Where the frame header starts."""

    @property
    def end(self) -> int:
        """Where the next frame starts."""
        return self.offset + FRAME_SIZE + self.length


def pack_preamble(version: int = FORMAT_VERSION) -> bytes:
    """The preamble of a file of ``version``."""
    return PREAMBLE.pack(MAGIC, version, 0)


def check_preamble(data: bytes) -> int:
    """The format version of a file starting with ``data``, or a clear error."""
    if len(data) < PREAMBLE.size:
        raise FormatError("not a ktop recording: the file is shorter than its preamble")
    magic, version, _ = PREAMBLE.unpack(data[: PREAMBLE.size])
    if magic != MAGIC:
        raise FormatError("not a ktop recording: it does not start with KTOPREC")
    if version not in READABLE_VERSIONS:
        known = ", ".join(str(v) for v in sorted(READABLE_VERSIONS))
        newer = "newer" if version > max(READABLE_VERSIONS) else "older"
        hint = "upgrade ktop to replay it" if newer == "newer" else "convert it with an older ktop"
        raise FormatError(
            f"recording format version {version} is {newer} than this ktop reads "
            f"(format version {known}); {hint}"
        )
    return int(version)


def pack_frame(
    kind: Kind, codec: Codec, payload: bytes, count: int, first: float, last: float
) -> bytes:
    """A frame: header and payload."""
    head = FRAME.pack(
        SYNC, kind.value, codec.value, 0, len(payload), count, first, last, zlib.crc32(payload), 0
    )
    head = head[:-4] + struct.pack("<I", zlib.crc32(head[:-4]))
    return head + payload


def unpack_frame_header(data: bytes, offset: int) -> FrameHeader | None:
    """The frame header in ``data`` (40 bytes), or ``None`` if it is damaged or not one
    (its times must be in order and between 0 and :data:`LATEST_TIME`).
    """
    if len(data) < FRAME_SIZE:
        return None
    sync, kind, codec, _, length, count, first, last, crc, hcrc = FRAME.unpack(data[:FRAME_SIZE])
    if sync != SYNC or zlib.crc32(data[: FRAME_SIZE - 4]) != hcrc:
        return None
    if not 0.0 <= first <= last <= LATEST_TIME:  # also false for NaN
        return None
    try:
        return FrameHeader(Kind(kind), Codec(codec), length, count, first, last, crc, offset)
    except ValueError:
        return None


def pack_trailer(index_offset: int) -> bytes:
    """The trailer that points at the index frame."""
    body = struct.pack("<4sQ", TRAILER_SYNC, index_offset)
    return body + struct.pack("<I", zlib.crc32(body))


def unpack_trailer(data: bytes) -> int | None:
    """The index offset from a trailer, or ``None`` when there is no valid trailer."""
    if len(data) != TRAILER.size:
        return None
    sync, offset, crc = TRAILER.unpack(data)
    if sync != TRAILER_SYNC or zlib.crc32(data[:12]) != crc:
        return None
    return int(offset)
