"""The runner: a source into a hub until the first stop condition (ktop/runner.py)."""

from __future__ import annotations

import asyncio
import io
import threading
import time

from ktop.hub import Hub
from ktop.model.events import ClockTick
from ktop.runner import (
    STOPPING,
    Deadline,
    Duration,
    EndOfSource,
    Verdict,
    run_loop,
    run_until,
    running,
    stopping_note,
)
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


def test_run_loop_returns_without_waiting_for_a_busy_worker_thread() -> None:
    released = threading.Event()
    entered = threading.Event()

    def busy() -> None:
        entered.set()
        released.wait(30.0)

    async def main() -> str:
        asyncio.get_running_loop().run_in_executor(None, busy)
        await asyncio.to_thread(entered.wait, 30.0)
        return "done"

    try:
        began = time.monotonic()
        assert run_loop(main()) == "done"
        # asyncio.run would wait the thread's 30 s; the loop's end waits for none of it
        assert time.monotonic() - began < 15.0
        assert entered.is_set() and not released.is_set()
    finally:
        released.set()


def test_run_loop_cancels_and_awaits_the_tasks_left_on_the_loop() -> None:
    closed: list[str] = []
    left: list[asyncio.Task[None]] = []

    async def lingering() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            closed.append("lingering")

    async def main() -> int:
        left.append(asyncio.create_task(lingering()))
        await asyncio.sleep(0)
        return 7

    assert run_loop(main()) == 7
    assert closed == ["lingering"] and left[0].cancelled()


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_stopping_note_is_shown_on_a_terminal_and_erased_at_the_end() -> None:
    term = Terminal()
    with stopping_note("ktop demo", term):
        assert term.getvalue() == f"\rktop demo: {STOPPING}"
    assert term.getvalue() == f"\rktop demo: {STOPPING}\r\x1b[K"


def test_the_stopping_note_writes_nothing_into_a_pipe_or_file() -> None:
    piped = io.StringIO()
    with stopping_note("ktop", piped):
        pass
    assert piped.getvalue() == ""
