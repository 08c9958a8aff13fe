"""A record directory replayed as one timeline: ``ktop replay DIR``.

The files of an always-on recording (``ktop/record/rotating.py``) follow each other: one
session's files continue one another (each starts with a keyframe of the model the
previous one ended with); between sessions, and wherever ktop was not running, the
timeline has a gap. Seeking lands in the file that holds the time (or, inside a gap
between files, at the start of the next file); playing over the end of a file goes on
in the next, whose first keyframe replaces the model (``Cursor.restarted``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ktop.model.cluster import ClusterModel
from ktop.model.events import Event
from ktop.model.model_inputs import ModelConfig
from ktop.record.cursor import Cursor
from ktop.record.reader import Recording
from ktop.record.rotating import stored

GAP_AFTER_S = 5.0
"""A stretch without data between two files longer than this is shown as a gap."""


@dataclass(frozen=True, slots=True)
class SetGap:
    """A stretch of the timeline without data."""

    start: float
    end: float


class SetCursor:
    """A position in a record directory; moves on into the next file at a file's end."""

    def __init__(self, files: list[Recording], index: int, inner: Cursor) -> None:
        self._files = files
        self._index = index
        self._inner = inner
        self.model: ClusterModel = inner.model
        self.restarted = False
        """True after a ``take`` that crossed into another file: ``model`` is that file's,
        which the player restores (cleared by the player)."""

    def take(self, until: float) -> list[Event]:
        """The next events up to ``until`` (not folded), across file ends."""
        out: list[Event] = []
        while True:
            rec = self._files[self._index]
            out.extend(self._inner.take(min(until, rec.end)))
            if until <= rec.end or self._index + 1 >= len(self._files):
                return out
            self._index += 1
            nxt = self._files[self._index]
            self._inner = nxt.cursor(nxt.start)
            self.model = self._inner.model
            self.restarted = True
            out = []  # the next file's keyframe holds what came before


class RecordingSet:
    """Every recording of a directory, oldest first, as one timeline."""

    def __init__(self, directory: str | Path, opener: Callable[[Path], Recording] = Recording):
        self.directory = Path(directory)
        paths = [f.path for f in stored(self.directory)]
        if not paths:
            raise FileNotFoundError(f"{self.directory}: no ktop-*.ktrec recording in it")
        self.files: list[Recording] = []
        try:
            for p in paths:
                rec = opener(p)
                if rec.chunks:
                    self.files.append(rec)
                else:  # a session that recorded no event (ktop stopped at once)
                    rec.close()
        except BaseException:
            self.close()
            raise
        if not self.files:
            raise FileNotFoundError(f"{self.directory}: no recording in it holds an event")
        self.files.sort(key=lambda r: r.start)
        self.markers: Sequence[Any] = sorted(
            (m for r in self.files for m in r.markers), key=lambda m: m.at
        )
        """Every file's markers, in time order."""
        self._between: list[Any] = [
            SetGap(a.end, b.start)
            for a, b in zip(self.files, self.files[1:], strict=False)
            if b.start - a.end > GAP_AFTER_S
        ]
        self._gaps: tuple[int, Sequence[Any]] = (-1, ())
        """The gaps, and how many the files had when they were sorted."""

    @property
    def start(self) -> float:  # noqa: D102
        return self.files[0].start

    @property
    def end(self) -> float:  # noqa: D102
        return self.files[-1].end

    @property
    def header(self) -> dict[str, Any]:
        """The newest file's header (its source and settings)."""
        return self.files[-1].header

    @property
    def model_config(self) -> ModelConfig:
        """The newest file's model configuration."""
        return self.files[-1].model_config

    @property
    def gaps(self) -> Sequence[Any]:
        """Every file's own gaps (a file learns of damaged data as it is played), and the
        stretches between files; sorted again only when a file has found another.
        """
        count = sum(len(r.gaps) for r in self.files)
        if count != self._gaps[0]:
            own = [g for r in self.files for g in r.gaps]
            self._gaps = (count, sorted(own + self._between, key=lambda g: g.start))
        return self._gaps[1]

    def _file_at(self, at: float) -> int:
        """The file that holds ``at``, or the first after it (the last one past the end)."""
        for i, r in enumerate(self.files):
            if at <= r.end:
                return i
        return len(self.files) - 1

    def cursor(
        self, at: float | None = None, progress: Callable[[float], None] | None = None
    ) -> SetCursor:
        """A cursor whose model holds the state at ``at`` (inside a gap: the next file's
        start).
        """
        at = self.start if at is None else at
        i = self._file_at(at)
        target = max(at, self.files[i].start)
        return SetCursor(self.files, i, self.files[i].cursor(target, progress))

    def close(self) -> None:
        """Close every file."""
        for r in self.files:
            r.close()

    def __enter__(self) -> RecordingSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
