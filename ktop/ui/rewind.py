"""Rewinding a live session: the whole screen as it was, from the session's own recording.

A live dashboard always records itself (``--record-dir``, or else a private temporary
directory that keeps the last hour: ``ktop/commands/dashboard.py``). The replay keys that
move in time (``[ ] { } , .``) then rewind: the recording's events so far are written out,
the record directory is opened as one timeline (``ktop/record/recording_set.py``), and the
model at the chosen moment is published through a hub of its own, so every pane, the
findings, triage and the headline show that moment, while the live source and the
recording go on behind it. Moving forward past now, or ``L``, returns to live.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.analysis.triage.baseline import HistoryKind
from ktop.hub import Hub, Published
from ktop.record.recording_set import RecordingSet
from ktop.record.rotating import RotatingRecorder
from ktop.sources.replay import STEP_S

MOVES: dict[str, float] = {
    "back_1m": -60.0,
    "back_10m": -600.0,
    "jump_1m": 60.0,
    "jump_10m": 600.0,
    "step_back": -STEP_S,
    "step_forward": STEP_S,
}
"""How far each replay control moves a rewound screen, in seconds."""


@dataclass(frozen=True, slots=True)
class Rewound:
    """The screen as it was at ``at``."""

    at: float
    published: Published
    start: float
    """Where the session's recording begins (a rewind cannot go further back)."""


def rewind_target(base: float, move: float, live: float, start: float) -> float | None:
    """Where a move from ``base`` lands: ``None`` is live (at or past ``live``); never
    before the recording's ``start``.
    """
    at = base + move
    if at >= live:
        return None
    return max(at, start)


class Rewinder:
    """Opens the session's recording at a moment. :meth:`flush` runs on the UI loop (the
    recorder is the hub's sink there); :meth:`at` only reads files, off the loop.
    """

    def __init__(self, recorder: RotatingRecorder) -> None:
        self.recorder = recorder

    def flush(self) -> None:
        """Write the events recorded so far, so that :meth:`at` can read up to now."""
        self.recorder.flush()

    def at(self, when: float) -> Rewound:
        """The screen at ``when`` (clamped to the recording), published with its findings,
        triage and timeline.
        """
        with RecordingSet(self.recorder.directory) as files:
            target = min(max(when, files.start), files.end)
            cursor = files.cursor(target)
            hub = Hub(cursor.model, history=HistoryKind.RECORDING)
            hub.triage_on_publish = True
            published = hub.publish(force=True)
            assert published is not None
            return Rewound(target, published, files.start)
