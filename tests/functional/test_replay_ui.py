"""The replay UI and in-app recording, driven with Pilot at 80x24 and at a large size."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from ktop.analysis.triage.timeline import EventKind
from ktop.cli import main
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.snapshot import ClusterSnapshot
from ktop.record.reader import Recording
from ktop.sources.replay import SPEEDS, STEP_S, ReplayPlayer, ReplaySource
from ktop.sources.sim.simulator import Simulator
from ktop.sources.sim.source import SimulatorSource
from ktop.ui.app import KtopApp
from ktop.ui.screens.prompt import PromptScreen
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional.screen import screen_text, seeks_done

SIZES = [(80, 24), (200, 60)]
SHIPPED = Path(__file__).parent.parent.parent / "recordings"


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "zone.ktrec"
    argv = ["-o", str(path), "--demo", "zone-outage", "--nodes", "90", "--duration", "900"]
    assert main(["record", *argv]) == 0
    return path


def _replay_app(path: Path) -> tuple[KtopApp, ReplayPlayer, Recording]:
    rec = Recording(path)
    hub = Hub(ClusterModel(rec.model_config))
    player = ReplayPlayer(rec, hub.reset)
    player.paused = True
    source = ReplaySource(player, tick_s=3600.0)  # the test moves the clock, not the wall
    return KtopApp(hub, [source], replay=source), player, rec


def _status(app: KtopApp) -> str:
    return app.screen.query_one(StatusBar).plain


@pytest.mark.parametrize("size", SIZES)
async def test_replay_controls_move_the_clock_and_the_timeline(
    recording: Path, size: tuple[int, int]
) -> None:
    app, player, rec = _replay_app(recording)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.pump()
        first = _status(app)
        assert "REPLAY ⏸ 1x" in first and "[" in first
        await pilot.press("right_curly_bracket")  # +10 min
        assert player.position == pytest.approx(rec.start + 600)
        await pilot.press("left_square_bracket")  # -1 min: a seek back from a keyframe
        await seeks_done(app)  # which runs off the UI loop
        assert player.position == pytest.approx(rec.start + 540)
        assert app.hub.model.now <= player.position
        await pilot.press("full_stop")
        assert player.position == pytest.approx(rec.start + 540 + STEP_S)
        await pilot.press("comma")
        await seeks_done(app)
        await pilot.press("comma")
        await seeks_done(app)
        assert player.position == pytest.approx(rec.start + 540 - STEP_S)
        for _ in range(12):
            await pilot.press("plus")
        assert player.speed == SPEEDS[-1] == 64
        for _ in range(12):
            await pilot.press("minus")
        assert player.speed == SPEEDS[0] == 0.25
        await pilot.press("space")
        assert not player.paused
        await pilot.press("space")
        app.pump()
        await pilot.pause()
        status = _status(app)
        assert "REPLAY ⏸ 0.25x" in status
        assert status.splitlines()[1].startswith("REPLAY")  # below the diagnosis
        # The screen shows the replayed snapshot at the replay position, with findings.
        assert app.frame.snapshot.at <= player.position
        assert app.frame.snapshot.at > rec.start + 500
    rec.close()


async def test_seek_to_a_typed_time(recording: Path) -> None:
    app, player, rec = _replay_app(recording)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"+300", "enter")
        await pilot.pause()
        await seeks_done(app)  # the seek runs off the loop
        assert player.position == pytest.approx(rec.start + 300)
        direct = rec.cursor(rec.start + 300).model.snapshot()
        app.pump()
        assert app.frame.snapshot.nodes == direct.nodes
    rec.close()


def _key_bar(app: KtopApp) -> str:
    """The key bar: the screen's last line, padded so a label is a word between spaces."""
    return f" {screen_text(app).splitlines()[-1]} "


