"""The list-watch loop against a fake apiserver: pagination, resume, 410 relist, back-off."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import pytest

from ktop.model.events import Event, FeedFailed, FeedSynced, QuotaDeleted, QuotaUpserted
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.handlers import QuotasHandler
from ktop.sources.live.listwatch import Backoff, ListWatch
from ktop.sources.live.reads import Resource
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import Answer, Call, FakeApi, status_body

PATH = "/api/v1/resourcequotas"
REAL_SLEEP = asyncio.sleep


def quota(name: str, rv: str) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": name, "resourceVersion": rv},
        "status": {"hard": {"pods": "10"}, "used": {"pods": "1"}},
    }


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, events: Sequence[Event]) -> None:
        self.events.extend(events)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the loop's sleeps instead of waiting them out."""
    asked: list[float] = []

    async def fake(delay: float, *a: Any) -> None:
        asked.append(delay)
        await REAL_SLEEP(0)

    monkeypatch.setattr("ktop.sources.live.listwatch.asyncio.sleep", fake)
    return asked


async def run_until(lw: ListWatch, emit: Recorder, done: Any, timeout: float = 5.0) -> None:
    task = asyncio.create_task(lw.run(emit))
    try:
        for _ in range(int(timeout * 1000)):
            if done():
                return
            await REAL_SLEEP(0.001)
        pytest.fail(f"not done; events: {emit.events}")
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


def make(route: Any, meter: CostMeter | None = None) -> tuple[ListWatch, FakeApi]:
    api = FakeApi(route)
    t = KubeTransport(api, meter or CostMeter())  # type: ignore[arg-type]
    res = Resource("resourcequotas", PATH, "resourcequotas", page_size=2)
    return ListWatch(t, res, QuotasHandler(), lambda: 1.0, rng=random.Random(7)), api


async def test_paginated_list_then_watch_resumes_from_the_last_version(sleeps: list[float]) -> None:
    hold = asyncio.Event()
    watches: list[Call] = []

    def route(c: Call) -> Answer:
        if c.verb == "watch":
            watches.append(c)
            if len(watches) == 1:
                return Answer(lines=[
                    {"type": "ADDED", "object": quota("d", "12")},
                    {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "15"}}},
                ])  # fmt: skip
            return Answer(lines=[{"type": "DELETED", "object": quota("a", "16")}], hold=hold)
        if "continue" not in c.query:
            return Answer(
                body={"metadata": {"continue": "p2"}, "items": [quota("a", "1"), quota("b", "2")]}
            )
        return Answer(body={"metadata": {"resourceVersion": "10"}, "items": [quota("c", "3")]})

    meter = CostMeter()
    lw, api = make(route, meter)
    emit = Recorder()
    await run_until(lw, emit, lambda: len(emit.of(QuotaDeleted)) == 1 and meter.open_watches)
    lists = [c for c in api.calls if c.verb == "list"]
    assert [c.query.get("continue") for c in lists] == [None, "p2"]
    assert all(c.query["limit"] == "2" for c in lists)
    # The first watch starts at the list's version, the second at the bookmark's.
    assert [w.query["resourceVersion"] for w in watches] == ["10", "15"]
    assert all(w.query["allowWatchBookmarks"] == "true" for w in watches)
    assert [e.quota.name for e in emit.of(QuotaUpserted)] == ["a", "b", "c", "d"]
    assert emit.of(FeedSynced) and lw.keys == {"ns/b", "ns/c", "ns/d"}
    assert lw.relists == 0
    # Every request counted; the held watch was open, and closed on cancellation.
    assert meter.requests_total == len(api.calls) and meter.open_watches == 0


async def test_410_relists_and_reports_what_vanished(sleeps: list[float]) -> None:
    hold = asyncio.Event()
    lists = 0

    def route(c: Call) -> Answer:
        nonlocal lists
        if c.verb == "watch":
            if lists == 1:
                return Answer(lines=[{"type": "ERROR", "object": status_body(410, "too old")}])
            return Answer(lines=[], hold=hold)
        lists += 1
        items = [quota("a", "1"), quota("b", "2")] if lists == 1 else [quota("b", "5")]
        return Answer(body={"metadata": {"resourceVersion": str(lists * 10)}, "items": items})

    lw, _ = make(route)
    emit = Recorder()
    await run_until(lw, emit, lambda: len(emit.of(FeedSynced)) == 2)
    assert lw.relists == 1
    failed = emit.of(FeedFailed)
    assert len(failed) == 1 and failed[0].reason.startswith("410 Gone on resourcequotas")
    assert [(e.namespace, e.name) for e in emit.of(QuotaDeleted)] == [("ns", "a")]
    # The relist waits a jittered 0.5-3 s, never immediately.
    assert len(sleeps) == 1 and 0.5 <= sleeps[0] <= 3.0


