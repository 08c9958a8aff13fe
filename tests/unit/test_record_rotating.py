"""Always-on recording: rotation, retention within both limits, and a record directory
replayed as one timeline (checked against one plain recording of the same session)."""

from __future__ import annotations

import os
import random
from dataclasses import replace
from pathlib import Path

import pytest

from ktop.cli import main
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.history import EMPTY_HISTORY
from ktop.model.snapshot import ClusterSnapshot
from ktop.record.reader import Recording
from ktop.record.recording_set import RecordingSet, SetGap
from ktop.record.rotating import (
    Retention,
    RotatingRecorder,
    StoredFile,
    file_name,
    stored,
    to_drop,
)
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings
from ktop.sources.replay import ReplayPlayer
from ktop.sources.sim.simulator import Simulator
from ktop.ui.rewind import Rewinder

SETTINGS = WriterSettings(chunk_s=10.0, keyframe_s=40.0)
DAY = 86_400.0
T0 = 1_767_225_600.0


class Clock:
    """A wall clock the test moves."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _file(tmp_path: Path, started: float, size: int, ended: float) -> StoredFile:
    path = tmp_path / file_name(started, lambda n: (tmp_path / n).exists())
    path.write_bytes(b"x" * size)
    os.utime(path, (ended, ended))
    return StoredFile(path, size, ended)


def test_whole_files_are_dropped_oldest_first_until_both_limits_hold(tmp_path: Path) -> None:
    now = T0 + 3 * DAY
    files = [
        _file(tmp_path, now - 30 * 3600, 100, now - 29 * 3600),  # ended 29 h ago: too old
        _file(tmp_path, now - 20 * 3600, 400, now - 19 * 3600),
        _file(tmp_path, now - 10 * 3600, 400, now - 9 * 3600),
        _file(tmp_path, now - 3600, 300, now),  # being written
    ]
    assert stored(tmp_path) == files
    day = Retention(retain_s=DAY, max_bytes=10_000)
    assert to_drop(files, now, day, keep=files[-1].path) == files[:1]
    # 1,200 bytes left after the old one; at most 800: the next oldest goes too, no more
    small = Retention(retain_s=DAY, max_bytes=800)
    assert to_drop(files, now, small, keep=files[-1].path) == files[:2]
    # never the file being written, even when it alone is over the limit
    tiny = Retention(retain_s=DAY, max_bytes=10)
    assert to_drop(files, now, tiny, keep=files[-1].path) == files[:3]


def test_files_not_named_by_ktop_are_never_counted_or_deleted(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "incident.ktrec").write_bytes(b"y" * 10_000)
    old = _file(tmp_path, T0, 500, T0 + 60)
    assert stored(tmp_path) == [old]
    clock = Clock(T0 + 2 * DAY)
    hub = Hub(ClusterModel())
    rec = RotatingRecorder(
        tmp_path, hub.model, source={"kind": "demo"}, retention=Retention(DAY, 1 << 30),
        clock=clock,
    )  # fmt: skip
    assert rec.dropped == [old.path] and not old.path.exists()
    assert (tmp_path / "notes.txt").exists() and (tmp_path / "incident.ktrec").exists()
    rec.stop()


def _session(
    directory: Path, clock: Clock, seconds: int, *, plain: Path | None = None, seed: int = 1
) -> None:
    """A demo session recorded always-on (a new file every 60 s of wall clock), and, when
    ``plain`` is given, into one plain recording too from the same hub."""
    # the source clock is the wall clock, as a live source's is
    sim = Simulator("zone-outage", nodes=60, zones=3, seed=seed, start_at=clock.now)
    hub = Hub(ClusterModel())
    rot = RotatingRecorder(
        directory, hub.model, source={"kind": "demo", "context": "zone-outage"},
        retention=Retention(DAY, 1 << 30), clock=clock, settings=SETTINGS, file_s=60.0,
    )  # fmt: skip
    hub.add_sink(rot)
    one = None
    if plain is not None:
        one = Recorder(str(plain), hub.model, source={"kind": "demo"}, settings=SETTINGS)
        hub.add_sink(one)
    hub.ingest(sim.start())
    for _ in range(seconds):
        clock.now += 1.0
        hub.ingest(sim.advance(1.0))
    rot.stop()
    if one is not None:
        one.stop()


def _strip(s: ClusterSnapshot) -> ClusterSnapshot:
    return replace(s, seq=0, history=EMPTY_HISTORY)


def test_a_session_rotates_and_the_directory_replays_as_its_one_recording(
    tmp_path: Path,
) -> None:
    clock = Clock()
    plain = tmp_path / "plain.ktrec"
    rotated = tmp_path / "dir"
    _session(rotated, clock, 200, plain=plain)
    names = [f.path.name for f in stored(rotated)]
    assert len(names) == 4, names  # 200 s in files of 60 s
    with RecordingSet(rotated) as files, Recording(plain) as one:
        assert files.start == pytest.approx(one.start) and files.end == pytest.approx(one.end)
        assert not [g for g in files.gaps if isinstance(g, SetGap)]
        rng = random.Random(7)
        for at in sorted(rng.uniform(one.start, one.end) for _ in range(8)):
            want = _strip(one.cursor(at).model.snapshot())
            assert _strip(files.cursor(at).model.snapshot()) == want, at
        # playing across every file boundary ends where the plain recording ends
        models: list[ClusterModel] = []
        player = ReplayPlayer(files, models.append)
        played = models[-1]
        while not player.at_end:
            for e in player.tick(7.0):
                models[-1].apply(e)
            played = models[-1]
        final = one.cursor(one.end).model
        assert len(models) == 1 + len(names) - 1  # restored once per new file
        assert _strip(played.snapshot()) == _strip(final.snapshot())


def test_two_sessions_are_one_timeline_with_the_gap_between_them(tmp_path: Path) -> None:
    clock = Clock()
    directory = tmp_path / "dir"
    _session(directory, clock, 70)
    clock.now += 600  # ktop was not running for ten minutes
    _session(directory, clock, 70, seed=2)
    with RecordingSet(directory) as files:
        between = [g for g in files.gaps if isinstance(g, SetGap)]
        assert len(between) == 1
        # the first session's two files, ten minutes without a recording, the second's two
        assert len(files.files) == 4
        assert (between[0].start, between[0].end) == (files.files[1].end, files.files[2].start)
        assert between[0].end - between[0].start >= 600
        # a seek into the gap lands at the start of the next session
        landed = files.cursor((between[0].start + between[0].end) / 2)
        assert landed.model.now == pytest.approx(files.files[2].start)


def test_replay_info_describes_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = Clock()
    directory = tmp_path / "dir"
    _session(directory, clock, 130)
    assert main(["replay", str(directory), "--info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{directory}: 1 session\n  session 1: demo zone-outage, 130 s in 3 ")
    assert "\nsession 1: 3 recordings, from " in out
    assert out.count("ktop recording, format version") == 3


def test_an_empty_directory_is_refused_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(tmp_path), "--info"]) == 2
    assert "no ktop-*.ktrec recording in it" in capsys.readouterr().err


def test_the_dashboard_options_have_config_keys_and_bounds() -> None:
    from ktop.cli import DEFAULTS, build_parser

    assert DEFAULTS["retain"] == DAY and DEFAULTS["max_disk"] == 2 << 30
    args = build_parser().parse_args(["--record-dir", "x", "--retain", "6h", "--max-disk", "3G"])
    assert (args.record_dir, args.retain, args.max_disk) == ("x", 6 * 3600.0, 3 << 30)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--max-disk", "10k"])  # under 1 MiB


def test_a_directory_that_cannot_be_made_stops_the_recording_with_the_reason(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the directory should be")
    hub = Hub(ClusterModel())
    rec = RotatingRecorder(
        blocker / "rec", hub.model, source={"kind": "demo"}, retention=Retention(DAY, 1 << 30)
    )
    hub.add_sink(rec)
    hub.ingest(Simulator("steady", nodes=30, zones=3).start())  # the live view goes on
    assert not rec.active
    status = rec.status()
    assert status.error.startswith("always-on recording stopped: ") and "rec" in status.error


def test_rewinding_opens_a_finished_file_once_and_the_file_being_written_again(
    tmp_path: Path,
) -> None:
    clock = Clock()
    directory = tmp_path / "dir"
    sim = Simulator("zone-outage", nodes=60, zones=3, seed=1, start_at=clock.now)
    hub = Hub(ClusterModel())
    rot = RotatingRecorder(
        directory, hub.model, source={"kind": "demo", "context": "zone-outage"},
        retention=Retention(DAY, 1 << 30), clock=clock, settings=SETTINGS, file_s=60.0,
    )  # fmt: skip
    hub.add_sink(rot)
    hub.ingest(sim.start())

    def play(seconds: int) -> None:
        for _ in range(seconds):
            clock.now += 1.0
            hub.ingest(sim.advance(1.0))

    opened: list[Path] = []

    def opener(path: Path) -> Recording:
        opened.append(path)
        return Recording(path)

    rewinder = Rewinder(rot, hub.secrets, opener)
    try:
        play(150)  # two finished files and the one being written
        rewinder.flush()
        first = rewinder.at(clock.now - 100)
        assert len(opened) == 3 and first.start == pytest.approx(T0)
        play(5)
        rewinder.flush()
        second = rewinder.at(clock.now - 2)
        # only the file being written changed: it alone is opened again
        assert opened[3:] == [opened[2]]
        assert second.at == pytest.approx(clock.now - 2, abs=1.0)
        assert second.published.snapshot.at > first.published.snapshot.at
        kept = [rec for _, rec in rewinder._files.values()]
        assert len(kept) == 3
    finally:
        rewinder.close()
        rot.stop()
    assert not rewinder._files
    assert all(rec._f.closed for rec in kept)
