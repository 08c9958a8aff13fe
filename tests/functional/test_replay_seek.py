"""The ``g`` prompt and seeking in the app (Pilot at 80x24): the prompt says what a typed
time means, ``+N`` / ``-N`` are from the current position, a time outside the recording
is refused with its range, the seek runs off the UI loop while the timeline says where it
is going, and landing on a marker shows its note.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from textual.widgets import Label

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.text import fmt_clock
from ktop.record.codec import Marker
from ktop.record.cursor import Cursor
from ktop.record.reader import Gap, Recording
from ktop.sources.replay import ReplayPlayer, ReplaySource
from ktop.ui.app import KtopApp
from ktop.ui.screens.help import HelpScreen
from ktop.ui.screens.prompt import PromptScreen
from ktop.ui.widgets.status_bar import StatusBar
from tests.unit.recfiles import record_small

SIZE = (80, 24)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_small(tmp_path_factory.mktemp("seek") / "r.ktrec", seconds=400, marks=1)


class GatedTimeline:
    """The recording, whose seeks from a keyframe wait until the test opens the gate."""

    def __init__(self, rec: Recording) -> None:
        self.rec = rec
        self.gate = threading.Event()
        self.gate.set()

    @property
    def start(self) -> float:
        return self.rec.start

    @property
    def end(self) -> float:
        return self.rec.end

    @property
    def markers(self) -> Sequence[Marker]:
        return self.rec.markers

    @property
    def gaps(self) -> Sequence[Gap]:
        return self.rec.gaps

    def cursor(
        self, at: float | None = None, progress: Callable[[float], None] | None = None
    ) -> Cursor:
        assert self.gate.wait(30), "the test never opened the gate"
        return self.rec.cursor(at, progress)


def _app(path: Path) -> tuple[KtopApp, ReplayPlayer, GatedTimeline]:
    rec = Recording(path)
    hub = Hub(ClusterModel(rec.model_config))
    timeline = GatedTimeline(rec)
    player = ReplayPlayer(timeline, hub.reset)
    player.paused = True
    source = ReplaySource(player, tick_s=3600.0)  # the test moves the clock, not the wall
    return KtopApp(hub, [source], replay=source), player, timeline


async def _seeks_done(app: KtopApp) -> None:
    """Wait for the seeks running in worker threads (not the sources, which never end)."""
    seeks = [w for w in app.workers if w.name == "seek"]
    if seeks:  # an empty list would wait for every worker
        await app.workers.wait_for_complete(seeks)


def _status(app: KtopApp) -> str:
    return app.screen.query_one(StatusBar).plain


async def _go(pilot: object, app: KtopApp, text: str) -> str:
    """Press ``g``, type ``text`` and enter; the prompt's question."""
    await pilot.press("g")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    assert isinstance(app.screen, PromptScreen)
    question = str(app.screen.query_one(Label).render())
    await pilot.press(*text, "enter")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    return question


async def test_g_is_relative_to_the_position_and_the_prompt_says_so(recording: Path) -> None:
    app, player, tl = _app(recording)
    async with app.run_test(size=SIZE) as pilot:
        question = await _go(pilot, app, "+60")
        assert f"now {fmt_clock(tl.start)} UTC" in question
        assert "+N / -N seconds from now" in question
        await _seeks_done(app)
        assert player.position == tl.start + 60
        question = await _go(pilot, app, "+30")
        await _seeks_done(app)
        assert f"now {fmt_clock(tl.start + 60)} UTC" in question
        assert player.position == tl.start + 90  # from here, not from the start
        await _go(pilot, app, "-45")
        await _seeks_done(app)
        assert player.position == tl.start + 45
    tl.rec.close()


async def test_a_time_outside_the_recording_is_refused_with_its_range(recording: Path) -> None:
    app, player, tl = _app(recording)
    async with app.run_test(size=SIZE) as pilot:
        await _go(pilot, app, "99:00:00")
        await _seeks_done(app)
        assert player.position == tl.start
        shown = [str(n.message) for n in app._notifications]
        assert any(
            m.startswith("99:00:00 is after the recording: it covers 2026-01-01 00:00:00 to ")
            for m in shown
        ), shown
    tl.rec.close()


async def test_the_timeline_says_where_a_seek_goes_and_the_ui_stays_responsive(
    recording: Path,
) -> None:
    app, player, tl = _app(recording)
    async with app.run_test(size=SIZE) as pilot:
        tl.gate.clear()  # the seek from a keyframe will wait in its thread
        target = tl.start + 300
        await _go(pilot, app, "+300")
        assert player.seeking == target
        app.pump()
        await pilot.pause()
        assert f"seeking to {fmt_clock(target)} ... 0%" in _status(app)
        await pilot.press("question_mark")  # the loop still answers keys
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        tl.gate.set()
        await _seeks_done(app)
        await pilot.pause()
        assert player.seeking is None and player.position == target
        app.pump()
        await pilot.pause()
        assert "seeking" not in _status(app)
        assert app.hub.model.now <= target
    tl.rec.close()


async def test_landing_on_a_marker_shows_its_note(recording: Path) -> None:
    app, player, tl = _app(recording)
    async with app.run_test(size=SIZE) as pilot:
        (mark,) = tl.markers
        await pilot.press("n")
        await pilot.pause()
        assert player.position == mark.at
        app.pump()
        await pilot.pause()
        assert f"marker: {mark.note}" in _status(app)
    tl.rec.close()
