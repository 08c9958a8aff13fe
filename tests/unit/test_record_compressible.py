"""ktop's own recordings are always read back whole: a chunk of repetitive events (the same
scrape every two seconds, as a Prometheus poll gives) compresses beyond the reader's
ratio limit for untrusted frames; it is read within the floor any frame may have, and a
frame that would exceed even that is stored uncompressed rather than lost.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from ktop.input_limits import MAX_INFLATE_RATIO
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.record import payload as payload_module
from ktop.record.format import Codec, FrameHeader, Kind
from ktop.record.payload import readable_compressed
from ktop.record.reader import Recording
from ktop.record.writer import RecordingWriter, WriterSettings

TARGET = ev.Target(ev.Component.APISERVER, "10.0.0.1:6443")
FEW_LONG = tuple(
    ev.Sample("apiserver_request_total", (("code", "200"), ("resource", f"r{i}" * 500)), 5.0)
    for i in range(20)
)
"""A scrape of few values and many bytes: it compresses past 64 to 1 within the values
a reader decodes per stored byte."""
MANY_SHORT = tuple(
    ev.Sample("apiserver_request_total", (("code", "200"), ("resource", f"r{i}")), 5.0)
    for i in range(400)
)
"""A scrape of many short values: compressed, it would decode to more values per stored
byte than a reader takes."""


def _record(path: Path, samples: tuple[ev.Sample, ...], scrapes: int = 200) -> list[ev.Event]:
    """One chunk of ``scrapes`` identical scrapes two seconds apart."""
    model = ClusterModel()
    writer = RecordingWriter(str(path), model, source={}, settings=WriterSettings(1e6, 1e6))
    written: list[ev.Event] = []
    for n in range(scrapes):
        batch: list[ev.Event] = [ev.MetricsScraped(2.0 * n + 1.0, TARGET, samples)]
        model.apply_all(batch)
        writer.append(batch)
        written += batch
    writer.close()
    return written


def _read(path: Path) -> tuple[FrameHeader, bytes, list[ev.Event]]:
    """The recording's one chunk, its records, and every event read back (no fault)."""
    with Recording(str(path)) as rec:
        (chunk,) = [h for h in rec.frames if h.kind is Kind.CHUNK]
        raw = rec._payload(chunk)
        read = rec.cursor(rec.start - 1.0).advance(rec.end)
        assert not rec.faults and not rec.gaps, rec.faults
    return chunk, raw, read


def test_a_chunk_compressed_beyond_the_ratio_is_read_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "repetitive.ktrec"
    written = _record(path, FEW_LONG)
    chunk, raw, read = _read(path)
    # the case this guards (a Prometheus poll's chunk was refused so): compressed past
    # what the ratio alone allows, stored compressed all the same, and read
    assert chunk.codec is Codec.ZSTD
    assert len(raw) > MAX_INFLATE_RATIO.value * chunk.length, (len(raw), chunk.length)
    assert read == written


def test_a_chunk_a_reader_would_refuse_compressed_is_stored_plain(tmp_path: Path) -> None:
    path = tmp_path / "plain.ktrec"
    written = _record(path, MANY_SHORT)
    chunk, raw, read = _read(path)
    assert chunk.codec is Codec.NONE and chunk.length == len(raw)
    # compressed, it would decode to more values per stored byte than a reader takes
    squeezed = len(zstandard.ZstdCompressor().compress(raw))
    assert not readable_compressed(raw, squeezed, chunk.count)
    assert read == written


def test_past_even_the_floor_a_frame_is_stored_plain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(payload_module, "INFLATE_FLOOR", 1024)  # the floor made small
    path = tmp_path / "floor.ktrec"
    written = _record(path, FEW_LONG)
    chunk, _, read = _read(path)
    assert chunk.codec is Codec.NONE
    assert read == written
