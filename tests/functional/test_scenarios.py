"""Every demo scenario through the real simulator and hub: the panes show its story."""

from __future__ import annotations

import re

import pytest

from ktop.analysis.triage.paths import BY_ID as PATH_BY_ID
from ktop.model.events import Area, Component, Event, MetricsScraped
from ktop.model.limits import API_SKEW, SKEW_FLOOR
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.text import short_instance
from ktop.sources.sim.scenarios import BY_NAME
from ktop.ui.app import KtopApp
from ktop.ui.render import reasons
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.overview import SHORT, OverviewScreen
from ktop.ui.widgets.findings_strip import FindingsStrip
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional import truth
from tests.functional.scenarios import SCENARIO_TIMES, scenario_events, scenario_hub

SIZES = [(80, 24), (160, 48)]
WINDOW_S = 300.0
"""The model's default window, over which rates and quantiles are taken."""

ZONE_MARK = {"FullDisruption": "✖", "PartialDisruption": "▲"}
"""The symbol a zone state carries without colour (Normal none; unknown is ``?`` itself)."""


def events(scenario: str, seconds: float | None = None) -> list[Event]:
    """Everything the simulator emitted for a scenario (the ground truth)."""
    start, later = scenario_events(
        scenario, SCENARIO_TIMES[scenario] if seconds is None else seconds
    )
    return [*start, *later]


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
        real = truth.nodes_by_zone(events("zone-outage"))
        assert set(real) == set(lines)
        for zone in snap.nodes.zones:
            words = lines[zone.zone].split()
            ready, total, _ = real[zone.zone]
            assert words[2] == f"{ready}/{total}"
            assert truth.number(words[3]) == total - ready
            state = zone.state.value if zone.state else "?"
            assert words[4] == ZONE_MARK.get(state, "") + state
        assert lines[down[0].zone].startswith("✖")
        ready = sum(r for r, _, _ in real.values())
        assert f"{ready}/{sum(t for _, t, _ in real.values())} ready" in text
        diagnosis, status = app.screen.query_one(StatusBar).plain.splitlines()[:2]
        cause = BY_NAME["zone-outage"].cause  # what the scenario injects
        assert cause is not None
        # named by its title and the zone that went down, never by its bare code
        assert f"{PATH_BY_ID[cause].title}: zone {down[0].zone}" in diagnosis, diagnosis
        if size[1] >= SHORT:  # shorter: the diagnosis stands in for the findings strip
            assert "KT-NODE-001" in app.screen.query_one(FindingsStrip).plain
        assert "demo sim/zone-out" in status

        await pilot.press("5")
        await pilot.pause()
        screen = drill(app, Area.NODES)
        zones = screen.table("zones")
        for zone in snap.nodes.zones:
            key = f"{zone.region}/{zone.zone}" if zone.region else zone.zone
            state = zone.state.value if zone.state else "?"
            mark = ZONE_MARK.get(state)
            assert zones.cell_text(key, "state") == (f"{mark} {state}" if mark else state)
            assert truth.number(zones.cell_text(key, "unknown")) == real[zone.zone][2]
        not_ready = screen.table("not_ready")
        assert not_ready.total_rows == len(snap.nodes.not_ready_nodes)
        assert len(not_ready.row_keys) == min(not_ready.total_rows, not_ready.window_size)
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
        evs = events("etcd-slow-disk")
        for m in snap.etcd.members:
            name = short_instance(m.instance) + ("*" if m.instance == snap.etcd.leader else "")
            line = next(ln for ln in text.splitlines() if ln.startswith(name + " "))
            fsync, commit = line.split()[1:3]
            for shown, family in (
                (fsync, "etcd_disk_wal_fsync_duration_seconds"),
                (commit, "etcd_disk_backend_commit_duration_seconds"),
            ):
                real = truth.window_quantile(evs, m.instance, family, WINDOW_S)
                assert truth.close(shown, real), (m.instance, family, shown, real)
        await pilot.press("3")
        await pilot.pause()
        members = drill(app, Area.ETCD).table("members")
        for m in snap.etcd.members:
            changes = truth.window_increase(
                evs, m.instance, "etcd_server_leader_changes_seen_total", WINDOW_S
            )
            assert truth.number(members.cell_text(m.instance, "changes")) == changes
            assert members.cell_text(m.instance, "leader") == (
                "leader" if m.instance == snap.etcd.leader else "follower"
            )


@pytest.mark.parametrize("size", SIZES)
async def test_apf_saturation(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("apf-saturation"))
    snap = app.frame.snapshot
    worst = snap.apf.levels[0]
    assert worst.priority_level == "workload-low"
    evs = events("apf-saturation")
    level = {"priority_level": "workload-low"}
    apis = truth.instances(evs, Component.APISERVER)
    rejected = sum(
        truth.window_increase(
            evs, i, "apiserver_flowcontrol_rejected_requests_total", WINDOW_S, level, per_s=True
        )
        for i in apis
    )
    queued = sum(
        truth.latest(evs, i, "apiserver_flowcontrol_current_inqueue_requests", level) for i in apis
    )
    assert rejected > 0
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.APF).plain
        assert text.startswith("1 APF ✖")
        shown = re.search(r"(\S+/s) rejected", text)
        assert shown and truth.close(shown.group(1), rejected)
        lines = text.splitlines()
        # the level that queues most names its heaviest client first: the storm's
        assert lines[2].startswith("top:") and "batch:reporter" in lines[2]
        row = lines[3].split()
        assert row[0] == "workload-low" and truth.close(row[1], queued)
        await pilot.press("1")
        await pilot.pause()
        levels = drill(app, Area.APF).table("levels")
        assert levels.row_keys[0] == "workload-low"
        assert truth.close(levels.cell_text("workload-low", "rejected"), rejected)
        assert "queue-full" in levels.cell_text("workload-low", "reasons")
        assert "time-out" in levels.cell_text("workload-low", "reasons")


