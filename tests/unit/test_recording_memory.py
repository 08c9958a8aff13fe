"""Reading a crafted recording takes memory in proportion to its size: at most
READ_MEMORY_PER_BYTE per byte of the file beyond READ_MEMORY_FLOOR (ktop/input_limits.py),
whatever shape its msgpack values have. A frame decoding to more values than
MAX_VALUES_PER_BYTE allows is set aside as a fault; ktop's own recordings read as before.
"""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ktop.cli import main
from ktop.input_limits import (
    MAX_INFLATE_RATIO,
    MAX_VALUES_PER_BYTE,
    READ_MEMORY_FLOOR,
    READ_MEMORY_PER_BYTE,
)
from ktop.record.format import Codec, Kind
from ktop.record.reader import Recording
from tests.unit import recfiles

NOISE = 48 * 1024
"""Incompressible bytes in each crafted frame: its stored size, about."""
FILL = (MAX_INFLATE_RATIO.value - 8) * NOISE
"""The compressible bytes beside them: the frame stays under the decompression limit."""
RECORDINGS = sorted(Path(__file__).parents[2].joinpath("recordings").glob("*.ktrec"))


def _noise() -> bytes:
    return random.Random(7).randbytes(NOISE)


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


SHAPES: dict[str, Callable[[], Any]] = {
    "array of empty arrays": lambda: [[]] * FILL,
    "array of empty maps": lambda: [{}] * FILL,
    "array of small negative integers": lambda: [[-7]] * (FILL // 2),
    "map of tiny entries": lambda: {i: -7 for i in range(FILL // 4)},
    "deep nesting": lambda: [_nested(500)] * (FILL // 500),
    "huge string": lambda: "k" * FILL,
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> list[recfiles.Frame]:
    """The header, first keyframe and first chunk of a simulator recording."""
    path = recfiles.record_small(tmp_path_factory.mktemp("mem") / "r.ktrec", seconds=2)
    frames = recfiles.split(path)
    first = next(i for i, f in enumerate(frames) if f.kind is Kind.CHUNK)
    return frames[: first + 1]


def _crafted(base: list[recfiles.Frame], kind: Kind, shape: Any, path: Path) -> Path:
    """``base`` and one frame of ``kind`` holding ``shape`` and incompressible bytes."""
    at = base[-1].last
    if kind is Kind.KEYFRAME:
        raw = recfiles.pack({"at": at, "state": {"pad": shape, "noise": _noise()}})
        frame = recfiles.Frame(kind, Codec.ZSTD, 1, at, at, raw)
    else:
        raw = recfiles.pack(["NotAnEvent", shape, _noise()])
        frame = recfiles.Frame(kind, Codec.ZSTD, 1, at, at, raw)
    path.write_bytes(recfiles.join([*base, frame]))
    return path


def _peak(read: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _seek_to_end(path: Path) -> list[str]:
    with Recording(path) as rec:
        rec.cursor(rec.end)
        return rec.faults


@pytest.mark.parametrize("kind", [Kind.KEYFRAME, Kind.CHUNK], ids=["keyframe", "chunk"])
@pytest.mark.parametrize("name", list(SHAPES))
def test_reading_a_crafted_frame_takes_memory_in_proportion_to_the_file(
    base: list[recfiles.Frame], tmp_path: Path, name: str, kind: Kind
) -> None:
    path = _crafted(base, kind, SHAPES[name](), tmp_path / "shape.ktrec")
    size = path.stat().st_size
    faults: list[str] = []
    peak = _peak(lambda: faults.extend(_seek_to_end(path)))
    assert peak < READ_MEMORY_PER_BYTE * size + READ_MEMORY_FLOOR, (peak, size)
    assert all(str(f) for f in faults)


def test_a_frame_of_more_values_than_its_bytes_allow_is_set_aside(
    base: list[recfiles.Frame], tmp_path: Path
) -> None:
    path = _crafted(base, Kind.KEYFRAME, [[]] * FILL, tmp_path / "values.ktrec")
    assert any(MAX_VALUES_PER_BYTE.expected in f for f in _seek_to_end(path))


@pytest.mark.parametrize("argv", [["replay", "--info"], ["triage", "--recording"]])
def test_commands_read_a_crafted_frame_within_bounded_memory(
    base: list[recfiles.Frame],
    tmp_path: Path,
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _crafted(base, Kind.CHUNK, [[]] * FILL, tmp_path / "cmd.ktrec")
    size = path.stat().st_size
    codes: list[int] = []
    peak = _peak(lambda: codes.append(main([*argv, str(path)])))
    assert codes[0] in (0, 1), capsys.readouterr().err  # read, the bad frame set aside
    assert peak < READ_MEMORY_PER_BYTE * size + READ_MEMORY_FLOOR, (peak, size)


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_ktops_own_recordings_read_as_before(path: Path) -> None:
    declared = sum(f.count for f in recfiles.split(path) if f.kind is Kind.CHUNK)
    with Recording(path) as rec:
        cur = rec.cursor(rec.start)
        cur.fold(rec.end)
        at_end = rec.cursor(rec.end).model.observe()
        assert rec.faults == []
    assert cur.folded == declared  # every event the writer counted
    assert at_end.at == cur.model.observe().at == rec.end
