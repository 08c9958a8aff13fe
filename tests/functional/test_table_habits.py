"""``/`` filter, sort by the column under the cursor, mouse clicks."""

from __future__ import annotations

import re

import pytest
from textual.binding import Binding
from textual.pilot import Pilot

from ktop.analysis.findings import Severity
from ktop.model.events import Area
from ktop.ui.app import KtopApp
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.findings import FindingsScreen
from ktop.ui.screens.help import HelpScreen
from ktop.ui.widgets.filter_input import FilterInput
from tests.functional.scenarios import scenario_hub
from tests.functional.screen import screen_text


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
        not_ready = screen.table("not_ready")  # a long list: its first rows are held
        assert not_ready.matched == len(expected_nodes)
        assert len(not_ready.row_keys) == min(len(expected_nodes), not_ready.window_size)
        assert set(not_ready.row_keys) <= set(expected_nodes)
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
        held = table.window_size  # a long list: the first rows of the order are held
        assert table.row_keys == sorted(names)[:held]
        await pilot.press("s")
        await pilot.pause()
        assert table.row_keys == sorted(names, reverse=True)[:held]


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
        for owner in (KtopApp, DrillScreen, FindingsScreen):
            for binding in Binding.make_bindings(owner.BINDINGS):
                what = binding.tooltip.split(";")[0]
                assert what in " ".join(screen.plain.split()), binding.action


FINDING_LINE = re.compile(
    r"^\S (CRITICAL|WARNING|UNKNOWN|INFO)\s+(KT-[A-Z]+-\d+)\s+\[(\w+)\]\s+(.*)$"
)


def listed(text: str) -> list[tuple[str, str]]:
    """(code, title) of every finding in the findings list's text."""
    return [
        (m.group(2), m.group(4).strip())
        for m in (FINDING_LINE.match(line) for line in text.splitlines())
        if m
    ]


async def type_text(pilot: Pilot[None], text: str) -> None:
    for ch in text:
        await pilot.press({"-": "minus", ":": "colon", " ": "space"}.get(ch, ch))


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_slash_filters_the_findings_by_code_area_and_text(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("apf-saturation"), user_themes=False)
    every = [f for f in app.hub.latest.findings if f.severity > Severity.OK]
    by_area = sorted((f.code, f.title) for f in every if f.area is Area.APISERVERS)
    by_code = sorted((f.code, f.title) for f in every if f.code.startswith("KT-APF-"))
    instance = "apiserver-1"
    by_text = sorted(
        (f.code, f.title) for f in every if any(instance in t for t in (f.title, *f.evidence))
    )
    assert by_area and by_code and by_text
    assert len({*by_area, *by_code, *by_text}) < len(every)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FindingsScreen)
        assert len(listed(screen.list_text)) == len(every)
        for needle, expected in (("apiservers", by_area), ("KT-APF", by_code), (instance, by_text)):
            await pilot.press("slash")
            line = screen.query_one(FilterInput)
            assert line.display and line.has_focus
            await type_text(pilot, needle)
            await pilot.press("enter")
            await pilot.pause()
            assert not line.display
            assert sorted(listed(screen.list_text)) == expected, needle
            shown = screen_text(app)
            assert f"{len(expected)} of {len(every)} match" in shown
            assert listed(screen.list_text)[0][0] in shown  # the first match is on screen
            # the next filter starts from an empty line
            await pilot.press("slash")
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen and screen.filter_text == ""
            assert len(listed(screen.list_text)) == len(every)
        # y copies what the filter shows
        await pilot.press("slash")
        await type_text(pilot, "KT-APF")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert sorted(listed(app.clipboard)) == by_code
