"""A pane's title and a row carry the worst mark of what they show: never ✓ beside their
own ✖ (the zone outage's Lease lag is critical while its zone is still Normal)."""

from __future__ import annotations

from ktop.hub import Hub
from ktop.model.events import Area
from ktop.sources.sim.simulator import Simulator
from ktop.ui.render.areas import drill_view, overview_panel
from ktop.ui.render.level import SYMBOL, Level

OK, WARN, CRIT = SYMBOL[Level.OK], SYMBOL[Level.WARN], SYMBOL[Level.CRIT]


def outage_at(seconds: float) -> Hub:
    sim = Simulator("zone-outage", nodes=600, zones=3, seed=4)
    hub = Hub()
    hub.ingest(sim.start())
    for _ in range(int(seconds // 5)):
        hub.ingest(sim.advance(5.0))
        hub.publish(force=True)
    return hub


def test_no_row_or_title_of_the_nodes_pane_shows_ok_beside_critical() -> None:
    snap = outage_at(80).latest.snapshot
    view = overview_panel(snap, Area.NODES, rows=12, width=120)
    shown = [line.plain for line in view.lines]
    assert any(CRIT in line for line in shown)  # the Lease lag of the outage zone
    title = view.title.plain.split()
    assert title[1] == CRIT  # "nodes ✖ ...": the lag it names is critical
    for line in shown:
        words = line.split()
        if not words or words[0] not in (OK, WARN, CRIT):
            continue  # a header or a note: no mark of its own
        if CRIT in line[1:]:
            assert words[0] == CRIT, line
        elif WARN in line[1:]:
            assert words[0] != OK, line


def test_the_drill_down_zone_mark_is_the_worst_of_its_row() -> None:
    snap = outage_at(80).latest.snapshot
    zones = next(t for t in drill_view(snap, Area.NODES).tables if t.key == "zones")
    assert any(CRIT in c.plain for row in zones.rows for c in row.cells[1:])
    for row in zones.rows:
        cells = [c.plain for c in row.cells]
        if any(CRIT in c for c in cells[1:]):
            assert cells[0] == CRIT, cells
