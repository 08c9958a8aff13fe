"""The simulator measures how fast its clock really moves against ``--speed`` (on an
injected wall clock: nothing here sleeps), the model carries the measurement, and the
status line says when it falls behind.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence

import pytest

from ktop.hub import Hub
from ktop.model.events import PACE_BEHIND_RATIO, Event, SimPace
from ktop.model.state import export_state, import_state
from ktop.sources.sim.pace import PACE_EVERY_S, PACE_WINDOW_S, PaceMeter
from ktop.sources.sim.simulator import Simulator
from ktop.sources.sim.source import SimulatorSource
from ktop.ui.render.status import pace_segment, status_line


class FakeWall:
    """A wall clock the test moves by hand (or by ``step`` on every reading)."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 1000.0
        self.step = step

    def __call__(self) -> float:
        now = self.now
        self.now += self.step
        return now


def test_no_measurement_until_a_whole_window_was_read() -> None:
    wall = FakeWall()
    meter = PaceMeter(5.0, wall)
    meter.record(0.0)
    for second in range(1, int(PACE_WINDOW_S)):
        wall.now += 1
        meter.record(5.0 * second)
        assert meter.effective_speed() is None
        assert meter.sample(0.0) is None


def test_on_pace_the_speed_is_the_asked_one_and_not_behind() -> None:
    wall = FakeWall()
    meter = PaceMeter(5.0, wall)
    for second in range(31):
        meter.record(5.0 * second)
        wall.now += 1
    assert meter.effective_speed() == pytest.approx(5.0)
    pace = meter.sample(123.0)
    assert pace == SimPace(123.0, 5.0, 5.0, PACE_WINDOW_S)
    assert not pace.behind


def test_late_ticks_give_the_speed_over_the_last_window_only() -> None:
    wall = FakeWall()
    meter = PaceMeter(5.0, wall)
    advanced = 0.0
    for _ in range(20):  # on pace for 20 s
        meter.record(advanced)
        wall.now += 1.0
        advanced += 5.0
    for _ in range(20):  # then each 1 s tick's 5 simulated seconds take 1.6 s
        meter.record(advanced)
        wall.now += 1.6
        advanced += 5.0
    meter.record(advanced)
    # the window holds only late ticks: 5 / 1.6 = 3.125 simulated seconds per second
    assert meter.effective_speed() == pytest.approx(5.0 / 1.6, rel=0.02)
    pace = meter.sample(0.0)
    assert pace is not None and pace.behind
    assert pace.window_s >= PACE_WINDOW_S


def test_samples_come_at_most_every_few_seconds() -> None:
    wall = FakeWall()
    meter = PaceMeter(1.0, wall)
    given = []
    for second in range(40):
        meter.record(float(second))
        if meter.sample(float(second)) is not None:
            given.append(wall.now)
        wall.now += 1
    assert given[0] == 1000.0 + PACE_WINDOW_S
    assert all(b - a >= PACE_EVERY_S for a, b in itertools.pairwise(given))


@pytest.mark.parametrize(
    ("effective", "behind"), [(5.0, False), (4.5, False), (4.49, True), (3.2, True)]
)
def test_behind_below_ninety_percent_of_the_asked_speed(effective: float, behind: bool) -> None:
    assert PACE_BEHIND_RATIO == 0.9
    assert SimPace(0.0, 5.0, effective, 10.0).behind is behind


def test_the_source_measures_its_own_ticks_on_the_wall_clock() -> None:
    # Every reading of the wall clock moves it 0.5 s: a tick (its start, the meter's
    # reading, its end) takes 1.5 s of it where 1 ms was asked; the tick's work is longer
    # than the tick, so after the first (1 ms) the source does not sleep at all. The meter
    # reads at 1000 (the start), 1001 (the first tick), then every 1.5 s: the first whole
    # window, 1000 to 1010, holds 7 ticks.
    wall = FakeWall(step=0.5)
    tick_s, speed = 0.001, 5.0
    sim = Simulator("steady", nodes=30, seed=1)
    source = SimulatorSource(sim, speed=speed, tick_s=tick_s, wall_clock=wall)
    paces: list[SimPace] = []

    async def run() -> None:
        measured = asyncio.Event()

        def emit(batch: Sequence[Event]) -> None:
            paces.extend(e for e in batch if isinstance(e, SimPace))
            if paces:
                measured.set()

        task = asyncio.create_task(source.run(emit))
        try:
            await asyncio.wait_for(measured.wait(), timeout=10)  # a deadline, not a pace
        finally:
            task.cancel()
            await task

    asyncio.run(run())
    pace = paces[0]
    assert pace.speed == speed
    assert pace.effective_speed == pytest.approx(7 * tick_s * speed / 10)
    assert pace.behind
    assert pace.window_s >= PACE_WINDOW_S


def test_the_model_carries_the_pace_to_the_snapshot_and_keyframes() -> None:
    sim = Simulator("steady", nodes=30, seed=1)
    hub = Hub()
    hub.ingest(sim.start())
    assert hub.publish(force=True).snapshot.pace is None  # type: ignore[union-attr]
    pace = SimPace(sim.now, 5.0, 3.2, 10.0)
    hub.ingest([pace])
    published = hub.publish(force=True)
    assert published is not None and published.snapshot.pace == pace
    assert import_state(export_state(hub.model)).pace == pace


def test_the_status_line_says_the_simulator_is_behind() -> None:
    sim = Simulator("steady", nodes=30, seed=1)
    hub = Hub()
    hub.ingest(sim.start())
    hub.ingest([SimPace(sim.now, 5.0, 3.2, 10.0)])
    published = hub.publish(force=True)
    assert published is not None
    s, found = published.snapshot, published.findings
    wide = status_line(s, found, 160).plain
    assert "Z sim 3.2x of 5x (machine busy) │ apf 0s" in wide  # beside the clock
    narrow = status_line(s, found, 80).plain
    assert len(narrow) <= 80
    assert "sim 3.2x/5x" in narrow and "machine busy" not in narrow
    assert narrow.endswith(status_line(s, found, 160).plain.rsplit("│ ", 1)[-1])  # counts kept


def test_on_pace_nothing_is_said() -> None:
    assert pace_segment(None).plain == ""
    assert pace_segment(SimPace(0.0, 5.0, 4.8, 10.0)).plain == ""
    assert pace_segment(SimPace(0.0, 0.5, 0.3, 10.0)).plain == "sim 0.3x of 0.5x (machine busy)"
    assert pace_segment(SimPace(0.0, 64.0, 20.4, 10.0), short=True).plain == "sim 20x/64x"
