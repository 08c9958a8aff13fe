"""Always-on recording: every session into rotating files in one directory, within limits.

``ktop --record-dir DIR --retain 24h --max-disk 2G`` (or the same keys in
``config.toml``) records the whole session into ``DIR``: a new file every
:data:`FILE_S` (so that the oldest hour can be dropped whole), named by the wall-clock
time it was started (``ktop-20261203T140200Z.ktrec``). After each rotation, and every
:data:`CHECK_S` while recording, whole files are deleted, oldest first, until what
``DIR`` holds is within both limits: none that ended more than ``retain`` ago, and at
most ``max-disk`` bytes in all. Only files named as this module names them are ever
counted or deleted (exactly: ``ktop/record/recdir.py``), and never a file a live writer
holds: several sessions may record into one directory (each file's header names its
session), and each leaves the others' files alone. ``ktop replay DIR`` opens the set,
session by session (``ktop/record/recording_set.py``).

A file that cannot be written stops the always-on recording (the error is kept for the
screen), as a recording started with ``R`` does; the live view goes on.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.state import StateView
from ktop.record.codec import Marker
from ktop.record.journal import recover
from ktop.record.recdir import TAIL, Directory, StoredFile, remove, stored
from ktop.record.session import Recorder, RecordingStatus
from ktop.record.writer import WriterSettings

FILE_S = 3600.0
"""A new file every hour of wall-clock time."""
CHECK_S = 30.0
"""How often the limits are checked while a file grows."""
JOURNAL_S = 2.0
"""A crash loses at most this much: the chunk being filled is journaled this often
(``ktop/record/journal.py``)."""


@dataclass(frozen=True, slots=True)
class Retention:
    """How much a record directory keeps."""

    retain_s: float
    """Files that ended longer ago than this are deleted."""
    max_bytes: int
    """The files' total size stays at most this (the oldest are deleted first)."""


__all__ = ["Retention", "RotatingRecorder", "StoredFile", "file_name", "stored", "to_drop"]


def to_drop(
    files: Sequence[StoredFile],
    now: float,
    retention: Retention,
    keep: Path | Collection[Path] | None,
) -> list[StoredFile]:
    """The whole files to delete, oldest first, so that the rest is within both limits;
    never ``keep`` (the file being written, or every file held), even when it alone is over
    the size limit.
    """
    held = {keep} if isinstance(keep, Path) else set(keep or ())
    drop: list[StoredFile] = []
    kept = [f for f in files if f.path not in held]
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

    journal_s: float | None = JOURNAL_S
    """How often the chunk being filled is journaled (None: not at all)."""

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
        self.settings = replace(settings or WriterSettings(), journal_s=self.journal_s)
        self.file_s = file_s
        self.error = ""
        self.files_written = 0
        self.dropped: list[Path] = []
        """Every file deleted to stay within the limits, in order."""
        self._current: Recorder | None = None
        self._started = 0.0
        self._checked = 0.0
        self.session = uuid.uuid4().hex
        """This session's identity, in each of its files' headers (``replay DIR`` groups
        the files of one session by it)."""
        self.recovered: list[str] = []
        """What earlier sessions that died left in their journals, put back (or set aside)."""
        try:
            self._prepare()
        except OSError as exc:
            self.error = f"always-on recording stopped: {exc.strerror or exc} ({self.directory})"
            return
        self._rotate()

    def _prepare(self) -> None:
        """Make the directory, and put back what sessions that died left in their journals."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.recovered = [done for f in stored(self.directory) if (done := recover(f.path))]

    def stored(self) -> list[StoredFile]:
        """The recordings kept (every session's, oldest first)."""
        return stored(self.directory)

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
        try:
            self._current = self._new_file(now)
        except OSError as exc:
            self._current = None
            self.error = f"always-on recording stopped: {exc.strerror or exc} ({self.directory})"
            return
        self._started = now
        self.files_written += 1
        self.enforce()

    def _new_file(self, now: float) -> Recorder:
        """The next file's recorder, under a name no file (nor link) has: another session
        may take a name between the look and the open, then the next is tried.
        """
        source = {**self.source, "session": self.session}
        for _ in range(100):
            name = file_name(now, self._taken)
            try:
                return Recorder(
                    str(self.directory / name), self.state, source=source, settings=self.settings
                )
            except FileExistsError:
                continue
        raise FileExistsError(f"no free file name in {self.directory}")

    def _taken(self, name: str) -> bool:
        return any(os.path.lexists(self.directory / n) for n in (name, name + TAIL))

    def enforce(self) -> list[Path]:
        """Delete the whole files that put the directory over a limit, but none a live
        writer holds (this session's or another's); the ones deleted.
        """
        now = self.clock()
        self._checked = now
        held = {Path(self._current.path)} if self._current is not None else set()
        gone = self._drop(now, held)
        self.dropped.extend(gone)
        return gone

    def _drop(self, now: float, held: set[Path]) -> list[Path]:
        """Delete the files over the limits, not ``held`` nor held by a live writer."""
        gone: list[Path] = []
        try:
            with Directory(self.directory) as d:
                files = self.stored()
                while drop := to_drop(files, now, self.retention, held):
                    for f in drop:
                        if not remove(d, f.path.name):
                            held.add(f.path)  # held, or no longer ktop's: counted, kept
                            break
                        gone.append(f.path)
                        files.remove(f)
        except OSError:  # the directory went away: the next write says so
            pass
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

    def close(self) -> None:
        """Release what the recorder holds once it is stopped (its files stay)."""
