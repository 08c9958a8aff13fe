"""``SimulatorSource``: the simulator behind the ``Source`` protocol."""

from __future__ import annotations

import asyncio
import contextlib

from ktop.sources.base import Emit
from ktop.sources.sim.simulator import Simulator


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
        """Emit the initial state, then one batch per tick until cancelled."""
        with contextlib.suppress(asyncio.CancelledError):
            emit(self.sim.start())
            while True:
                await asyncio.sleep(self.tick_s)
                emit(self.sim.advance(self.tick_s * self.speed))
