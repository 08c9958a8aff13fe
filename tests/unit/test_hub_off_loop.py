"""Publishing in a worker thread: the loop stays free, and batches that arrive meanwhile are
folded after it, in order, never while the thread reads the model."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from ktop.hub import Hub, HubPolicy
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    ClockTick,
    Event,
    FeedFailed,
    FeedProgress,
    FeedSynced,
    NodeRecord,
    NodeUpserted,
    Readiness,
)
from ktop.model.snapshot import ClusterSnapshot
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings


class SlowModel(ClusterModel):
    """A model whose snapshot waits until the test lets it finish, and that records which
    thread folded and snapshotted it."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.started = threading.Event()
        self.snapshot_threads: list[int] = []
        self.in_snapshot = False
        self.folded_during_snapshot = 0

    def observe(self) -> ClusterSnapshot:
        self.snapshot_threads.append(threading.get_ident())
        self.in_snapshot = True
        self.started.set()
        self.release.wait(5)
        try:
            return super().observe()
        finally:
            self.in_snapshot = False

    def apply_all(self, events: Iterable[Event]) -> None:
        if self.in_snapshot:
            self.folded_during_snapshot += 1
        super().apply_all(events)


def node(name: str) -> NodeUpserted:
    return NodeUpserted(1.0, NodeRecord(name, "r", "z", "k", Readiness.TRUE, None))


async def test_publish_runs_off_the_loop_and_later_batches_wait_for_it() -> None:
    model = SlowModel()
    seen: list[Sequence[Event]] = []
    hub = Hub(model, HubPolicy(sinks=(seen.append,)))
    hub.ingest([node("a"), FeedSynced(1.0, "nodes")])
    task = asyncio.create_task(hub.publish_off_loop())
    while not model.started.is_set():
        await asyncio.sleep(0.001)  # the loop runs while the thread snapshots
    assert hub.publishing
    hub.ingest([node("b")])
    hub.ingest([ClockTick(2.0)])
    assert model.nodes.nodes.keys() == {"a"}  # held, not folded yet
    model.release.set()
    published = await task
    assert published is not None and published.snapshot.nodes.total == 1
    assert model.snapshot_threads[0] != threading.get_ident()
    assert model.folded_during_snapshot == 0
    assert not hub.publishing
    assert model.nodes.nodes.keys() == {"a", "b"}
    assert [type(b[0]).__name__ for b in seen] == ["NodeUpserted", "NodeUpserted", "ClockTick"]
    # What arrived during the publish is published next time.
    model.release.set()
    again = await hub.publish_off_loop()
    assert again is not None and again.snapshot.nodes.total == 2
    assert await hub.publish_off_loop() is None  # nothing new


async def test_a_keyframe_is_refused_while_a_publish_reads_the_model() -> None:
    model = SlowModel()
    hub = Hub(model)
    hub.ingest([node("a"), FeedSynced(1.0, "nodes")])
    assert set(hub.keyframe().nodes) == {"a"}
    task = asyncio.create_task(hub.publish_off_loop())
    while not model.started.is_set():
        await asyncio.sleep(0.001)
    with pytest.raises(RuntimeError, match="publish"):
        hub.keyframe()
    model.release.set()
    await task
    assert hub.keyframe().at == model.now


def test_a_recording_keyframes_the_model_the_hub_folds_into_after_a_reset(
    tmp_path: Path,
) -> None:
    hub = Hub(ClusterModel())
    rec = Recorder(str(tmp_path / "r.ktrec"), hub, source={"kind": "demo"},
                   settings=WriterSettings(chunk_s=1.0, keyframe_s=1.0))  # fmt: skip
    hub.add_sink(rec)
    hub.ingest([node("a")])
    hub.reset(ClusterModel())  # a replay's seek: the hub folds into another model
    hub.ingest([NodeUpserted(3.0, NodeRecord("b", "r", "z", "k", Readiness.TRUE, None))])
    rec.stop()
    with Recording(tmp_path / "r.ktrec") as r:
        last = r.keyframes[-1]
        model = r.cursor(last.first).model
    # the last keyframe is the new model's (b alone), not the first model's
    assert set(model.nodes.nodes) == {"b"}


async def test_a_synced_feed_is_announced_after_its_batch_is_folded() -> None:
    hub = Hub()
    seen: list[int] = []
    hub.listen_synced(lambda: seen.append(hub.model.observe().nodes.total))
    hub.ingest([node("a")])
    hub.ingest([ClockTick(2.0)])
    assert seen == []  # pages and ticks wait for the refresh
    hub.ingest([node("b"), FeedSynced(1.0, "nodes"), FeedSynced(1.0, "leases")])
    assert seen == [2]  # once a batch, with the batch already in the model
    hub.ingest([FeedSynced(3.0, "discovery")])
    hub.ingest([FeedSynced(4.0, "discovery"), FeedSynced(4.0, "nodes")])
    assert seen == [2, 2]  # a feed synced again (discovery's next round) is not news
    hub.ingest([FeedFailed(5.0, "nodes", "watch: 500")])
    hub.ingest([FeedProgress(6.0, "leases", 500, 1000)])  # a relist under way
    hub.ingest([FeedSynced(7.0, "nodes")])
    hub.ingest([FeedSynced(7.0, "leases")])
    assert seen == [2, 2, 2, 2]  # a recovery and a relist completing are
    model = SlowModel()
    held = Hub(model)
    announced: list[bool] = []
    held.listen_synced(lambda: announced.append(model.in_snapshot))
    held.ingest([node("a")])
    task = asyncio.create_task(held.publish_off_loop())
    while not model.started.is_set():
        await asyncio.sleep(0.001)
    held.ingest([FeedSynced(1.0, "nodes")])  # held while the thread reads the model
    assert announced == []
    model.release.set()
    await task
    assert announced == [False]  # folded, and announced, after the publish
