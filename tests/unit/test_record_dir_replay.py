"""``ktop replay DIR``: sessions stay apart, unreadable files are skipped and named, the
source is known, and a directory of many files stays within the limit on open files.

Each test reproduces a failure of the hardening issue as it was reported.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ktop.cli import main
from ktop.commands.dashboard import always_on_recorder
from ktop.compose import Demo, demo_source
from ktop.hub import Hub, HubPolicy
from ktop.model.cluster import ClusterModel
from ktop.record.reader import Recording
from ktop.record.recording_set import RecordingSet
from ktop.record.rotating import Retention, RotatingRecorder, stored
from ktop.record.writer import WriterSettings
from ktop.scrub import Secrets
from ktop.sources.sim.simulator import Simulator

T0 = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC, where every demo's clock starts
DAY = 86_400.0
SETTINGS = WriterSettings(chunk_s=10.0, keyframe_s=40.0)


class Clock:
    """A wall clock the test moves."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _demo(directory: Path, wall: Clock, seconds: int, *, file_s: float = 3600.0,
          mark: str = "", nodes: int = 30) -> None:  # fmt: skip
    """A demo session recorded always-on; its simulated clock starts at ``T0``."""
    sim = Simulator("zone-outage", nodes=nodes, zones=3, seed=1, start_at=T0)
    hub = Hub(ClusterModel())
    rot = RotatingRecorder(
        directory, hub.model, source={"kind": "demo", "context": "sim/zone-outage"},
        retention=Retention(DAY, 1 << 30), clock=wall, settings=SETTINGS, file_s=file_s,
    )  # fmt: skip
    hub.add_sink(rot)
    hub.ingest(sim.start())
    for s in range(seconds):
        wall.now += 1.0
        hub.ingest(sim.advance(1.0))
        if mark and s == seconds // 2:
            rot.mark(mark)
    rot.stop()


def test_two_demo_sessions_are_two_sessions_not_one_short_timeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wall = Clock(T0 + DAY)
    _demo(tmp_path, wall, 180, mark="the first session's marker")
    wall.now += 600
    _demo(tmp_path, wall, 35)
    with RecordingSet(tmp_path, session=1) as first:
        assert first.end - first.start == pytest.approx(180.0)
        [marker] = first.markers
        assert marker.note == "the first session's marker"
        assert first.start <= marker.at <= first.end  # it can be reached
    with RecordingSet(tmp_path) as newest:  # the default: the newest session
        assert newest.number == 2 and newest.end - newest.start == pytest.approx(35.0)
        assert "2 sessions; playing session 2" in newest.notes[-1]
    assert main(["replay", str(tmp_path), "--info"]) == 0
    out = capsys.readouterr().out
    assert "session 1: demo sim/zone-outage, 180 s in 1 files" in out
    assert "session 2: demo sim/zone-outage, 35 s in 1 files" in out
    assert main(["replay", str(tmp_path), "--info", "--session", "3"]) == 2
    assert "expected a session from 1 to 2" in capsys.readouterr().err


def test_a_bad_file_is_skipped_and_named_and_the_rest_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wall = Clock(T0 + DAY)
    _demo(tmp_path, wall, 130, file_s=60.0)
    bad = tmp_path / "ktop-20270101T000000Z.ktrec"
    bad.write_bytes(b"not a recording at all")
    with RecordingSet(tmp_path) as files:
        assert len(files.files) == 3
        [line] = files.skipped
        assert line == f"{bad.name}: not a ktop recording: it does not start with KTOPREC"
        assert files.notes == [f"skipped {line}"]
    assert main(["replay", str(tmp_path), "--info"]) == 0
    assert f"  skipped {bad.name}: " in capsys.readouterr().out


def test_the_always_on_recording_of_a_demo_names_its_source(tmp_path: Path) -> None:
    plan = Demo("zone-outage", nodes=30, zones=3, seed=1, rack_label="")
    opened = demo_source(plan, HubPolicy(Secrets()))
    args = argparse.Namespace(record_dir=str(tmp_path), retain=DAY, max_disk=1 << 30)
    rec = always_on_recorder(args, opened, None)
    assert rec is not None
    rec.stop()
    [f] = stored(tmp_path)
    with Recording(f.path) as r:
        src = r.header["source"]
    assert (src["kind"], src["context"]) == ("demo", "sim/zone-outage")


CHILD = textwrap.dedent(
    """
    import resource, sys
    from ktop.record.recording_set import RecordingSet

    resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, {limit}))
    with RecordingSet(sys.argv[1]) as files:
        cur = files.cursor(files.start)
        for part in files.files:  # played file by file, to its end
            cur.take(part.end)
        print(len(files.files), len(files.skipped), cur.model.now - files.end)
    """
)


def test_a_directory_of_more_files_than_open_files_allowed_plays(tmp_path: Path) -> None:
    wall = Clock(T0 + DAY)
    _demo(tmp_path, wall, 60, file_s=1.0, nodes=6)  # a file per second
    count = len(stored(tmp_path))
    assert count >= 55
    limit = 40  # each open recording holds two descriptors: all at once would need 110+
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(limit=limit), str(tmp_path)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    files, skipped, short_of_end = done.stdout.split()
    assert (int(files), int(skipped)) == (count, 0)
    assert float(short_of_end) == pytest.approx(0.0, abs=1.0)  # played to the last second
