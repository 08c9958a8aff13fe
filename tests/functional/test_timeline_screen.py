"""The incident timeline screen (``i``) at 80x24 and 200x60, its filter, and the marks it
puts under the trend charts. The zone that falls comes from the published snapshots'
own zone states, not from the timeline."""

from __future__ import annotations

import pytest

from ktop.analysis.triage.timeline import EventKind
from ktop.model.events import Area
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.text import fmt_clock
from ktop.ui.app import KtopApp
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.timeline import TimelineScreen
from ktop.ui.widgets.trend_chart import TrendChart
from tests.functional.scenarios import stepped

SIZES = [(80, 24), (200, 60)]


def fully_down(s: ClusterSnapshot) -> float | None:
    return float(sum(z.state is ZoneState.FULL_DISRUPTION for z in s.nodes.zones))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x60"])
async def test_the_timeline_lists_the_zone_s_fall_oldest_first_and_filters(
    size: tuple[int, int],
) -> None:
    hub, truth, snaps = stepped("zone-outage", 240, fully_down)
    first_down = next(at for at, n in truth if n >= 1)
    zone = next(
        z.zone
        for s in snaps
        if s.at == first_down
        for z in s.nodes.zones
        if z.state is ZoneState.FULL_DISRUPTION
    )
    app = KtopApp(hub)
    async with app.run_test(size=size) as pilot:
        await pilot.press("i")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        lines = screen.list_text.splitlines()
        events = app.frame.published.timeline
        assert len(lines) == len(events) >= 3
        fall = [i for i, line in enumerate(lines) if "→ FullDisruption" in line]
        assert len(fall) == 1 and zone in lines[fall[0]]
        assert lines[fall[0]].split()[0] == fmt_clock(first_down)
        # oldest first: the lease lag crossing and the diagnosis come before the fall
        kinds = [e.kind for e in events]
        assert kinds.index(EventKind.ZONE) > kinds.index(EventKind.THRESHOLD)
        await pilot.press("slash", *zone, "enter")
        await pilot.pause()
        shown = screen.list_text.splitlines()
        assert shown and all(zone in line for line in shown)
        assert len(shown) == sum(zone in e.line for e in events)
        await pilot.press("slash", "escape")
        await pilot.pause()
        assert len(screen.list_text.splitlines()) == len(events)


async def test_the_nodes_chart_marks_the_zone_s_fall_in_its_column() -> None:
    hub, _, _ = stepped("zone-outage", 240, fully_down)
    app = KtopApp(hub)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen) and app.screen.area is Area.NODES
        chart = app.screen.query(TrendChart).first()
        data = chart.data
        assert data is not None
        falls = [e for e in app.frame.published.timeline if e.kind is EventKind.ZONE]
        assert falls
        span = (data.end - data.start) / max(1, chart.content_size.width)
        for e in falls:
            cols = [c for c, m in chart.marks.items() if m == "Z"]
            # the mark's column holds the event's time
            assert any(
                data.start + c * span <= e.at <= data.start + (c + 1) * span for c in cols
            ), (e.at, cols)
