"""Fuzzing the recording reader with the writer's own records, mutated.

Two layers: bytes (truncations, flipped bytes, huge lengths written into frame headers),
which the checksums mostly catch, and records past the checksums (a frame's decoded
payload with one value replaced by another of any type, or a header of the wrong type,
rebuilt with valid checksums). Whatever the file, opening it raises nothing but
:class:`FormatError`, and once open, listing it, seeking and playing it to its end raise
nothing at all. The length of the run is set by a Hypothesis profile (tests/fuzzing.py).
"""

from __future__ import annotations

import copy
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.commands.replay import info
from ktop.record.format import FRAME_SIZE, PREAMBLE, FormatError
from ktop.record.reader import Recording
from tests.unit.recfiles import join, pack, record_small, split

pytestmark = pytest.mark.fuzz

ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what msgpack can hold
    | st.floats()
    | st.text(max_size=12)
    | st.binary(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
FIXED = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


class Original:
    """The writer's own file, as bytes and as frames (shown short in a failure report)."""

    def __init__(self, path: Path) -> None:
        self.data = path.read_bytes()
        self.frames = split(path)

    def __repr__(self) -> str:
        return f"Original({len(self.data)} bytes, {len(self.frames)} frames)"


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Original:
    return Original(record_small(tmp_path_factory.mktemp("fuzz") / "r.ktrec", seconds=25, marks=1))


def _read_all(data: bytes, tmp_path: Path) -> None:
    """Open, describe, seek and play ``data``: only a FormatError at open is allowed."""
    path = tmp_path / "fuzzed.ktrec"
    path.write_bytes(data)
    try:
        rec = Recording(path)
    except FormatError:
        return
    with rec:
        assert info(rec)
        for at in ((rec.start + rec.end) / 2, *(m.at for m in rec.markers)):
            rec.cursor(at)
        cur = rec.cursor(rec.start)
        cur.advance(rec.end)
        cur.model.observe()
        assert info(rec)


def _replace(value: Any, data: st.DataObject, new: Any) -> Any:
    """``value`` with one item somewhere inside it (or itself) replaced by ``new``."""
    if isinstance(value, list) and value and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(value) - 1))
        return [*value[:i], _replace(value[i], data, new), *value[i + 1 :]]
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value, key=str)))
        return {**value, key: _replace(value[key], data, new)}
    return new


@FIXED
@given(data=st.data())
def test_mutated_bytes(original: Original, tmp_path: Path, data: Any) -> None:
    buf = bytearray(original.data)
    for _ in range(data.draw(st.integers(1, 4))):
        what = data.draw(st.sampled_from(["flip", "cut", "length", "insert"]))
        at = data.draw(st.integers(0, max(0, len(buf) - 1)))
        if what == "flip" and buf:
            buf[at] ^= data.draw(st.integers(1, 255))
        elif what == "cut":
            del buf[at:]
        elif what == "length" and at + 4 <= len(buf):
            struct.pack_into("<I", buf, at, data.draw(st.sampled_from([0, 2**31, 2**32 - 1])))
        elif what == "insert":
            buf[at:at] = data.draw(st.binary(min_size=1, max_size=64))
    _read_all(bytes(buf), tmp_path)


@FIXED
@given(data=st.data(), new=ANY)
def test_mutated_records(original: Original, tmp_path: Path, data: Any, new: Any) -> None:
    frames = copy.deepcopy(original.frames)
    i = data.draw(st.integers(0, len(frames) - 1))
    f = frames[i]
    if f.kind.name == "CHUNK":
        records = f.values()
        j = data.draw(st.integers(0, len(records) - 1))
        records[j] = _replace(records[j], data, new)
        f.raw = b"".join(pack(r) for r in records)
    else:
        f.raw = pack(_replace(f.value, data, new))
    _read_all(join(frames, index=data.draw(st.booleans())), tmp_path)


@FIXED
@given(header=ANY, trailing=st.binary(max_size=8))
def test_a_header_of_any_shape(
    original: Original, tmp_path: Path, header: Any, trailing: bytes
) -> None:
    frames = copy.deepcopy(original.frames)
    frames[0].raw = pack(header) + trailing
    path = tmp_path / "fuzzed.ktrec"
    path.write_bytes(join(frames))
    try:
        Recording(path).close()
    except FormatError as exc:
        assert str(exc).startswith(f"offset {PREAMBLE.size + FRAME_SIZE}: HEADER: ")
        return
    assert not trailing and isinstance(header, dict)
