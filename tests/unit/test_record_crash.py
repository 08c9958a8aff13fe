"""A recording copied while it is still being written (no close, as after kill -9) replays up to
within the loss window stated in docs/recording-format.md: one chunk (``chunk_s``) and a batch.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ktop.hub import Hub
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.record.writer import DEFAULT_CHUNK_S
from ktop.sources.sim.simulator import Simulator

BATCH_S = 1.0


def _events(path: Path) -> list[ev.Event]:
    with Recording(path) as rec:
        assert not rec.indexed and rec.gaps == []
        return rec.cursor(0.0).take(rec.end)  # from before the first event


def test_a_copy_taken_mid_recording_replays_all_but_the_last_chunk(tmp_path: Path) -> None:
    sim = Simulator("zone-outage", nodes=30, zones=3)
    hub = Hub(ClusterModel())
    path = tmp_path / "live.ktrec"
    rec = Recorder(str(path), hub.model, source={"kind": "demo", "context": "zone-outage"})
    hub.add_sink(rec)
    sent = sim.start()
    hub.ingest(sent)
    started = hub.model.now
    copies: list[tuple[float, Path]] = []
    for k in range(1, 301):
        batch = sim.advance(BATCH_S)
        hub.ingest(batch)
        sent = sent + batch
        if k in (60, 119, 121, 239, 300):  # 119 and 239: just before a chunk is cut
            copy = tmp_path / f"copy-{k}.ktrec"
            shutil.copyfile(path, copy)  # what a crash at this moment leaves on disk
            copies.append((hub.model.now, copy))
    rec.stop()
    for now, copy in copies:
        got = _events(copy)
        assert got == sent[: len(got)]  # a prefix of what was recorded, exactly
        last = got[-1].at if got else started
        assert last >= now - DEFAULT_CHUNK_S - BATCH_S, (now, last)
