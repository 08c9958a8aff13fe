"""History frames while folding a recording: one every :data:`RECORDING_STEP_S` of the
recording's clock, on one grid (the recording's start plus whole steps), over the
history's retention before the moment folded to.

Every way of reaching a moment of a recording takes its frames here, so that its history,
and so every trend, onset and timeline drawn from it, is the same whichever way it came:
``ktop triage --recording --at`` (:func:`ktop.sampling.from_recording`) and a replay's
seek (:meth:`ktop.record.reader.Recording.cursor`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ktop.model.cluster import ClusterModel
from ktop.model.events import Event
from ktop.record.cursor import Cursor

RECORDING_STEP_S = 10.0
"""A recording is walked in steps this long, one history frame each, to build its baseline."""


def walk(
    cursor: Cursor,
    start: float,
    when: float,
    progress: Callable[[float], None] | None = None,
) -> int:
    """Fold a recording from ``start`` up to ``when``, taking one history frame every
    :data:`RECORDING_STEP_S` (as the hub takes one every publish) during the history's
    retention before ``when`` only: older frames would be dropped by then, and a frame
    costs a snapshot of the whole model, so a file of many short steps (a thousand
    events 10 s apart in every 100-byte chunk) would cost its steps times its model.
    The work is the events folded and at most :func:`most_frames` snapshots, whatever the
    span. How many frames were taken; ``progress`` hears the fraction done after each.
    """
    model = cursor.model
    frames = 0
    t = start
    unkept = when - model.history.retention_s  # a frame before this is gone by the end
    while t < when:
        if t >= unkept:
            cursor.fold(t)
            model.observe()
            frames += 1
            if progress is not None:
                progress(min(1.0, (t - unkept) / max(when - unkept, 1e-9)))
        t += RECORDING_STEP_S
        nxt = cursor.next_time()
        nxt = when if nxt is None else min(nxt, when)
        nxt = max(nxt, min(unkept, when))
        if nxt > t + RECORDING_STEP_S:  # no frame to take before it: go there at once
            t += (nxt - t) // RECORDING_STEP_S * RECORDING_STEP_S
    cursor.fold(when)
    return frames


def most_frames(model: ClusterModel) -> int:
    """The most history frames :func:`walk` takes (its snapshots of the model)."""
    return math.ceil(model.history.retention_s / RECORDING_STEP_S) + 2


class FrameTaker:
    """A hub sink that takes a history frame of ``model`` each time the folded events
    reach the next time of the grid :func:`walk` uses (the first event's time plus whole
    :data:`RECORDING_STEP_S`), over the history's retention before ``until`` only: the
    simulator played to a moment at once (``ktop snapshot --demo --at``) gets the
    history a recording of it gets in ``ktop triage --recording --at``.
    """

    def __init__(self, model: ClusterModel, until: float | None = None) -> None:
        self.model = model
        self.until = until
        """The source time the run stops at, relative to its first event (None: unknown)."""
        self._next: float | None = None
        self._kept_from = -math.inf

    def __call__(self, events: Sequence[Event]) -> None:
        """Take the frames the batch passed (the model has folded it already)."""
        now = self.model.now
        if self._next is None:
            start = min((e.at for e in events), default=now)
            self._next = start
            if self.until is not None:
                self._kept_from = start + self.until - self.model.history.retention_s
        while self._next <= now:
            if self._next >= self._kept_from:
                self.model.observe()
            self._next += RECORDING_STEP_S
