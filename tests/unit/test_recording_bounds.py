"""A crafted recording's work and memory are bounded by its size (ktop/input_limits.py):
a recording spanning more than MAX_RECORDING_SPAN is refused with one line, a chunk that
declares more events than its bytes allow and a frame that decompresses to more than
MAX_INFLATE_RATIO per stored byte are set aside (named in the faults), and nothing the
reader does with a small file takes more than a bounded number of events or memory.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ktop.cli import main
from ktop.input_limits import MAX_EVENTS_PER_BYTE, MAX_INFLATE_RATIO, MAX_RECORDING_SPAN
from ktop.record.format import Codec, FormatError, Kind
from ktop.record.reader import Recording
from tests.unit import recfiles

YEAR_9892 = 2.5e11


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return recfiles.record_small(tmp_path_factory.mktemp("bounds") / "r.ktrec", seconds=20)


def _chunks(frames: list[recfiles.Frame]) -> list[recfiles.Frame]:
    return [f for f in frames if f.kind is Kind.CHUNK]


def test_a_chunk_spanning_year_1970_to_9892_is_refused_at_once(small: Path, tmp_path: Path) -> None:
    frames = recfiles.split(small)
    chunk = _chunks(frames)[0]
    chunk.first, chunk.last = 0.0, YEAR_9892
    path = tmp_path / "span.ktrec"
    path.write_bytes(recfiles.join(frames))
    with pytest.raises(FormatError, match=MAX_RECORDING_SPAN.expected):
        Recording(path)
    began = time.monotonic()
    for argv in (["triage", "--recording", str(path)], ["replay", "--info", str(path)]):
        code = main(argv)
        assert code not in (0, 70), argv  # refused, not a crash
    assert time.monotonic() - began < 30  # the old reader stepped 25 billion seconds


def test_a_chunk_declaring_more_events_than_its_bytes_allow_is_set_aside(
    small: Path, tmp_path: Path
) -> None:
    frames = recfiles.split(small)
    chunk = _chunks(frames)[-1]
    size = len(chunk.raw)
    chunk.count = MAX_EVENTS_PER_BYTE.value * size * 10  # stored size: at most size + a frame
    path = tmp_path / "count.ktrec"
    path.write_bytes(recfiles.join(frames))
    with Recording(path) as rec:
        assert any(MAX_EVENTS_PER_BYTE.expected in f for f in rec.faults), rec.faults
        assert rec.gaps


def test_a_frame_decompressing_to_more_than_its_ratio_is_set_aside_within_bounded_memory(
    small: Path, tmp_path: Path
) -> None:
    frames = recfiles.split(small)
    key = next(f for f in frames if f.kind is Kind.KEYFRAME and f.first > 0)
    key.codec = Codec.ZSTD
    key.raw = recfiles.pack({"at": key.first, "state": {"pad": b"\0" * (200 << 20)}})
    path = tmp_path / "bomb.ktrec"
    path.write_bytes(recfiles.join(frames))
    size = path.stat().st_size
    del key.raw, frames
    tracemalloc.start()
    try:
        with Recording(path) as rec:
            rec.cursor(rec.end)
            peak = tracemalloc.get_traced_memory()[1]
            faults = rec.faults
    finally:
        tracemalloc.stop()
    assert any(MAX_INFLATE_RATIO.expected in f for f in faults), faults
    # Memory: the file's allowed decompressed size, twice (a copy), and 32 MiB for the model.
    assert peak < 2 * MAX_INFLATE_RATIO.value * size + (32 << 20), peak


def test_repeated_chunks_fold_events_in_proportion_to_the_file(small: Path, tmp_path: Path) -> None:
    frames = recfiles.split(small)
    chunk = _chunks(frames)[-1]
    copies = [
        recfiles.Frame(Kind.CHUNK, Codec.ZSTD, chunk.count, chunk.first, chunk.last, chunk.raw)
        for _ in range(200)
    ]
    path = tmp_path / "repeated.ktrec"
    path.write_bytes(recfiles.join([*frames, *copies]))
    size = path.stat().st_size
    with Recording(path) as rec:
        cur = rec.cursor(rec.end)
        most = MAX_EVENTS_PER_BYTE.value * size + 1_000 * len(rec.chunks)
        assert cur.folded <= most


def _mutations(data: bytes) -> st.SearchStrategy[bytes]:
    """``data`` with a few bytes changed, cut, or a stretch repeated."""
    n = len(data)
    flips = st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 255)), max_size=8)

    def flip(changes: list[tuple[int, int]]) -> bytes:
        out = bytearray(data)
        for i, b in changes:
            out[i] = b
        return bytes(out)

    cut = st.integers(0, n).map(lambda k: data[:k])
    repeat = st.tuples(st.integers(0, n - 1), st.integers(1, 400), st.integers(1, 20)).map(
        lambda t: data[: t[0]] + data[t[0] : t[0] + t[1]] * t[2] + data[t[0] :]
    )
    return st.one_of(flips.map(flip), cut, repeat)


@pytest.mark.fuzz
def test_a_mutated_recording_reads_or_is_refused_within_bounded_work(
    small: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data = small.read_bytes()
    where = tmp_path_factory.mktemp("fuzz") / "m.ktrec"

    @settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(_mutations(data))
    def read(mutated: bytes) -> None:
        where.write_bytes(mutated)
        try:
            rec = Recording(where)
        except FormatError as exc:
            assert str(exc)
            return
        with rec:
            cur = rec.cursor(rec.end)
            assert cur.folded <= MAX_EVENTS_PER_BYTE.value * len(mutated) + 1_000 * max(
                1, len(rec.chunks)
            )
            assert rec.end - rec.start <= MAX_RECORDING_SPAN.value

    read()
