"""Waiting, stale and failed are different states: before an input's first data is due
the screen says the area waits (not failed, not healthy) and when its data is due; once
it is overdue it says it was never read; when data comes it shows the data."""

from __future__ import annotations

import pytest

from ktop.hub import Hub
from ktop.model.events import Area, SourceStarted
from ktop.model.snapshot import FIRST_DATA_DUE_S
from ktop.sources.sim.simulator import Simulator
from ktop.ui.app import KtopApp
from ktop.ui.render.areas import overview_panel
from ktop.ui.render.status import ages
from ktop.ui.render.triage import headline_bar
from tests.functional.screen import screen_text

T0 = 1_767_225_600.0


def started_hub(at: float = T0) -> Hub:
    hub = Hub()
    hub.ingest([SourceStarted(at, "live", "prod-cell-a")])
    return hub


def test_before_the_first_data_is_due_every_area_waits() -> None:
    published = started_hub().latest
    snap = published.snapshot
    line = ages(snap).plain
    assert line == f"waiting for first data, due in {FIRST_DATA_DUE_S:.0f}s"
    assert "!" not in line and "never" not in line and "✖" not in line
    for area in Area:
        view = overview_panel(snap, area, rows=6, width=60)
        assert "waiting for first data" in view.title.plain
        assert "✓" not in view.title.plain and "?" not in view.title.plain
    assert [f.title.split(":")[1].strip() for f in published.findings] == [
        f"waiting for first data (due within {FIRST_DATA_DUE_S:g} s of the start)"
    ] * len(Area)
    bar = headline_bar(published.triage, 120).plain
    assert bar.startswith("? No verdict") and "No incident" not in bar


def test_once_overdue_an_area_without_data_is_shown_as_never_read() -> None:
    hub = started_hub()
    # the source clock moves past the due time without data (a second start is ignored)
    hub.ingest([SourceStarted(T0 + FIRST_DATA_DUE_S + 1, "live", "prod-cell-a")])
    snap = hub.latest.snapshot
    assert snap.started_at == T0
    line = ages(snap).plain
    assert "wait" not in line and line.count("✖never") == len(Area)
    for area in Area:
        assert "waiting" not in overview_panel(snap, area, rows=6, width=60).title.plain


def test_data_ends_the_wait() -> None:
    sim = Simulator("steady", nodes=50, seed=3)
    hub = Hub()
    hub.ingest(sim.start())
    snap = hub.latest.snapshot
    assert all(snap.area_waiting_s(a) is None for a in Area)
    assert "wait" not in ages(snap).plain


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
async def test_the_first_frame_of_a_live_start_says_waiting(size: tuple[int, int]) -> None:
    app = KtopApp(started_hub())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "waiting for first data" in text
        # when: on every panel's border, and once in the status line
        assert text.count(f"due in {FIRST_DATA_DUE_S:.0f}s") == len(Area) + 1
        assert "never" not in text and "✖" not in text and "0/" not in text
        assert "No verdict" in text


def test_a_replay_at_its_first_second_waits_instead_of_naming_a_missing_source() -> None:
    from pathlib import Path

    from ktop.analysis.rules import evaluate
    from ktop.record.reader import Recording

    path = Path(__file__).resolve().parents[2] / "recordings" / "zone-outage.ktrec"
    with Recording(path) as rec:
        cursor = rec.cursor(rec.start)
        first = evaluate(cursor.model.snapshot())
        cursor.advance(rec.start + FIRST_DATA_DUE_S + 10)
        later = evaluate(cursor.model.snapshot())
    assert not [f for f in first if "metrics source" in f.title]
    assert [f for f in first if "waiting for" in f.title]
    assert not [f for f in later if "waiting for" in f.title]


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
async def test_a_waiting_drill_down_counts_down_to_its_first_data(size: tuple[int, int]) -> None:
    from ktop.ui.screens.drill import DrillScreen

    hub = started_hub()
    app = KtopApp(hub)
    async with app.run_test(size=size) as pilot:
        await pilot.press("3")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        due = FIRST_DATA_DUE_S
        assert screen.header_text.splitlines()[0] == (
            f"etcd: waiting for first data, due in {due:.0f}s"
        )
        # the source clock moves on 12 s without data: the same screen counts down
        hub.ingest([SourceStarted(T0 + 12, "live", "prod-cell-a")])
        app.pump()
        await pilot.pause()
        first = screen.header_text.splitlines()[0]
        assert first == f"etcd: waiting for first data, due in {due - 12:.0f}s"
        assert "failed" not in screen.header_text and "never" not in screen.header_text
