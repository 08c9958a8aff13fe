"""The drill-downs' filter on every table of every area: a filter that matches nothing
shows no row, one that matches one row shows that row, a filter every row matches shows
them all, clearing it shows every row again, and a kept filter holds across refreshes
(rows shown always match, and their cells follow the data). The rows expected come from
the table's own spec (the view), filtered here by plain substring, not from the widget."""

from __future__ import annotations

import pytest

from ktop.model.events import Area
from ktop.ui.app import KtopApp
from ktop.ui.render.areas import AREA_KEYS, drill_view
from ktop.ui.render.view import Row, TableSpec
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.widgets.snapshot_table import MIN_WINDOW, SnapshotTable
from tests.functional.scenarios import SCENARIO_TIMES, scenario_events

NOWHERE = "no-row-has-this-text"
SCENARIO_OF: dict[Area, str] = {
    Area.APF: "apf-saturation",
    Area.APISERVERS: "apiserver-skew",
    Area.ETCD: "etcd-slow-disk",
    Area.SCHEDULER: "scheduler-backlog",
    Area.NODES: "zone-outage",
}


def all_rows(spec: TableSpec) -> tuple[Row, ...]:
    """Every row of the spec, a long (lazy) list's built one by one."""
    return spec.all_rows()


def expected(spec: TableSpec, text: str, held: int = MIN_WINDOW) -> list[str]:
    """Keys of the spec's rows with ``text`` in some cell (any case), in the spec's order
    (of a long list, the first ``held`` of them: what its table holds at once).
    """
    needle = text.lower()
    keys: list[str] = []
    for i, row in enumerate(all_rows(spec)):
        key = row.key if row.key not in keys else f"{row.key}#{i}"
        if any(needle in c.plain.lower() for c in row.cells):
            keys.append(key)
    return keys[:held] if spec.lazy is not None else keys


def unique_text(spec: TableSpec) -> str | None:
    """A cell text found in exactly one row (None when every text repeats)."""
    for row in all_rows(spec)[:MIN_WINDOW]:
        for cell in row.cells:
            text = cell.plain.strip()
            if len(text) >= 3 and len(expected(spec, text)) == 1:
                return text
    return None


@pytest.mark.parametrize("area", list(SCENARIO_OF), ids=[a.value for a in SCENARIO_OF])
async def test_every_table_s_filter_shows_exactly_the_rows_that_match(area: Area) -> None:
    from ktop.hub import Hub

    scenario = SCENARIO_OF[area]
    start, later = scenario_events(scenario, SCENARIO_TIMES[scenario])
    hub = Hub()
    hub.ingest(start)
    half = len(later) // 2
    hub.ingest(later[:half])
    app = KtopApp(hub)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press(AREA_KEYS[area])
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        view = drill_view(app.frame.snapshot, area)
        checked = 0
        for spec in view.tables:
            table = screen.table(spec.key)
            if not all_rows(spec):
                continue
            held = table.window_size
            all_keys = expected(spec, "", held)
            one = unique_text(spec)
            cases = [(NOWHERE, []), ("", all_keys)]
            if one is not None:
                cases.insert(1, (one, expected(spec, one, held)))
            for text, keys in cases:
                table.set_filter(text)
                await pilot.pause()
                assert table.row_keys == keys, (spec.key, text)
                assert table.row_count == len(keys), (spec.key, text)
            checked += 1
        assert checked, f"{area.value} has a table with rows"

        # a kept filter holds across refreshes: the rows shown still match and follow
        spec = next(s for s in view.tables if all_rows(s))
        text = unique_text(spec) or all_rows(spec)[0].cells[0].plain.strip()
        table = screen.table(spec.key)
        table.set_filter(text)
        hub.ingest(later[half:])
        app.pump()
        await pilot.pause()
        fresh = next(s for s in drill_view(app.frame.snapshot, area).tables if s.key == spec.key)
        assert table.row_keys == expected(fresh, text, table.window_size)
        for key in table.row_keys:
            row = next(r for r in all_rows(fresh) if r.key == key.split("#")[0])
            assert [table.cell_text(key, c.key) for c in fresh.columns] == [
                c.plain for c in row.cells
            ]


async def test_a_filter_typed_in_the_screen_titles_the_count_it_shows() -> None:
    start, later = scenario_events("zone-outage", SCENARIO_TIMES["zone-outage"])
    from ktop.hub import Hub

    hub = Hub()
    hub.ingest(start)
    hub.ingest(later)
    app = KtopApp(hub)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(AREA_KEYS[Area.NODES])
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        await pilot.press("slash", *NOWHERE, "enter")
        await pilot.pause()
        for table in screen.query(SnapshotTable):
            assert table.row_count == 0
            if table.total_rows:
                assert table.id is not None
                title = screen.query_one(f"#title-{table.id.removeprefix('table-')}").render()
                noun = "row" if table.total_rows == 1 else "rows"
                assert f"0 of {table.total_rows} {noun} match" in str(title)
