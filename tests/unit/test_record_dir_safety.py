"""A record directory is shared and holds the user's files: retention and journal recovery
delete or rewrite only ktop's own regular files that no live writer holds, and a damaged
file never stops a start (it is set aside, not deleted).

Each test reproduces a failure of the hardening issue as it was reported.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgpack
import pytest

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.record.journal import recover, tail_of
from ktop.record.reader import Recording
from ktop.record.rotating import Retention, RotatingRecorder, file_name
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings
from ktop.sources.sim.simulator import Simulator

DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC
OLD = T0 - 2 * DAY
"""A modification time older than any retention the tests use."""


def _always_on(directory: Path, retention: Retention, now: float = T0) -> RotatingRecorder:
    hub = Hub(ClusterModel())
    rec = RotatingRecorder(
        directory, hub.model, source={"kind": "demo"}, retention=retention, clock=lambda: now
    )
    hub.add_sink(rec)
    sim = Simulator("steady", nodes=30, zones=3, start_at=T0)
    hub.ingest(sim.start())
    hub.ingest(sim.advance(1.0))
    return rec


def _crashed(path: Path) -> None:
    """A recording whose writer died mid-chunk: no last chunk, no index, its journal kept."""
    sim = Simulator("zone-outage", nodes=30, zones=3, start_at=T0)
    hub = Hub(ClusterModel())
    settings = WriterSettings(chunk_s=60.0, keyframe_s=600.0, journal_s=0.0)
    rec = Recorder(str(path), hub.model, source={"kind": "demo"}, settings=settings)
    hub.add_sink(rec)
    hub.ingest(sim.start())
    for _ in range(90):
        hub.ingest(sim.advance(1.0))
    assert rec._writer is not None
    rec._writer.abandon()


def _snapshot(directory: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry of ``directory``: its inode and bytes (a link: its target's name)."""
    out = {}
    for name in os.listdir(directory):
        p = directory / name
        body = os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
        out[name] = (os.lstat(p).st_ino, body)
    return out


def test_retention_of_one_session_leaves_another_live_sessions_files_alone(
    tmp_path: Path,
) -> None:
    first = _always_on(tmp_path, Retention(DAY, 1 << 30))
    mine = Path(first.path)
    os.utime(mine, (OLD, OLD))  # it has not written for a while: the retention's test
    # the second session keeps only 60 s, and checks the directory as it starts
    second = _always_on(tmp_path, Retention(60.0, 1 << 30))
    assert mine.exists() and tail_of(mine).exists()
    assert mine not in second.dropped
    first.stop()
    second.stop()
    with Recording(mine) as rec:  # the first session's file is whole
        assert rec.indexed and rec.chunks


def test_retention_by_size_skips_a_held_file_and_drops_the_next_oldest(tmp_path: Path) -> None:
    first = _always_on(tmp_path, Retention(DAY, 1 << 30))
    mine = Path(first.path)
    old = tmp_path / file_name(OLD + 1, lambda n: False)
    old.write_bytes(b"x" * 4096)
    os.utime(old, (OLD, OLD))
    os.utime(mine, (OLD, OLD))
    second = _always_on(tmp_path, Retention(DAY, 1))  # every file over the size limit
    assert mine.exists() and not old.exists() and second.dropped == [old]
    first.stop()
    second.stop()


def test_recovery_and_retention_never_write_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "incident.ktrec"
    _crashed(target)
    directory = tmp_path / "rec"
    directory.mkdir()
    name = file_name(OLD, lambda n: False)
    (directory / name).symlink_to(target)
    (directory / (name + ".tail")).write_bytes(tail_of(target).read_bytes())
    os.utime(directory / name, (OLD, OLD), follow_symlinks=False)
    before, inside = _snapshot(outside), _snapshot(directory)
    assert recover(directory / name) == ""
    rec = _always_on(directory, Retention(60.0, 1))
    rec.stop()
    assert _snapshot(outside) == before  # the file the link points at is as it was
    after = _snapshot(directory)
    assert {k: after[k] for k in inside} == inside  # the link and the journal beside it stay


@pytest.mark.parametrize(
    "name",
    [
        "ktop-20260101T000000Z.ktrec\n",
        "ktop-\uff12\uff10\uff12\uff16\uff10\uff11\uff10\uff11T000000Z.ktrec",  # full-width
        "ktop-\u0662\u0660\u0662\u0666\u0660\u0661\u0660\u0661T000000Z.ktrec",  # Arabic-Indic
        "ktop-20260101T000000Z-\u0663.ktrec",
    ],
)
def test_retention_never_deletes_a_name_that_only_resembles_a_recordings(
    tmp_path: Path, name: str
) -> None:
    foreign = tmp_path / name
    foreign.write_bytes(b"the user's own file")
    os.utime(foreign, (OLD, OLD))
    rec = _always_on(tmp_path, Retention(60.0, 1))
    rec.stop()
    assert foreign.read_bytes() == b"the user's own file" and rec.dropped == []


def test_an_empty_recording_with_its_journal_is_set_aside_and_the_start_goes_on(
    tmp_path: Path,
) -> None:
    # what a power loss right after a rotation leaves: the new file empty, its journal synced
    _crashed(tmp_path / "model.ktrec")
    name = file_name(T0 - 60, lambda n: False)
    (tmp_path / name).write_bytes(b"")
    journal = tail_of(tmp_path / "model.ktrec").read_bytes()
    (tmp_path / (name + ".tail")).write_bytes(journal)
    rec = _always_on(tmp_path, Retention(DAY, 1 << 30))
    assert rec.active and not rec.error
    assert len(rec.recovered) == 1 and "set aside" in rec.recovered[0]
    assert (tmp_path / (name + ".damaged")).read_bytes() == b""
    assert (tmp_path / (name + ".tail.damaged")).read_bytes() == journal
    rec.stop()
    again = _always_on(tmp_path, Retention(DAY, 1 << 30))  # the next start is quiet
    assert again.recovered == [] and again.active
    again.stop()


@pytest.mark.parametrize("count", [-1, 2**40])
def test_a_journal_entry_count_out_of_bounds_is_refused_with_the_file_named(
    tmp_path: Path, count: int
) -> None:
    name = file_name(T0 - 60, lambda n: False)
    path = tmp_path / name
    _crashed(path)
    bad = msgpack.packb([count, T0, T0 + 1, b"\x90"], use_bin_type=True)
    tail_of(path).write_bytes(bad)
    recording = path.read_bytes()
    rec = _always_on(tmp_path, Retention(DAY, 1 << 30))
    assert rec.active and not rec.error
    [line] = rec.recovered
    assert line.startswith(f"{tail_of(path)}: entry 1: expected an event count from 0 to ")
    assert str(count) in line and "set aside" in line
    assert path.read_bytes() == recording  # the recording itself is untouched
    assert (tmp_path / (name + ".tail.damaged")).read_bytes() == bad
    rec.stop()
