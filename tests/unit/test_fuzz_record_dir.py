"""Fuzzing a record directory: whatever it holds (the user's files with look-alike names,
links out of it, damaged recordings and journals, a dead writer's journal, another live
session), a session that starts in it never fails, never deletes or changes a file ktop
did not write, and never deletes what a live writer holds. The length of the run is set
by a Hypothesis profile (tests/fuzzing.py).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.record.journal import tail_of
from ktop.record.rotating import Retention, RotatingRecorder, file_name
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings
from ktop.sources.sim.simulator import Simulator

pytestmark = pytest.mark.fuzz

T0 = 1_767_225_600.0
DAY = 86_400.0
OLD = T0 - 2 * DAY

DIGITS = st.sampled_from(
    [
        "0123456789",
        "".join(chr(0xFF10 + i) for i in range(10)),  # full-width
        "".join(chr(0x0660 + i) for i in range(10)),  # Arabic-Indic
        "".join(chr(0x06F0 + i) for i in range(10)),  # extended Arabic-Indic
    ]
)
LOOKALIKE = st.builds(
    lambda d, n, tail: f"ktop-2026{d[0]}{d[1]}{d[0]}{d[2]}T000000Z{n}.ktrec{tail}",
    DIGITS.filter(lambda d: d[0] != "0"),
    st.sampled_from(["", "-2", "-٢"]),
    st.sampled_from(["\n", " ", ".bak", "\u200b", ".tail\n"]),
)
FOREIGN = st.one_of(LOOKALIKE, st.sampled_from(["notes.txt", "incident.ktrec", "ktop-.ktrec"]))


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """A recording whose writer died mid-chunk, and its journal."""
    path = tmp_path_factory.mktemp("crashed") / "r.ktrec"
    sim = Simulator("steady", nodes=12, zones=3, start_at=OLD)
    hub = Hub(ClusterModel())
    settings = WriterSettings(chunk_s=60.0, keyframe_s=600.0, journal_s=0.0)
    rec = Recorder(str(path), hub.model, source={"kind": "demo"}, settings=settings)
    hub.add_sink(rec)
    hub.ingest(sim.start())
    for _ in range(80):
        hub.ingest(sim.advance(1.0))
    assert rec._writer is not None
    rec._writer.abandon()
    return path.read_bytes(), tail_of(path).read_bytes()


def _always_on(directory: Path, retention: Retention) -> RotatingRecorder:
    hub = Hub(ClusterModel())
    rec = RotatingRecorder(
        directory, hub.model, source={"kind": "demo"}, retention=retention, clock=lambda: T0
    )
    hub.add_sink(rec)
    hub.ingest(Simulator("steady", nodes=12, zones=3, start_at=T0).start())
    return rec


def _state(path: Path) -> tuple[int, bytes]:
    st_ = os.lstat(path)
    return st_.st_ino, (os.readlink(path).encode() if path.is_symlink() else path.read_bytes())


@given(
    foreign=st.lists(FOREIGN, max_size=4, unique=True),
    links=st.integers(0, 2),
    damaged=st.lists(st.tuples(st.binary(max_size=64), st.binary(max_size=64)), max_size=3),
    dead=st.integers(0, 2),
    journal_cut=st.integers(0, 200),
    live=st.booleans(),
    retain_s=st.sampled_from([60.0, DAY]),
    max_bytes=st.sampled_from([1, 1 << 30]),
)
def test_a_session_starting_in_any_directory_keeps_its_promises(
    crashed: tuple[bytes, bytes],
    foreign: list[str],
    links: int,
    damaged: list[tuple[bytes, bytes]],
    dead: int,
    journal_cut: int,
    live: bool,
    retain_s: float,
    max_bytes: int,
) -> None:
    recording, journal = crashed
    with tempfile.TemporaryDirectory() as top:
        outside, directory = Path(top) / "outside", Path(top) / "rec"
        outside.mkdir()
        directory.mkdir()
        names = iter(file_name(OLD + 60 * i, lambda n: False) for i in range(100))
        theirs: list[Path] = []  # files ktop did not write, inside and outside
        for name in foreign:
            (directory / name).write_bytes(b"the user's " + name.encode())
            theirs.append(directory / name)
        for i in range(links):
            target = outside / f"target-{i}.ktrec"
            target.write_bytes(recording)
            tail_of(target).write_bytes(journal)
            link = directory / next(names)
            link.symlink_to(target)
            tail_of(link).symlink_to(tail_of(target))
            theirs += [target, tail_of(target), link, tail_of(link)]
        for body, tail in damaged:
            path = directory / next(names)
            path.write_bytes(body)
            tail_of(path).write_bytes(tail)
        for _ in range(dead):
            path = directory / next(names)
            path.write_bytes(recording)
            tail_of(path).write_bytes(journal[:journal_cut] if journal_cut < 200 else journal)
        for p in directory.iterdir():
            os.utime(p, (OLD, OLD), follow_symlinks=False)
        other = _always_on(directory, Retention(DAY, 1 << 30)) if live else None
        held = [Path(other.path), tail_of(other.path)] if other is not None else []
        for p in held:
            os.utime(p, (OLD, OLD))  # old enough for any retention: only its lock keeps it
        before = {p: _state(p) for p in theirs}
        rec = _always_on(directory, Retention(retain_s, max_bytes))
        assert rec.active and not rec.error, rec.error  # a start never fails on damage
        rec.enforce()
        rec.stop()
        assert {p: _state(p) for p in theirs} == before  # not deleted, not changed
        assert all(p.exists() for p in held)  # a live writer's files stay
        if other is not None:
            other.stop()
        for line in rec.recovered:  # each is one line naming a file
            assert "\n" not in line and (str(directory) in line or line.startswith("ktop-"))
