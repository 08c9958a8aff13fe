"""Recordings: record then replay, crash safety, damage, versions, seek, redaction, size."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path

import msgpack
import pytest
import zstandard

from ktop.cli import main
from ktop.hub import Hub
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.history import EMPTY_HISTORY
from ktop.model.signals import read_signals
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.state import KEYFRAME_HISTORY_STEP_S
from ktop.record.codec import LEASE_RUN, Marker
from ktop.record.format import FORMAT_VERSION, FRAME_SIZE, PREAMBLE, FormatError, Kind
from ktop.record.payload import stream as _stream
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.record.writer import RecordingWriter, WriterSettings
from ktop.sources.sim.simulator import Simulator

SETTINGS = WriterSettings(chunk_s=10.0, keyframe_s=40.0)


@dataclass
class Made:
    path: Path
    batches: list[list[ev.Event]]
    markers: list[Marker]

    @property
    def events(self) -> list[ev.Event]:
        return [e for b in self.batches for e in b]


def _make(
    tmp_path: Path,
    *,
    scenario: str = "zone-outage",
    nodes: int = 60,
    seconds: int = 150,
    close: bool = True,
    name: str = "r.ktrec",
    mark_at: tuple[int, ...] = (),
    settings: WriterSettings = SETTINGS,
    publish: bool = False,
) -> Made:
    """Record a simulator run through a hub, as the app and `ktop record` do."""
    sim = Simulator(scenario, nodes=nodes, zones=3)
    hub = Hub(ClusterModel())
    path = tmp_path / name
    rec = Recorder(str(path), hub.model, source={"kind": "demo", "context": scenario})
    rec._writer.settings = settings  # type: ignore[union-attr]
    hub.add_sink(rec)
    batches = [sim.start()]
    hub.ingest(batches[0])
    markers = []
    for k in range(seconds):
        b = sim.advance(1.0)
        batches.append(b)
        hub.ingest(b)
        if publish:
            hub.publish()  # as the app does every refresh: one history frame each
        if k in mark_at:
            m = rec.mark(f"note {k}")
            assert m is not None
            markers.append(m)
    if close:
        rec.stop()
    else:
        assert rec._writer is not None
        rec._writer.abandon()  # a crash: no last chunk, no index
    return Made(path, batches, markers)


def _strip(s: ClusterSnapshot) -> ClusterSnapshot:
    # The signal history holds one frame per snapshot taken, so it depends on when
    # snapshots were taken (the recorder's cadence, not this test's); it is compared
    # on its own in test_seek_restores_the_signal_history.
    return replace(s, seq=0, history=EMPTY_HISTORY)


def _direct(events: list[ev.Event], times: list[float]) -> dict[float, ClusterSnapshot]:
    """Snapshots built straight from the event stream: all events up to the first later one."""
    model = ClusterModel()
    out: dict[float, ClusterSnapshot] = {}
    it: Iterator[ev.Event] = iter(events)
    pending: ev.Event | None = next(it, None)
    for t in times:
        while pending is not None and pending.at <= t:
            model.apply(pending)
            pending = next(it, None)
        out[t] = _strip(model.snapshot())
    return out


def _all_events(rec: Recording) -> list[ev.Event]:
    cur = rec.cursor(rec.start - 1.0)  # before the first event: nothing folded yet
    out: list[ev.Event] = []
    while True:
        nxt = cur.next_time()
        if nxt is None:
            return out
        out.extend(cur.advance(nxt))


# ---------------------------------------------------------------- round trip


def test_record_then_replay_gives_the_same_snapshots_at_the_same_times(tmp_path: Path) -> None:
    made = _make(tmp_path)
    events = made.events
    start = events[0].at
    times = [start + s + 0.5 for s in range(0, 150, 7)]
    expected = _direct(events, times)
    with Recording(made.path) as rec:
        assert rec.indexed and not rec.truncated and rec.gaps == []
        # Played forward from the start, one cursor, like the replay clock does.
        cur = rec.cursor(rec.start)
        for t in times:
            cur.advance(t)
            assert _strip(cur.model.snapshot()) == expected[t], t
        # Every event comes back equal, in order (heartbeats included).
        assert _all_events(rec) == events


def test_every_event_round_trips(tmp_path: Path) -> None:
    made = _make(tmp_path, seconds=60)
    with Recording(made.path) as rec:
        assert _all_events(rec) == made.events


def test_seek_lands_on_the_direct_snapshot_and_starts_from_a_keyframe(tmp_path: Path) -> None:
    made = _make(tmp_path, seconds=200)
    events = made.events
    start = events[0].at
    times = [start + s for s in (190.3, 5.0, 120.7, 41.0, 80.2)]  # out of order: back and forth
    expected = _direct(events, sorted(times))
    with Recording(made.path) as rec:
        assert len(rec.keyframes) >= 4
        for t in times:
            cur = rec.cursor(t)
            assert _strip(cur.model.snapshot()) == expected[t], t
            # Only the events after the nearest keyframe were folded, never the whole stream.
            key_at = max(k.first for k in rec.keyframes if k.first <= t)
            after_key = [e for e in events if key_at < e.at <= t]
            assert cur.folded <= len(after_key) + 1
            assert cur.folded < len([e for e in events if e.at <= t]) or t < start + 41


def test_keyframes_keep_their_cadence_when_it_is_shorter_than_a_chunk(tmp_path: Path) -> None:
    # Keyframes every 15 s with chunks of 60 s: a keyframe ends its chunk early, so a seek
    # never folds more than the keyframe cadence (before, keyframes came only with chunks).
    made = _make(tmp_path, seconds=120, settings=WriterSettings(chunk_s=60.0, keyframe_s=15.0))
    events = made.events
    start = events[0].at
    with Recording(made.path) as rec:
        # the first keyframe is the empty model at the recorder's start
        times = [start, *sorted(k.first for k in rec.keyframes if k.first > start)]
        assert all(b - a <= 15.0 + 1.0 for a, b in pairwise(times)), times
        assert times[-1] >= start + 120 - 15.0 - 1.0
        t = start + 100.5
        cur = rec.cursor(t)
        assert _strip(cur.model.snapshot()) == _direct(events, [t])[t]
        assert cur.folded <= len([e for e in events if t - 16.0 < e.at <= t])


def test_seek_restores_the_signal_history_from_the_keyframe(tmp_path: Path) -> None:
    made = _make(tmp_path, seconds=200, publish=True)
    events = made.events
    start = events[0].at
    # The live model's history, rebuilt independently: one frame per published second.
    live = ClusterModel()
    frames: dict[float, dict[str, float]] = {}
    it = iter(made.batches)
    live.apply_all(next(it))
    for batch in it:
        live.apply_all(batch)
        snap = live.snapshot()
        frames[snap.at] = {k: v for k, v in read_signals(snap).items() if v is not None}
    with Recording(made.path) as rec:
        key_at = max(k.first for k in rec.keyframes)
        assert key_at > start + 60, "the test needs a keyframe well after the start"
        cur = rec.cursor(key_at + 1.0)
        history = cur.model.history.view()
        times = [t for c in history.chunks for t in c.times]
        before = [t for t in times if t < key_at]
        # The hour before the keyframe is there (thinned to its keyframe resolution),
        # not only what was folded after it.
        assert before and min(before) <= start + KEYFRAME_HISTORY_STEP_S + 1.0
        assert all(b - a >= KEYFRAME_HISTORY_STEP_S - 1e-6 for a, b in pairwise(before[:-1]))
        key = (
            "nodes.not_ready|zone-a"
            if "nodes.not_ready|zone-a" in history.signal_keys()
            else (history.signal_keys()[0])
        )
        compared = 0
        for t, value in history.points(key):
            if t < key_at and t in frames and key in frames[t]:
                assert value == pytest.approx(frames[t][key], rel=1e-6), (t, key)
                compared += 1
        assert compared >= 3, f"only {compared} frames of {key} to compare"


# ---------------------------------------------------------------- crash safety


def _chunk_events(rec: Recording) -> list[list[ev.Event]]:
    """The events of each intact chunk of the complete file (the reference)."""
    out = []
    cur = rec.cursor(rec.start - 1.0)
    for h in rec.chunks:
        out.append(cur.take(h.last))
    return out


def test_cut_at_every_byte_of_the_last_records_replays_every_complete_chunk(
    tmp_path: Path,
) -> None:
    # Short chunks, so that the last two frames (every cut in them is tried) are small.
    made = _make(tmp_path, nodes=10, seconds=30, close=False, settings=WriterSettings(2.0, 15.0))
    data = made.path.read_bytes()
    with Recording(made.path) as full:
        assert full.truncated and not full.indexed  # a crash left no index: it was scanned
        frames = list(full.frames)
        all_events = _all_events(full)
    assert all_events == made.events[: len(all_events)] and all_events
    cut = tmp_path / "cut.ktrec"
    expected_end: dict[int, list[ev.Event]] = {}
    for n in range(frames[-2].offset, len(data) + 1):
        cut.write_bytes(data[:n])
        with Recording(cut) as rec:
            complete = [f for f in frames if f.end <= n]
            assert [f.offset for f in rec.frames] == [f.offset for f in complete], n
            assert rec.gaps == [] and rec.truncated
            k = len(complete)
            if k not in expected_end:
                # The intact frames' bytes are the same for every cut with k of them, so the
                # events are decoded once per k: a prefix of everything recorded.
                got = _all_events(rec)
                assert got == all_events[: len(got)]
                expected_end[k] = got
                cur = rec.cursor(rec.end)
                assert cur.model.now == max(e.at for e in got)
    assert expected_end[len(frames)] == all_events


def test_cut_inside_the_header_is_a_clear_error(tmp_path: Path) -> None:
    made = _make(tmp_path, seconds=5)
    data = made.path.read_bytes()
    cut = tmp_path / "short.ktrec"
    for n in (0, 3, PREAMBLE.size + 10):
        cut.write_bytes(data[:n])
        with pytest.raises(FormatError):
            Recording(cut)


@pytest.mark.parametrize("where", ["payload", "header"])
def test_a_damaged_middle_chunk_is_skipped_and_shown_as_a_gap(tmp_path: Path, where: str) -> None:
    made = _make(tmp_path, seconds=80)
    with Recording(made.path) as rec:
        chunks = rec.chunks
        per_chunk = _chunk_events(rec)
    victim = len(chunks) // 2
    h = chunks[victim]
    data = bytearray(made.path.read_bytes())
    at = h.offset + (FRAME_SIZE + h.length // 2 if where == "payload" else 6)
    data[at] ^= 0xFF
    damaged = tmp_path / "damaged.ktrec"
    damaged.write_bytes(bytes(data))
    with Recording(damaged) as rec:
        assert len(rec.gaps) == 1
        gap = rec.gaps[0]
        assert gap.start <= h.first and gap.end >= h.last
        assert [c.offset for c in rec.chunks] == [c.offset for c in chunks if c is not h]
        got = _all_events(rec)
    lost_lease_free = [e for e in per_chunk[victim]]
    before = [e for c in per_chunk[:victim] for e in c]
    assert got[: len(before)] == before  # earlier data is never lost
    assert len(got) >= len(made.events) - len(lost_lease_free) - 50
    assert all(e not in got for e in lost_lease_free if isinstance(e, ev.MetricsScraped))


def test_a_future_format_version_names_both_versions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _make(tmp_path, seconds=5)
    data = bytearray(made.path.read_bytes())
    struct.pack_into("<H", data, 8, 7)
    future = tmp_path / "future.ktrec"
    future.write_bytes(bytes(data))
    with pytest.raises(FormatError) as err:
        Recording(future)
    readable = ", ".join(map(str, range(1, FORMAT_VERSION + 1)))
    assert "version 7" in str(err.value) and f"format version {readable})" in str(err.value)
    assert "newer" in str(err.value)
    assert main(["replay", str(future), "--info"]) == 2
    assert "version 7" in capsys.readouterr().err


def test_not_a_recording(tmp_path: Path) -> None:
    p = tmp_path / "x.ktrec"
    p.write_bytes(b"hello world, not a recording at all")
    with pytest.raises(FormatError, match="not a ktop recording"):
        Recording(p)


# ---------------------------------------------------------------- size


def test_lease_heartbeats_are_compact_runs_not_objects(tmp_path: Path) -> None:
    made = _make(tmp_path, scenario="steady", nodes=600, seconds=30)
    leases = [e for e in made.events if isinstance(e, ev.LeaseRenewed)]
    with Recording(made.path) as rec:
        tags: list[str] = []
        runs = 0  # bytes of the lease runs, before compression
        for h in rec.chunks:
            for r in _stream(rec._payload(h)):
                tags.append(r[0])
                runs += len(msgpack.packb(r)) if r[0] == LEASE_RUN else 0
    assert "LeaseRenewed" not in tags and tags.count(LEASE_RUN) < len(leases) / 10
    # A renewal costs a few bytes before compression (a name reference and two time
    # deltas), well under a whole event written alone; compressed, the whole file (every
    # other record included) is about the size of the leases alone written whole.
    whole = sum(len(msgpack.packb([e.node, e.at, e.renew_time])) for e in leases)
    per_renewal = runs / len(leases)
    assert per_renewal < 0.7 * whole / len(leases)
    assert made.path.stat().st_size < whole * 1.2


# ---------------------------------------------------------------- markers


def test_markers_are_stored_indexed_and_found_by_a_scan(tmp_path: Path) -> None:
    made = _make(tmp_path, seconds=40, mark_at=(5, 30))
    with Recording(made.path) as rec:
        assert rec.markers == made.markers
    crashed = _make(tmp_path, seconds=40, mark_at=(5, 30), close=False, name="c.ktrec")
    with Recording(crashed.path) as rec:
        assert not rec.indexed and rec.markers == crashed.markers


# ---------------------------------------------------------------- write errors


def test_a_write_error_stops_the_recording_and_the_hub_goes_on(tmp_path: Path) -> None:
    sim = Simulator("steady", nodes=30)
    hub = Hub(ClusterModel())
    rec = Recorder(
        str(tmp_path / "w.ktrec"),
        hub.model,
        source={"kind": "demo"},
        settings=WriterSettings(chunk_s=5.0),
    )
    hub.add_sink(rec)
    hub.ingest(sim.start())
    for _ in range(20):
        hub.ingest(sim.advance(1.0))
    assert rec._writer is not None
    rec._writer._file.close()
    rec._writer._file = open("/dev/full", "wb")  # noqa: SIM115 - a full disk
    for _ in range(120):
        hub.ingest(sim.advance(1.0))
    assert not rec.active
    assert "No space left on device" in rec.status().error
    assert hub.sink_errors == []
    published = hub.publish()
    assert published is not None and published.snapshot.at == sim.now
    # What reached the disk before the error still replays.
    with Recording(tmp_path / "w.ktrec") as r:
        assert r.truncated and _all_events(r)


def test_a_new_recording_never_overwrites_a_file(tmp_path: Path) -> None:
    p = tmp_path / "exists.ktrec"
    p.write_bytes(b"precious")
    with pytest.raises(FileExistsError):
        RecordingWriter(str(p), ClusterModel(), source={})
    assert p.read_bytes() == b"precious"


# ---------------------------------------------------------------- headless


def test_headless_recording_for_a_fixed_duration(tmp_path: Path) -> None:
    out = tmp_path / "h.ktrec"
    argv = ["-o", str(out), "--demo", "etcd-slow-disk", "--nodes", "40", "--duration", "90"]
    assert main(["record", *argv]) == 0
    with Recording(out) as rec:
        assert rec.indexed and not rec.truncated
        assert 90 <= rec.end - rec.start < 92
        assert rec.header["source"]["context"] == "sim/etcd-slow-disk"
        events = _all_events(rec)
    sim = Simulator("etcd-slow-disk", nodes=40)
    direct = sim.start()
    while max(e.at for e in direct) - direct[0].at < 90:
        direct += sim.advance(1.0)
    assert events == direct


def test_headless_paced_recording_stops_at_its_duration(tmp_path: Path) -> None:
    out = tmp_path / "p.ktrec"
    argv = ["-o", str(out), "--demo", "steady", "--nodes", "20", "--duration", "30"]
    assert main(["record", *argv, "--speed", "60"]) == 0
    with Recording(out) as rec:
        assert 30 <= rec.end - rec.start <= 32


def test_headless_max_size(tmp_path: Path) -> None:
    out = tmp_path / "m.ktrec"
    argv = ["-o", str(out), "--demo", "steady", "--nodes", "200", "--duration", "3600"]
    assert main(["record", *argv, "--max-size", "60k"]) == 0
    with Recording(out) as rec:
        assert rec.indexed
        assert rec.end - rec.start < 3600
    assert out.stat().st_size < 60_000 + 200_000  # one chunk over at most


# ---------------------------------------------------------------- redaction


def test_redacted_recording_hides_names_consistently(tmp_path: Path) -> None:
    out = tmp_path / "red.ktrec"
    argv = ["-o", str(out), "--demo", "zone-outage", "--nodes", "60", "--duration", "120"]
    assert main(["record", *argv, "--redact"]) == 0
    sim = Simulator("zone-outage", nodes=60)
    real = sim.start() + sim.advance(120)
    secrets = {e.node.name for e in real if isinstance(e, ev.NodeUpserted)}
    secrets |= {e.target.instance for e in real if isinstance(e, ev.MetricsScraped)}
    secrets |= {e.pod.name for e in real if isinstance(e, ev.PendingPodUpserted)}
    namespaces = {e.pod.namespace for e in real if isinstance(e, ev.PendingPodUpserted)}
    with Recording(out) as rec:
        blob = b"".join(
            zstandard.ZstdDecompressor().decompress(rec._bytes(h.offset + FRAME_SIZE, h.end))
            for h in rec.frames
            if h.kind in (Kind.CHUNK, Kind.KEYFRAME)
        )
        assert rec.header["redacted"] is True
        events = _all_events(rec)
        findings_ok = rec.cursor(rec.end).model.snapshot().nodes
    leaked = [s for s in secrets if s.encode() in blob]
    assert leaked == []
    # Namespaces are short words that also name API groups ("batch"): checked where they sit.
    seen_ns = {e.pod.namespace for e in events if isinstance(e, ev.PendingPodUpserted)}
    seen_ns |= {e.quota.namespace for e in events if isinstance(e, ev.QuotaUpserted)}
    assert seen_ns and not seen_ns & namespaces
    assert all(n.startswith("ns-") for n in seen_ns)
    # Consistent: as many distinct nodes, and the same NotReady count as the real run.
    names = {e.node for e in events if isinstance(e, ev.LeaseRenewed)}
    assert len(names) == len({e.node for e in real if isinstance(e, ev.LeaseRenewed)})
    direct = ClusterModel()
    direct.apply_all(real)
    assert (findings_ok.not_ready, findings_ok.unknown) == (
        direct.snapshot().nodes.not_ready,
        direct.snapshot().nodes.unknown,
    )


# ---------------------------------------------------------------- CLI


def test_replay_info_lists_markers_and_gaps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _make(tmp_path, seconds=40, mark_at=(10,))
    assert main(["replay", str(made.path), "--info"]) == 0
    out = capsys.readouterr().out
    assert f"format version {FORMAT_VERSION}" in out and "note 10" in out and "index" in out


def test_an_existing_recording_is_redacted_into_a_shareable_copy(tmp_path: Path) -> None:
    made = _make(tmp_path, seconds=60, mark_at=(20,))
    out = tmp_path / "share.ktrec"
    argv = ["-o", str(out), "--from", str(made.path), "--redact"]
    assert main(["record", *argv]) == 0
    names = {e.node.name for e in made.events if isinstance(e, ev.NodeUpserted)}
    with Recording(made.path) as original, Recording(out) as copy:
        assert copy.header["redacted"] is True
        assert [m.at for m in copy.markers] == [m.at for m in made.markers]
        got = _all_events(copy)
        assert len(got) == len(made.events)
        assert not {e.node for e in got if isinstance(e, ev.LeaseRenewed)} & names
        # Same story with stand-ins: the same snapshot numbers at the end.
        a = original.cursor(original.end).model.snapshot()
        b = copy.cursor(copy.end).model.snapshot()
        assert (a.nodes.ready, a.nodes.not_ready, a.nodes.unknown) == (
            b.nodes.ready,
            b.nodes.not_ready,
            b.nodes.unknown,
        )
        assert [r.pods for r in a.scheduler.reasons] == [r.pods for r in b.scheduler.reasons]


def test_the_player_moves_by_speed_and_every_seek_lands_on_the_direct_state(
    tmp_path: Path,
) -> None:
    from ktop.sources.replay import ReplayPlayer

    made = _make(tmp_path, seconds=200)
    with Recording(made.path) as rec:
        hub = Hub(ClusterModel(rec.model_config))
        player = ReplayPlayer(rec, hub.reset, speed=4.0)
        p0 = player.position
        passed = player.tick(1.0)  # one wall second at 4x
        assert player.position == p0 + 4.0

        # Recorded order is kept: a replay stops before the first event later than its clock.
        def stop(t: float) -> int:
            return next(i for i, e in enumerate(made.events) if e.at > t)

        assert passed == made.events[stop(p0) : stop(p0 + 4.0)]
        hub.ingest(passed)
        for target in (rec.start + 190, rec.start + 20, rec.start + 50, rec.start + 49):
            hub.ingest(player.seek(target))
            direct = _direct(made.events, [target])[target]
            assert _strip(hub.model.snapshot()) == direct, target - rec.start
