"""Trends on screen: a scenario's rise shows in the overview sparkline, the drill-down
chart and the findings, checked against values taken from each published snapshot
(not from the history or the widgets)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from textual.widgets import Static

from ktop.hub import Hub
from ktop.model.events import Area
from ktop.model.history import EMPTY_HISTORY
from ktop.model.snapshot import ClusterSnapshot
from ktop.ui.app import KtopApp
from ktop.ui.render.areas import SPARK_LABEL_WIDTH, overview_panel
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.findings import FindingsScreen
from ktop.ui.screens.overview import OverviewScreen
from ktop.ui.widgets.trend_chart import TrendChart
from tests.functional.factories import StaticHub
from tests.functional.scenarios import Truth, stepped
from tests.functional.screen import screen_text

SECONDS = 200


def worst_fsync(s: ClusterSnapshot) -> float | None:
    vals = [m.wal_fsync_p99_s.value for m in s.etcd.members if m.wal_fsync_p99_s.value is not None]
    return max(vals) if vals else None


def expected_columns(truth: Truth, start: float, end: float, width: int) -> list[float]:
    """The largest value in each of ``width`` equal time slots, from the first slot with data."""
    slots: list[list[float]] = [[] for _ in range(width)]
    for t, v in truth:
        if start <= t <= end:
            slots[min(width - 1, int((t - start) * width / (end - start)))].append(v)
    out: list[float] = []
    for s in slots:
        if s:
            out.append(max(s))
        elif out:
            out.append(out[-1])
    return out


def clock(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%H:%M:%S")


SlowDisk = tuple[Hub, Truth, list[ClusterSnapshot]]


@pytest.fixture(scope="module")
def slow_disk() -> SlowDisk:
    return stepped("etcd-slow-disk", SECONDS, worst_fsync)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_rise_shows_in_overview_sparkline(slow_disk: SlowDisk, size: tuple[int, int]) -> None:
    hub, truth, _ = slow_disk
    app = KtopApp(hub)
    at = hub.latest.snapshot.at
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, OverviewScreen)
        panel = app.screen.panel(Area.ETCD)
        assert panel.sparks, screen_text(app)
        spark = panel.sparks[0]
        assert spark.spec.metric == "etcd.fsync_p99_s"
        width = panel.content_size.width - SPARK_LABEL_WIDTH
        want = expected_columns(truth, at - 300, at, width)
        assert list(spark.values) == pytest.approx(want, rel=1e-6)
        assert want[-1] > 10 * want[0], "the scenario's fsync rise"
        assert "WAL fsync p99" in screen_text(app)


async def test_rise_shows_in_drill_chart_with_time_axis_and_window_key(slow_disk: SlowDisk) -> None:
    hub, truth, _ = slow_disk
    at = hub.latest.snapshot.at
    app = KtopApp(hub)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        chart = screen.query_one("#chart-0", TrendChart)
        assert chart.data is not None and chart.spec.metric == "etcd.fsync_p99_s"
        width = chart.content_size.width
        want = expected_columns(truth, at - 300, at, width)
        assert list(chart.data.values) == pytest.approx(want, rel=1e-6)
        assert want[-1] > 10 * want[0]
        # one column per value, zero-based: the rise fills the top row at the end only
        rows = str(chart.query_one(".chart-line", Static).content).splitlines()
        assert rows and all(len(r) == width and not r[: -len(want)].strip() for r in rows)
        rows = [r[-len(want) :] for r in rows]  # right-aligned: blanks before the history
        assert rows[0][-1] != " " and rows[0][0] == " " and rows[-1][-1] != " "
        axis = str(chart.query_one(".chart-axis", Static).content)
        assert axis.startswith(clock(at - 300)) and axis.endswith(f"now {clock(at)}")
        assert "-2.5m" in axis
        # The window key: 15 minutes, then an hour, then 5 minutes again.
        await pilot.press("w")
        await pilot.pause()
        assert app.trend_window_s == 900
        assert chart.data.start == at - 900
        assert list(chart.data.values) == pytest.approx(
            expected_columns(truth, at - 900, at, width), rel=1e-6
        )
        assert clock(at - 900) in str(chart.query_one(".chart-axis", Static).content)
        await pilot.press("w", "w")
        assert app.trend_window_s == 300


async def test_findings_say_since_when_and_getting_worse(slow_disk: SlowDisk) -> None:
    hub, _, snaps = slow_disk
    finding = next(f for f in hub.latest.findings if f.code == "KT-ETCD-004")
    instance = finding.title.split()[0]
    # Since: the first snapshot of the last unbroken run with commit p99 above 0.25 s.
    since = None
    for s in snaps:
        m = next(m for m in s.etcd.members if m.instance == instance)
        above = (m.backend_commit_p99_s.value or 0.0) > 0.25
        since = (since or s.at) if above else None
    assert since is not None
    app = KtopApp(hub)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, FindingsScreen)
        text = screen_text(app)
        lines = text.splitlines()
        i = next(i for i, line in enumerate(lines) if finding.title in line)
        assert f"since {clock(since)}" in lines[i + 1]
        assert "getting worse" in lines[i + 1]


async def test_sparklines_never_take_an_essential_row_at_80x24(slow_disk: SlowDisk) -> None:
    hub, _, _ = slow_disk
    snap = hub.latest.snapshot
    bare = replace(snap, history=EMPTY_HISTORY)
    app = KtopApp(hub)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, OverviewScreen)
        for area in Area:
            panel = app.screen.panel(area)
            rows, width = panel.content_size.height, panel.content_size.width
            with_history = overview_panel(snap, area, rows, width)
            without = overview_panel(bare, area, rows, width)
            assert [t.plain for t in with_history.lines] == [t.plain for t in without.lines]
            assert len(without.lines) + len(with_history.sparks) <= rows


def unhealthy_nodes(s: ClusterSnapshot) -> float | None:
    return float(sum(z.unhealthy for z in s.nodes.zones)) if s.nodes.nodes_known else None


async def test_zone_outage_rise_shows_in_nodes_sparkline_and_finding_since() -> None:
    hub, truth, snaps = stepped("zone-outage", 240, unhealthy_nodes)
    at = hub.latest.snapshot.at
    app = KtopApp(hub)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, OverviewScreen)
        panel = app.screen.panel(Area.NODES)
        spark = panel.sparks[0]
        assert spark.spec.metric == "nodes.unhealthy"
        width = panel.content_size.width - SPARK_LABEL_WIDTH
        want = expected_columns(truth, at - 300, at, width)
        assert list(spark.values) == pytest.approx(want)
        assert want[0] == 0 and want[-1] > 0, "the outage's rise"
    finding = next(f for f in hub.latest.findings if f.code == "KT-NODE-001")
    zone = finding.title.split()[1].rstrip(":")
    since = None
    for s in snaps:
        z = next(z for z in s.nodes.zones if z.zone == zone)
        since = (since or s.at) if z.unhealthy > 0 else None
    assert finding.trend is not None and finding.trend.since == since


async def test_quiet_panel_sparkline_moves_with_time() -> None:
    """An area whose readings do not change still has a history that does: its sparkline
    scrolls as time passes (it must not freeze at the frame that last changed the area),
    and a refresh that brings nothing new draws nothing again.
    """
    _, truth, snaps = stepped("etcd-slow-disk", SECONDS + 90, worst_fsync)
    frozen = snaps[SECONDS - 1].etcd  # the etcd readings stop changing from here
    static = StaticHub(snaps[SECONDS - 1])
    app = KtopApp(static, refresh_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, OverviewScreen)
        panel = app.screen.panel(Area.ETCD)
        first = list(panel.sparks[0].values)
        width = panel.content_size.width - SPARK_LABEL_WIDTH
        for s in snaps[SECONDS:]:
            static.set(replace(s, etcd=frozen))  # the history goes on
            app.pump()
        await pilot.pause()
        at = snaps[-1].at
        want = expected_columns(truth, at - 300, at, width)
        assert list(panel.sparks[0].values) == pytest.approx(want, rel=1e-6)
        assert list(panel.sparks[0].values) != first
        renders = panel.renders
        app.pump()  # nothing published
        static.set(replace(snaps[-1], etcd=frozen, seq=snaps[-1].seq + 1))  # same time
        app.pump()
        await pilot.pause()
        assert panel.renders == renders


async def test_wide_terminals_get_richer_sparklines(slow_disk: SlowDisk) -> None:
    """The same snapshot: at 160x48 more sparklines, each with more columns (more time
    slots), than at 80x24.
    """
    hub, _, _ = slow_disk

    async def sparks(size: tuple[int, int]) -> dict[Area, list[int]]:
        app = KtopApp(hub)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, OverviewScreen)
            return {a: [len(s.values) for s in app.screen.panel(a).sparks] for a in Area}

    small, large = await sparks((80, 24)), await sparks((160, 48))
    assert sum(map(len, large.values())) > sum(map(len, small.values()))
    both = [a for a in Area if small[a] and large[a]]
    assert both, (small, large)
    for a in both:
        assert len(large[a]) >= len(small[a]) and large[a][0] > small[a][0], a
