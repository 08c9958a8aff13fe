"""A record directory replayed session by session: ``ktop replay DIR``.

A record directory (``ktop/record/rotating.py``) may hold several sessions' files: one
after another (ktop restarted), or at the same time (two terminals, two clusters, or two
demos, whose simulated clocks both start at the same moment). Its files are grouped into
**sessions**: the files one ktop process wrote (their headers share ``source.session``;
a file from before that field is a session of its own), then sessions of the same source
(kind and context) that follow one another without overlapping are chained into one
timeline, with a gap where ktop was not running. Sessions whose times overlap, or of
different sources, stay apart: ``ktop replay --info DIR`` lists them, numbered in the
order they were started, and ``ktop replay DIR`` plays the newest (``--session N`` another).

Within a session, seeking lands in the file that holds the time (or, inside a gap
between files, at the start of the next file); playing over the end of a file goes on in
the next, whose first keyframe replaces the model (``Cursor.restarted``).

A file that cannot be read (damaged, not a recording, no event) is skipped and named in
:attr:`RecordingSet.skipped` with the reason; the rest still plays. Files are opened only
while they are needed (at most :data:`MAX_OPEN` at a time), so a directory of thousands
of hourly files fits any limit on open files.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ktop.model.cluster import ClusterModel
from ktop.model.events import Event
from ktop.model.model_inputs import ModelConfig
from ktop.record.codec import Marker
from ktop.record.cursor import Cursor
from ktop.record.format import FormatError
from ktop.record.payload import DECODE_ERRORS
from ktop.record.reader import Gap, Recording
from ktop.record.recdir import stored

GAP_AFTER_S = 5.0
"""A stretch without data between two files longer than this is shown as a gap."""
MAX_OPEN = 4
"""The most files of a directory open at once (each holds two descriptors)."""
OVERLAP_EPS_S = 1e-6
"""A file that starts this little before another ends still follows it."""


@dataclass(frozen=True, slots=True)
class SetGap:
    """A stretch of the timeline without data."""

    start: float
    end: float


@dataclass(slots=True)
class Part:
    """One file of a record directory, as its summary (open only while it is played)."""

    path: Path
    header: dict[str, Any]
    model_config: ModelConfig
    start: float
    end: float
    size: int
    markers: list[Marker]
    gaps: list[Gap]
    """Its gaps (more are found as it is played: kept when it is closed)."""
    rec: Recording | None = None

    @classmethod
    def of(cls, rec: Recording) -> Part:
        """The summary of an open recording."""
        return cls(
            rec.path, rec.header, rec.model_config, rec.start, rec.end, rec.size,
            list(rec.markers), list(rec.gaps), rec,
        )  # fmt: skip

    @property
    def source(self) -> tuple[str, str]:
        """Its source's kind and context."""
        src = self.header.get("source", {})
        return (str(src.get("kind", "")), str(src.get("context", "")))

    @property
    def session(self) -> str:
        """The identity of the ktop session that wrote it (empty: an older file)."""
        return str(self.header.get("source", {}).get("session", ""))


@dataclass(slots=True)
class Session:
    """Files of one source that follow one another, oldest first."""

    parts: list[Part] = field(default_factory=list)

    @property
    def start(self) -> float:  # noqa: D102
        return self.parts[0].start

    @property
    def end(self) -> float:  # noqa: D102
        return self.parts[-1].end

    def describe(self) -> str:
        """One line: source, time range in source seconds, files."""
        kind, context = self.parts[0].source
        span = self.end - self.start
        return f"{kind or '?'} {context or '?'}, {span:.0f} s in {len(self.parts)} files"


def sessions(parts: Sequence[Part]) -> list[Session]:
    """``parts`` grouped into sessions (module docstring), in the order they were started
    (their first file's name).
    """
    groups: dict[str, list[Part]] = {}
    for p in parts:
        groups.setdefault(p.session or f"file:{p.path}", []).append(p)
    out: list[Session] = []
    for group in sorted(groups.values(), key=lambda g: (min(p.start for p in g), g[0].path)):
        group.sort(key=lambda p: (p.start, p.path))
        fits = [
            s
            for s in out
            if s.parts[-1].source == group[0].source and s.end <= group[0].start + OVERLAP_EPS_S
        ]
        if fits:
            max(fits, key=lambda s: s.end).parts.extend(group)
        else:
            out.append(Session(list(group)))
    return sorted(out, key=lambda s: min(p.path.name for p in s.parts))


class SetCursor:
    """A position in a session; moves on into its next file at a file's end."""

    def __init__(self, files: RecordingSet, index: int, inner: Cursor) -> None:
        self._set = files
        self._index = index
        self._inner = inner
        self.model: ClusterModel = inner.model
        self.restarted = False
        """True after a ``take`` that crossed into another file: ``model`` is that file's,
        which the player restores (cleared by the player)."""

    def take(self, until: float) -> list[Event]:
        """The next events up to ``until`` (not folded), across file ends."""
        out: list[Event] = []
        parts = self._set.parts
        while True:
            part = parts[self._index]
            self._set.opened(self._index)  # still in use: not the next to be closed
            out.extend(self._inner.take(min(until, part.end)))
            if until <= part.end or self._index + 1 >= len(parts):
                return out
            self._index += 1
            nxt = self._set.opened(self._index)
            self._inner = nxt.cursor(nxt.start)
            self.model = self._inner.model
            self.restarted = True
            out = []  # the next file's keyframe holds what came before


