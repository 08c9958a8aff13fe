"""Rewinding a live session: the whole screen as it was, from the session's own recording.

A live dashboard always records itself (``--record-dir``, or else files without a name
that keep the last hour: ``ktop/record/rewind_files.py``, ``ktop/commands/dashboard.py``).
The replay keys that move in time (``[ ] { } , .``) then rewind: the recording's events so
far are written out, its files are opened as one timeline (``ktop/record/recording_set.py``;
a file is opened once and kept open while it does not change, so a key press reopens only
the file being written), and the model at the chosen moment is published through a hub of
its own, so every pane, the findings, triage and the headline show that moment, while the
live source and the recording go on behind it. Moving forward past now, or ``L``, returns
to live.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ktop.analysis.triage.baseline import HistoryKind
from ktop.hub import Hub, HubPolicy, Published
from ktop.record.reader import Recording
from ktop.record.recording_set import RecordingSet
from ktop.record.rotating import RotatingRecorder
from ktop.scrub import Secrets
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
    recorder is the hub's sink there); :meth:`at` only reads files, off the loop. The
    moment is published through a hub of its own with the session's ``secrets``.
    """

    def __init__(
        self,
        recorder: RotatingRecorder,
        secrets: Secrets,
        opener: Callable[[Path], Recording] = Recording,
    ) -> None:
        self.recorder = recorder
        self._policy = HubPolicy(secrets, HistoryKind.RECORDING, triage_on_publish=True)
        self._open = opener
        self._files: dict[Path, tuple[tuple[int, int, int], Recording]] = {}
        """Each file opened so far, with the inode, size and mtime it had then (a file
        without a name is ``/proc/self/fd/N``: a later file may get the same N)."""
        self._paths: dict[Path, int] = {}
        """The recording's files and their inodes, as :meth:`flush` saw them on the UI loop
        (where the recorder drops files)."""
        self._lock = threading.Lock()
        """One rewind reads the files at a time (a newer key press may start the next
        while an older one's thread still runs)."""

    def _opened(self, path: Path) -> Recording:
        """``path``, from the files kept open when it has not changed since."""
        st = path.stat()
        if self._paths.get(path, st.st_ino) != st.st_ino:  # dropped since: another file
            raise FileNotFoundError(f"{path}: dropped by retention")
        seen = (st.st_ino, st.st_size, st.st_mtime_ns)
        kept = self._files.get(path)
        if kept is not None and kept[0] == seen:
            return kept[1]
        rec = self._open(path)
        if kept is not None:
            kept[1].close()
        self._files[path] = (seen, rec)
        return rec

    def _timeline(self) -> RecordingSet:
        """The record directory as it is now; files dropped by retention are closed."""
        files = RecordingSet(
            self.recorder.directory,
            opener=self._opened,
            release=lambda rec: None,  # kept open here, for the next rewind
            session_id=self.recorder.session,
            paths=list(self._paths),
        )
        held = {p.path for p in files.files}
        for path, (_, rec) in list(self._files.items()):
            if path not in held:  # dropped, another session's, or a file without events
                rec.close()
                del self._files[path]
        return files

    def close(self) -> None:
        """Close every file kept open."""
        with self._lock:
            for _, rec in self._files.values():
                rec.close()
            self._files.clear()

    def flush(self) -> None:
        """Write the events recorded so far, so that :meth:`at` can read up to now, and note
        the files that hold them.
        """
        self.recorder.flush()
        paths = {}
        for f in self.recorder.stored():
            with contextlib.suppress(OSError):
                paths[f.path] = f.path.stat().st_ino
        self._paths = paths

    def at(self, when: float) -> Rewound:
        """The screen at ``when`` (clamped to the recording), published with its findings,
        triage and timeline.
        """
        with self._lock:
            files = self._timeline()
            target = min(max(when, files.start), files.end)
            cursor = files.cursor(target)
            hub = Hub(cursor.model, self._policy)
            published = hub.publish(force=True)
            assert published is not None
            return Rewound(target, published, files.start)
