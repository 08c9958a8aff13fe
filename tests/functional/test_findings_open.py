"""Enter on a finding opens its area's drill-down, at 80x24 and 200x60: the list has a
cursor (↑↓), the highlighted finding stays highlighted across refreshes, and enter on
the second finding opens the second finding's area."""

from __future__ import annotations

import pytest

from ktop.ui.app import KtopApp
from ktop.ui.render.findings import ranked
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.findings import FindingsScreen
from tests.functional.scenarios import scenario_hub


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
async def test_enter_opens_the_highlighted_finding_s_area(size: tuple[int, int]) -> None:
    hub = scenario_hub("apf-saturation")
    shown = ranked(hub.latest.findings)
    areas = [f.area for f in shown]
    # a finding of another area than the first's, to see that the cursor chose it
    second = next(i for i, a in enumerate(areas) if a is not areas[0])
    app = KtopApp(hub)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FindingsScreen)
        assert screen.highlighted_finding == shown[0]
        await pilot.press(*["down"] * second)
        await pilot.pause()
        assert screen.highlighted_finding == shown[second]
        app.pump()  # a refresh keeps the cursor on the same finding
        await pilot.pause()
        assert screen.highlighted_finding is not None
        assert screen.highlighted_finding.code == shown[second].code
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen)
        assert app.screen.area is areas[second]
