"""``SimulatorSource``: the simulator behind the ``Source`` protocol."""

from __future__ import annotations

import asyncio
import contextlib

from ktop.sources.base import Emit
from ktop.sources.sim.simulator import Simulator

SLICE_S = 1.0
"""Simulated seconds advanced between two chances for the screen to run."""


class SimulatorSource:
    """Plays a :class:`Simulator` in (scaled) real time.

    Every ``tick_s`` wall seconds the virtual clock moves ``tick_s * speed``
    seconds and the resulting events are handed to ``emit``.
    """

    def __init__(self, sim: Simulator, *, speed: float = 1.0, tick_s: float = 1.0) -> None:
        if speed <= 0 or tick_s <= 0:
            raise ValueError("speed and tick_s must be positive")
        self.sim = sim
        self.speed = speed
        self.tick_s = tick_s

    @property
    def name(self) -> str:
        """Always ``demo``."""
        return "demo"

    async def run(self, emit: Emit) -> None:
        """Emit the initial state, then the events of each tick until cancelled.

        A tick's simulated time is advanced in slices of at most
        :data:`SLICE_S` seconds, yielding to the event loop between them: when
        a large fleet at a high speed costs more than a tick of wall time, the
        simulation falls behind but the screen stays responsive.
        """
        with contextlib.suppress(asyncio.CancelledError):
            emit(self.sim.start())
            while True:
                await asyncio.sleep(self.tick_s)
                remaining = self.tick_s * self.speed
                while remaining > 1e-9:
                    step = min(remaining, SLICE_S)
                    emit(self.sim.advance(step))
                    remaining -= step
                    if remaining > 1e-9:
                        await asyncio.sleep(0)
