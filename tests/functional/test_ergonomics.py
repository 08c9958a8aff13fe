"""Theme cycling, the production banner, OSC 52 copy, the 80x24 overview."""

from __future__ import annotations

import dataclasses
import re

from ktop.model.events import Area
from ktop.ui.app import KtopApp
from ktop.ui.display import Display
from ktop.ui.render.areas import AREA_KEYS
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.overview import OverviewScreen
from ktop.ui.widgets.prod_banner import ProdBanner
from ktop.ui.widgets.snapshot_table import SnapshotTable
from tests.functional.factories import StaticHub, busy_snapshot, findings
from tests.functional.scenarios import scenario_hub

PROD = Display(prod_pattern=re.compile(r"(?i)prod"))


def hub_with_context(context: str) -> StaticHub:
    return StaticHub(dataclasses.replace(busy_snapshot(), context=context), findings())


async def test_t_cycles_through_ktop_themes_and_restyles() -> None:
    app = KtopApp(scenario_hub("zone-outage"), user_themes=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        names = sorted(app.ktop_themes)
        start = app.theme
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        panel = screen.panel(Area.NODES)
        before = panel.renders
        seen = [start]
        for _ in names:
            await pilot.press("T")
            await pilot.pause()
            seen.append(app.theme)
        assert seen[-1] == start
        assert sorted(set(seen)) == names
        # The data colours changed, so the panels were drawn again.
        assert panel.renders > before
        assert app.console.get_style("ktop.bad") == app.ktop_themes[start].rich.styles["ktop.bad"]


async def test_production_banner_on_every_screen() -> None:
    app = KtopApp(hub_with_context("prod-eu-1"), display=PROD, user_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in ("o", *AREA_KEYS.values(), "f"):
            await pilot.press(key)
            await pilot.pause()
            banner = app.screen.query_one(ProdBanner)
            assert banner.display and banner.region.height == 1
            assert "PRODUCTION" in banner.plain and "prod-eu-1" in banner.plain
            assert "only reads" in banner.plain


async def test_no_banner_elsewhere() -> None:
    app = KtopApp(hub_with_context("staging-1"), display=PROD, user_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.screen.query_one(ProdBanner).display


async def test_copy_findings_and_table_with_osc52() -> None:
    app = KtopApp(scenario_hub("zone-outage"), user_themes=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        copied = app.clipboard
        shown = [f for f in app.frame.findings if f.severity.name != "OK"]
        assert shown and all(f.code in copied for f in shown)
        # each finding's second line: since when (a finding with a signal) or no history
        lines = copied.splitlines()
        for f in shown:
            i = next(i for i, line in enumerate(lines) if f.code in line and f.title in line)
            second = lines[i + 1].strip()
            assert second.startswith("since" if f.signal else "no history for this finding")
        await pilot.press("5")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        table = screen.query_one("#table-zones", SnapshotTable)
        table.focus()
        await pilot.press("y")
        await pilot.pause()
        lines = app.clipboard.splitlines()
        assert lines[0].startswith("Zones")
        for key in table.row_keys:
            zone = table.cell_text(key, "zone")
            assert any(zone in line for line in lines[2:])


async def test_overview_at_80x24_shows_all_five_areas() -> None:
    app = KtopApp(scenario_hub("zone-outage"), user_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        for area in Area:
            panel = screen.panel(area)
            region = panel.region
            assert region.width > 0 and region.height >= 4, area
            assert region.right <= 80 and region.bottom <= 24, area
            lines = panel.plain.splitlines()
            assert len(lines) >= 2 and lines[1].strip(), area


async def test_no_color_defaults_to_monochrome_and_strips_colour() -> None:
    app = KtopApp(scenario_hub("steady"), display=Display(no_color=True), user_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "monochrome"
        assert any(type(f).__name__ == "StripColor" for f in app.get_line_filters())
    chosen = KtopApp(
        scenario_hub("steady"),
        theme="colorblind",
        display=Display(no_color=True),
        user_themes=False,
    )
    async with chosen.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert chosen.theme == "colorblind"
