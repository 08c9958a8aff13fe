"""Taking a recording apart into frames and putting it back together, for crafted files.

A test changes a frame's payload (a decoded msgpack value or raw bytes) and rebuilds the
file with valid checksums, so the reader meets the fault past its CRC checks, where a
crafted file (not a damaged one) puts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import zstandard

from ktop.record.format import (
    FRAME,
    FRAME_SIZE,
    PREAMBLE,
    Codec,
    Kind,
    pack_frame,
    pack_preamble,
    pack_trailer,
)


@dataclass
class Frame:
    """One frame: its kind, codec, count, times and uncompressed payload."""

    kind: Kind
    codec: Codec
    count: int
    first: float
    last: float
    raw: bytes
    """The payload after decompression."""

    @property
    def value(self) -> Any:
        """The payload as one msgpack value."""
        return msgpack.unpackb(self.raw, raw=False, strict_map_key=False)

    def values(self) -> list[Any]:
        """The payload as a stream of msgpack values (a chunk's records)."""
        u = msgpack.Unpacker(raw=False, strict_map_key=False)
        u.feed(self.raw)
        return list(u)


def pack(value: Any) -> bytes:
    """``value`` as msgpack, as the writer packs it."""
    return bytes(msgpack.packb(value, use_bin_type=True))


def split(path: Path) -> list[Frame]:
    """Every frame of an intact recording up to its index (which is left out)."""
    data = path.read_bytes()
    offset = PREAMBLE.size
    out: list[Frame] = []
    dctx = zstandard.ZstdDecompressor()
    while offset + FRAME_SIZE <= len(data):
        _, kind, codec, _, length, count, first, last, _, _ = FRAME.unpack_from(data, offset)
        k = Kind(kind)
        if k is Kind.INDEX:
            break
        payload = data[offset + FRAME_SIZE : offset + FRAME_SIZE + length]
        c = Codec(codec)
        raw = dctx.decompress(payload) if c is Codec.ZSTD else payload
        out.append(Frame(k, c, count, first, last, raw))
        offset += FRAME_SIZE + length
    return out


def _marker(f: Frame) -> Any:
    """A marker frame's value as the index lists it (a crafted one as it is, if it decodes)."""
    try:
        return f.value
    except ValueError:  # msgpack's errors are ValueErrors
        return None


def join(frames: list[Frame], *, index: bool = True) -> bytes:
    """A recording of ``frames`` (with an index and a trailer unless ``index`` is false)."""
    cctx = zstandard.ZstdCompressor(level=1)
    out = bytearray(pack_preamble())
    entries = []
    for f in frames:
        if f.kind is not Kind.HEADER:  # the index lists the frames after the header
            entries.append([f.kind.value, len(out), f.first, f.last, f.count])
        payload = cctx.compress(f.raw) if f.codec is Codec.ZSTD else f.raw
        out += pack_frame(f.kind, f.codec, payload, f.count, f.first, f.last)
    if index:
        body = {"frames": entries, "markers": [_marker(f) for f in frames if f.kind is Kind.MARKER]}
        at = len(out)
        out += pack_frame(Kind.INDEX, Codec.NONE, pack(body), 0, 0.0, 0.0)
        out += pack_trailer(at)
    return bytes(out)


def record_small(path: Path, *, seconds: int = 60, nodes: int = 12, marks: int = 0) -> Path:
    """A short simulator recording (chunks of 10 s, keyframes every 30 s), with a marker
    ``note N`` every ``seconds // (marks + 1)`` seconds when ``marks`` is given.
    """
    from ktop.hub import Hub
    from ktop.model.cluster import ClusterModel
    from ktop.record.session import Recorder
    from ktop.record.writer import WriterSettings
    from ktop.sources.sim.simulator import Simulator

    sim = Simulator("zone-outage", nodes=nodes, zones=3)
    hub = Hub(ClusterModel())
    rec = Recorder(str(path), hub.model, source={"kind": "demo", "context": "sim/zone-outage"})
    rec._writer.settings = WriterSettings(chunk_s=10.0, keyframe_s=30.0)  # type: ignore[union-attr]
    hub.add_sink(rec)
    hub.ingest(sim.start())
    every = seconds // (marks + 1) if marks else 0
    for k in range(1, seconds + 1):
        hub.ingest(sim.advance(1.0))
        if every and k % every == 0 and k // every <= marks:
            rec.mark(f"note {k // every}")
    rec.stop()
    return path
