"""The triage screen at 80x24 and 160x48: paths most severe first, evidence, jump to the pane.

Which path must be suspect, and which zone it names, comes from the scenario's
story (the simulator's zone-outage takes zone-a down), checked against the
snapshot's own zone list, not against the screen's formatting.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from ktop.analysis import catalogue as c
from ktop.analysis.triage.baseline import HistoryKind
from ktop.commands.triage import render
from ktop.hub import Hub, Published
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.sampling import Sampled
from ktop.sources.sim.scenarios import BY_NAME
from ktop.ui.app import KtopApp
from ktop.ui.screens.triage import TriageScreen
from tests.functional.scenarios import SCENARIO_TIMES, scenario_hub, stepped

SIZES = [(80, 24), (160, 48)]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_zone_outage_puts_p4_first_and_jumps_to_nodes(size: tuple[int, int]) -> None:
    hub = scenario_hub("zone-outage")
    app = KtopApp(hub)
    async with app.run_test(size=size) as pilot:
        await pilot.press("t")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        paths = screen.table("paths")
        order = paths.column_text("verdict")
        rank = {"✖ cause": 0, "↳ explained": 1, "✖ suspect": 1, "? unknown": 2, "✓ clear": 3}
        assert order == sorted(order, key=rank.__getitem__)
        # the injected cause first, as the scenario declares it
        assert BY_NAME["zone-outage"].cause == "P4"
        assert (paths.row_keys[0], order[0]) == ("P4", "✖ cause")
        snap = app.frame.snapshot
        down = [z.zone for z in snap.nodes.zones if z.state is ZoneState.FULL_DISRUPTION]
        assert len(down) == 1
        assert f"zone {down[0]}" in paths.cell_text("P4", "conclusion")
        assert screen.headline_text.startswith("✖ ")
        # open P4: its evidence, then enter on the zone evidence opens the nodes pane
        paths.focus()
        paths.move_cursor(row=paths.row_keys.index("P4"))
        await pilot.press("enter")
        await pilot.pause()
        evidence = screen.table("evidence")
        assert evidence.has_focus
        keys = evidence.row_keys
        assert keys[0] == "0:nodes.zone_disruption"
        assert evidence.cell_text(keys[0], "status") == "✖ bad"
        assert evidence.cell_text(keys[0], "value") == str(len(down))
        evidence.move_cursor(row=0)
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "nodes"


async def test_apf_saturation_names_the_flooded_level() -> None:
    hub = scenario_hub("apf-saturation")
    app = KtopApp(hub)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("t")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        verdicts = dict(
            zip(
                screen.table("paths").row_keys,
                screen.table("paths").column_text("verdict"),
                strict=True,
            )
        )
        # the relist storm is the cause; the queueing and 429s are its consequences
        cause = BY_NAME["apf-saturation"].cause
        assert cause is not None and verdicts[cause] == "✖ cause"
        assert verdicts["API-429"] == "↳ explained" and verdicts["P1"] == "↳ explained"
        said = screen.table("paths").cell_text("API-429", "conclusion")
        assert said.startswith(f"explained by {cause}")
        worst = max(app.frame.snapshot.apf.levels, key=lambda r: r.rejected_total_per_s.or_(0))
        assert worst.priority_level in screen.table("paths").cell_text("API-429", "conclusion")


async def test_evidence_without_a_pane_says_so() -> None:
    app = KtopApp(scenario_hub("steady"))
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await pilot.press("t")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        paths = screen.table("paths")
        paths.focus()
        paths.move_cursor(row=paths.row_keys.index("HA"))
        await pilot.press("enter")
        await pilot.pause()
        # the standbys' informer sync: the one HA reading no pane shows
        assert screen.report is not None
        ha = next(p for p in screen.report.paths if p.id == "HA")
        row = next(i for i, e in enumerate(ha.evidence) if e.id == "ha.standby_sync")
        screen.table("evidence").move_cursor(row=row)
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "triage"
        assert any("no pane shows this" in str(n.title) for n in app._notifications)


async def test_baseline_is_this_run_so_far() -> None:
    from dataclasses import replace

    from ktop.model.history import History
    from ktop.model.values import Val
    from tests.functional.factories import StaticHub
    from tests.unit.snapshots import AT, with_api

    first = with_api(cpu_cores=Val.of(1.0))
    hub = StaticHub(first)
    app = KtopApp(hub)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("t")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        # a snapshot without history says nothing of the cluster's normal: no baseline yet
        assert "baseline: no baseline yet: this run so far covers 0 s" in screen.headline_text
        assert screen.table("paths").cell_text("API-CPU", "verdict") == "? unknown"
        # two minutes of this run at 1 core (one frame a second); now 3 cores: suspect
        h = History()
        for i in range(120):
            h.record(AT + i, {"api.cpu_cores|apiserver-0": 1.0})
        later = with_api(cpu_cores=Val.of(3.0))
        hub.set(replace(later, seq=2, at=AT + 120, history=h.view()))
        app.pump()
        await pilot.pause()
        assert screen.table("paths").cell_text("API-CPU", "verdict") == "✖ cause"
        assert "3.00x" in screen.table("paths").cell_text("API-CPU", "conclusion")
        assert "baseline: this run so far (median of" in screen.headline_text


# ---------------------------------------------------------------- since when, which way

Story = tuple[Hub, list[ClusterSnapshot]]
WORDS = {"worse": "getting worse", "better": "getting better", "steady": "steady"}


@pytest.fixture(scope="module")
def outage() -> Story:
    """The zone outage published once per simulated second (a history frame each)."""
    hub, _, snaps = stepped("zone-outage", int(SCENARIO_TIMES["zone-outage"]), lambda s: None)
    return hub, snaps


def clock(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%H:%M:%S")


def onset(snaps: list[ClusterSnapshot], breaching: Callable[[ClusterSnapshot], bool]) -> float:
    """The first snapshot of the last unbroken run of snapshots where ``breaching`` holds."""
    since = None
    for s in snaps:
        since = (since or s.at) if breaching(s) else None
    assert since is not None, "the scenario's problem is there at the end"
    return since


def down_zone(snaps: list[ClusterSnapshot]) -> str:
    down = [z.zone for z in snaps[-1].nodes.zones if z.state is ZoneState.FULL_DISRUPTION]
    assert len(down) == 1
    return down[0]


def unhealthy_in(zone: str) -> Callable[[ClusterSnapshot], int]:
    return lambda s: next(z.unhealthy for z in s.nodes.zones if z.zone == zone)


def lease_lag(s: ClusterSnapshot) -> float:
    return s.nodes.lease_lag_p99_s.or_(0.0)


def direction(snaps: list[ClusterSnapshot], read: Callable[[ClusterSnapshot], float]) -> str:
    """The documented rule: the mean of the last minute against the minute before it;
    a relative change under a tenth is steady, higher is worse.
    """
    at = snaps[-1].at

    def mean(a: float, b: float) -> float:
        vals = [read(s) for s in snaps if at - a < s.at <= at - b]
        return sum(vals) / len(vals)

    recent, before = mean(60, 0), mean(120, 60)
    change = (recent - before) / max(abs(recent), abs(before))
    return "steady" if abs(change) < 0.1 else ("worse" if change > 0 else "better")


def expected(snaps: list[ClusterSnapshot]) -> dict[str, tuple[float, str]]:
    """Per evidence: its onset and direction, from the snapshots' own readings."""
    count = unhealthy_in(down_zone(snaps))
    return {
        "nodes.zone_disruption": (
            onset(snaps, lambda s: count(s) > 0),
            direction(snaps, lambda s: float(count(s))),
        ),
        "nodes.lease_lag_p99": (
            onset(snaps, lambda s: lease_lag(s) > c.NODE_LEASE_LAG_P99.fires_at),
            direction(snaps, lease_lag),
        ),
    }


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_triage_says_since_when_each_problem_grows(
    outage: Story, size: tuple[int, int]
) -> None:
    hub, snaps = outage
    want = expected(snaps)
    at = snaps[-1].at
    # both readings are suspect (the Lease lag newly past the lease duration): P4 began
    # with the earlier, the Lease lag passing its warning before any node went NotReady
    zone_since, zone_way = min(want.values())
    app = KtopApp(hub)
    async with app.run_test(size=size) as pilot:
        await pilot.press("t")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        minutes = int(at - zone_since) // 60
        words = WORDS[zone_way]
        zone = down_zone(snaps)
        began = f"since {clock(zone_since)} ({minutes}m ago), {words}"
        head = f"P4 Many nodes NotReady at once: zone {zone} ({began})"
        assert head in screen.headline_text.replace("\n", " ")
        paths = screen.table("paths")
        assert paths.cell_text("P4", "since") == f"{clock(zone_since)} {zone_way}"
        # a path that is clear has no start
        clear = [k for k, v in zip(paths.row_keys, paths.column_text("verdict"), strict=True)
                 if v == "✓ clear"]  # fmt: skip
        assert clear and all(paths.cell_text(k, "since") == "-" for k in clear)
        paths.focus()
        paths.move_cursor(row=paths.row_keys.index("P4"))
        await pilot.press("enter")
        await pilot.pause()
        evidence = screen.table("evidence")
        rows = {k.split(":", 1)[1]: k for k in evidence.row_keys}
        for eid, (since, direction) in want.items():
            assert evidence.cell_text(rows[eid], "since") == f"{clock(since)} {direction}", eid
        # ok evidence says nothing of a start
        assert evidence.cell_text(rows["cp.apiservers"], "since") == "-"


