"""A recording is untrusted input: crafted files get one line naming the file, the offset
and what was expected (exit 2), never an internal error or a hang; what was read before a
fault still replays; anything but a regular file is refused at once.
"""

from __future__ import annotations

import copy
import os
import struct
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard

from ktop.cli import main
from ktop.model import events as ev
from ktop.record import payload as payload_module
from ktop.record import reader as reader_module
from ktop.record.format import FRAME_SIZE, PREAMBLE, Codec, FormatError, Kind, pack_frame
from ktop.record.reader import Recording
from tests.unit.recfiles import Frame, join, pack, record_small, split

HEADER_AT = PREAMBLE.size
HEADER_PAYLOAD_AT = PREAMBLE.size + FRAME_SIZE


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> list[Frame]:
    path = record_small(tmp_path_factory.mktemp("rec") / "small.ktrec", seconds=60, marks=2)
    return split(path)


def _write(
    tmp_path: Path, frames: list[Frame], *, index: bool = True, name: str = "crafted.ktrec"
) -> Path:
    path = tmp_path / name
    path.write_bytes(join(frames, index=index))
    return path


def _with_header(frames: list[Frame], payload: bytes) -> list[Frame]:
    out = copy.deepcopy(frames)
    out[0].raw = payload
    return out


def _events(path: Path) -> list[ev.Event]:
    with Recording(path) as rec:
        return rec.cursor(rec.start).advance(rec.end)


