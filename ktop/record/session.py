"""A recording in progress: the hub sink that owns a writer and survives its failures.

A write error (disk full, permission, a vanished directory) stops the
recording: what was written stays readable, the error is kept for the UI,
and the sink becomes inert so the live view goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.state import StateView
from ktop.record.codec import Marker
from ktop.record.redact import Redactor
from ktop.record.writer import RecordingWriter, WriterSettings


@dataclass(frozen=True, slots=True)
class RecordingStatus:
    """What the UI shows about the recording."""

    active: bool
    path: str
    size: int
    events: int
    markers: int
    error: str = ""
    stopped_because: str = ""


class Recorder:
    """Feeds every batch of the hub to a :class:`RecordingWriter` (a hub ``Sink``); its
    keyframes come from ``state``, the hub (or, for a redacted recording, a shadow model of
    the redacted events). A redacted copy passes a ``redactor`` that has met every name of
    the stream already (:meth:`Redactor.learn`), so that the header is redacted with them.
    """

    def __init__(
        self,
        path: str,
        state: StateView | ClusterModel,
        *,
        source: dict[str, str],
        redact: bool = False,
        redactor: Redactor | None = None,
        max_size: int | None = None,
        settings: WriterSettings | None = None,
        opener: Callable[..., RecordingWriter] = RecordingWriter,
    ) -> None:
        self.path = path
        self.max_size = max_size
        self.error = ""
        self.stopped_because = ""
        self.markers = 0
        if redact and redactor is None:
            redactor = Redactor()
        self._redactor = redactor if redact else None
        self._shadow: ClusterModel | None = None
        if self._redactor is not None:
            # Keyframes must hold stand-ins too: a shadow model folds the redacted events.
            # It starts empty, so a redacted recording starts with the source (headless).
            source = self._redactor.source(source)
            state = self._shadow = ClusterModel(state.config)
        self._writer: RecordingWriter | None = opener(
            path, state, source=source, settings=settings, redacted=redact
        )

    @property
    def active(self) -> bool:
        """Whether events are still being written."""
        return self._writer is not None

    def status(self) -> RecordingStatus:
        """A summary for the status line."""
        w = self._writer
        return RecordingStatus(
            self.active,
            self.path,
            w.size if w else self._size,
            w.events if w else self._events,
            self.markers,
            self.error,
            self.stopped_because,
        )

    _size = 0
    _events = 0

    def __call__(self, events: Sequence[ev.Event]) -> None:
        """Write a batch (the hub calls this after folding it)."""
        w = self._writer
        if w is None:
            return
        if self._redactor is not None and self._shadow is not None:
            events = [self._redactor.event(e) for e in events]
            self._shadow.apply_all(events)
        try:
            w.append(events)
        except OSError as exc:
            self._fail(exc)
            return
        if self.max_size is not None and w.size >= self.max_size:
            self.stop(f"reached --max-size ({self.max_size} bytes)")

    def mark(self, note: str, at: float | None = None) -> Marker | None:
        """Add a marker now (or at ``at``); ``None`` when not recording."""
        w = self._writer
        if w is None:
            return None
        try:
            marker = w.mark(self._redactor.text(note) if self._redactor else note, at)
        except OSError as exc:
            self._fail(exc)
            return None
        self.markers += 1
        return marker

    def flush(self) -> None:
        """Write the events so far to the file (a write error stops the recording)."""
        w = self._writer
        if w is None:
            return
        try:
            w.flush()
        except OSError as exc:
            self._fail(exc)

    def stop(self, because: str = "stopped") -> None:
        """Finish the file (index and trailer) and stop recording."""
        w = self._writer
        if w is None:
            return
        self._writer = None
        self._size, self._events = w.size, w.events
        self.stopped_because = because
        try:
            w.close()
        except OSError as exc:
            self.error = f"recording stopped: {exc.strerror or exc} ({self.path})"

    def _fail(self, exc: OSError) -> None:
        w = self._writer
        self._writer = None
        if w is not None:
            self._size, self._events = w.size, w.events
            w.abandon()
        self.error = f"recording stopped: {exc.strerror or exc} ({self.path})"
        self.stopped_because = "write error"
