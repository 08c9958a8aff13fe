"""Low-bandwidth mode lowers what each frame redraws, not only how often frames come."""

from __future__ import annotations

import re
from dataclasses import replace

from ktop.hub import Hub
from ktop.model.events import Area
from ktop.sources.sim.simulator import Simulator
from ktop.ui.app import KtopApp
from ktop.ui.display import Display
from ktop.ui.screens.overview import OverviewScreen
from ktop.ui.widgets.redraw_hold import HOLD_FRAMES
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional.factories import StaticHub
from tests.functional.scenarios import scenario_hub


def app_at(seconds: float, *, lean: bool) -> tuple[KtopApp, StaticHub]:
    published = scenario_hub("zone-outage", seconds).latest
    hub = StaticHub(published.snapshot, published.findings)
    return KtopApp(hub, display=Display(low_bandwidth=lean), user_themes=False), hub


def with_history(seconds: int = 60) -> Hub:
    """A demo hub that published once per simulated second (so sparklines have points)."""
    sim = Simulator("etcd-slow-disk", nodes=300, seed=7)
    hub = Hub()
    hub.ingest(sim.start())
    for _ in range(seconds):
        hub.ingest(sim.advance(1.0))
        assert hub.publish() is not None
    return hub


def overview(app: KtopApp) -> OverviewScreen:
    screen = app.screen
    assert isinstance(screen, OverviewScreen)
    return screen


async def test_numbers_only_changes_wait_for_every_third_frame_state_changes_do_not() -> None:
    app, hub = app_at(240, lean=True)
    later = scenario_hub("zone-outage", 265).latest.snapshot
    slow = scenario_hub("etcd-slow-disk").latest.snapshot
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        panel = overview(app).panel(Area.ETCD)
        before = panel.plain
        # etcd's numbers move, its state (no symbol on any member) does not
        moved = replace(hub.latest.snapshot, etcd=later.etcd, seq=hub.latest.snapshot.seq + 1)
        assert later.etcd != hub.latest.snapshot.etcd
        for _ in range(HOLD_FRAMES - 1):
            hub.set(moved)
            app.pump()
            await pilot.pause()
            assert panel.plain == before
        hub.set(moved)
        app.pump()
        await pilot.pause()
        assert panel.plain != before  # the third frame shows the new numbers
        shown = panel.plain
        # a slow disk changes etcd's state: drawn at the next frame
        hub.set(replace(moved, etcd=slow.etcd, seq=moved.seq + 1))
        app.pump()
        await pilot.pause()
        assert panel.plain != shown and "✖" in panel.plain.splitlines()[0]


async def test_normal_mode_draws_new_numbers_at_once() -> None:
    app, hub = app_at(240, lean=False)
    later = scenario_hub("zone-outage", 265).latest.snapshot
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        panel = overview(app).panel(Area.ETCD)
        before = panel.plain
        hub.set(replace(hub.latest.snapshot, etcd=later.etcd, seq=hub.latest.snapshot.seq + 1))
        app.pump()
        await pilot.pause()
        assert panel.plain != before


async def test_no_sparklines_and_a_coarse_clock() -> None:
    hub = with_history()
    normal = KtopApp(hub, user_themes=False)
    async with normal.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert any(overview(normal).panel(a).sparks for a in Area)  # or this test is void
        status = overview(normal).query_one(StatusBar).plain
        assert re.search(r"\d\d:\d\d:\d\dZ", status)
    lean = KtopApp(hub, display=Display(low_bandwidth=True), user_themes=False)
    async with lean.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert not any(overview(lean).panel(a).sparks for a in Area)
        status = overview(lean).query_one(StatusBar).plain
        assert re.search(r"\d\d:\d\dZ", status) and not re.search(r"\d\d:\d\d:\d\dZ", status)
        assert "nodes <15s" in status  # a real age, in 15 s steps
        assert overview(lean).panel(Area.NODES).border_subtitle == "<15s"
