"""``ReplaySource``: a recording played back as just another source.

The player owns a cursor into the recording and a replay clock. Each tick
moves the clock by the wall time passed times the speed and emits the
recorded events up to it, in recorded order, so the hub folds them through
the same model and analysis as live data. Seeking (jumps, markers, steps
back) replaces the hub's model with the cursor's, built from the nearest
keyframe, instead of replaying from the start.

The recording itself is reached through the small protocols below, so
this module needs nothing from ``ktop.record``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from ktop.model.cluster import ClusterModel
from ktop.model.events import Event
from ktop.sources.base import Emit

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
"""Replay speeds, slowest first."""
STEP_S = 5.0
"""One step forward or back (the default scrape interval of the simulator)."""
FOLD_AHEAD_S = 120.0
"""Seeks forward by at most this much fold the events in between; longer ones start from the
nearest keyframe, like seeks back (cheaper at 10,000 nodes than folding ten minutes)."""
TICK_S = 0.1
"""Wall seconds between two moves of the replay clock."""


def parse_time(text: str, start: float, end: float) -> float:
    """``+SECONDS`` from the start, ``HH:MM[:SS]`` on the recording's days, or Unix seconds."""
    t = text.strip()
    if t.startswith("+"):
        return start + float(t[1:])
    if ":" in t:
        parts = [float(x) for x in t.split(":")]
        secs = parts[0] * 3600 + parts[1] * 60 + (parts[2] if len(parts) > 2 else 0.0)
        day = datetime.fromtimestamp(start, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        at = day.timestamp() + secs
        return at if at >= start else at + 86_400.0
    value = float(t)
    if value < end - start + 1:
        return start + value
    return value


class TimedNote(Protocol):
    """A marker: a time and a note."""

    @property
    def at(self) -> float: ...  # noqa: D102

    @property
    def note(self) -> str: ...  # noqa: D102


class Span(Protocol):
    """A gap: a stretch of time without data."""

    @property
    def start(self) -> float: ...  # noqa: D102

    @property
    def end(self) -> float: ...  # noqa: D102


class Cursor(Protocol):
    """A position in a recording with the model folded up to it."""

    model: ClusterModel

    def take(self, until: float) -> list[Event]:
        """The next events up to ``until`` (not folded)."""
        ...


class Timeline(Protocol):
    """What the player needs from a recording."""

    @property
    def start(self) -> float: ...  # noqa: D102

    @property
    def end(self) -> float: ...  # noqa: D102

    @property
    def markers(self) -> Sequence[TimedNote]: ...  # noqa: D102

    @property
    def gaps(self) -> Sequence[Span]: ...  # noqa: D102

    def cursor(self, at: float | None = None) -> Cursor:
        """A cursor whose model holds the state at ``at``."""
        ...


class ReplayPlayer:
    """The replay clock and its controls; pure apart from the ``restore`` callback."""

    def __init__(
        self, timeline: Timeline, restore: Callable[[ClusterModel], None], *, speed: float = 1.0
    ) -> None:
        self.timeline = timeline
        self._restore = restore
        self.speed = min(SPEEDS, key=lambda s: abs(s - speed))
        self.paused = False
        self.message = ""
        """The last thing a control did (e.g. ``no marker after this``)."""
        self._cursor = timeline.cursor(timeline.start)
        self.position = timeline.start
        restore(self._cursor.model)

    # ------------------------------------------------------------- clock

    @property
    def at_end(self) -> bool:
        """Whether the clock reached the end of the recording."""
        return self.position >= self.timeline.end

    def tick(self, wall_s: float) -> list[Event]:
        """Move the clock ``wall_s * speed`` forward (unless paused); the events passed."""
        if self.paused or self.at_end:
            return []
        return self._forward(min(self.timeline.end, self.position + wall_s * self.speed))

    def _forward(self, until: float) -> list[Event]:
        events = self._cursor.take(until)
        self.position = until
        if self.at_end:
            self.paused = True
            self.message = "end of recording"
        return events

    def seek(self, at: float) -> list[Event]:
        """Go to ``at`` (clamped): short moves forward emit the events passed, others restore."""
        at = max(self.timeline.start, min(self.timeline.end, at))
        self.message = ""
        if self.position <= at <= self.position + FOLD_AHEAD_S:
            return self._forward(at)
        self._cursor = self.timeline.cursor(at)
        self.position = at
        self._restore(self._cursor.model)
        return []

    # ---------------------------------------------------------- controls

    def toggle_pause(self) -> None:
        """Pause or resume (resuming at the end starts again from the beginning)."""
        if self.paused and self.at_end:
            self.seek(self.timeline.start)
        self.paused = not self.paused
        self.message = "paused" if self.paused else ""

    def faster(self) -> None:
        """The next speed up (64x at most)."""
        i = SPEEDS.index(self.speed)
        self.speed = SPEEDS[min(len(SPEEDS) - 1, i + 1)]

    def slower(self) -> None:
        """The next speed down (0.25x at least)."""
        i = SPEEDS.index(self.speed)
        self.speed = SPEEDS[max(0, i - 1)]

    def step(self, direction: int) -> list[Event]:
        """Pause and move one step forward (``+1``) or back (``-1``)."""
        self.paused = True
        return self.seek(self.position + direction * STEP_S)

    def jump(self, seconds: float) -> list[Event]:
        """Move ``seconds`` forward or back, keeping the play state."""
        return self.seek(self.position + seconds)

    def marker(self, direction: int) -> list[Event]:
        """Go to the next (``+1``) or previous (``-1``) marker."""
        eps = 1e-6
        marks = sorted(m.at for m in self.timeline.markers)
        if direction > 0:
            later = [t for t in marks if t > self.position + eps]
            if not later:
                self.message = "no marker after this point"
                return []
            return self.seek(later[0])
        earlier = [t for t in marks if t < self.position - eps]
        if not earlier:
            self.message = "no marker before this point"
            return []
        return self.seek(earlier[-1])


class ReplaySource:
    """Plays a :class:`ReplayPlayer` in real time: one tick every ``TICK_S`` wall seconds."""

    def __init__(self, player: ReplayPlayer, *, tick_s: float = TICK_S) -> None:
        self.player = player
        self.tick_s = tick_s
        self._emit: Emit | None = None

    @property
    def name(self) -> str:
        """Always ``replay``."""
        return "replay"

    def control(self, action: Callable[[ReplayPlayer], list[Event] | None]) -> None:
        """Run a control on the player and emit what it passed over (from the UI)."""
        events = action(self.player)
        if events and self._emit is not None:
            self._emit(events)

    async def run(self, emit: Emit) -> None:
        """Emit the recorded events as the replay clock passes them, until cancelled."""
        self._emit = emit
        loop = asyncio.get_running_loop()
        last = loop.time()
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await asyncio.sleep(self.tick_s)
                now = loop.time()
                events = self.player.tick(now - last)
                last = now
                if events:
                    emit(events)
