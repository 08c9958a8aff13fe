"""The ``g`` prompt and seeking in the app (Pilot at 80x24): the prompt says what a typed
time means, ``+N`` / ``-N`` are from the current position, a time outside the recording
is refused with its range, the seek runs off the UI loop while the timeline says where it
is going, and landing on a marker shows its note.
"""

from __future__ import annotations

import asyncio
import threading
import time
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
from ktop.sources.replay import ReplayPlayer, ReplaySource, SeekStoppedError
from ktop.ui.app import KtopApp
from ktop.ui.screens.help import HelpScreen
from ktop.ui.screens.prompt import PromptScreen
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional.screen import seeks_done
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
        self,
        at: float | None = None,
        progress: Callable[[float], None] | None = None,
        *,
        frames: bool = False,
    ) -> Cursor:
        assert self.gate.wait(30), "the test never opened the gate"
        return self.rec.cursor(at, progress, frames=frames)


def _app(path: Path) -> tuple[KtopApp, ReplayPlayer, GatedTimeline]:
    rec = Recording(path)
    hub = Hub(ClusterModel(rec.model_config))
    timeline = GatedTimeline(rec)
    player = ReplayPlayer(timeline, hub.reset)
    player.paused = True
    source = ReplaySource(player, tick_s=3600.0)  # the test moves the clock, not the wall
    return KtopApp(hub, [source], replay=source), player, timeline


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
        await seeks_done(app)
        assert player.position == tl.start + 60
        question = await _go(pilot, app, "+30")
        await seeks_done(app)
        assert f"now {fmt_clock(tl.start + 60)} UTC" in question
        assert player.position == tl.start + 90  # from here, not from the start
        await _go(pilot, app, "-45")
        await seeks_done(app)
        assert player.position == tl.start + 45
    tl.rec.close()


async def test_a_time_outside_the_recording_is_refused_with_its_range(recording: Path) -> None:
    app, player, tl = _app(recording)
    async with app.run_test(size=SIZE) as pilot:
        await _go(pilot, app, "99:00:00")
        await seeks_done(app)
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
        await seeks_done(app)
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
        await _lands(app, player, mark.at, _work_s(tl.rec))
        app.pump()
        await pilot.pause()
        assert f"marker: {mark.note}" in _status(app)
    tl.rec.close()


SHIPPED = Path(__file__).parent.parent.parent / "recordings" / "zone-outage.ktrec"


def _work_s(rec: Recording) -> float:
    """How long the test waits for a seek: twenty times a seek's fold of the whole
    recording with its history frames here (more than any seek in it does), and two
    seconds for the UI.
    """
    began = time.perf_counter()
    rec.cursor(rec.end, frames=True)
    return 20 * (time.perf_counter() - began) + 2.0


def _shipped_app(at: float) -> tuple[KtopApp, ReplayPlayer, Recording]:
    """``ktop replay recordings/zone-outage.ktrec --at AT``, its clock moved by the test."""
    rec = Recording(SHIPPED)
    hub = Hub(ClusterModel(rec.model_config))
    player = ReplayPlayer(rec, hub.reset)
    source = ReplaySource(player, tick_s=3600.0, start_at=at)
    return KtopApp(hub, [source], replay=source), player, rec


async def _lands(app: KtopApp, player: ReplayPlayer, at: float, within: float) -> None:
    """Wait (at most ``within`` seconds) for the seeks running to land; the clock is ``at``."""
    seeks = [w for w in app.workers if w.name == "seek"]
    if seeks:
        await asyncio.wait_for(app.workers.wait_for_complete(seeks), within)
    # the source's own seek to --at runs in the source's task, not as a worker
    deadline = time.monotonic() + within
    while player.seeking is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert player.seeking is None and player.position == at


@pytest.mark.parametrize(
    ("where", "keys"),
    [
        ("+30", ["left_square_bracket"]),
        ("end", ["space"]),
        ("+30", ["left_curly_bracket"]),
        ("+30", ["g", *"00:00:00", "enter"]),
    ],
)
async def test_a_seek_to_the_first_moment_lands_at_once_and_q_exits(
    where: str, keys: list[str]
) -> None:
    """The seeks the issue's author made to a recording's first moment (which starts with
    a keyframe made at time 0, before its first event in 2026) land within the time a fold
    of the whole recording takes, and ``q`` exits after.
    """
    probe = Recording(SHIPPED)
    within = _work_s(probe)
    start = probe.start
    at = start + 30 if where == "+30" else probe.end
    probe.close()
    app, player, rec = _shipped_app(at)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _lands(app, player, at, within)
        began = time.monotonic()
        await pilot.press(*keys)
        await pilot.pause()
        await _lands(app, player, start, within)
        assert time.monotonic() - began < within
        app.pump()
        await pilot.pause()
        assert not player.paused  # it plays on from there (a restart too)
        assert f" {fmt_clock(start)} [" in _status(app)
        assert fmt_clock(start) == "00:00:00"
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
    rec.close()


class EndlessTimeline(GatedTimeline):
    """The recording, whose seeks from a keyframe fold forever, step after step, until
    told to stop (:class:`SeekStoppedError` from their progress).
    """

    def __init__(self, rec: Recording) -> None:
        super().__init__(rec)
        self.folding = threading.Event()
        self.stopped = threading.Event()

    def cursor(
        self,
        at: float | None = None,
        progress: Callable[[float], None] | None = None,
        *,
        frames: bool = False,
    ) -> Cursor:
        if progress is None:
            return self.rec.cursor(at)
        self.folding.set()
        try:
            while True:
                self.rec.cursor(self.rec.start + 1)  # one step's work
                progress(0.5)
        except SeekStoppedError:
            self.stopped.set()
            raise


async def test_q_ends_a_seek_that_would_not_end(recording: Path) -> None:
    rec = Recording(recording)
    within = _work_s(rec)
    hub = Hub(ClusterModel(rec.model_config))
    timeline = EndlessTimeline(rec)
    player = ReplayPlayer(timeline, hub.reset)
    source = ReplaySource(player, tick_s=3600.0)
    app = KtopApp(hub, [source], replay=source)
    async with app.run_test(size=SIZE) as pilot:
        await _go(pilot, app, "+300")
        assert await asyncio.to_thread(timeline.folding.wait, within)
        await pilot.press("question_mark")  # the loop still answers keys
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "q")
        await pilot.pause()
    assert app.return_code == 0
    assert await asyncio.to_thread(timeline.stopped.wait, within)  # the thread ended
    rec.close()
