"""Replay of a recording with markers and a damaged chunk: n/N, the timeline's gap, --info,
and the same replay under a second theme.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ktop.cli import main
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.record.format import FRAME_SIZE
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings
from ktop.sources.replay import ReplayPlayer, ReplaySource
from ktop.sources.sim.simulator import Simulator
from ktop.ui.app import KtopApp
from ktop.ui.render.replay import ReplayState, timeline_line
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional.screen import seeks_done

MARKS = (100, 230)
"""Seconds after the start at which markers are added."""
SECONDS = 400


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 400 s recording with two markers, whose middle chunk is then damaged."""
    tmp = tmp_path_factory.mktemp("marks")
    sim = Simulator("zone-outage", nodes=40, zones=3)
    hub = Hub(ClusterModel())
    path = tmp / "r.ktrec"
    rec = Recorder(
        str(path),
        hub.model,
        source={"kind": "demo", "context": "zone-outage"},
        settings=WriterSettings(chunk_s=30.0, keyframe_s=90.0),
    )
    hub.add_sink(rec)
    hub.ingest(sim.start())
    for k in range(1, SECONDS + 1):
        hub.ingest(sim.advance(1.0))
        if k in MARKS:
            rec.mark(f"mark at {k}")
    rec.stop()
    with Recording(path) as r:
        victim = r.chunks[len(r.chunks) // 2]
    data = bytearray(path.read_bytes())
    data[victim.offset + FRAME_SIZE + victim.length // 2] ^= 0xFF
    out = tmp / "damaged.ktrec"
    out.write_bytes(bytes(data))
    return out


def _app(path: Path, theme: str | None = None) -> tuple[KtopApp, ReplayPlayer, Recording]:
    rec = Recording(path)
    hub = Hub(ClusterModel(rec.model_config))
    player = ReplayPlayer(rec, hub.reset)
    player.paused = True
    source = ReplaySource(player, tick_s=3600.0)  # the test moves the clock, not the wall
    app = KtopApp(hub, [source], replay=source, theme=theme, user_themes=False)
    return app, player, rec


def _timeline(app: KtopApp) -> str:
    first, line = app.screen.query_one(StatusBar).plain.splitlines()[:2]
    assert first.startswith(("✖", "✓"))  # the diagnosis, then the replay's timeline
    assert line.startswith("REPLAY")
    return line[line.index("[") + 1 : line.rindex("]")]


async def test_n_and_shift_n_go_to_the_next_and_previous_marker(damaged: Path) -> None:
    app, player, rec = _app(damaged)
    marks = sorted(m.at for m in rec.markers)
    assert len(marks) == 2
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        await seeks_done(app)
        assert player.position == pytest.approx(marks[0])
        await pilot.press("n")
        await seeks_done(app)
        assert player.position == pytest.approx(marks[1])
        await pilot.press("n")
        await seeks_done(app)
        assert player.position == pytest.approx(marks[1])
        app.pump()
        await pilot.pause()
        assert "no marker after this point" in app.screen.query_one(StatusBar).plain
        await pilot.press("N")
        await seeks_done(app)
        assert player.position == pytest.approx(marks[0])
        app.pump()
        assert app.frame.snapshot.at <= marks[0]
        await pilot.press("N")
        await seeks_done(app)
        assert player.position == pytest.approx(marks[0])
    rec.close()


@pytest.mark.parametrize("theme", ["ktop-dark", "monochrome"])
async def test_the_timeline_shows_markers_and_the_gap_under_any_theme(
    damaged: Path, theme: str
) -> None:
    app, player, rec = _app(damaged, theme)
    (gap,) = rec.gaps
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert app.theme == theme
        await pilot.press("n")  # past the first marker: its cell is under the played part
        await seeks_done(app)
        app.pump()
        await pilot.pause()
        bar = _timeline(app)
        span = rec.end - rec.start
        first, last = bar.index("░"), bar.rindex("░")
        # The shaded cells cover the gap's share of the bar (to a cell).
        assert abs(first - (gap.start - rec.start) / span * len(bar)) <= 1
        assert abs(last + 1 - (gap.end - rec.start) / span * len(bar)) <= 1.5
        assert bar.count("│") == 1  # the second marker; the first is under the position
        assert bar.index("●") == int((player.position - rec.start) / span * len(bar))
    rec.close()


def test_the_timeline_draws_a_gap_where_it_is() -> None:
    state = ReplayState(0.0, 100.0, 30.0, 4.0, False, (50.0,), ((60.0, 70.0),))
    line = timeline_line(state, 80).plain
    bar = line[line.index("[") + 1 : line.rindex("]")]
    shaded = [i for i, c in enumerate(bar) if c == "░"]
    assert shaded == list(range(shaded[0], shaded[-1] + 1))  # one run
    assert abs(shaded[0] - 0.6 * len(bar)) <= 1 and abs(shaded[-1] + 1 - 0.7 * len(bar)) <= 1.5
    assert bar[int(0.5 * len(bar))] == "│" and bar[int(0.3 * len(bar))] == "●"


def test_replay_info_prints_the_gap(damaged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(damaged), "--info"]) == 0
    out = capsys.readouterr().out
    with Recording(damaged) as rec:
        (gap,) = rec.gaps
    hhmm = datetime.fromtimestamp(gap.start, UTC).strftime("%H:%M")
    gap_lines = [line for line in out.splitlines() if line.strip().startswith("gap")]
    assert len(gap_lines) == 1
    assert hhmm in gap_lines[0] and "damaged data skipped" in gap_lines[0]
