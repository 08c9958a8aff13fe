"""How fast the simulated clock moves against the wall clock: ``ktop demo --speed 5``
asks for five simulated seconds per wall second, and a busy machine may not give them.

:class:`PaceMeter` keeps the simulated seconds advanced at each wall-clock reading over
the last :data:`PACE_WINDOW_S` and gives the speed reached over that window as a
:class:`~ktop.model.events.SimPace` event (``behind`` below 90 % of the asked speed).
The wall clock is injected, so tests measure without sleeping.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from ktop.model.events import SimPace

PACE_WINDOW_S = 10.0
"""The speed is measured over the last this many wall seconds."""
PACE_EVERY_S = 5.0
"""A measurement is handed on at most this often (wall seconds)."""


class PaceMeter:
    """Measures the speed the simulated clock reached over the last :data:`PACE_WINDOW_S`
    wall seconds.

    ``record(advanced_s)`` after every advance, with the simulated seconds advanced since
    the start; ``sample(at)`` gives a :class:`SimPace` once a whole window was measured,
    and at most every :data:`PACE_EVERY_S` wall seconds (None otherwise).
    """

    def __init__(
        self,
        speed: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        window_s: float = PACE_WINDOW_S,
        every_s: float = PACE_EVERY_S,
    ) -> None:
        if speed <= 0 or window_s <= 0:
            raise ValueError("speed and window_s must be positive")
        self.speed = speed
        self.window_s = window_s
        self.every_s = every_s
        self._clock = clock
        self._points: deque[tuple[float, float]] = deque()
        """``(wall, simulated seconds advanced)`` readings, oldest first."""
        self._sampled_at: float | None = None

    def record(self, advanced_s: float) -> None:
        """The simulated clock has advanced ``advanced_s`` seconds since the start, now."""
        now = self._clock()
        self._points.append((now, advanced_s))
        # keep one reading at or before the window's start: the window is measured whole
        while len(self._points) > 2 and self._points[1][0] <= now - self.window_s:
            self._points.popleft()

    def effective_speed(self) -> float | None:
        """Simulated seconds per wall second over the window; None until the readings
        span a whole window.
        """
        if len(self._points) < 2:
            return None
        (wall0, sim0), (wall1, sim1) = self._points[0], self._points[-1]
        if wall1 - wall0 < self.window_s:
            return None
        return (sim1 - sim0) / (wall1 - wall0)

    def sample(self, at: float) -> SimPace | None:
        """The pace as an event at simulated time ``at``, when a whole window was measured
        and none was given in the last :data:`PACE_EVERY_S`; None otherwise.
        """
        speed = self.effective_speed()
        if speed is None:
            return None
        now = self._points[-1][0]
        if self._sampled_at is not None and now - self._sampled_at < self.every_s:
            return None
        self._sampled_at = now
        wall = now - self._points[0][0]
        return SimPace(at, self.speed, speed, wall)