def _one_line_refusal(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``ktop replay --info`` and ``ktop triage --recording`` both refuse with exit 2 and
    one line naming the file; the line."""
    assert main(["replay", str(path), "--info"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err, err
    assert main(["triage", "--recording", str(path)]) == 2
    triage_err = capsys.readouterr().err.strip()
    assert len(triage_err.splitlines()) == 1 and str(path) in triage_err, triage_err
    return err


HEADERS: dict[str, tuple[Any, str]] = {
    "a list": ([1, 2, 3], "header: expected a map, got an array"),
    "an int": (5, "header: expected a map, got an integer"),
    "settings a list": ({"settings": [1]}, "settings: expected a map, got an array"),
    "model a string": ({"settings": {"model": "m"}}, "settings.model: expected a map"),
    "threshold a string": (
        {"settings": {"model": {"unhealthy_zone_threshold": "0.5"}}},
        "settings.model.unhealthy_zone_threshold: expected a number, got a string",
    ),
    "window NaN": (
        {"settings": {"model": {"window_s": float("nan")}}},
        "settings.model.window_s: expected a number from 1 to 604800, got nan",
    ),
    "source an int": ({"source": 5}, "source: expected a map, got an integer"),
    "start a string": ({"start_at": "x"}, "start_at: expected a number, got a string"),
}


@pytest.mark.parametrize("case", sorted(HEADERS))
def test_a_header_of_the_wrong_type_is_one_line_with_the_offset(
    case: str, frames: list[Frame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value, why = HEADERS[case]
    if isinstance(value, dict):
        value = {**frames[0].value, **value}
    path = _write(tmp_path, _with_header(frames, pack(value)))
    line = _one_line_refusal(path, capsys)
    assert f"offset {HEADER_PAYLOAD_AT}: HEADER: " in line and why in line, line


def test_a_header_that_is_not_msgpack_or_has_trailing_bytes(
    frames: list[Frame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _with_header(frames, b"\xc1\xc1 not msgpack"))
    assert "expected msgpack data" in _one_line_refusal(path, capsys)
    good = pack(frames[0].value)
    path = _write(tmp_path, _with_header(frames, good + b"\x01\x02\x03"))
    line = _one_line_refusal(path, capsys)
    assert f"found 3 more bytes after it (at +{len(good)})" in line, line
    assert "unpack(b) received extra data" not in line


def test_a_missing_header_frame_names_its_offset(
    frames: list[Frame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = bytearray(join(frames))
    data[HEADER_AT + 20] ^= 0xFF  # the header frame's checksum no longer matches
    path = tmp_path / "crafted.ktrec"
    path.write_bytes(bytes(data))
    assert f"offset {HEADER_AT}: expected an intact HEADER frame" in _one_line_refusal(path, capsys)


def _run(call: Any, deadline_s: float = 10.0) -> BaseException | None:
    """Run ``call`` in a thread; the exception it raised. Fails (not hangs) on a hang."""
    box: list[BaseException | None] = [None]

    def target() -> None:
        try:
            call()
        except BaseException as exc:
            box[0] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(deadline_s)
    if t.is_alive():
        pytest.fail(f"no answer within {deadline_s} s")
    return box[0]


def test_a_fifo_is_refused_at_once_by_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe.ktrec"
    os.mkfifo(fifo)
    for argv in (["replay", str(fifo), "--info"], ["triage", "--recording", str(fifo)]):
        codes: list[int] = []
        assert _run(lambda argv=argv, codes=codes: codes.append(main(argv))) is None
        assert codes == [2]
        err = capsys.readouterr().err
        assert str(fifo) in err and "FIFO" in err and "not a regular file" in err


def _huge_frame(kind: Kind, length: int) -> bytes:
    head = bytearray(pack_frame(kind, Codec.ZSTD, b"", 1, 1767225700.0, 1767225700.0))
    struct.pack_into("<I", head, 8, length)
    head[-4:] = struct.pack("<I", zlib.crc32(bytes(head[:36])))
    return bytes(head)


def test_a_huge_declared_length_is_a_cut_not_a_read(frames: list[Frame], tmp_path: Path) -> None:
    path = tmp_path / "crafted.ktrec"
    path.write_bytes(join(frames, index=False) + _huge_frame(Kind.CHUNK, 0xFFFFFFF0) + b"x" * 64)
    intact = _write(tmp_path, frames, name="intact.ktrec")
    with Recording(path) as rec, Recording(intact) as whole:
        assert rec.truncated and not rec.gaps
        assert [c.offset for c in rec.chunks] == [c.offset for c in whole.chunks]
    assert _events(path) == _events(intact)  # everything before it replays


def test_a_frame_declaring_more_than_the_limit_is_not_decompressed(
    frames: list[Frame], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(reader_module.LIMITS, Kind.CHUNK, 1 << 20)
    monkeypatch.setattr(payload_module, "INFLATE_FLOOR", 1 << 30)  # the kind's limit, not the ratio
    bomb = zstandard.ZstdCompressor(level=19).compress(b"\0" * (8 << 20))  # 8 MiB of zeros
    crafted = copy.deepcopy(frames)
    victim = next(i for i, f in enumerate(crafted) if f.kind is Kind.CHUNK and i > 4)
    data = bytearray(join(crafted[:victim], index=False))
    offset = len(data)
    f = crafted[victim]
    data += pack_frame(Kind.CHUNK, Codec.ZSTD, bomb, f.count, f.first, f.last)
    path = tmp_path / "crafted.ktrec"
    path.write_bytes(bytes(data))
    events = _events(path)
    with Recording(path) as rec:
        rec.cursor(rec.start).advance(rec.end)
        assert any(
            g.reason.startswith(f"offset {offset}: CHUNK: expected at most 1,048,576 bytes")
            for g in rec.gaps
        ), rec.gaps
    before = _events(_write(tmp_path, crafted[:victim], index=False))
    assert events == before


def _chunk_positions(frames: list[Frame]) -> list[int]:
    return [i for i, f in enumerate(frames) if f.kind is Kind.CHUNK]


CHUNK_FAULTS: dict[str, tuple[list[Any], str]] = {
    "a record that is a map": ([{}], "expected a record [tag, ...], got a map"),
    "a node that is an int": (
        [["NodeUpserted", 1767225615, 5]],
        "NodeUpserted.node: expected a NodeRecord array, got an integer",
    ),
    "a time that is a string": (
        [["ClockTick", "1767225615"]],
        "ClockTick.at: expected a number, got a string",
    ),
    "an unknown readiness": (
        [["NodeUpserted", 1767225615, ["n", "r", "z", "k", "Maybe", None]]],
        "expected one of True / False / Unknown, got 'Maybe'",
    ),
    "a short packed lease column": (
        [["~L", ["a"], b"\x01", None]],
        "expected 8 bytes of packed renew times, got 1",
    ),
    "a name reference past the chunk": (
        [["~L", ["a", 9], [1, 2], None]],
        "expected a node name or a reference 1-1, got '9'",
    ),
    "heartbeats without times": ([["~N", ["a"], None]], "expected observation times, got nil"),
    "an event outside the frame's times": (
        [["ClockTick", 1767229999]],
        "expected event times from",
    ),
}


@pytest.mark.parametrize("case", sorted(CHUNK_FAULTS))
def test_a_chunk_fault_keeps_every_event_before_it(
    case: str, frames: list[Frame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, why = CHUNK_FAULTS[case]
    crafted = copy.deepcopy(frames)
    victim = _chunk_positions(crafted)[2]
    records = crafted[victim].values()
    crafted[victim].raw = b"".join(pack(r) for r in [*records[:5], *bad, *records[5:]])
    path = _write(tmp_path, crafted)
    direct = _events(_write(tmp_path, frames, name="intact.ktrec"))
    got = _events(path)
    with Recording(path) as rec:
        offset = next(c.offset for c in rec.chunks if c.first == crafted[victim].first)
        rec.cursor(rec.start).advance(rec.end)
        faults = list(rec.faults)
    assert len(faults) == 1 and faults[0].startswith(f"offset {offset}: CHUNK: "), faults
    assert why in faults[0], faults[0]
    lost_from = next(i for i, e in enumerate(direct) if e.at >= crafted[victim].first)
    first_five = sum(1 for _ in _decoded(records[:5]))
    assert got[: lost_from + first_five] == direct[: lost_from + first_five]
    later = [e for e in direct if e.at > crafted[victim].last]
    assert got[-len(later) :] == later  # the chunks after it replay too
    assert main(["replay", str(path), "--info"]) == 0  # reading goes on past it


def _decoded(records: list[Any]) -> list[ev.Event]:
    from ktop.record.codec import ChunkDecoder

    dec = ChunkDecoder({})
    return [e for r in records for e in dec.decode(r)]


def test_a_storm_of_events_beyond_the_declared_count_is_cut_there(
    frames: list[Frame], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(payload_module, "INFLATE_FLOOR", 1 << 30)  # the count, not the ratio
    crafted = copy.deepcopy(frames)
    victim = _chunk_positions(crafted)[1]
    f = crafted[victim]
    storm = [["ClockTick", f.first]] * 300_000
    f.raw = b"".join(pack(r) for r in storm)
    path = _write(tmp_path, crafted)
    with Recording(path) as rec:
        cur = rec.cursor(rec.start)
        cur.advance(f.last)
        assert any(f"expected {f.count} events (the frame's count)" in x for x in rec.faults)
        assert cur.folded < f.count + 1_000  # the rest of the chunk was never kept


def test_an_unreadable_index_falls_back_to_a_scan(frames: list[Frame], tmp_path: Path) -> None:
    from ktop.record.format import pack_trailer

    data = join(frames, index=False)
    bad = pack({"frames": [[ord("C"), 10**12, 0, 0, 1]], "markers": []})
    path = tmp_path / "crafted.ktrec"
    path.write_bytes(
        data + pack_frame(Kind.INDEX, Codec.NONE, bad, 0, 0.0, 0.0) + pack_trailer(len(data))
    )
    with Recording(path) as rec:
        assert not rec.indexed
        assert rec.faults == [
            f"offset {len(data)}: INDEX: frame entry: expected an offset from "
            f"{HEADER_AT + FRAME_SIZE + len(frames[0].raw)} to {len(data)}; "
            "the frames were found by a scan instead"
        ]
        assert [m.note for m in rec.markers] == ["note 1", "note 2"]
    assert _events(path) == _events(_write(tmp_path, frames, name="intact.ktrec"))


def test_an_unreadable_marker_is_listed_and_skipped(
    frames: list[Frame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crafted = copy.deepcopy(frames)
    at = next(i for i, f in enumerate(crafted) if f.kind is Kind.MARKER)
    crafted[at].raw = pack(["not a time", "note"])
    path = _write(tmp_path, crafted, index=False)
    with Recording(path) as rec:
        assert [m.note for m in rec.markers] == ["note 2"]
        assert len(rec.faults) == 1 and "MARKER: expected a number, got a string" in rec.faults[0]
    assert main(["replay", str(path), "--info"]) == 0
    assert "unreadable offset" in capsys.readouterr().out


def test_an_unreadable_keyframe_seeks_from_the_one_before(
    frames: list[Frame], tmp_path: Path
) -> None:
    crafted = copy.deepcopy(frames)
    keys = [i for i, f in enumerate(crafted) if f.kind is Kind.KEYFRAME]
    crafted[keys[-1]].raw = pack({"at": crafted[keys[-1]].first, "state": [1, 2]})
    path = _write(tmp_path, crafted)
    direct = _write(tmp_path, frames, name="intact.ktrec")
    with Recording(direct) as rec:
        want = rec.cursor(rec.end).model.snapshot()
    with Recording(path) as rec:
        got = rec.cursor(rec.end).model.snapshot()
        assert any("KEYFRAME: expected a map" in f for f in rec.faults)
    assert got.nodes == want.nodes


def test_frame_times_that_cannot_be_dates_make_the_frame_damaged(
    frames: list[Frame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crafted = copy.deepcopy(frames)
    victim = _chunk_positions(crafted)[1]
    crafted[victim].first, crafted[victim].last = 1e300, float("inf")
    path = _write(tmp_path, crafted)
    assert main(["replay", str(path), "--info"]) == 0
    out = capsys.readouterr().out
    assert "1 gaps" in out and "damaged data skipped" in out


def test_a_cut_inside_the_preamble_or_header_is_still_a_format_error(
    frames: list[Frame], tmp_path: Path
) -> None:
    data = join(frames)
    path = tmp_path / "cut.ktrec"
    for n in (0, 5, PREAMBLE.size, HEADER_PAYLOAD_AT + 3):
        path.write_bytes(data[:n])
        with pytest.raises(FormatError):
            Recording(path)
