"""Metrics-only mode on screen: every pane says which view it shows; the nodes and
scheduler drill-downs show the controller's zones, plugins and what is unknown."""

from __future__ import annotations

import pytest

from ktop.analysis.rules import evaluate
from ktop.model.area_metrics_only import CANNOT_KNOW
from ktop.model.events import Area, Component
from ktop.model.snapshot import ClusterSnapshot
from ktop.ui.app import KtopApp
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.overview import OverviewScreen
from tests.functional.factories import StaticHub
from tests.unit.test_metrics_only import FIXTURES, SCHED, _cm_text, _model, _scrape

SIZES = [(80, 24), (160, 48)]


def snapshot() -> ClusterSnapshot:
    zones = {"region-1:\x00:zone-a": (40, 40), "region-1:\x00:zone-b": (40, 0)}
    return _model(
        _scrape(Component.CONTROLLER_MANAGER, _cm_text(zones)),
        _scrape(Component.SCHEDULER, (FIXTURES / SCHED).read_text()),
    ).snapshot()


@pytest.mark.parametrize("size", SIZES)
async def test_metrics_only_panes_and_drill_downs(size: tuple[int, int]) -> None:
    snap = snapshot()
    app = KtopApp(StaticHub(snap, evaluate(snap)))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        for area in Area:
            assert "metrics-only view" in screen.panel(area).plain, area
        nodes = screen.panel(Area.NODES).plain
        assert "FullDisruption" in nodes and "zone-a" in nodes
        await pilot.press("5")
        await pilot.pause()
        drill = app.screen
        assert isinstance(drill, DrillScreen)
        assert drill.table("zones").row_count == 2
        assert "metrics-only view (--metrics-only)" in drill.header_text
        assert drill.table("unknown").row_count == len(CANNOT_KNOW[Area.NODES])
        await pilot.press("escape", "4")
        await pilot.pause()
        drill = app.screen
        assert isinstance(drill, DrillScreen)
        assert drill.table("plugins").row_count == 2  # NodeAffinity and TaintToleration
        assert drill.table("unknown").row_count == len(CANNOT_KNOW[Area.SCHEDULER])
