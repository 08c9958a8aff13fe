"""Pilot tests of every screen on hand-built snapshots: what the panes show."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.binding import Binding
from textual.pilot import Pilot
from textual.strip import Strip

from ktop.gc_policy import Collector
from ktop.model.events import Area
from ktop.model.snapshot_nodes import DomainRollup
from ktop.ui.app import KtopApp
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.findings import FindingsScreen
from ktop.ui.screens.help import KEYS, HelpScreen
from ktop.ui.screens.overview import SHORT, OverviewScreen
from ktop.ui.widgets.findings_strip import FindingsStrip
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional.factories import AT, StaticHub, busy_snapshot, findings
from tests.functional.screen import screen_text

SIZES = [(80, 24), (160, 48)]


def busy_app(**kwargs: object) -> KtopApp:
    return KtopApp(StaticHub(busy_snapshot(), findings()), **kwargs)  # type: ignore[arg-type]


def overview(app: KtopApp) -> OverviewScreen:
    assert isinstance(app.screen, OverviewScreen)
    return app.screen


def drill(app: KtopApp, area: Area) -> DrillScreen:
    screen = app.screen
    assert isinstance(screen, DrillScreen) and screen.area is area
    return screen


@pytest.mark.parametrize("size", SIZES)
async def test_overview_shows_every_area(size: tuple[int, int]) -> None:
    app = busy_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = overview(app)
        apf = screen.panel(Area.APF).plain
        assert "APF ✖ 343 queued · 12/s rejected" in apf
        assert "workload-low" in apf and "4.2s" in apf
        assert ("98/100" if size[0] >= 160 else "98%") in apf
        api = screen.panel(Area.APISERVERS).plain
        assert "3/3 up · skew 2.7x" in api and "1.5k/s" in api and "2m" in api
        etcd = screen.panel(Area.ETCD).plain
        assert "leader etcd-0" in etcd and "etcd-0*" in etcd and "612ms" in etcd
        sched = screen.panel(Area.SCHEDULER).plain
        assert "1,252 pending" in sched and "gated 40 · quota-rej 3" in sched
        assert "1,100 Insufficient cpu" in sched
        nodes = screen.panel(Area.NODES).plain
        assert "399/600 ready" in nodes
        assert "zone-a" in nodes and "FullDisruption" in nodes and "0/200" in nodes
        assert nodes.count("Normal") == 2
        strip = app.screen.query_one(FindingsStrip).plain
        if size[1] >= SHORT:  # shorter: the diagnosis above the status line stands in for it
            assert strip.startswith("✖ KT-NODE-001")
        else:
            assert not app.screen.query_one(FindingsStrip).display
        if size[1] >= 48:
            assert "▲ KT-ETCD-003" in strip and "? KT-ETCD-010" in strip
            assert "cpu" in api and "6.5GiB" in api  # wide: more columns
        status = app.screen.query_one(StatusBar).plain
        assert "15:06:40Z" in status and "etcd ✖2m" in status and "✖1 ▲1 ?1" in status
        text = screen_text(app)
        assert "FullDisruption" in text and "sched 1s" in text


@pytest.mark.parametrize("size", SIZES)
async def test_unknown_value_shows_question_mark_and_reason(size: tuple[int, int]) -> None:
    app = busy_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        etcd = overview(app).panel(Area.ETCD).plain
        assert "? failed: etcd-1: connection refused" in etcd
        dead = next(line.split() for line in etcd.splitlines() if line.startswith("etcd-1"))
        assert dead[1:4] == ["?", "?", "?"]
        assert "failed 2m" in (overview(app).panel(Area.ETCD).border_subtitle or "")
        await pilot.press("3")
        await pilot.pause()
        screen = drill(app, Area.ETCD)
        assert screen.header_text == "etcd: failed: etcd-1: connection refused (last read 2m ago)"
        table = screen.table("members")
        assert table.cell_text("etcd-1", "fsync_p99") == "?"
        assert table.cell_text("etcd-1", "error") == "? connection refused"
        assert table.cell_text("etcd-2", "fsync_p99") == "▲612ms"  # > 500 ms warns
        assert table.cell_text("etcd-0", "member") == "etcd-0*"


@pytest.mark.parametrize("size", SIZES)
async def test_every_drill_down_by_key(size: tuple[int, int]) -> None:
    app = busy_app()
    async with app.run_test(size=size) as pilot:
        await pilot.press("1")
        await pilot.pause()
        apf = drill(app, Area.APF)
        assert apf.table("levels").row_keys[0] == "workload-low"
        assert apf.table("levels").cell_text("workload-low", "rejected") == "✖12/s"
        assert apf.table("levels").cell_text("workload-low", "reasons") == (
            "queue-full 10/s, time-out 2/s"
        )
        assert apf.table("flows").cell_text("workload-low/service-accounts", "in_queue") == "▲300"
        assert apf.table("instances").row_keys == [f"apiserver-{i}/workload-low" for i in range(3)]

        await pilot.press("2")
        await pilot.pause()
        api = drill(app, Area.APISERVERS)
        table = api.table("instances")
        assert table.cell_text("requests", "i:apiserver-0") == "1.5k/s"
        assert table.cell_text("uptime", "i:apiserver-2") == "▲2m"  # restarted < 10m ago
        assert "request skew ▲2.7x" in api.header_text  # > 2.5x warns

        await pilot.press("4")
        await pilot.pause()
        sched = drill(app, Area.SCHEDULER)
        # unschedulable pods warn
        assert sched.table("reasons").cell_text("Insufficient cpu", "pods") == "▲1,100"
        assert sched.table("reasons").cell_text("Insufficient cpu", "examples") == (
            "batch/job-1, batch/job-2"
        )
        assert sched.table("waits").cell_text("gated", "pods") == "40"
        assert sched.table("waits").cell_text("quota", "pods") == "3"
        assert sched.table("waits").cell_text("unschedulable", "pods") == "1,200"

        await pilot.press("5")
        await pilot.pause()
        nodes = drill(app, Area.NODES)
        assert nodes.table("zones").cell_text("zone-a", "state") == "✖ FullDisruption"
        assert nodes.table("zones").cell_text("zone-a", "not_ready") == "▲200"
        assert nodes.table("zones").cell_text("zone-b", "state") == "Normal"
        assert nodes.table("racks").cell_text("zone-a/rack-01", "ready") == "0/20"
        assert nodes.table("not_ready").row_keys[0] == "node-a-000"
        assert "600 nodes · 399 ready · 201 NotReady" in nodes.header_text

        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, FindingsScreen)
        assert "✖ CRITICAL KT-NODE-001" in app.screen.list_text
        assert "· zone-a ready 0/200" in app.screen.list_text

        await pilot.press("escape")
        await pilot.pause()
        overview(app)
        await pilot.press("3", "o")
        await pilot.pause()
        overview(app)


async def test_help_lists_every_key() -> None:
    app = busy_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.plain
        for key, what in KEYS:
            assert key in text and what in text
        for binding in app.BINDINGS:
            assert isinstance(binding, Binding)
            assert (binding.key_display or binding.key) in text
        await pilot.press("escape")
        await pilot.pause()
        overview(app)
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.press("5")  # area keys work from the help screen too
        await pilot.pause()
        drill(app, Area.NODES)


@pytest.mark.parametrize(("query", "area"), [("etcd", Area.ETCD), ("scheduler", Area.SCHEDULER)])
async def test_palette_jumps_to_screen(query: str, area: Area) -> None:
    app = busy_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*f"drill-down: {query}")
        await pilot.pause(0.3)  # the palette searches asynchronously
        await pilot.press("enter")
        await pilot.pause()
        drill(app, area)


async def test_pump_renders_only_what_changed() -> None:
    hub = StaticHub(busy_snapshot(), findings())
    app = KtopApp(hub, refresh_s=3600)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = overview(app)
        before = {area: screen.panel(area).renders for area in Area}
        snap = busy_snapshot(seq=2)
        zone = replace(snap.nodes.zones[1], ready=150, not_ready=50)
        hub.set(
            replace(
                snap,
                nodes=replace(snap.nodes, zones=(snap.nodes.zones[0], zone, snap.nodes.zones[2])),
            ),
            findings(),
        )
        app.pump()
        await pilot.pause()
        after = {area: screen.panel(area).renders for area in Area}
        assert after[Area.NODES] == before[Area.NODES] + 1
        for area in (Area.APF, Area.ETCD, Area.SCHEDULER):
            assert after[area] == before[area]
        assert "150/200" in screen.panel(Area.NODES).plain
        app.pump()  # nothing new published: nothing re-rendered
        assert {area: screen.panel(area).renders for area in Area} == after


async def test_an_older_age_redraws_a_panels_border_not_its_lines() -> None:
    hub = StaticHub(busy_snapshot(), findings())
    app = KtopApp(hub, refresh_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        panel = overview(app).panel(Area.APF)  # its data is 2 s old in busy_snapshot
        lines_drawn: list[int] = []
        draw = panel.body.render_line

        def counted(y: int) -> Strip:
            lines_drawn.append(y)
            return draw(y)

        panel.body.render_line = counted  # type: ignore[method-assign]
        subtitles = []
        for later_s in (1, 2, 3, 4, 9):  # ages 3, 4, 5, 6 and 11 s
            hub.set(replace(busy_snapshot(), at=AT + later_s), findings())
            app.pump()
            await pilot.pause()
            subtitles.append(str(panel.border_subtitle))
        assert subtitles == ["<5s", "<5s", "5s", "5s", "10s"]
        assert lines_drawn == []  # the area's data did not change: only the border moved
        assert "<5s" not in screen_text(app) and "10s" in screen_text(app)


async def show_zones(
    hub: StaticHub, app: KtopApp, pilot: Pilot[None], zones: tuple[DomainRollup, ...]
) -> None:
    """Publish the busy snapshot, one second later, with these zones; wait until shown."""
    snap = busy_snapshot(seq=2, at=AT + 1)
    hub.set(replace(snap, nodes=replace(snap.nodes, zones=zones)), findings())
    app.pump()
    await pilot.pause()


async def test_drill_tables_update_in_place_and_rebuild_on_new_keys() -> None:
    hub = StaticHub(busy_snapshot(), findings())
    app = KtopApp(hub, refresh_s=3600)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        table = drill(app, Area.NODES).table("zones")
        rebuilds = table.rebuilds
        zones = busy_snapshot().nodes.zones
        zones = (zones[0], replace(zones[1], ready=150, not_ready=50), zones[2])
        await show_zones(hub, app, pilot, zones)
        assert table.cell_text("zone-b", "ready") == "150/200"
        assert table.rebuilds == rebuilds  # same keys: update_cell only
        assert "150/200" in screen_text(app)  # the changed row is drawn again, on screen
        await show_zones(hub, app, pilot, zones[:2])
        assert table.row_keys == ["zone-a", "zone-b"]
        assert table.rebuilds == rebuilds + 1


async def test_reordered_rows_are_written_over_the_rows_on_screen() -> None:
    """The same number of rows in a new order: no rebuild, each key's cells where that key
    now is, on screen too, and the cursor stays on its row."""
    hub = StaticHub(busy_snapshot(), findings())
    app = KtopApp(hub, refresh_s=3600)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        table = drill(app, Area.NODES).table("zones")
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause()
        before = {key: table.cell_text(key, "ready") for key in table.row_keys}
        first = table.row_keys[0]
        assert table.cursor_key == first
        rebuilds = table.rebuilds
        reordered = tuple(reversed(busy_snapshot().nodes.zones))
        await show_zones(hub, app, pilot, reordered)
        assert table.row_keys == list(reversed(before))
        assert table.rebuilds == rebuilds
        assert {key: table.cell_text(key, "ready") for key in table.row_keys} == before
        assert table.cursor_key == first and table.cursor_row == len(reordered) - 1
        text = screen_text(app)
        positions = [text.index(z.zone) for z in reordered]
        assert positions == sorted(positions)  # drawn in the new order


async def test_empty_hub_shows_unknown_with_reasons() -> None:
    from ktop.hub import Hub

    app = KtopApp(Hub())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = overview(app)
        # no source has started: every pane is connecting (unknown), none failed
        nodes = screen.panel(Area.NODES).plain
        assert nodes.startswith("5 nodes ? connecting")
        assert screen.panel(Area.APF).plain.startswith("1 APF ? connecting")
        status = app.screen.query_one(StatusBar).plain
        assert "--:--:--" in status and "? connecting" in status and "never" not in status
        await pilot.press("4")
        await pilot.pause()
        sched = drill(app, Area.SCHEDULER)
        assert "scheduler: unknown — pending-pods not read by this source" in sched.header_text
        assert sched.table("waits").cell_text("gated", "pods") == "?"


async def test_the_refresh_timer_runs_the_full_garbage_collections_when_due() -> None:
    now = [0.0]
    collector = Collector(every_s=300.0, clock=lambda: now[0])
    app = KtopApp(StaticHub(busy_snapshot(), findings()), refresh_s=3600, collector=collector)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.pump_off_loop()
        assert collector.collections == 0
        now[0] = 300.0
        await app.pump_off_loop()
        await pilot.pause()
        assert collector.collections == 1
