"""The rewind recording's files have no name in their directory, are read back through
``/proc/self/fd``, and retention lets go of the oldest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.record import rewind_files
from ktop.record.recording_set import RecordingSet
from ktop.record.rewind_files import RewindRecorder
from ktop.record.rotating import Retention
from ktop.record.writer import WriterSettings
from ktop.sources.sim.simulator import Simulator

pytestmark = pytest.mark.skipif(not rewind_files.supported(), reason="needs Linux's /proc")

T0 = 1_767_225_600.0
FILE_S = 60.0


def test_rewind_files_are_nameless_readable_and_dropped_whole(tmp_path: Path) -> None:
    clock = [T0]
    hub = Hub(ClusterModel())
    rec = RewindRecorder(
        tmp_path, hub.model, source={"kind": "demo"}, retention=Retention(86_400.0, 1),
        clock=lambda: clock[0], settings=WriterSettings(chunk_s=10.0), file_s=FILE_S,
    )  # fmt: skip
    hub.add_sink(rec)
    sim = Simulator("steady", nodes=20, zones=2, start_at=T0)
    hub.ingest(sim.start())
    for _ in range(200):  # 200 s: files of 60 s; over 1 byte, all but the newest go
        clock[0] += 1.0
        hub.ingest(sim.advance(1.0))
    rec.flush()
    assert os.listdir(tmp_path) == []  # no name, no journal
    assert rec.files_written == 4 and len(rec.dropped) == 3
    kept = rec.stored()
    assert len(kept) == 1 and all(str(f.path).startswith("/proc/self/fd/") for f in kept)
    with RecordingSet(tmp_path, paths=[f.path for f in kept], session_id=rec.session) as files:
        assert files.start == pytest.approx(T0 + 3 * FILE_S, abs=2.0)
        assert files.end == pytest.approx(hub.now, abs=1.0)
    rec.stop()
    rec.close()
    assert rec.stored() == []
