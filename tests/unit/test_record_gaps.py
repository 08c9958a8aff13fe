"""Replay after lost data: unchanged node updates are not rebuilt from stale records."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.record.codec import NODE_TOUCH_RUN
from ktop.record.format import FRAME_SIZE
from ktop.record.payload import stream as _stream
from ktop.record.reader import Recording
from ktop.record.writer import RecordingWriter, WriterSettings

READY = ev.NodeRecord("n1", "r", "z", "k", ev.Readiness.TRUE, 0.0)
NOT_READY = ev.NodeRecord("n1", "r", "z", "k", ev.Readiness.FALSE, 10.0)
OTHER = ev.NodeRecord("n2", "r", "z", "k", ev.Readiness.TRUE, 0.0)


def _record(path: Path) -> None:
    """Chunks of 5 s; n1 turns NotReady in chunk 2 and only heartbeats (``~N``) after it.

    chunk 1: 1-7 (n1 Ready), chunk 2: 10-16 (n1 NotReady), chunk 3: 20-26 (heartbeat),
    keyframe at 26, chunk 4: 30-36 (heartbeat).
    """
    m = ClusterModel()
    w = RecordingWriter(str(path), m, source={}, settings=WriterSettings(5.0, 25.0))
    batches: list[list[ev.Event]] = [
        [ev.NodeUpserted(1.0, READY), ev.NodeUpserted(1.0, OTHER)],
        [ev.ClockTick(7.0)],
        [ev.NodeUpserted(10.0, NOT_READY)],
        [ev.ClockTick(16.0)],
        [ev.NodeUpserted(20.0, NOT_READY), ev.NodeUpserted(20.0, OTHER)],
        [ev.ClockTick(26.0)],
        [ev.NodeUpserted(30.0, NOT_READY)],
        [ev.ClockTick(36.0)],
    ]
    for b in batches:
        m.apply_all(b)
        w.append(b)
    w.close()


def _damage_chunk(path: Path, which: int, out: Path) -> None:
    with Recording(path) as rec:
        h = rec.chunks[which]
    data = bytearray(path.read_bytes())
    data[h.offset + FRAME_SIZE + h.length // 2] ^= 0xFF
    out.write_bytes(bytes(data))


def _ready_at(path: Path, at: float, *, start: float | None = 0.0) -> ev.Readiness:
    with Recording(path) as rec:
        cur = rec.cursor(start)
        cur.advance(at)
        return cur.model.nodes.nodes["n1"].ready


def test_the_recording_holds_heartbeats_as_runs_and_a_keyframe_at_26(tmp_path: Path) -> None:
    path = tmp_path / "r.ktrec"
    _record(path)
    with Recording(path) as rec:
        assert [(c.first, c.last) for c in rec.chunks] == [(1, 7), (10, 16), (20, 26), (30, 36)]
        assert [k.first for k in rec.keyframes] == [0.0, 26.0]
    # Undamaged, the heartbeats replay the recorded NotReady record.
    assert _ready_at(path, 22.0) is ev.Readiness.FALSE
    assert _ready_at(path, 32.0) is ev.Readiness.FALSE


def test_after_a_lost_chunk_a_heartbeat_shows_unknown_not_the_stale_ready(tmp_path: Path) -> None:
    path, damaged = tmp_path / "r.ktrec", tmp_path / "d.ktrec"
    _record(path)
    _damage_chunk(path, 1, damaged)
    with Recording(damaged) as rec:
        assert len(rec.gaps) == 1
    # The change to NotReady was in the lost chunk: the heartbeat at 20 cannot say Ready.
    assert _ready_at(damaged, 22.0) is ev.Readiness.UNKNOWN
    with Recording(damaged) as rec:
        cur = rec.cursor(0.0)
        cur.advance(22.0)
        assert cur.model.snapshot().nodes.unknown == 2  # n2 heartbeated after the gap too


def test_the_next_keyframe_re_establishes_the_recorded_state(tmp_path: Path) -> None:
    path, damaged = tmp_path / "r.ktrec", tmp_path / "d.ktrec"
    _record(path)
    _damage_chunk(path, 1, damaged)
    # Playing through the keyframe at 26 brings back what was recorded, and the heartbeat
    # after it is rebuilt from that record.
    assert _ready_at(damaged, 28.0) is NOT_READY.ready
    assert _ready_at(damaged, 32.0) is NOT_READY.ready
    with Recording(damaged) as rec:
        cur = rec.cursor(0.0)
        cur.advance(40.0)
        assert cur.model.nodes.nodes == {"n1": NOT_READY, "n2": OTHER}
    # A seek past the keyframe starts from it and agrees.
    assert _ready_at(damaged, 32.0, start=32.0) is NOT_READY.ready


def test_a_lost_chunk_after_the_keyframe_leaves_earlier_heartbeats_exact(tmp_path: Path) -> None:
    path, damaged = tmp_path / "r.ktrec", tmp_path / "d.ktrec"
    _record(path)
    _damage_chunk(path, 3, damaged)  # the last chunk: nothing before it is touched
    assert _ready_at(damaged, 22.0) is ev.Readiness.FALSE


def test_unchanged_node_updates_are_runs_and_round_trip_exactly(tmp_path: Path) -> None:
    path = tmp_path / "n.ktrec"
    m = ClusterModel()
    w = RecordingWriter(str(path), m, source={}, settings=WriterSettings(5.0, 1e9))
    changed = replace(NOT_READY, unschedulable=True)
    batches: list[list[ev.Event]] = [
        [ev.NodeUpserted(1.0, READY), ev.NodeUpserted(1.0, OTHER)],
        [
            ev.NodeUpserted(2.0, READY),  # unchanged: heartbeats, one run
            ev.NodeUpserted(2.5, OTHER),
            ev.NodeUpserted(3.0, NOT_READY),  # changed: written whole
        ],
        [ev.ClockTick(6.0)],  # the chunk is cut
        [
            ev.NodeUpserted(8.0, NOT_READY),  # next chunk: the record carries over
            ev.NodeUpserted(8.0, changed),
            ev.NodeDeleted(9.0, "n2"),
            ev.NodeUpserted(9.5, OTHER),  # back after a delete: written whole
        ],
        [ev.ClockTick(14.0)],
    ]
    for b in batches:
        m.apply_all(b)
        w.append(b)
    w.close()
    with Recording(path) as rec:
        tags = [[r[0] for r in _stream(rec._payload(h))] for h in rec.chunks]
        got = rec.cursor(0.0).take(rec.end)
    assert tags == [
        ["NodeUpserted", "NodeUpserted", NODE_TOUCH_RUN, "NodeUpserted", "ClockTick"],
        [NODE_TOUCH_RUN, "NodeUpserted", "NodeDeleted", "NodeUpserted", "ClockTick"],
    ]
    written = [e for b in batches for e in b]
    assert got == written
