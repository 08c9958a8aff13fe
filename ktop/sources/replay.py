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
import math
import threading
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from ktop.model.cluster import ClusterModel
from ktop.model.events import Event
from ktop.model.scrub_events import printable_text
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
MARKER_EPS_S = 1e-6
"""A position this close to a marker is on it."""


class SeekStoppedError(Exception):
    """A seek running off the UI loop was given up (the app is leaving): its thread ends at
    its next step instead of folding on after nobody waits for it.
    """


def clock_text(t: float) -> str:
    """A recording time as UTC ``YYYY-MM-DD HH:MM:SS``."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


def parse_time(text: str, start: float, end: float, position: float | None = None) -> float:
    """A time in the recording from ``start`` to ``end``: ``+SECONDS`` / ``-SECONDS`` from
    ``position`` (default: the start), ``HH:MM[:SS]`` UTC on the recording's days, or
    seconds (from the start when smaller than the recording's length, else Unix seconds).
    :class:`ValueError` says what is wrong, with the recording's time range when the time
    is outside it.
    """
    t = text.strip()
    base = start if position is None else position
    try:
        if t and t[:1] in "+-":
            at = base + float(t)
        elif ":" in t:
            at = _clock_time(t, start)
        else:
            value = float(t)
            at = start + value if value < end - start + 1 else value
    except ValueError:
        raise ValueError(
            f"not a time: {text.strip()[:40]!r} (HH:MM:SS UTC, +SECONDS or -SECONDS)"
        ) from None
    if not math.isfinite(at):
        raise ValueError(f"not a time: {text.strip()[:40]!r}")
    if not start <= at <= end:
        where = "before" if at < start else "after"
        raise ValueError(
            f"{text.strip()[:40]} is {where} the recording: it covers "
            f"{clock_text(start)} to {clock_text(end)} UTC"
        )
    return at


def _clock_time(text: str, start: float) -> float:
    """``HH:MM[:SS]`` on the day the recording starts (UTC), or the next day when earlier."""
    parts = text.split(":")
    if len(parts) > 3 or not all(p.strip().replace(".", "", 1).isdigit() for p in parts):
        raise ValueError(text)
    h, m, sec = (float(p) for p in (*parts, "0")[:3])
    if m >= 60 or sec >= 60:
        raise ValueError(text)
    day = datetime.fromtimestamp(start, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    at = day.timestamp() + h * 3600 + m * 60 + sec
    return at if at >= start else at + 86_400.0


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
    restarted: bool
    """Set by a ``take`` that moved on into another file of a set: ``model`` is then that
    file's own, to be restored (the player clears it)."""

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

    def cursor(
        self,
        at: float | None = None,
        progress: Callable[[float], None] | None = None,
        *,
        frames: bool = False,
    ) -> Cursor:
        """A cursor whose model holds the state at ``at`` (``progress`` hears how far;
        ``frames``: with the history a recording walked to ``at`` has).
        """
        ...


@dataclass(frozen=True, slots=True)
class Landing:
    """Where a seek arrives: the events passed (a short move forward) or a new cursor."""

    at: float
    events: list[Event]
    cursor: Cursor | None = None


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
        self.seeking: float | None = None
        """Where a seek running off the UI loop is going (ticks wait until it lands)."""
        self.seek_progress = 0.0
        """How much of that seek's folding is done (0 to 1)."""
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
        if self.paused or self.at_end or self.seeking is not None:
            return []
        return self._forward(min(self.timeline.end, self.position + wall_s * self.speed))

    def _forward(self, until: float) -> list[Event]:
        events = self._cursor.take(until)
        if self._cursor.restarted:  # another file of a record directory: its own state
            self._cursor.restarted = False
            self._restore(self._cursor.model)
        passed = [m for m in self.timeline.markers if self.position < m.at <= until]
        self.position = until
        if passed:  # played over a marker: its note stays until the next control
            self.message = "marker: " + printable_text(passed[-1].note or "(no note)")
        if self.at_end:
            self.paused = True
            self.message = "end of recording"
        return events

    def seek(self, at: float) -> list[Event]:
        """Go to ``at`` (clamped): short moves forward emit the events passed, others restore."""
        return self.land(self.travel(at))

    def clamp(self, at: float) -> float:
        """``at`` within the recording."""
        return max(self.timeline.start, min(self.timeline.end, at))

    def near(self, at: float) -> bool:
        """Whether a seek to ``at`` is a short move forward (the events passed, folded by the
        hub) rather than a new cursor from a keyframe.
        """
        return self.position <= self.clamp(at) <= self.position + FOLD_AHEAD_S

    def travel(self, at: float, stop: threading.Event | None = None) -> Landing:
        """The heavy half of a seek, which may run off the UI loop while ticks are held
        (:attr:`seeking` set): fold to ``at`` without touching the hub. Once ``stop`` is
        set, the fold ends at its next step with :class:`SeekStoppedError`.
        """
        if self.near(at):
            at = self.clamp(at)
            return Landing(at, self._cursor.take(at))

        def progress(fraction: float) -> None:
            if stop is not None and stop.is_set():
                raise SeekStoppedError
            self.seek_progress = fraction

        at = self.clamp(at)
        return Landing(at, [], self.timeline.cursor(at, progress, frames=True))

    def land(self, landing: Landing) -> list[Event]:
        """The light half of a seek: take the new position (and model); the events passed.
        Landing on a marker shows its note.
        """
        if landing.cursor is not None:
            self._cursor = landing.cursor
            self._restore(landing.cursor.model)
        self.position = landing.at
        self.message = ""
        if self.at_end:
            self.paused = True
            self.message = "end of recording"
        notes = [m.note for m in self.timeline.markers if abs(m.at - landing.at) <= MARKER_EPS_S]
        if notes:
            self.message = "marker: " + printable_text(" / ".join(n or "(no note)" for n in notes))
        return landing.events

    # ---------------------------------------------------------- controls

    def toggle(self) -> float | None:
        """Pause or resume; resuming at the end is starting again: the start, to seek to."""
        restart = self.paused and self.at_end
        self.paused = not self.paused
        self.message = "paused" if self.paused else ""
        return self.timeline.start if restart else None

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
        return self.seek(self.step_target(direction))

    def step_target(self, direction: int) -> float:
        """Pause; where one step forward (``+1``) or back (``-1``) goes."""
        self.paused = True
        return self.position + direction * STEP_S

    def jump(self, seconds: float) -> list[Event]:
        """Move ``seconds`` forward or back, keeping the play state."""
        return self.seek(self.position + seconds)

    def marker(self, direction: int) -> list[Event]:
        """Go to the next (``+1``) or previous (``-1``) marker."""
        at = self.marker_target(direction)
        return [] if at is None else self.seek(at)

    def marker_target(self, direction: int) -> float | None:
        """The time of the next (``+1``) or previous (``-1``) marker; ``None`` (and a
        message) when there is none.
        """
        marks = sorted(m.at for m in self.timeline.markers)
        if direction > 0:
            later = [t for t in marks if t > self.position + MARKER_EPS_S]
            if not later:
                self.message = "no marker after this point"
                return None
            return later[0]
        earlier = [t for t in marks if t < self.position - MARKER_EPS_S]
        if not earlier:
            self.message = "no marker before this point"
            return None
        return earlier[-1]


class ReplaySource:
    """Plays a :class:`ReplayPlayer` in real time: one tick every ``TICK_S`` wall seconds."""

    def __init__(
        self, player: ReplayPlayer, *, tick_s: float = TICK_S, start_at: float | None = None
    ) -> None:
        self.player = player
        self.tick_s = tick_s
        self.start_at = start_at
        """Where to seek when the source starts (``--at``): in the app, with its progress."""
        self._emit: Emit | None = None

    @property
    def name(self) -> str:
        """Always ``replay``."""
        return "replay"

    def control(
        self, action: Callable[[ReplayPlayer], float | None]
    ) -> Coroutine[Any, Any, None] | None:
        """Run a control on the player (from the UI); not while a seek runs off the loop
        (the player is that seek's until it lands). A control that moves in time returns
        where to: that move is :meth:`move`'s.
        """
        if self.player.seeking is not None:
            return None
        at = action(self.player)
        return None if at is None else self.move(at)

    def move(self, at: float) -> Coroutine[Any, Any, None] | None:
        """Go to ``at``: a short move forward at once (its events emitted); any other
        returns the seek for the caller to run off the UI loop (its target is
        :attr:`ReplayPlayer.seeking` from now). Dropped while a seek runs.
        """
        player = self.player
        if player.seeking is not None:
            return None
        if player.near(at):
            self._pass(player.seek(at))
            return None
        player.seeking = player.clamp(at)
        player.seek_progress = 0.0
        return self._travel(at)

    async def seek_to(self, at: float) -> None:
        """Seek off the UI loop: the heavy folding runs in a thread while ticks wait and
        :attr:`ReplayPlayer.seeking` says where it is going; the landing is on the loop.
        A seek asked for while one runs is dropped (the screen says one is running).
        """
        travel = self.move(at)
        if travel is not None:
            await travel

    async def _travel(self, at: float) -> None:
        """Fold to ``at`` in a thread, then land on the loop. Cancelled (the app leaving),
        the thread is told to stop at its next step: nothing waits for it to finish.
        """
        player = self.player
        stop = threading.Event()
        try:
            landing = await asyncio.to_thread(player.travel, at, stop)
        finally:
            stop.set()
            player.seeking = None
        self._pass(player.land(landing))

    def _pass(self, events: list[Event]) -> None:
        """Emit the events a move passed over."""
        if events and self._emit is not None:
            self._emit(events)

    async def run(self, emit: Emit) -> None:
        """Emit the recorded events as the replay clock passes them, until cancelled (first
        seeking to :attr:`start_at` when one was asked for).
        """
        self._emit = emit
        if self.start_at is not None:
            at, self.start_at = self.start_at, None
            await self.seek_to(at)
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
