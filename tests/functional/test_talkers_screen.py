"""The APF top talkers on screen, under Pilot at 80x24 and 200x60: the overview names the
client flooding the saturated level, and the APF drill-down lists it first in its talkers
table, whole."""

from __future__ import annotations

import pytest

from ktop.model.events import Area
from ktop.sources.sim.talkers import STORM_USER
from ktop.ui.app import KtopApp
from ktop.ui.render.areas import AREA_KEYS
from ktop.ui.screens.drill import DrillScreen
from tests.functional.scenarios import scenario_hub
from tests.functional.screen import screen_text


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
async def test_the_flooding_client_is_named_on_the_overview_and_in_the_drill_down(
    size: tuple[int, int],
) -> None:
    app = KtopApp(scenario_hub("apf-saturation"))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = screen_text(app)
        top = next(line for line in text.splitlines() if "top:" in line)
        # the whole name where the panel is wide enough, else the service account's short form
        assert STORM_USER in top if size[0] >= 200 else "sa:batch:reporter" in top
        await pilot.press(AREA_KEYS[Area.APF])
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        table = screen.table("talkers")
        assert table.row_keys, "the talkers table has rows"
        first = table.row_keys[0]
        assert first == f"workload-low/{STORM_USER}"
        assert table.cell_text(first, "client") == STORM_USER
        title = str(screen.query_one("#title-talkers").render())
        rows = len(table.row_keys)
        assert f"  {rows} {'row' if rows == 1 else 'rows'}" in title  # counted, "1 row"
        assert "request dumps of 3 instances" in title
