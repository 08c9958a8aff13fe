"""Publishing in a worker thread: the loop stays free, and batches that arrive meanwhile are
folded after it, in order, never while the thread reads the model."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Sequence

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.events import ClockTick, Event, FeedSynced, NodeRecord, NodeUpserted, Readiness
from ktop.model.snapshot import ClusterSnapshot


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

    def snapshot(self) -> ClusterSnapshot:
        self.snapshot_threads.append(threading.get_ident())
        self.in_snapshot = True
        self.started.set()
        self.release.wait(5)
        try:
            return super().snapshot()
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
    hub = Hub(model, sinks=[seen.append])
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
