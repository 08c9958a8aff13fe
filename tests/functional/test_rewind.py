"""Rewinding a live session under Pilot, at 80x24 and at a large size: the whole screen
shows the moment asked for (checked against a plain recording of the same session, read
on its own), the live source and the recording go on behind it, and one key returns to
live."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.history import EMPTY_HISTORY
from ktop.model.snapshot import ClusterSnapshot
from ktop.record.reader import Recording
from ktop.record.rotating import Retention, RotatingRecorder
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings
from ktop.sources.sim.simulator import Simulator
from ktop.ui.app import KtopApp
from tests.functional.screen import screen_text

SIZES = [(80, 24), (200, 60)]
START = 1_767_225_600.0
SETTINGS = WriterSettings(chunk_s=30.0, keyframe_s=120.0)
LIVED_S = 1200


def _strip(s: ClusterSnapshot) -> ClusterSnapshot:
    return replace(s, seq=0, history=EMPTY_HISTORY)


class Session:
    """A simulated live session: its hub, its own recording, a plain copy to check with."""

    def __init__(self, tmp_path: Path) -> None:
        self.sim = Simulator("zone-outage", nodes=90, zones=3, start_at=START)
        self.hub = Hub(ClusterModel())
        self.clock = [START]
        self.rec = RotatingRecorder(
            tmp_path / "own", self.hub.model, source={"kind": "demo"},
            retention=Retention(3600, 1 << 30), clock=lambda: self.clock[0], settings=SETTINGS,
        )  # fmt: skip
        self.plain_path = tmp_path / "plain.ktrec"
        self.plain = Recorder(str(self.plain_path), self.hub.model, source={"kind": "demo"})
        self.hub.add_sink(self.rec)
        self.hub.add_sink(self.plain)
        self.hub.ingest(self.sim.start())
        self.run(LIVED_S)

    def run(self, seconds: int) -> None:
        for _ in range(seconds):
            self.clock[0] += 1.0
            self.hub.ingest(self.sim.advance(1.0))

    def truth(self, at: float) -> ClusterSnapshot:
        """The snapshot at ``at`` from the plain recording, read on its own."""
        self.plain.flush()
        with Recording(self.plain_path) as one:
            return _strip(one.cursor(at).model.snapshot())


async def _settle(app: KtopApp, pilot: object) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", SIZES)
async def test_rewind_shows_the_moment_and_one_key_returns_to_live(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    s = Session(tmp_path)
    app = KtopApp(s.hub, [], always_on=s.rec, always_on_shown=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.pump()
        live = s.hub.now
        assert app.frame.published.snapshot.at == live
        assert not app.check_action("return_live", ())  # live: nothing to return from

        await pilot.press("left_curly_bracket")  # ten minutes back
        await _settle(app, pilot)
        view = app.rec.rewound
        assert view is not None and view.at == pytest.approx(live - 600)
        shown = app.frame.published.snapshot
        assert _strip(shown) == s.truth(live - 600)
        assert "REWOUND 10m 00s behind live" in screen_text(app)

        # the live session goes on behind the rewound screen, and is recorded
        events = s.rec.status().events
        s.run(5)
        app.pump()
        await pilot.pause()
        assert app.frame.published.snapshot.at == shown.at
        assert s.rec.status().events > events and s.hub.now == live + 5

        await pilot.press("right_square_bracket")  # a minute forward
        await _settle(app, pilot)
        assert app.rec.rewound is not None
        assert app.rec.rewound.at == pytest.approx(live - 540)
        assert _strip(app.frame.published.snapshot) == s.truth(live - 540)

        await pilot.press("L")  # back to live
        await pilot.pause()
        assert app.rec.rewound is None
        assert app.frame.published.snapshot.at == s.hub.now
        assert "REWOUND" not in screen_text(app)


async def test_moving_forward_past_now_is_live_and_back_stops_at_the_start(
    tmp_path: Path,
) -> None:
    s = Session(tmp_path)
    app = KtopApp(s.hub, [], always_on=s.rec, always_on_shown=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("left_square_bracket")  # a minute back
        await _settle(app, pilot)
        assert app.rec.rewound is not None
        await pilot.press("right_curly_bracket")  # ten minutes forward: past now
        await _settle(app, pilot)
        assert app.rec.rewound is None
        for _ in range(3):  # thirty minutes back in a twenty-minute session
            await pilot.press("left_curly_bracket")
            await _settle(app, pilot)
        view = app.rec.rewound
        assert view is not None and view.at == pytest.approx(view.start)
        assert view.start == pytest.approx(START, abs=1.0)


async def test_a_replay_keeps_its_own_keys_and_a_session_without_recording_has_none(
    tmp_path: Path,
) -> None:
    hub = Hub(ClusterModel())
    app = KtopApp(hub, [])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.check_action("replay", ("back_10m",))
        assert not app.check_action("return_live", ())
