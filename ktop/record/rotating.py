"""Always-on recording: every session into rotating files in one directory, within limits.

``ktop --record-dir DIR --retain 24h --max-disk 2G`` (or the same keys in
``config.toml``) records the whole session into ``DIR``: a new file every
:data:`FILE_S` (so that the oldest hour can be dropped whole), named by the wall-clock
time it was started (``ktop-20261203T140200Z.ktrec``). After each rotation, and every
:data:`CHECK_S` while recording, whole files are deleted, oldest first, until what
``DIR`` holds is within both limits: none that ended more than ``retain`` ago, and at
most ``max-disk`` bytes in all. Only files named as this module names them are ever
counted or deleted, and never the file being written. ``ktop replay DIR`` opens the set
as one timeline (``ktop/record/recording_set.py``).

A file that cannot be written stops the always-on recording (the error is kept for the
screen), as a recording started with ``R`` does; the live view goes on.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.state import StateView
from ktop.record.codec import Marker
from ktop.record.journal import recover, tail_of
from ktop.record.session import Recorder, RecordingStatus
from ktop.record.writer import WriterSettings

FILE_S = 3600.0
"""A new file every hour of wall-clock time."""
CHECK_S = 30.0
"""How often the limits are checked while a file grows."""
JOURNAL_S = 2.0
"""A crash loses at most this much: the chunk being filled is journaled this often
(``ktop/record/journal.py``)."""
NAME = re.compile(r"^ktop-(\d{8}T\d{6}Z)(?:-(\d+))?\.ktrec$")
"""The names this module gives its files (and the only ones it ever deletes)."""


@dataclass(frozen=True, slots=True)
class Retention:
    """How much a record directory keeps."""

    retain_s: float
    """Files that ended longer ago than this are deleted."""
    max_bytes: int
    """The files' total size stays at most this (the oldest are deleted first)."""


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One file of a record directory."""

    path: Path
    size: int
    ended: float
    """When it was last written (its modification time)."""


def stored(directory: Path) -> list[StoredFile]:
    """The record directory's files, oldest first (their names sort by start time)."""
    out = []
    for path in sorted(directory.iterdir()) if directory.is_dir() else ():
        if not NAME.match(path.name):
            continue
        with contextlib.suppress(FileNotFoundError):
            st = path.stat()
            if path.is_file():
                out.append(StoredFile(path, st.st_size, st.st_mtime))
    return out


def to_drop(
    files: Sequence[StoredFile], now: float, retention: Retention, keep: Path | None
) -> list[StoredFile]:
    """The whole files to delete, oldest first, so that the rest is within both limits;
    never ``keep`` (the file being written), even when it alone is over the size limit.
    """
    drop: list[StoredFile] = []
    kept = [f for f in files if f.path != keep]
    total = sum(f.size for f in files)
    for f in kept:  # oldest first
        too_old = now - f.ended > retention.retain_s
        too_big = total > retention.max_bytes
        if not (too_old or too_big):
            continue
        drop.append(f)
        total -= f.size
    return drop


def file_name(started: float, taken: Callable[[str], bool]) -> str:
    """The name of a file started at ``started`` (wall clock), not one already ``taken``."""
    stamp = datetime.fromtimestamp(started, UTC).strftime("%Y%m%dT%H%M%SZ")
    name, n = f"ktop-{stamp}.ktrec", 1
    while taken(name):
        n += 1
        name = f"ktop-{stamp}-{n}.ktrec"
    return name


class RotatingRecorder:
    """A hub sink that records into rotating files in a directory, within a retention;
    each file starts with a keyframe of ``state`` (the hub).
    """

    def __init__(
        self,
        directory: str | Path,
        state: StateView | ClusterModel,
        *,
        source: dict[str, str],
        retention: Retention,
        clock: Callable[[], float] = time.time,
        settings: WriterSettings | None = None,
        file_s: float = FILE_S,
    ) -> None:
        self.directory = Path(directory)
        self.state = state
        self.source = source
        self.retention = retention
        self.clock = clock
        self.settings = replace(settings or WriterSettings(), journal_s=JOURNAL_S)
        self.file_s = file_s
        self.error = ""
        self.files_written = 0
        self.dropped: list[Path] = []
        """Every file deleted to stay within the limits, in order."""
        self._current: Recorder | None = None
        self._started = 0.0
        self._checked = 0.0
        self.recovered: list[str] = []
        """What earlier sessions that died left in their journals, put back."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.recovered = [done for f in stored(self.directory) if (done := recover(f.path))]
        except OSError as exc:
            self.error = f"always-on recording stopped: {exc.strerror or exc} ({self.directory})"
            return
        self._rotate()

    @property
    def active(self) -> bool:
        """Whether events are still being recorded."""
        return self._current is not None and self._current.active

    @property
    def path(self) -> str:
        """The file being written (empty when stopped)."""
        return self._current.path if self._current is not None else ""

    def status(self) -> RecordingStatus:
        """The current file's status (the directory's limits are in ``retention``)."""
        if self._current is None:
            return RecordingStatus(False, str(self.directory), 0, 0, 0, self.error, "stopped")
        st = self._current.status()
        return (
            st
            if not self.error
            else RecordingStatus(
                False, st.path, st.size, st.events, st.markers, self.error, "write error"
            )
        )

    def _rotate(self) -> None:
        """Finish the current file, start the next, and keep the directory within limits."""
        if self._current is not None:
            self._current.stop("rotated")
        now = self.clock()
        name = file_name(now, lambda n: (self.directory / n).exists())
        try:
            self._current = Recorder(
                str(self.directory / name), self.state, source=self.source, settings=self.settings
            )
        except OSError as exc:
            self._current = None
            self.error = f"always-on recording stopped: {exc.strerror or exc} ({self.directory})"
            return
        self._started = now
        self.files_written += 1
        self.enforce()

    def enforce(self) -> list[Path]:
        """Delete the whole files that put the directory over a limit; the ones deleted."""
        now = self.clock()
        self._checked = now
        keep = Path(self._current.path) if self._current is not None else None
        gone = []
        for f in to_drop(stored(self.directory), now, self.retention, keep):
            for p in (f.path, tail_of(f.path)):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
            gone.append(f.path)
        self.dropped.extend(gone)
        return gone

    def __call__(self, events: Sequence[ev.Event]) -> None:
        """Record a batch (the hub calls this after folding it)."""
        rec = self._current
        if rec is None:
            return
        now = self.clock()
        if now - self._started >= self.file_s:
            self._rotate()
            rec = self._current
            if rec is None:
                return
        rec(events)
        if not rec.active and rec.error:
            self.error = rec.error
            self._current = None
            return
        if now - self._checked >= CHECK_S:
            self.enforce()

    def mark(self, note: str, at: float | None = None) -> Marker | None:
        """Add a marker to the current file (None when not recording)."""
        return self._current.mark(note, at) if self._current is not None else None

    def flush(self) -> None:
        """Write the current file's events so far (a rewind reads them)."""
        if self._current is not None:
            self._current.flush()

    def stop(self, because: str = "stopped") -> None:
        """Finish the current file."""
        if self._current is not None:
            self._current.stop(because)
