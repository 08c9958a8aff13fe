"""The headline on screen never contradicts the screen: before the source starts every
pane says "connecting" (never failed); a critical finding with no suspect path is "no
probable cause yet" with the key that lists the findings; a cause is named by its title
and place, at 80x24 and at a large size."""

from __future__ import annotations

from collections import Counter

import pytest

from ktop.analysis.findings import Severity
from ktop.analysis.triage.paths import BY_ID
from ktop.hub import Hub
from ktop.sources.sim.simulator import Simulator
from ktop.ui.app import KtopApp
from ktop.ui.render.level import SYMBOL, Level
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional.factories import StaticHub
from tests.functional.screen import screen_text
from tests.unit.played import critical_without_cause

SIZES = [(80, 24), (200, 60)]
IDS = ["80x24", "200x60"]
STEP_S = 5.0


def zone_outage_hub(seconds: float) -> Hub:
    """The zone outage played ``seconds`` in, one published frame every 5 s (a history)."""
    sim = Simulator("zone-outage", nodes=600, zones=3, seed=7)
    hub = Hub()
    hub.ingest(sim.start())
    t = 0.0
    while t < seconds:
        hub.ingest(sim.advance(STEP_S))
        hub.publish(force=True)
        t += STEP_S
    return hub


def headline_of(app: KtopApp) -> str:
    """The status bar's first line: the headline."""
    return app.query_one(StatusBar).plain.splitlines()[0]


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_before_the_source_starts_the_screen_says_connecting(size: tuple[int, int]) -> None:
    app = KtopApp(Hub())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "connecting" in text
        assert "never" not in text and "failed" not in text
        assert SYMBOL[Level.CRIT] not in text  # nothing alarms before anything is read
        # the headline too: nothing was asked yet, so no verdict is not the word
        assert headline_of(app).startswith(f"{SYMBOL[Level.UNKNOWN]} Connecting")
        assert "No verdict" not in headline_of(app)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_a_critical_finding_without_a_cause_is_no_probable_cause_yet(
    size: tuple[int, int],
) -> None:
    published = critical_without_cause()
    assert published.triage.cause is None
    assert any(f.severity is Severity.CRITICAL for f in published.findings)
    app = KtopApp(StaticHub(published.snapshot, published.findings))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        line = headline_of(app)
        assert line.startswith("✖ No probable cause yet: 1 critical finding, press f")
        assert "No incident" not in screen_text(app)
        await pilot.press("f")  # the key the headline names lists the findings
        await pilot.pause()
        assert type(app.screen).__name__ == "FindingsScreen"


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_cause_is_named_by_its_title_and_its_zone(size: tuple[int, int]) -> None:
    hub = zone_outage_hub(200)
    snap = hub.latest.snapshot
    zone = Counter(n.zone for n in snap.nodes.not_ready_nodes).most_common(1)[0][0]
    app = KtopApp(hub)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        line = headline_of(app)
        assert f"{BY_ID['P4'].title}: zone {zone}" in line
        assert "since " in line
