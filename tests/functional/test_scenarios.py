"""Every demo scenario through the real simulator and hub: the panes show its story."""

from __future__ import annotations

import pytest

from ktop.model.events import Area
from ktop.model.snapshot import ZoneState
from ktop.ui.app import KtopApp
from ktop.ui.render.fmt import (
    fmt_age,
    fmt_count,
    fmt_duration,
    fmt_rate,
    fmt_si,
    fmt_times,
    fmt_val,
    short_instance,
)
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.overview import OverviewScreen
from ktop.ui.widgets.findings_strip import FindingsStrip
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional.scenarios import scenario_hub

SIZES = [(80, 24), (160, 48)]


def overview(app: KtopApp) -> OverviewScreen:
    assert isinstance(app.screen, OverviewScreen)
    return app.screen


def drill(app: KtopApp, area: Area) -> DrillScreen:
    screen = app.screen
    assert isinstance(screen, DrillScreen) and screen.area is area
    return screen


def zone_lines(text: str, zones: set[str]) -> dict[str, str]:
    """Panel lines by zone name (the second word of a zone line; rack lines are skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) > 2 and words[0] in "✓▲✖?" and words[1] in zones:
            out[words[1]] = line
    return out


@pytest.mark.parametrize("size", SIZES)
async def test_zone_outage(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("zone-outage"))
    snap = app.frame.snapshot
    down = [z for z in snap.nodes.zones if z.state is not ZoneState.NORMAL]
    assert len(down) == 1 and down[0].state is ZoneState.FULL_DISRUPTION
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.NODES).plain
        lines = zone_lines(text, {z.zone for z in snap.nodes.zones})
        for zone in snap.nodes.zones:
            words = lines[zone.zone].split()
            assert words[2:5] == [
                f"{zone.ready}/{zone.total}",
                fmt_count(zone.unhealthy),
                zone.state.value if zone.state else "?",
            ]
        assert lines[down[0].zone].startswith("✖")
        assert f"{snap.nodes.ready}/{snap.nodes.total} ready" in text
        assert "KT-NODE-001" in app.screen.query_one(FindingsStrip).plain
        assert "demo sim/zone-out" in app.screen.query_one(StatusBar).plain

        await pilot.press("5")
        await pilot.pause()
        screen = drill(app, Area.NODES)
        zones = screen.table("zones")
        for zone in snap.nodes.zones:
            key = f"{zone.region}/{zone.zone}" if zone.region else zone.zone
            assert zones.cell_text(key, "state") == (zone.state.value if zone.state else "?")
            assert zones.cell_text(key, "unknown") == fmt_count(zone.unknown)
        not_ready = screen.table("not_ready")
        assert len(not_ready.row_keys) == len(snap.nodes.not_ready_nodes)
        assert not_ready.column_text("zone")[0] == down[0].zone


@pytest.mark.parametrize("size", SIZES)
async def test_steady(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("steady"))
    snap = app.frame.snapshot
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = overview(app)
        lines = zone_lines(screen.panel(Area.NODES).plain, {z.zone for z in snap.nodes.zones})
        assert len(lines) == len(snap.nodes.zones)
        assert all("Normal" in line for line in lines.values())
        assert "APF ✓ 0 queued · 0/s rejected" in screen.panel(Area.APF).plain
        assert f"leader {short_instance(snap.etcd.leader)}" in screen.panel(Area.ETCD).plain
        assert "3/3 up" in screen.panel(Area.APISERVERS).plain


@pytest.mark.parametrize("size", SIZES)
async def test_etcd_slow_disk(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("etcd-slow-disk"))
    snap = app.frame.snapshot
    assert snap.etcd.leader and snap.etcd.leader != "etcd-0:2379"  # leadership moved
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.ETCD).plain
        assert text.startswith(f"3 etcd ✖ leader {short_instance(snap.etcd.leader)}")
        for m in snap.etcd.members:
            name = short_instance(m.instance) + ("*" if m.instance == snap.etcd.leader else "")
            line = next(ln for ln in text.splitlines() if ln.startswith(name + " "))
            assert line.split()[1:3] == [
                fmt_val(m.wal_fsync_p99_s, fmt_duration),
                fmt_val(m.backend_commit_p99_s, fmt_duration),
            ]
        await pilot.press("3")
        await pilot.pause()
        members = drill(app, Area.ETCD).table("members")
        for m in snap.etcd.members:
            assert members.cell_text(m.instance, "changes") == fmt_val(m.leader_changes)
            assert members.cell_text(m.instance, "leader") == (
                "leader" if m.instance == snap.etcd.leader else "follower"
            )


@pytest.mark.parametrize("size", SIZES)
async def test_apf_saturation(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("apf-saturation"))
    snap = app.frame.snapshot
    worst = snap.apf.levels[0]
    assert worst.priority_level == "workload-low"
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.APF).plain
        assert text.startswith("1 APF ✖")
        assert f"{fmt_val(worst.rejected_total_per_s, fmt_rate)} rejected" in text
        row = text.splitlines()[2].split()
        assert row[:2] == ["workload-low", fmt_val(worst.in_queue, fmt_si)]
        await pilot.press("1")
        await pilot.pause()
        levels = drill(app, Area.APF).table("levels")
        assert levels.row_keys[0] == "workload-low"
        assert levels.cell_text("workload-low", "rejected") == fmt_val(
            worst.rejected_total_per_s, fmt_rate
        )
        assert "queue-full" in levels.cell_text("workload-low", "reasons")
        assert "time-out" in levels.cell_text("workload-low", "reasons")


@pytest.mark.parametrize("size", SIZES)
async def test_apiserver_skew(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("apiserver-skew"))
    snap = app.frame.snapshot
    api = snap.apiservers
    assert api.watch_skew.or_(0) > 1.5
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.APISERVERS).plain
        assert text.startswith(f"2 apiservers ▲ 3/3 up · skew {fmt_val(api.watch_skew, fmt_times)}")
        for r in api.instances:
            line = next(ln for ln in text.splitlines() if ln.startswith(short_instance(r.instance)))
            assert line.split()[3] == fmt_val(r.watches)
        await pilot.press("2")
        await pilot.pause()
        screen = drill(app, Area.APISERVERS)
        table = screen.table("instances")
        for r in api.instances:
            assert table.cell_text("watches", f"i:{r.instance}") == fmt_val(r.watches)
        assert f"watch skew {fmt_val(api.watch_skew, fmt_times)}" in screen.header_text


@pytest.mark.parametrize("size", SIZES)
async def test_scheduler_backlog(size: tuple[int, int]) -> None:
    from ktop.model.events import PodWait

    app = KtopApp(scenario_hub("scheduler-backlog"))
    sched = app.frame.snapshot.scheduler
    top = sched.reasons[0]
    assert top.reason == "Insufficient nvidia.com/gpu"
    gated = sched.pending_by_wait[PodWait.GATED]
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.SCHEDULER).plain
        total = sum(sched.pending_by_wait.values())
        assert f"{fmt_count(total)} pending" in text
        assert f"gated {gated} · quota-rej {sched.quota_rejections}" in text
        assert f"{fmt_count(top.pods)} {top.reason}" in text
        await pilot.press("4")
        await pilot.pause()
        screen = drill(app, Area.SCHEDULER)
        reasons = screen.table("reasons")
        assert reasons.cell_text(top.reason, "pods") == fmt_count(top.pods)
        assert reasons.cell_text(top.reason, "examples").startswith("ml-train/")
        waits = screen.table("waits")
        assert waits.cell_text("gated", "pods") == fmt_count(gated)
        assert waits.cell_text("unschedulable", "pods") == fmt_count(
            sched.pending_by_wait[PodWait.UNSCHEDULABLE]
        )
        assert waits.cell_text("quota", "pods") == fmt_count(sched.quota_rejections)


@pytest.mark.parametrize("size", SIZES)
async def test_apiserver_restart_shows_unknown_reason(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("apf-saturation", 36))
    snap = app.frame.snapshot
    failed = [f for f in snap.area_freshness(Area.APISERVERS) if f.error]
    assert [f.name for f in failed] == ["apiserver apiserver-1:6443"]
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.APISERVERS).plain
        assert text.startswith("2 apiservers ? 2/3 up")
        line = next(ln for ln in text.splitlines() if ln.startswith("apiserver-1 "))
        assert line.split()[-1] == "err"
        assert "? apiserver-1: connection refused" in text
        apf = overview(app).panel(Area.APF).plain
        assert apf.startswith("1 APF ?")  # a failing input is never shown as healthy
        assert "? apiserver-1: connection refused" in apf
        await pilot.press("2")
        await pilot.pause()
        header = drill(app, Area.APISERVERS).header_text
        assert header.startswith(
            'apiservers: unknown — apiserver apiserver-1:6443: Get "https://apiserver-1:6443/metrics"'
        )
        assert f"connection refused (stale {fmt_age(failed[0].age_s(snap.at))})" in header
        status = drill(app, Area.APISERVERS).table("instances")
        assert status.cell_text("status", "i:apiserver-1:6443") == "error"
