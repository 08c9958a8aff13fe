"""Writing a recording: the header, chunks of events, keyframes, the index.

The writer only appends. A chunk is written whole (header and payload in
one ``write``), flushed and synced to disk (as is every keyframe), so a
crash, a kill or a power loss loses at most the chunk being filled: at most
``chunk_s`` of events (see docs/recording-format.md); the index and trailer
are written on a clean close and rebuilt by a scan when they are missing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import msgpack
import zstandard

from ktop import __version__
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.model_inputs import ModelConfig
from ktop.model.state import StateView, state_view
from ktop.record.codec import Marker
from ktop.record.encoder import ChunkEncoder
from ktop.record.format import (
    FORMAT_VERSION,
    Codec,
    Kind,
    pack_frame,
    pack_preamble,
    pack_trailer,
)
from ktop.record.journal import Journal
from ktop.record.payload import readable_compressed
from ktop.record.recdir import link_unnamed, unnamed

ZSTD_LEVEL = 6
DEFAULT_CHUNK_S = 120.0
DEFAULT_KEYFRAME_S = 120.0
MAX_CHUNK_BYTES = 4 << 20
"""A chunk is closed when its uncompressed records reach this size (or its span ``chunk_s``)."""


@dataclass(slots=True)
class WriterSettings:
    """How often chunks and keyframes are cut, and the chunk journal's cadence."""

    chunk_s: float = DEFAULT_CHUNK_S
    keyframe_s: float = DEFAULT_KEYFRAME_S
    journal_s: float | None = None
    """With a value, the records of the chunk being filled are also appended to
    ``FILE.tail`` (synced) at most this many seconds apart, so that a crash loses at
    most that much (``ktop/record/journal.py`` puts them back); None: no journal."""


@dataclass(slots=True)
class _IndexEntry:
    kind: Kind
    offset: int
    first: float
    last: float
    count: int


@dataclass(slots=True)
class _Pending:
    buf: bytearray = field(default_factory=bytearray)
    count: int = 0
    first: float = float("inf")
    last: float = float("-inf")


def model_settings(c: ModelConfig) -> dict[str, Any]:
    """The model configuration a replay must use to give the same snapshots."""
    return {
        "window_s": c.window_s,
        "rack_label": c.rack_label,
        "unhealthy_zone_threshold": c.unhealthy_zone_threshold,
        "lease_renew_interval_s": c.lease_renew_interval_s,
    }


def _hold(f: BinaryIO, path: str) -> None:
    """Take the writer's lock on the file just made at ``path`` (where it could not be made
    without a name: :func:`_create`). Raises :class:`FileExistsError` (and closes ``f``) when
    another session took the name first.
    """
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        mine, there = os.fstat(f.fileno()), os.stat(path, follow_symlinks=False)
        if (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino):
            return
    except (BlockingIOError, FileNotFoundError):
        pass
    f.close()
    raise FileExistsError(errno.EEXIST, "taken by another session", path)


def _create(path: str) -> tuple[BinaryIO, bool]:
    """The recording's new file, already holding the writer's lock, and whether it still
    needs its name (:func:`_name`).

    Another session's retention or journal recovery leaves a locked file alone
    (``ktop/record/recdir.py``), so the file must be locked before anyone can see it: it is
    made without a name (``O_TMPFILE``), locked, and named once its header is written.
    Where the filesystem cannot make a file without a name it is created at ``path`` and
    locked a moment later (another session's retention can delete it in between: then the
    name is found gone and the next name is tried).
    """
    fd = unnamed(os.path.dirname(path) or ".")
    if fd is None:
        f: BinaryIO = open(path, "xb")  # noqa: SIM115 - closed by the writer
        _hold(f, path)
        return f, False
    f = open(fd, "wb")  # noqa: SIM115 - closed by the writer
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nobody else can reach it yet
    return f, True


def _name(f: BinaryIO, path: str) -> None:
    """Give the file made by :func:`_create` its name, never over an existing file; raises
    :class:`FileExistsError` when another session took the name first.
    """
    try:
        link_unnamed(f.fileno(), path)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "taken by another session", path) from None


