"""The triage screen at 80x24 and 160x48: paths most severe first, evidence, jump to the pane.

Which path must be suspect, and which zone it names, comes from the scenario's
story (the simulator's zone-outage takes zone-a down), checked against the
snapshot's own zone list, not against the screen's formatting.
"""

from __future__ import annotations

import pytest

from ktop.model.snapshot import ZoneState
from ktop.ui.app import KtopApp
from ktop.ui.screens.triage import TriageScreen
from tests.functional.scenarios import scenario_hub

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
        rank = {"✖ suspect": 0, "? unknown": 1, "✓ clear": 2}
        assert order == sorted(order, key=rank.__getitem__)
        suspects = [k for k, v in zip(paths.row_keys, order, strict=True) if v == "✖ suspect"]
        assert "P4" in suspects
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
        assert verdicts["API-429"] == "✖ suspect" and verdicts["P1"] == "✖ suspect"
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
        assert screen.table("paths").cell_text("API-CPU", "verdict") == "✖ suspect"
        assert "3.00x" in screen.table("paths").cell_text("API-CPU", "conclusion")
        assert "baseline: this run so far (median of" in screen.headline_text