async def test_failures_back_off_and_name_the_missing_permission(sleeps: list[float]) -> None:
    calls = 0

    def route(c: Call) -> Answer:
        nonlocal calls
        calls += 1
        if calls <= 2:
            return Answer(403, status_body(403, 'cannot list resource "resourcequotas"'))
        return Answer(500, status_body(500, "etcdserver: request timed out"))

    lw, _ = make(route)
    emit = Recorder()
    await run_until(lw, emit, lambda: len(emit.of(FeedFailed)) >= 6)
    reasons = [e.reason for e in emit.of(FeedFailed)]
    assert reasons[0].startswith("403 Forbidden: RBAC does not allow 'list' on resourcequotas")
    assert "500 on list resourcequotas: etcdserver: request timed out" in reasons[2:]
    # Full jitter under a doubling cap: delay n is within [0, min(60, 2**(n-1))].
    assert len(sleeps) >= 5
    for n, delay in enumerate(sleeps[:6], start=1):
        assert 0 <= delay <= min(60.0, 2.0 ** (n - 1))


def test_backoff_grows_to_its_cap_and_resets() -> None:
    b = Backoff(base_s=1.0, cap_s=8.0, rng=random.Random(1))
    caps = []
    for _ in range(8):
        b.next_delay()
        caps.append(min(b.cap_s, b.base_s * 2 ** (b.attempt - 1)))
    assert caps == [1, 2, 4, 8, 8, 8, 8, 8]
    delays = [Backoff(rng=random.Random(s)).next_delay() for s in range(50)]
    assert all(0 <= d <= 1.0 for d in delays) and len(set(delays)) > 1  # jittered
    b.reset()
    assert b.attempt == 0


async def test_nodes_are_listed_with_metadata_and_watched_without(sleeps: list[float]) -> None:
    from ktop.model.events import NodeDeleted, NodeUpserted
    from ktop.sources.live.handlers import NodesHandler
    from ktop.sources.live.reads import WATCHES

    hold = asyncio.Event()
    cols = [{"name": "Name"}, {"name": "Status"}, {"name": "Roles"}]
    labels = {"topology.kubernetes.io/zone": "z1", "rack": "r7"}

    def route(c: Call) -> Answer:
        if c.verb == "watch":
            # includeObject=None: a Table per event, rows without "object"
            def event(kind: str, name: str, status: str, rv: str) -> dict[str, Any]:
                table = {"columnDefinitions": cols, "rows": [{"cells": [name, status, "w"]}]}
                return {"type": kind, "object": {**table, "metadata": {"resourceVersion": rv}}}

            return Answer(
                lines=[
                    event("MODIFIED", "n1", "NotReady", "11"),
                    event("ADDED", "n2", "Ready", "12"),
                    event("DELETED", "n1", "NotReady", "13"),
                ],
                hold=hold,
            )
        row = {
            "cells": ["n1", "Ready", "w"],
            "object": {"metadata": {"name": "n1", "labels": labels}},
        }
        body = {"columnDefinitions": cols, "rows": [row], "metadata": {"resourceVersion": "10"}}
        return Answer(body=body)

    api = FakeApi(route)
    t = KubeTransport(api, CostMeter())  # type: ignore[arg-type]
    wanted: list[str] = []
    (nodes,) = [w for w in WATCHES if w.feed == "nodes"]
    lw = ListWatch(t, nodes, NodesHandler("rack", wanted.append), lambda: 1.0)
    emit = Recorder()
    await run_until(lw, emit, lambda: bool(emit.of(NodeDeleted)))
    (listed,) = [c for c in api.calls if c.verb == "list"]
    (watch,) = [c for c in api.calls if c.verb == "watch"]
    assert listed.query["includeObject"] == "Metadata"
    assert watch.query["includeObject"] == "None"
    assert watch.query["resourceVersion"] == "10"
    ups = [
        (e.node.name, e.node.zone, e.node.rack, e.node.ready.value) for e in emit.of(NodeUpserted)
    ]
    # n1 keeps its listed place; n2, new to the watch, waits for its whole object.
    assert ups == [("n1", "z1", "r7", "True"), ("n1", "z1", "r7", "False")]
    assert wanted == ["n1", "n2"]
    assert [e.name for e in emit.of(NodeDeleted)] == ["n1"]