class RecordingSet:
    """One session of a record directory (the newest, or ``session``: 1 is the first
    started), as one timeline; every session in :attr:`sessions`.

    ``opener`` opens a file and ``release`` closes it (a caller that keeps files open
    itself passes one that does nothing); ``session_id``: the session that holds a file
    with this ``source.session`` (a live session rewinding its own recording); ``paths``:
    the files to read instead of the directory's (a rewind recording's files have no name
    in it: ``ktop/record/rewind_files.py``).
    """

    def __init__(
        self,
        directory: str | Path,
        opener: Callable[[Path], Recording] = Recording,
        *,
        release: Callable[[Recording], None] = Recording.close,
        session: int | None = None,
        session_id: str = "",
        paths: Sequence[Path] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self._opener, self._release = opener, release
        self.skipped: list[str] = []
        """Each file that was not played, as ``NAME: why``."""
        if paths is None:
            paths = [f.path for f in stored(self.directory)]
        if not paths:
            raise FileNotFoundError(f"{self.directory}: no ktop-*.ktrec recording in it")
        self.sessions = sessions([p for p in map(self._summary, paths) if p is not None])
        if not self.sessions:
            raise FileNotFoundError(
                f"{self.directory}: no recording in it could be played ({len(paths)} skipped)"
            )
        self.number = self._chosen(session, session_id)
        """The session played (1 is the first started)."""
        self.parts = self.sessions[self.number - 1].parts
        self._open: OrderedDict[int, Recording] = OrderedDict()
        self.markers: Sequence[Marker] = sorted(
            (m for p in self.parts for m in p.markers), key=lambda m: m.at
        )
        """Every file's markers, in time order."""
        self._between: list[Any] = [
            SetGap(a.end, b.start)
            for a, b in zip(self.parts, self.parts[1:], strict=False)
            if b.start - a.end > GAP_AFTER_S
        ]

    def _summary(self, path: Path) -> Part | None:
        """The file's summary, closed (None, named in :attr:`skipped`, when unplayable)."""
        try:
            rec = self._opener(path)
        except (FormatError, OSError, *DECODE_ERRORS) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            self.skipped.append(f"{path.name}: {why}")
            return None
        part = Part.of(rec)
        part.rec = None
        self._release(rec)
        if not rec.chunks:  # a session that recorded no event (ktop stopped at once)
            self.skipped.append(f"{path.name}: no event recorded in it")
            return None
        return part

    def _chosen(self, session: int | None, session_id: str) -> int:
        if session_id:
            for n, s in enumerate(self.sessions, 1):
                if any(p.session == session_id for p in s.parts):
                    return n
        if session is None:
            return len(self.sessions)
        if not 1 <= session <= len(self.sessions):
            raise ValueError(
                f"--session: expected a session from 1 to {len(self.sessions)} "
                f"(ktop replay --info {self.directory} lists them), got {session}"
            )
        return session

    @property
    def notes(self) -> list[str]:
        """What a replay of the directory says first: the files skipped, and which of
        several sessions it plays.
        """
        lines = [f"skipped {line}" for line in self.skipped]
        if len(self.sessions) > 1:
            lines.append(
                f"{self.directory}: {len(self.sessions)} sessions; playing session "
                f"{self.number} ({self.sessions[self.number - 1].describe()}); --session N "
                f"plays another (ktop replay --info {self.directory} lists them)"
            )
        return lines

    def opened(self, index: int) -> Recording:
        """File ``index`` of the session, opened (the least recently used beyond
        :data:`MAX_OPEN` is closed, its gaps kept).
        """
        rec = self._open.get(index)
        if rec is None:
            rec = self._open[index] = self._opener(self.parts[index].path)
            self.parts[index].rec = rec
        self._open.move_to_end(index)
        while len(self._open) > MAX_OPEN:
            old, done = self._open.popitem(last=False)
            self._close(old, done)
        return rec

    def _close(self, index: int, rec: Recording) -> None:
        part = self.parts[index]
        part.gaps, part.rec = list(rec.gaps), None
        self._release(rec)

    @property
    def files(self) -> list[Part]:
        """The session's files, oldest first."""
        return self.parts

    @property
    def start(self) -> float:  # noqa: D102
        return self.parts[0].start

    @property
    def end(self) -> float:  # noqa: D102
        return self.parts[-1].end

    @property
    def header(self) -> dict[str, Any]:
        """The newest file's header (its source and settings)."""
        return self.parts[-1].header

    @property
    def model_config(self) -> ModelConfig:
        """The newest file's model configuration."""
        return self.parts[-1].model_config

    @property
    def gaps(self) -> Sequence[Any]:
        """Every file's own gaps (a file learns of damaged data as it is played), and the
        stretches between files, in time order.
        """
        own = [g for p in self.parts for g in (p.rec.gaps if p.rec is not None else p.gaps)]
        return sorted(own + self._between, key=lambda g: g.start)

    def _file_at(self, at: float) -> int:
        """The file that holds ``at``, or the first after it (the last one past the end)."""
        for i, p in enumerate(self.parts):
            if at <= p.end:
                return i
        return len(self.parts) - 1

    def cursor(
        self,
        at: float | None = None,
        progress: Callable[[float], None] | None = None,
        *,
        frames: bool = False,
    ) -> SetCursor:
        """A cursor whose model holds the state at ``at`` (inside a gap: the next file's
        start); with ``frames``, its file's history frames too (:meth:`Recording.cursor`).
        """
        at = self.start if at is None else at
        i = self._file_at(at)
        target = max(at, self.parts[i].start)
        return SetCursor(self, i, self.opened(i).cursor(target, progress, frames=frames))

    def close(self) -> None:
        """Close every file still open."""
        while self._open:
            self._close(*self._open.popitem())

    def __enter__(self) -> RecordingSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
