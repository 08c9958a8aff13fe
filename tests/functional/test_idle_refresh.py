"""Render only what changed: while nothing but the clock (and ktop's own cost) changes,
the refresh timer publishes and redraws at every IDLE_EVERY-th refresh, not at each;
data arriving is shown at the very next refresh. Driven through the app's own timer
callback under Pilot."""

from __future__ import annotations

import itertools
from dataclasses import replace

from ktop.hub import Hub
from ktop.model.events import (
    ClockTick,
    FeedSynced,
    NodeRecord,
    NodeUpserted,
    Readiness,
    SelfCost,
)
from ktop.ui.app import IDLE_EVERY, KtopApp


def _cost(at: float) -> SelfCost:
    return SelfCost(
        at=at, window_s=60.0, requests_per_s=0.1, bytes_per_s=100.0, open_watches=5,
        requests_total=10, bytes_total=1000, priority_level="", flow_schema="",
        throttled_total=0, by_destination=(),
    )  # fmt: skip


def _node(at: float, name: str) -> NodeUpserted:
    return NodeUpserted(at, NodeRecord(name, "r", "z", "k", Readiness.TRUE, None))


async def test_an_idle_screen_is_redrawn_every_few_refreshes_and_data_at_once() -> None:
    hub = Hub()
    hub.ingest([_node(1.0, "n-1")])
    app = KtopApp(hub, user_themes=False, refresh_s=3600.0)  # the test drives the timer
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pump_off_loop()
        await pilot.pause()
        shown = [app.frame.published]
        for second in range(2, 2 + 3 * IDLE_EVERY):
            hub.ingest([ClockTick(float(second)), _cost(float(second))])
            await app.pump_off_loop()
            await pilot.pause()
            shown.append(app.frame.published)
        redraws = sum(1 for a, b in itertools.pairwise(shown) if a is not b)
        assert redraws == 3  # one in IDLE_EVERY refreshes while only time passed
        assert app.frame.snapshot.at >= 1.0 + 2 * IDLE_EVERY  # ages still move on

        before = app.frame.published
        hub.ingest([ClockTick(100.0), _node(100.0, "n-2")])
        await app.pump_off_loop()
        await pilot.pause()
        assert app.frame.published is not before  # data: the very next refresh
        assert app.frame.snapshot.nodes.total == 2


async def test_ktop_s_own_flow_schema_first_known_is_data_not_time() -> None:
    hub = Hub()
    hub.ingest([_node(1.0, "n-1"), _cost(1.0)])
    app = KtopApp(hub, user_themes=False, refresh_s=3600.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pump_off_loop()
        await pilot.pause()
        before = app.frame.published
        hub.ingest([ClockTick(2.0), _cost(2.0)])  # rates moved: time only
        await app.pump_off_loop()
        assert app.frame.published is before
        named = replace(_cost(3.0), flow_schema="global-default", priority_level="global-default")
        hub.ingest([ClockTick(3.0), named])
        await app.pump_off_loop()
        await pilot.pause()
        assert app.frame.published is not before
        cost = app.frame.snapshot.self_cost
        assert cost is not None and cost.flow_schema == "global-default"


async def test_a_list_that_completes_is_shown_at_once_not_at_the_next_refresh() -> None:
    hub = Hub()
    hub.ingest([_node(1.0, "n-1")])
    app = KtopApp(hub, user_themes=False, refresh_s=3600.0)  # the timer never fires here
    async with app.run_test(size=(100, 30)) as pilot:
        await app.pump_off_loop()
        await pilot.pause()
        before = app.frame.published
        hub.ingest([_node(2.0, "n-2")])  # a page: shown at the next refresh
        await pilot.pause()
        assert app.frame.published is before
        hub.ingest([_node(3.0, "n-3"), FeedSynced(3.0, "nodes")])  # the list is whole
        for _ in range(50):  # the publish runs in a worker thread: a few loop turns
            await pilot.pause()
            if app.frame.published is not before:
                break
        assert app.frame.published is not before
        assert app.frame.snapshot.nodes.total == 3