async def test_a_page_of_rows_is_let_go_row_by_row_as_it_is_folded(
    sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A zone read whole is one page of up to 100,000 rows: each row must be free to go
    once folded, not held until the page's end (docs/cost.md, "The node list")."""
    from ktop.model.events import NodeUpserted
    from ktop.sources.live.handlers import NodesHandler
    from ktop.sources.live.reads import WATCHES

    cols = [{"name": "Name"}, {"name": "Status"}, {"name": "Roles"}]
    names = [f"n{i}" for i in range(5)]
    rows: list[Any] = [
        {
            "cells": [n, "Ready", "w"],
            "object": {"metadata": {"name": n, "labels": {"topology.kubernetes.io/zone": "z"}}},
        }
        for n in names
    ]
    body = {"columnDefinitions": cols, "rows": rows, "metadata": {"resourceVersion": "10"}}
    held_at_fold: list[int] = []

    class Watching(NodesHandler):
        def upsert(self, at: float, item: Any) -> Sequence[Event]:
            held_at_fold.append(sum(r is not None for r in rows))
            return super().upsert(at, item)

    def route(c: Call) -> Answer:
        if c.verb == "watch":
            return Answer(lines=[], hold=asyncio.Event())
        return Answer(body=body)

    from ktop.sources.live import transport

    # The page as ktop decodes it is ``body`` itself, so that its rows can be watched.
    monkeypatch.setattr(transport.Response, "json", lambda self: body if self.body else {})
    api = FakeApi(route)
    t = KubeTransport(api, CostMeter())  # type: ignore[arg-type]
    (nodes,) = [w for w in WATCHES if w.feed == "nodes"]
    lw = ListWatch(t, nodes, Watching("rack", lambda _: None), lambda: 1.0)
    emit = Recorder()
    await run_until(lw, emit, lambda: len(emit.of(NodeUpserted)) == len(names))
    assert [e.node.name for e in emit.of(NodeUpserted)] == names
    # Row k is folded while only the rows after it are still held by the page.
    assert held_at_fold == [len(names) - 1 - k for k in range(len(names))]


async def test_a_long_list_says_how_far_it_is_after_each_page(sleeps: list[float]) -> None:
    from ktop.model.cluster import ClusterModel
    from ktop.model.events import FEED_NODES, FeedProgress

    hold = asyncio.Event()
    total = 5
    names = [f"q{i}" for i in range(total)]

    def route(c: Call) -> Answer:
        if c.verb == "watch":
            return Answer(lines=[], hold=hold)
        page = int(str(c.query.get("continue") or "0"))
        items = [quota(n, str(page + i)) for i, n in enumerate(names[page : page + 2])]
        after = page + len(items)
        meta: dict[str, Any] = {"resourceVersion": "10"}
        if after < total:  # as the apiserver: the token, and how many are left
            meta = {"continue": str(after), "remainingItemCount": total - after}
        return Answer(body={"metadata": meta, "items": items})

    lw, _ = make(route)
    emit = Recorder()
    await run_until(lw, emit, lambda: bool(emit.of(FeedSynced)))
    progress = emit.of(FeedProgress)
    # after each page but the last: listed so far, and listed + remainingItemCount
    assert [(p.feed, p.listed, p.expected) for p in progress] == [
        ("resourcequotas", 2, total),
        ("resourcequotas", 4, total),
    ]
    # progress comes after the page's objects and before the next page's
    order = [type(e).__name__ for e in emit.events if not isinstance(e, FeedSynced)]
    assert order.index("FeedProgress") == 2

    # in the model, the nodes pane says how far its list is until the list is done
    model = ClusterModel()
    model.apply(FeedProgress(1.0, FEED_NODES, 41_500, 100_000))
    snap = model.snapshot().nodes
    assert not snap.nodes_known and snap.listed == (41_500, 100_000)
    assert snap.nodes_reason == "nodes 41,500 / ~100,000 listed so far"
    model.apply(FeedProgress(2.0, FEED_NODES, 42_000, None))
    assert model.snapshot().nodes.nodes_reason == "nodes 42,000 listed so far"
    model.apply(FeedSynced(3.0, FEED_NODES))
    done = model.snapshot().nodes
    assert done.nodes_known and done.listed is None and not model.listing


def test_the_nodes_panel_says_how_far_the_first_list_is_instead_of_question_marks() -> None:
    from ktop.model.cluster import ClusterModel
    from ktop.model.events import FEED_NODES, FeedProgress, NodeRecord, NodeUpserted, Readiness
    from ktop.ui.render.level import Level
    from ktop.ui.render.nodes import panel

    model = ClusterModel()
    # the first page: two Ready nodes of zone a, 98 more to come
    for name in ("n1", "n2"):
        rec = NodeRecord(name, "r", "a", "", Readiness.TRUE, None)
        model.apply(NodeUpserted(1.0, rec))
    model.apply(FeedProgress(1.0, FEED_NODES, 2, 100))
    shown = panel(model.snapshot().nodes, None, rows=8, width=80)
    assert "nodes 2 / ~100 listed so far" in shown.plain
    assert "? ready" not in shown.plain
    assert shown.level is Level.UNKNOWN  # a partial list is never called healthy


def test_pending_pods_are_unknown_while_their_first_list_is_under_way() -> None:
    from ktop.model.cluster import ClusterModel
    from ktop.model.events import (
        FEED_PENDING_PODS,
        FeedProgress,
        PendingPodRecord,
        PendingPodUpserted,
        PodWait,
    )

    model = ClusterModel()
    pod = PendingPodRecord("ns", "p1", 0.0, PodWait.UNSCHEDULABLE)
    model.apply(PendingPodUpserted(1.0, pod))
    model.apply(FeedProgress(1.0, FEED_PENDING_PODS, 500, 40_000))
    s = model.snapshot().scheduler
    assert not s.pods_known and s.pods_reason == "pending pods 500 / ~40,000 listed so far"
    model.apply(FeedSynced(2.0, FEED_PENDING_PODS))
    s = model.snapshot().scheduler
    assert s.pods_known and not s.pods_reason
    # a relist after a 410 keeps what the feed had: still known while it pages
    model.apply(FeedProgress(3.0, FEED_PENDING_PODS, 500, 40_000))
    assert model.snapshot().scheduler.pods_known