async def test_recording_keys_record_and_mark_in_the_app(tmp_path: Path) -> None:
    hub = Hub(ClusterModel())
    sim = Simulator("steady", nodes=50)
    app = KtopApp(hub, [SimulatorSource(sim, speed=30, tick_s=0.05)], record_dir=str(tmp_path))
    async with app.run_test(size=(160, 24)) as pilot:  # wide enough for every key
        await pilot.pause(0.3)
        assert " mark " not in _key_bar(app)  # nothing to mark before recording
        await pilot.press("R")
        app.pump()
        await pilot.pause(0.3)
        assert "● REC" in _status(app)
        assert " mark " in _key_bar(app)
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"spike", "enter")
        await pilot.pause(0.3)
        # the marker is on the incident timeline at once
        app.pump()
        marks = [e for e in app.frame.published.timeline if e.kind is EventKind.MARKER]
        assert [e.text for e in marks] == ["marker: spike"]
        await pilot.press("R")
        app.pump()
        await pilot.pause()
        assert "recording saved" in _status(app)
        assert " mark " not in _key_bar(app)  # the recording stopped: m has nothing to do
    files = list(tmp_path.glob("*.ktrec"))
    assert len(files) == 1
    with Recording(files[0]) as rec:
        assert rec.indexed and [m.note for m in rec.markers] == ["spike"]
        assert rec.end > rec.start


async def test_a_write_error_shows_in_the_ui_and_the_live_view_goes_on(tmp_path: Path) -> None:
    hub = Hub(ClusterModel())
    sim = Simulator("steady", nodes=50)
    app = KtopApp(hub, [SimulatorSource(sim, speed=60, tick_s=0.05)], record_dir=str(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        await pilot.press("R")
        recorder = app.rec.recorder
        assert recorder is not None and recorder._writer is not None
        recorder._writer._file.close()
        recorder._writer._file = open("/dev/full", "wb")  # noqa: SIM115 - the disk fills up
        for _ in range(150):  # more than a chunk of events: a write is attempted
            hub.ingest(sim.advance(1.0))
        app.pump()
        await pilot.pause()
        assert not recorder.active
        assert "REC stopped" in _status(app) and "No space left" in _status(app)
        before = app.frame.snapshot.at
        # the live view goes on: the simulator's next tick reaches the screen (waited for,
        # up to 20 s on a loaded machine, rather than a fixed pause)
        deadline = time.monotonic() + 20
        while app.frame.snapshot.at <= before and time.monotonic() < deadline:
            await pilot.pause(0.1)
            app.pump()
        assert app.frame.snapshot.at > before


async def test_replay_keys_do_nothing_live_and_recording_keys_nothing_in_replay(
    recording: Path, tmp_path: Path
) -> None:
    app, _player, rec = _replay_app(recording)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("R")
        assert app.rec.recorder is None
    rec.close()
    live = KtopApp(Hub(ClusterModel()), [], record_dir=str(tmp_path))
    async with live.run_test(size=(80, 24)) as pilot:
        await pilot.press("space", "g")
        await pilot.pause()
        assert not isinstance(live.screen, PromptScreen)


def test_every_simulator_scenario_has_a_shipped_recording() -> None:
    from ktop.sources.sim.scenarios import SCENARIOS

    assert sorted(p.stem for p in SHIPPED.glob("*.ktrec")) == sorted(SCENARIOS)


@pytest.mark.parametrize("scenario", sorted(p.stem for p in SHIPPED.glob("*.ktrec")))
def test_shipped_recordings_replay_to_the_simulators_own_verdicts(scenario: str) -> None:
    """recordings/ (made by `make recordings`) give today's findings and triage verdicts of a
    direct simulator run of the same scenario, size and seed (no recording code involved)."""
    from ktop.analysis.rules import evaluate
    from ktop.analysis.triage.evaluate import triage

    path = SHIPPED / f"{scenario}.ktrec"
    with Recording(path) as rec:
        assert rec.indexed and rec.gaps == []
        assert path.stat().st_size < 3_000_000
        replayed = rec.cursor(rec.end).model.snapshot()
        span = rec.end - rec.start
        detail = rec.header["source"]["detail"]
    m = re.fullmatch(r"(\d+) nodes, (\d+) zones, seed (\d+)", detail)
    assert m, detail
    sim = Simulator(scenario, nodes=int(m[1]), zones=int(m[2]), seed=int(m[3]))
    model = ClusterModel()
    model.apply_all(sim.start())
    while sim.now - rec.start < span:
        model.apply_all(sim.advance(1.0))
    direct = model.snapshot()
    assert sorted(f.code for f in evaluate(replayed)) == sorted(f.code for f in evaluate(direct))
    assert replayed.nodes == direct.nodes

    def verdicts(snap: ClusterSnapshot) -> dict[str, str]:
        return {r.id: str(r.verdict) for r in triage(snap).paths}

    assert verdicts(replayed) == verdicts(direct)
