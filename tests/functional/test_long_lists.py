"""Every list can reach every row: the nodes drill-down's NotReady list and racks hold
more rows than a table is given at once (three screens of it); the cursor keys walk past the
window, the filter and the sort reach every row, and the titles give the true count.
The expected orders are written here from the nodes themselves, not from the view.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from ktop.hub import Hub
from ktop.model.events import (
    FEED_LEASES,
    FEED_NODES,
    FeedSynced,
    LeaseRenewed,
    NodeRecord,
    NodeUpserted,
    Readiness,
)
from ktop.ui.app import KtopApp
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.widgets.snapshot_table import MIN_WINDOW, SnapshotTable

T0 = 1_800_000_000.0
RACKS = 300
NOT_READY = 700
SIZES = [(80, 24), (200, 60)]


def cluster() -> tuple[Hub, list[NodeRecord]]:
    """1,200 nodes in 300 racks of two zones; 700 not Ready since different times."""
    nodes = [
        NodeRecord(
            f"node-{i:04d}",
            "",
            f"zone-{i % 2}",
            f"r{i % RACKS:03d}",
            Readiness.UNKNOWN if i < NOT_READY else Readiness.TRUE,
            T0 - 4000 + (i * 7919) % 3000,
        )
        for i in range(1200)
    ]
    hub = Hub()
    hub.ingest(
        [
            *(NodeUpserted(T0, n) for n in nodes),
            *(LeaseRenewed(T0, n.name, T0 - 100) for n in nodes),
            FeedSynced(T0, FEED_NODES),
            FeedSynced(T0, FEED_LEASES),
        ]
    )
    down = sorted(
        (n for n in nodes if n.ready is not Readiness.TRUE), key=lambda n: (n.ready_since, n.name)
    )
    return hub, down


def cursor_key(table: SnapshotTable) -> str:
    value = table.cursor_key
    assert value is not None
    return value


def title(screen: DrillScreen, key: str) -> str:
    return str(screen.query_one(f"#title-{key}").render())


async def nodes_screen(pilot: Pilot[None], app: KtopApp) -> DrillScreen:
    await pilot.press("5")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, DrillScreen)
    return screen


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_the_cursor_reaches_every_not_ready_node(size: tuple[int, int]) -> None:
    hub, down = cluster()
    names = [n.name for n in down]
    app = KtopApp(hub, user_themes=False)
    async with app.run_test(size=size) as pilot:
        screen = await nodes_screen(pilot, app)
        table = screen.table("not_ready")
        assert table.total_rows == NOT_READY
        WINDOW = table.row_count  # noqa: N806 - the rows held: three screens of the table
        height = table.scrollable_content_region.height
        assert WINDOW == max(MIN_WINDOW, 3 * height) < NOT_READY
        assert 0 < height <= WINDOW  # every row on screen is held
        assert table.row_keys == names[:WINDOW]
        assert f"{NOT_READY} rows · 1-{WINDOW} shown" in title(screen, "not_ready")
        table.focus()
        table.move_cursor(row=WINDOW - 1)
        await pilot.press("down")
        await pilot.pause()
        assert cursor_key(table) == names[WINDOW]
        await pilot.press("up")
        await pilot.pause()
        assert cursor_key(table) == names[WINDOW - 1]
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert cursor_key(table) == names[-1]
        assert f"{NOT_READY - WINDOW + 1}-{NOT_READY} shown" in title(screen, "not_ready")
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert cursor_key(table) == names[0]
        seen = {cursor_key(table)}
        for _ in range(NOT_READY):  # page by page to the end: every row passes by
            before = table.window_start + table.cursor_row
            await pilot.press("pagedown")
            after = table.window_start + table.cursor_row
            seen.update(names[before : after + 1])
            if after == NOT_READY - 1:
                break
        assert seen == set(names)


async def test_the_filter_finds_a_node_far_down_the_list() -> None:
    hub, down = cluster()
    far = down[-3].name
    app = KtopApp(hub, user_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await nodes_screen(pilot, app)
        table = screen.table("not_ready")
        assert far not in table.row_keys
        await pilot.press(
            "slash", *far.replace("-", " ").split(" ")[0], "minus", *far.split("-")[1]
        )
        await pilot.pause()
        assert table.row_keys == [far]
        assert f"1 of {NOT_READY} rows match {far!r}" in title(screen, "not_ready")
        zone1 = [n.name for n in down if n.zone == "zone-1"]
        table.set_filter("zone-1")
        await pilot.pause()
        assert table.matched == len(zone1) and table.row_keys == zone1[: table.window_size]
        await pilot.press("escape")
        table.set_filter("")
        await pilot.pause()
        assert table.matched == NOT_READY


async def test_sorting_a_long_list_sorts_all_of_it() -> None:
    hub, down = cluster()
    app = KtopApp(hub, user_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await nodes_screen(pilot, app)
        table = screen.table("not_ready")
        table.focus()
        table.move_cursor(column=0)
        await pilot.press("s", "s")  # by name, descending
        await pilot.pause()
        by_name = sorted((n.name for n in down), reverse=True)
        assert table.row_keys == by_name[: table.window_size]
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert cursor_key(table) == by_name[-1]


async def test_every_rack_is_listed() -> None:
    hub, _ = cluster()
    app = KtopApp(hub, user_themes=False)
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await nodes_screen(pilot, app)
        racks = screen.table("racks")
        assert racks.total_rows == RACKS
        assert f"{RACKS} rows · 1-{racks.row_count} shown" in title(screen, "racks")
        assert racks.row_count == racks.window_size < RACKS
        racks.set_filter("r299")
        await pilot.pause()
        assert [k.rsplit("/", 1)[-1] for k in racks.row_keys] == ["r299"]
