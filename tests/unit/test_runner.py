"""The runner: a source into a hub until the first stop condition (ktop/runner.py)."""

from __future__ import annotations

import asyncio

from ktop.hub import Hub
from ktop.model.events import ClockTick
from ktop.runner import Deadline, Duration, EndOfSource, Verdict, run_until, running
from ktop.sources.base import Emit


class Ticking:
    """One clock tick a second of source time, from ``first``, as fast as it can."""

    name = "ticking"

    def __init__(self, first: float = 100.0, last: float | None = None) -> None:
        self.first, self.last, self.emitted = first, last, 0

    async def run(self, emit: Emit) -> None:
        t = self.first
        while self.last is None or t <= self.last:
            emit([ClockTick(t)])
            self.emitted += 1
            t += 1.0
            await asyncio.sleep(0)


class Failing:
    name = "failing"

    async def run(self, emit: Emit) -> None:
        emit([ClockTick(5.0)])
        raise OSError("gone")


def test_a_duration_stops_at_the_batch_that_meets_it_and_folds_none_after() -> None:
    hub = Hub()
    result = asyncio.run(run_until(Ticking(), hub, Duration(3.0, "three seconds")))
    assert result.reason == "three seconds"
    assert result.started == 100.0
    assert hub.now == 103.0  # 100, 101, 102, 103: the fourth batch is the last folded
    assert hub.events_total == 4


def test_the_end_of_the_source_stops_and_its_failure_is_kept() -> None:
    async def go() -> tuple[str, list[str]]:
        async with running([Failing()], Hub()) as run:
            reason = await run.until(EndOfSource())
        return reason, [f"{s.name}: {e}" for s, e in run.failures]

    assert asyncio.run(go()) == ("the source ended", ["failing: gone"])


def test_a_verdict_already_met_stops_at_once_after_one_tick() -> None:
    ticks: list[int] = []

    async def tick() -> None:
        ticks.append(1)

    async def go() -> str:
        async with running([Ticking(last=100.0)], Hub()) as run:
            return await run.until(Verdict(lambda: "done"), every=60.0, tick=tick)

    assert asyncio.run(go()) == "done"
    assert ticks == [1]


def test_a_deadline_on_its_clock_ends_a_wait_with_ticks_until_then() -> None:
    now = [0.0]
    ticks: list[float] = []

    async def tick() -> None:  # each tick moves the deadline's clock one second on
        ticks.append(now[0])
        now[0] += 1.0

    async def go() -> str:
        async with running([], Hub()) as run:
            return await run.until(Deadline(3.0, "window", lambda: now[0]), every=0.0, tick=tick)

    assert asyncio.run(go()) == "window"
    assert ticks == [0.0, 1.0, 2.0]
