"""The chunk journal: a recording killed mid-chunk loses at most the journal's cadence.

The kill is real: a process recording always-on is killed with SIGKILL while it fills a
chunk; the next session in the directory puts the journal back, and the recording then
ends within the promised seconds of the last batch the process said it had recorded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.history import EMPTY_HISTORY
from ktop.record.journal import recover, tail_of
from ktop.record.reader import Recording
from ktop.record.recording_set import RecordingSet
from ktop.record.rotating import Retention, RotatingRecorder
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings
from ktop.sources.sim.simulator import Simulator

START = 1_767_225_600.0


def test_a_crash_mid_chunk_is_put_back_from_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "r.ktrec"
    sim = Simulator("zone-outage", nodes=60, zones=3, start_at=START)
    hub = Hub(ClusterModel())
    settings = WriterSettings(chunk_s=60.0, keyframe_s=600.0, journal_s=0.0)
    rec = Recorder(str(path), hub.model, source={"kind": "demo"}, settings=settings)
    hub.add_sink(rec)
    events = sim.start()
    hub.ingest(events)
    for _ in range(90):  # one chunk written, the second half full
        batch = sim.advance(1.0)
        events += batch
        hub.ingest(batch)
    assert rec._writer is not None
    rec._writer.abandon()  # the process dies: no last chunk, no index; the journal stays
    with Recording(path) as cut:
        assert cut.end <= START + 61  # without the journal, the last 29 s are lost
    assert tail_of(path).exists()
    done = recover(path)
    assert "put back from its journal" in done and not tail_of(path).exists()
    with Recording(path) as whole:
        assert whole.end == pytest.approx(START + 90)
        got = whole.cursor(whole.end).model.snapshot()
    want = ClusterModel()
    want.apply_all(events)
    assert replace(got, seq=0, history=EMPTY_HISTORY) == replace(
        want.snapshot(), seq=0, history=EMPTY_HISTORY
    )
    assert recover(path) == ""  # nothing left to do


def test_a_live_writers_journal_is_left_alone(tmp_path: Path) -> None:
    hub = Hub(ClusterModel())
    settings = WriterSettings(journal_s=0.0)
    rec = Recorder(str(tmp_path / "r.ktrec"), hub.model, source={"kind": "demo"}, settings=settings)
    hub.add_sink(rec)
    sim = Simulator("steady", nodes=30, zones=3, start_at=START)
    hub.ingest(sim.start())
    hub.ingest(sim.advance(1.0))
    assert recover(tmp_path / "r.ktrec") == ""  # locked: its writer is alive
    assert tail_of(tmp_path / "r.ktrec").exists()
    rec.stop()
    assert not tail_of(tmp_path / "r.ktrec").exists()  # a clean close removes it


CHILD = textwrap.dedent(
    """
    import sys, time
    from ktop.hub import Hub
    from ktop.model.cluster import ClusterModel
    from ktop.record.rotating import Retention, RotatingRecorder
    from ktop.record.writer import WriterSettings
    from ktop.sources.sim.simulator import Simulator

    sim = Simulator("zone-outage", nodes=60, zones=3, start_at={start})
    hub = Hub(ClusterModel())
    rec = RotatingRecorder(
        sys.argv[1], hub.model, source={{"kind": "demo"}}, retention=Retention(3600, 1 << 30),
        settings=WriterSettings(chunk_s=600.0, keyframe_s=600.0),
    )
    hub.add_sink(rec)
    hub.ingest(sim.start())
    while True:
        hub.ingest(sim.advance(1.0))
        print(hub.now, flush=True)
        time.sleep({pace})
    """
)
PACE_S = 0.05
"""Wall seconds between the child's 1-second batches."""


def test_kill_9_during_always_on_recording_loses_at_most_the_journal_cadence(
    tmp_path: Path,
) -> None:
    from ktop.record.rotating import JOURNAL_S

    directory = tmp_path / "rec"
    script = CHILD.format(start=START, pace=PACE_S)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(directory)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert child.stdout is not None
    seen = START
    # Long enough into its one chunk (600 s of events) that a chunk-sized loss would show,
    # and several journal cadences of wall time: the child makes a batch per PACE_S.
    wanted = START + 3 * JOURNAL_S / PACE_S
    deadline = time.monotonic() + 120.0  # the child starts and makes 120 batches
    try:
        for line in child.stdout:
            seen = float(line)
            if seen >= wanted or time.monotonic() > deadline:
                break
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert seen >= wanted, "the child recorded too little before the deadline"
    # the next session in the directory puts the journal back
    hub = Hub(ClusterModel())
    nxt = RotatingRecorder(
        directory, hub.model, source={"kind": "demo"}, retention=Retention(3600, 1 << 30)
    )
    assert len(nxt.recovered) == 1, nxt.recovered
    nxt.stop()
    with RecordingSet(directory) as files:
        first = files.files[0]
        # at most one journal cadence of batches lost (and the batch being made)
        lost_s = seen - first.end
        assert lost_s <= JOURNAL_S / PACE_S + 1, (lost_s, first.end, seen)
