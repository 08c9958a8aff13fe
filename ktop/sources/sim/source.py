"""``SimulatorSource``: the simulator behind the ``Source`` protocol."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from ktop.sources.base import Emit
from ktop.sources.sim.pace import PaceMeter
from ktop.sources.sim.simulator import Simulator

SLICE_S = 1.0
"""Simulated seconds advanced between two chances for the screen to run."""


class SimulatorSource:
    """Plays a :class:`Simulator` in (scaled) real time.

    Every ``tick_s`` wall seconds the virtual clock moves ``tick_s * speed``
    seconds and the resulting events are handed to ``emit``, with the speed the clock
    really reached (:class:`~ktop.sources.sim.pace.PaceMeter`, read on ``wall_clock``):
    on a busy machine the ticks come late and the simulation falls behind ``speed``.
    """

    def __init__(
        self,
        sim: Simulator,
        *,
        speed: float = 1.0,
        tick_s: float = 1.0,
        wall_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed <= 0 or tick_s <= 0:
            raise ValueError("speed and tick_s must be positive")
        self.sim = sim
        self.speed = speed
        self.tick_s = tick_s
        self._wall = wall_clock
        self.pace = PaceMeter(speed, wall_clock)
        """The speed the simulated clock reached (it is handed on as ``SimPace`` events)."""
        self.advanced_s = 0.0
        """Simulated seconds advanced since the start."""

    @property
    def name(self) -> str:
        """Always ``demo``."""
        return "demo"

    async def run(self, emit: Emit) -> None:
        """Emit the initial state, then the events of each tick until cancelled.

        A tick's simulated time is advanced in slices of at most
        :data:`SLICE_S` seconds, yielding to the event loop between them: when
        a large fleet at a high speed costs more than a tick of wall time, the
        simulation falls behind but the screen stays responsive, and a ``SimPace``
        event every few seconds says how far behind.
        """
        with contextlib.suppress(asyncio.CancelledError):
            emit(self.sim.start())
            self.pace.record(self.advanced_s)
            worked_s = 0.0
            while True:
                # the tick's own work counts against it: only a machine too busy to do a
                # tick's work within the tick falls behind the speed
                await asyncio.sleep(max(0.0, self.tick_s - worked_s))
                began = self._wall()
                remaining = self.tick_s * self.speed
                while remaining > 1e-9:
                    step = min(remaining, SLICE_S)
                    emit(self.sim.advance(step))
                    self.advanced_s += step
                    remaining -= step
                    if remaining > 1e-9:
                        await asyncio.sleep(0)
                self.pace.record(self.advanced_s)
                pace = self.pace.sample(self.sim.now)
                if pace is not None:
                    emit([pace])
                worked_s = self._wall() - began


class SteppedSimulatorSource:
    """Plays a :class:`Simulator` as fast as it can: the initial state, then one simulated
    second per batch (the last one shorter, to end at ``until`` seconds into the scenario),
    yielding to the event loop between batches; without ``until``, until cancelled.
    """

    def __init__(self, sim: Simulator, until: float | None = None) -> None:
        self.sim = sim
        self.until = until

    @property
    def name(self) -> str:
        """Always ``demo``."""
        return "demo"

    async def run(self, emit: Emit) -> None:
        """Emit the initial state, then each second's events (up to ``until``)."""
        emit(self.sim.start())
        whole = None if self.until is None else int(self.until)
        done = 0
        while whole is None or done < whole:
            await asyncio.sleep(0)
            emit(self.sim.advance(1.0))
            done += 1
        if self.until is not None and self.until > whole:
            emit(self.sim.advance(self.until - whole))
