"""``ktop triage --recording`` does work linear in the file: it takes a history frame (a
snapshot of the whole model) every RECORDING_STEP_S only during the history's retention
before the moment triaged, so a file of many short steps (each 100-byte chunk a run of a
thousand Lease renewals 10 s apart) no longer costs its steps times its model: 117 kB of
such chunks kept triage busy for minutes.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ktop.cli import main
from ktop.model.cluster import ClusterModel
from ktop.record.format import Codec, Kind
from ktop.record.frames import RECORDING_STEP_S, most_frames, walk
from ktop.record.reader import Recording
from tests.unit import recfiles

PER_CHUNK = 1_000
"""Renewals per crafted chunk (a chunk may hold 1,000 events however small)."""
STEP_US = int(RECORDING_STEP_S * 1_000_000)
RECORDINGS = Path(__file__).parents[2] / "recordings"


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> list[recfiles.Frame]:
    path = recfiles.record_small(tmp_path_factory.mktemp("work") / "r.ktrec", seconds=20)
    return recfiles.split(path)


def _stepping(frames: list[recfiles.Frame], chunks: int, path: Path) -> Path:
    """``frames`` and ``chunks`` copies of a chunk of renewals one step apart (the same
    bytes but the first time), each after the last.
    """
    start = frames[-1].last + 100
    extra = []
    for c in range(chunks):
        first = start + c * PER_CHUNK * RECORDING_STEP_S
        us = int(first * 1_000_000)
        run = ["~L", ["node-0"] + [1] * (PER_CHUNK - 1), [us] + [STEP_US] * (PER_CHUNK - 1), None]
        last = (us + STEP_US * (PER_CHUNK - 1)) / 1_000_000
        raw = recfiles.pack(run)
        extra.append(recfiles.Frame(Kind.CHUNK, Codec.ZSTD, PER_CHUNK, first, last, raw))
    path.write_bytes(recfiles.join([*frames, *extra]))
    return path


def _triage(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, float]:
    """``ktop triage --recording``: the snapshots it took and the time it took."""
    taken = 0
    observe = ClusterModel.observe

    def counted(model: ClusterModel) -> object:
        nonlocal taken
        taken += 1
        return observe(model)

    monkeypatch.setattr(ClusterModel, "observe", counted)
    began = time.perf_counter()
    assert main(["triage", "--recording", str(path)]) in (0, 1)
    return taken, time.perf_counter() - began


def test_triage_of_n_or_2n_stepping_chunks_takes_a_bounded_number_of_snapshots(
    frames: list[recfiles.Frame],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    n = 4
    one = _triage(_stepping(frames, n, tmp_path / "n.ktrec"), monkeypatch)
    two = _triage(_stepping(frames, 2 * n, tmp_path / "2n.ktrec"), monkeypatch)
    capsys.readouterr()
    most = most_frames(ClusterModel())
    # before: a snapshot per step, n * 1,000 of them (4,000 and 8,000)
    assert one[0] <= most and two[0] <= most, (one, two, most)
    assert two[1] < 3 * one[1] + 1.0, (one, two)  # twice the chunks, at most ~twice the time


def _every_step(rec: Recording) -> ClusterModel:
    """The model after a frame every RECORDING_STEP_S over the whole recording (what
    triage did before, written out again as the reference).
    """
    cursor = rec.cursor(rec.start)
    t = rec.start
    while t < rec.end:
        cursor.fold(t)
        cursor.model.observe()
        t += RECORDING_STEP_S
        nxt = cursor.next_time()
        nxt = rec.end if nxt is None else min(nxt, rec.end)
        if nxt > t + RECORDING_STEP_S:
            t += (nxt - t) // RECORDING_STEP_S * RECORDING_STEP_S
    cursor.fold(rec.end)
    cursor.model.observe()
    return cursor.model


def _walked(rec: Recording) -> ClusterModel:
    cursor = rec.cursor(rec.start)
    walk(cursor, rec.start, rec.end)
    cursor.model.observe()
    return cursor.model


@pytest.mark.parametrize("name", ["zone-outage", "steady"])
def test_a_recording_shorter_than_the_history_has_every_frame_as_before(name: str) -> None:
    with Recording(RECORDINGS / f"{name}.ktrec") as rec:
        assert rec.end - rec.start < ClusterModel().history.retention_s
        assert _walked(rec).history.frames() == _every_step(rec).history.frames()


def test_a_longer_recording_has_the_frames_of_its_last_hour_as_before(
    frames: list[recfiles.Frame], tmp_path: Path
) -> None:
    with Recording(_stepping(frames, 2, tmp_path / "long.ktrec")) as rec:
        walked, reference = _walked(rec).history.frames(), _every_step(rec).history.frames()
        kept = rec.end - ClusterModel().history.retention_s
    assert kept <= walked[0][0] + RECORDING_STEP_S
    assert walked == [f for f in reference if f[0] >= walked[0][0]]
    assert len(walked) >= (rec.end - kept) / RECORDING_STEP_S
