"""``/`` filter, sort by the column under the cursor, mouse clicks."""

from __future__ import annotations

from ktop.model.events import Area
from ktop.ui.app import KtopApp
from ktop.ui.screens.drill import DrillScreen, FilterInput
from ktop.ui.screens.help import HelpScreen
from tests.functional.scenarios import scenario_hub


def nodes_app() -> KtopApp:
    return KtopApp(scenario_hub("zone-outage"), user_themes=False)


async def test_slash_filters_every_table_of_the_drill_down() -> None:
    app = nodes_app()
    snap = app.hub.latest.snapshot.nodes
    zone = snap.zones[1].zone
    expected_racks = sorted(r.rack for r in snap.racks if zone in f"{r.zone} {r.rack}")
    expected_nodes = sorted(
        n.name for n in snap.not_ready_nodes if zone in f"{n.name} {n.zone} {n.rack}"
    )
    assert expected_racks and expected_nodes
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        await pilot.press("slash")
        line = screen.query_one(FilterInput)
        assert line.display and line.has_focus
        for ch in zone:
            await pilot.press(ch if ch != "-" else "minus")
        await pilot.pause()
        racks = screen.table("racks").row_keys
        assert sorted(k.rsplit("/", 1)[-1] for k in racks) == expected_racks
        assert sorted(screen.table("not_ready").row_keys) == expected_nodes
        assert [k for k in screen.table("zones").row_keys if zone in k]
        assert "match" in screen.query_one("#title-racks").content.plain  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert not line.display
        assert screen.table("racks").filter_text == zone
        # escape on the open filter line clears it and stays on the drill-down
        await pilot.press("slash")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        assert screen.table("racks").filter_text == ""
        assert len(screen.table("racks").row_keys) == len(snap.racks)


async def test_s_sorts_by_the_column_under_the_cursor() -> None:
    app = nodes_app()
    names = [n.name for n in app.hub.latest.snapshot.nodes.not_ready_nodes]
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        table = screen.table("not_ready")
        table.focus()
        table.move_cursor(column=0)
        await pilot.press("s")
        await pilot.pause()
        assert table.sort_by == "name"
        assert table.row_keys == sorted(names)
        await pilot.press("s")
        await pilot.pause()
        assert table.row_keys == sorted(names, reverse=True)


async def test_click_on_a_panel_opens_its_drill_down() -> None:
    app = nodes_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.click("#panel-etcd")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen) and screen.area is Area.ETCD


async def test_help_lists_the_bound_keys() -> None:
    app = nodes_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        for action, what in {**KtopApp.KEY_HELP, **DrillScreen.KEY_HELP}.items():
            assert what.split(";")[0] in " ".join(screen.plain.split()), action