@pytest.mark.parametrize("size", SIZES)
async def test_apiserver_skew(size: tuple[int, int]) -> None:
    app = KtopApp(scenario_hub("apiserver-skew"))
    snap = app.frame.snapshot
    api = snap.apiservers
    evs = events("apiserver-skew")
    watch = {"verb": "WATCH"}
    watches = {
        i: truth.latest(evs, i, "apiserver_longrunning_requests", watch)
        for i in truth.instances(evs, Component.APISERVER)
    }
    # the busiest instance against the mean of the others, or the mean of the others
    # against the idlest, whichever is larger (every load above the floor)
    most, least = max(watches.values()), min(watches.values())
    n = len(watches) - 1
    skew = max(
        most / ((sum(watches.values()) - most) / n),
        ((sum(watches.values()) - least) / n) / least,
    )
    assert least > SKEW_FLOOR
    assert API_SKEW.warn is not None and skew > API_SKEW.warn
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.APISERVERS).plain
        head = re.match(r"2 apiservers [▲✖] 3/3 up · skew (\S+)", text)
        assert head and truth.close(head.group(1), skew)
        for r in api.instances:
            line = next(ln for ln in text.splitlines() if ln.startswith(short_instance(r.instance)))
            assert truth.close(line.split()[3], watches[r.instance])
        await pilot.press("2")
        await pilot.pause()
        screen = drill(app, Area.APISERVERS)
        table = screen.table("instances")
        for r in api.instances:
            assert truth.close(table.cell_text("watches", f"i:{r.instance}"), watches[r.instance])
        shown = re.search(r"watch skew (\S+)", screen.header_text)
        assert shown and truth.close(shown.group(1), skew)


@pytest.mark.parametrize("size", SIZES)
async def test_scheduler_backlog(size: tuple[int, int]) -> None:
    from ktop.model.events import PodWait

    app = KtopApp(scenario_hub("scheduler-backlog"))
    sched = app.frame.snapshot.scheduler
    top = sched.reasons[0]
    assert top.reason == "Insufficient nvidia.com/gpu"
    real = truth.pending_by_wait(events("scheduler-backlog"))
    gated = real.get(PodWait.GATED, 0)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = overview(app).panel(Area.SCHEDULER).plain
        shown = re.search(r"([\d,]+) pending", text)
        assert shown and truth.number(shown.group(1)) == sum(real.values())
        assert f"gated {gated} · quota-rej {sched.quota_rejections}" in text
        assert f"{top.pods:,} {top.reason}" in text
        await pilot.press("4")
        await pilot.pause()
        screen = drill(app, Area.SCHEDULER)
        reasons = screen.table("reasons")
        assert truth.number(reasons.cell_text(top.reason, "pods")) == top.pods
        assert reasons.cell_text(top.reason, "examples").startswith("ml-train/")
        waits = screen.table("waits")
        assert truth.number(waits.cell_text("gated", "pods")) == gated
        assert truth.number(waits.cell_text("unschedulable", "pods")) == real.get(
            PodWait.UNSCHEDULABLE, 0
        )
        assert truth.number(waits.cell_text("quota", "pods")) == sched.quota_rejections


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
        assert line.split()[-1] == "?err"
        # the reason whole, after "failed:" where the panel is wide enough for both
        # (and how many more reasons the drill-down lists: the readings still warming up)
        note = ("? failed: " if size[0] >= 100 else "? ") + "apiserver-1: connection refused"
        more = len(reasons.area_reasons(snap, Area.APISERVERS)) - 1
        assert note + (f" (+{more})" if more else "") in text.splitlines()
        apf = overview(app).panel(Area.APF).plain
        assert apf.startswith("1 APF ?")  # a failing input is never shown as healthy
        assert any(ln.startswith(note) for ln in apf.splitlines())
        await pilot.press("2")
        await pilot.pause()
        header = drill(app, Area.APISERVERS).header_text
        assert header.startswith(
            'apiservers: failed: apiserver apiserver-1:6443: Get "https://apiserver-1:6443/metrics"'
        )
        evs = events("apf-saturation", 36)
        ok = [
            e.at
            for e in evs
            if isinstance(e, MetricsScraped) and e.target.instance == "apiserver-1:6443"
        ]
        age = max(e.at for e in evs) - max(ok)
        shown = re.search(r"connection refused \(last read (\S+) ago\)", header)
        assert shown and truth.number(shown.group(1)) <= age < truth.number(shown.group(1)) + 60
        status = drill(app, Area.APISERVERS).table("instances")
        assert status.cell_text("status", "i:apiserver-1:6443") == "? error"