def test_triage_outputs_say_since_when(outage: Story) -> None:
    _, snaps = outage
    want = expected(snaps)
    snap = snaps[-1]
    zone = down_zone(snaps)
    zone_since, zone_way = want["nodes.zone_disruption"]
    lag_since, lag_way = want["nodes.lease_lag_p99"]
    sampled = Sampled(Published(snap, (), HistoryKind.THIS_RUN), {"kind": "live"})
    text, code = render(sampled, "json")
    assert code == 1
    doc = json.loads(text)
    assert doc["version"] == 1
    p4 = next(p for p in doc["paths"] if p["id"] == "P4")
    path_since, path_way = min(want.values())  # the earlier suspect reading: the Lease lag
    assert p4["trend"]["since"] == path_since and p4["trend"]["direction"] == path_way
    ev = {e["id"]: e for e in p4["evidence"]}
    assert ev["nodes.zone_disruption"]["signal"] == f"nodes.unhealthy|{zone}"
    assert ev["nodes.zone_disruption"]["trend"]["since"] == zone_since
    assert ev["nodes.lease_lag_p99"]["trend"] == {
        "since": lag_since,
        "since_before_history": False,
        "direction": lag_way,
        "change": pytest.approx(ev["nodes.lease_lag_p99"]["trend"]["change"]),
    }
    assert ev["cp.apiservers"]["signal"] is None and ev["cp.apiservers"]["trend"] is None
    minutes = int(snap.at - zone_since) // 60
    zone_words = f"since {clock(zone_since)} ({minutes}m ago), {WORDS[zone_way]}"
    lag_minutes = int(snap.at - lag_since) // 60
    lag_words = f"since {clock(lag_since)} ({lag_minutes}m ago), {WORDS[lag_way]}"
    text, _ = render(sampled, "text")
    path_minutes = int(snap.at - path_since) // 60
    path_words = f"since {clock(path_since)} ({path_minutes}m ago), {WORDS[path_way]}"
    # the report starts with the diagnosis: P4 the cause in its zone, since its Lease lag began
    assert text.startswith(
        f"Probable cause: P4 Many nodes NotReady at once: zone {zone}, {path_words};"
    )
    block = text.split("\n✖ P4 ", 1)[1].split("\n✓", 1)[0].split("\n✖", 1)[0]
    assert f"\n    {path_words}\n" in block
    assert f"\n        {lag_words}\n" in block
    markdown, _ = render(sampled, "markdown")
    p4_row = next(line for line in markdown.splitlines() if line.startswith("| P4 "))
    assert f"| cause | {path_words} |" in p4_row
    assert zone_words in markdown
    assert lag_words in markdown