class RecordingWriter:
    """Appends a model's event stream to a file, with keyframes of the state it records
    (the hub's, or a model's: :class:`~ktop.model.state.StateView`).
    """

    def __init__(
        self,
        path: str,
        state: StateView | ClusterModel,
        *,
        source: dict[str, str],
        settings: WriterSettings | None = None,
        redacted: bool = False,
        clock: Callable[[], float] = time.time,
        file: BinaryIO | None = None,
    ) -> None:
        """``file``: an open file without a name to write into (a rewind recording,
        ``ktop/record/rewind_files.py``) instead of a new file at ``path``.
        """
        self.path = path
        self.state = state_view(state)
        self.settings = settings or WriterSettings()
        if file is None:
            self._file, unnamed_yet = _create(path)
        else:
            self._file, unnamed_yet = file, False
        self._cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
        self._packer = msgpack.Packer(use_bin_type=True)
        self._index: list[_IndexEntry] = []
        self._markers: list[Marker] = []
        self._pending = _Pending()
        self._encoder = ChunkEncoder({})  # the first keyframe gives it the nodes
        self.size = 0
        self.closed = False
        self.events = 0
        self._journal: Journal | None = None
        try:
            self._start(source, redacted, clock())
            if unnamed_yet:
                _name(self._file, path)
            if self.settings.journal_s is not None:
                self._journal = Journal(path, self.settings.journal_s)
        except BaseException:
            self._file.close()
            raise

    def _start(self, source: dict[str, str], redacted: bool, started: float) -> None:
        """Write the preamble, the header and the first keyframe."""
        header = {
            "format": FORMAT_VERSION,
            "ktop": __version__,
            "source": source,
            "context": source.get("context", ""),
            "started": started,
            "start_at": self.state.now,
            "settings": {
                "model": model_settings(self.state.config),
                "chunk_s": self.settings.chunk_s,
                "keyframe_s": self.settings.keyframe_s,
                "codec": "zstd",
            },
            "redacted": redacted,
        }
        self._write(pack_preamble())
        payload = self._packer.pack(header)
        now = self.state.now
        self._write(pack_frame(Kind.HEADER, Codec.NONE, payload, 1, now, now))
        self._keyframe()

    # ----------------------------------------------------------------- I/O

    def _write(self, data: bytes) -> None:
        self._file.write(data)
        self._file.flush()
        self.size += len(data)

    def _frame(self, kind: Kind, raw: bytes, count: int, first: float, last: float) -> None:
        offset = self.size
        packed, codec = self._cctx.compress(raw), Codec.ZSTD
        if not readable_compressed(raw, len(packed), count if kind is Kind.CHUNK else None):
            packed, codec = raw, Codec.NONE  # compressed past what a reader takes: plain
        self._write(pack_frame(kind, codec, packed, count, first, last))
        self._index.append(_IndexEntry(kind, offset, first, last, count))
        os.fsync(self._file.fileno())  # on disk, not only in the page cache: survives power loss

    def _keyframe(self) -> None:
        key = self.state.keyframe()
        raw = self._packer.pack({"at": key.at, "state": key.state})
        self._frame(Kind.KEYFRAME, raw, 1, key.at, key.at)
        self._encoder.nodes = key.nodes
        self._last_keyframe = key.at

    def _flush_chunk(self) -> None:
        p = self._pending
        if p.count:
            self._frame(Kind.CHUNK, bytes(p.buf), p.count, p.first, p.last)
        self._pending = _Pending()
        self._encoder.new_chunk()
        if self._journal is not None:
            self._journal.chunk_written()

    # ------------------------------------------------------------- appends

    def append(self, events: Sequence[ev.Event]) -> None:
        """Add a batch (already folded into the model); cut chunks and keyframes as due."""
        if self.closed or not events:
            return
        p = self._pending
        for rec in self._encoder.records(events):
            p.buf += self._packer.pack(rec)
        p.count += len(events)
        p.first = min(p.first, *(e.at for e in events))
        p.last = max(p.last, *(e.at for e in events))
        self.events += len(events)
        if self._journal is not None:
            self._journal.add(p.buf, p.count, p.first, p.last)
        keyframe_due = self.state.now - self._last_keyframe >= self.settings.keyframe_s
        full = p.last - p.first >= self.settings.chunk_s or len(p.buf) >= MAX_CHUNK_BYTES
        if keyframe_due or full:
            self._flush_chunk()  # a keyframe ends a chunk: a seek folds from it, not before
            if keyframe_due:
                self._keyframe()

    def flush(self) -> None:
        """Write the chunk being filled now (so that a reader of the file sees every event
        so far: a rewind while live).
        """
        if not self.closed:
            self._flush_chunk()

    def mark(self, note: str, at: float | None = None) -> Marker:
        """Add a marker at ``at`` (default: the model's clock); written out at once, in its own
        frame, after the events so far.
        """
        marker = Marker(self.state.now if at is None else at, note)
        if self.closed:
            return marker
        self._flush_chunk()
        offset = self.size
        payload = self._packer.pack([marker.at, marker.note])
        self._write(pack_frame(Kind.MARKER, Codec.NONE, payload, 1, marker.at, marker.at))
        self._index.append(_IndexEntry(Kind.MARKER, offset, marker.at, marker.at, 1))
        self._markers.append(marker)
        return marker

    def close(self) -> None:
        """Write the last chunk, the index and the trailer; close the file."""
        if self.closed:
            return
        self.closed = True
        try:
            self._flush_chunk()
            index = {
                "frames": [[e.kind.value, e.offset, e.first, e.last, e.count] for e in self._index],
                "markers": [[m.at, m.note] for m in self._markers],
            }
            offset = self.size
            self._write(pack_frame(Kind.INDEX, Codec.NONE, self._packer.pack(index), 0, 0.0, 0.0))
            self._write(pack_trailer(offset))
            os.fsync(self._file.fileno())
        finally:
            self._file.close()
            if self._journal is not None:
                self._journal.close()

    def abandon(self) -> None:
        """Close the file without writing more (after a write error): what is on disk stays."""
        self.closed = True
        with contextlib.suppress(OSError):
            self._file.close()
        if self._journal is not None:  # kept: what it holds may still be put back
            self._journal.release()
