"""The chunk journal: what a crash would otherwise lose of a recording.

A chunk is written to the recording whole, when it is full (``chunk_s`` of events), so
a crash loses the chunk being filled. With ``WriterSettings.journal_s`` (always-on
recording sets it), the writer also appends the chunk's new records to ``FILE.tail`` at
most that many seconds apart, synced to disk, and empties it once the chunk is in the
file; the writer holds an exclusive lock on it while it records. :func:`recover` puts a
dead writer's journal back as the recording's last chunk (the next always-on session in
the directory does it for every file), so a crash loses at most ``journal_s``. It takes
the writer's locks first (a live writer's files are left alone), touches only regular
files in the directory (``ktop/record/recdir.py``), and sets aside (``NAME.damaged``) a
journal that is not what the writer writes, or one beside a recording that cannot be
read, with a line saying so: a damaged file never stops a start.

Each journal entry is a msgpack array ``[count, first, last, records]``: the chunk's
event count and time span so far, and the records added since the previous entry (the
chunk's records are the concatenation of every entry's).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import msgpack
import zstandard

from ktop.files import JOURNAL
from ktop.input_limits import MAX_JOURNAL_EVENTS
from ktop.record.format import Codec, FormatError, Kind, pack_frame
from ktop.record.payload import DECODE_ERRORS
from ktop.record.reader import Recording
from ktop.record.recdir import TAIL, Directory
from ktop.record.strict import RecordError, finite_time

ZSTD_LEVEL = 6


def tail_of(path: str | Path) -> Path:
    """The journal beside a recording."""
    return Path(str(path) + TAIL)


class Journal:
    """The writer's side: appends the chunk being filled, locked while it records."""

    def __init__(
        self, path: str, every_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = tail_of(path)
        self.every_s = every_s
        self._clock = clock
        # never over an existing file or through a link: the recording's name is new
        self._f: BinaryIO = open(self.path, "xb")  # noqa: SIM115 - closed by close()
        fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._packer = msgpack.Packer(use_bin_type=True)
        self._written = 0
        """Bytes of the chunk's records already in the journal."""
        self._last = clock()

    def add(self, records: bytearray, count: int, first: float, last: float) -> None:
        """The chunk being filled grew: journal what is new, when ``every_s`` has passed."""
        now = self._clock()
        if now - self._last < self.every_s or len(records) <= self._written:
            return
        entry = [count, first, last, bytes(records[self._written :])]
        self._f.write(self._packer.pack(entry))
        self._f.flush()
        os.fsync(self._f.fileno())
        self._written = len(records)
        self._last = now

    def chunk_written(self) -> None:
        """The chunk is in the recording now: the journal starts again, empty."""
        self._f.seek(0)
        self._f.truncate()
        self._f.flush()
        self._written = 0

    def close(self) -> None:
        """The recording was closed cleanly: remove the journal."""
        self.release()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def release(self) -> None:
        """Stop journaling, keeping what the journal holds (after a write error)."""
        with contextlib.suppress(OSError):
            self._f.close()


class JournalError(ValueError):
    """A journal that is not one ktop wrote; the message names it and what was expected."""


def _entry(item: Any, before: int) -> tuple[int, float, float, bytes]:
    """One entry ``[count, first, last, records]``, checked (``before``: the previous count)."""
    most = MAX_JOURNAL_EVENTS.value
    if type(item) is not list or len(item) != 4 or type(item[3]) is not bytes:
        raise RecordError("expected an entry [count, first, last, records]")
    count, records = item[0], item[3]
    if type(count) is not int or not before <= count <= most:
        raise RecordError(
            f"expected {MAX_JOURNAL_EVENTS.expected} (at least {before}), got {count!r}"
        )
    first, last = finite_time(item[1]), finite_time(item[2])
    if first > last:
        raise RecordError("expected its first time before its last")
    return count, first, last, records


def entries(data: bytes, where: Path) -> list[tuple[int, float, float, bytes]]:
    """The journal's entries (a crash may cut the last one, which is left out);
    :class:`JournalError` when one is not what the writer writes.
    """
    out: list[tuple[int, float, float, bytes]] = []
    unpacker = msgpack.Unpacker(raw=False, max_buffer_size=len(data) + 1, strict_map_key=True)
    unpacker.feed(data)
    try:
        for item in unpacker:
            out.append(_entry(item, out[-1][0] if out else 0))
    except (ValueError, msgpack.UnpackException) as exc:
        raise JournalError(f"{where}: entry {len(out) + 1}: {exc}") from None
    return out


def recover(path: str | Path) -> str:
    """Put a dead writer's journal back as the recording's last chunk; what was done, in
    words (empty when there was nothing to do, when its writer is still alive, or when the
    files are not ktop's own: links, other names). A journal or a recording that cannot be
    read is set aside (``NAME.damaged``), never deleted: the words say so.
    """
    path = Path(path)
    try:
        with Directory(path.parent) as d:
            return _recover(d, path)
    except OSError as exc:
        return f"{path}: its journal was not put back: {exc.strerror or exc}"


def _recover(d: Directory, path: Path) -> str:
    name, tail = path.name, path.name + TAIL
    with d.locked(tail) as journal, d.locked(name, os.O_RDWR) as rec:
        if journal is None or rec is None:
            return ""  # none, a live writer's, or not ktop's (a link): left alone
        try:
            found = entries(_read(journal, d.path / tail), d.path / tail)
        except JournalError as exc:
            return f"{exc}; set aside as {d.set_aside(tail, journal) or 'it was'}"
        try:
            done = _append_chunk(path, rec, found) if found else ""
        except (FormatError, *DECODE_ERRORS) as exc:
            aside = [d.set_aside(tail, journal), d.set_aside(name, rec)]
            return f"{path}: {exc}; it and its journal were set aside as {', '.join(aside)}"
        d.unlink(tail, journal)
        return done


def _read(fd: int, where: Path) -> bytes:
    """The whole journal, within its size limit (:class:`JournalError` over it)."""
    size = os.fstat(fd).st_size
    if size > JOURNAL.max_bytes:
        raise JournalError(f"{where}: expected at most {JOURNAL.max_bytes:,} bytes, got {size:,}")
    return os.pread(fd, size, 0)


def _append_chunk(path: Path, fd: int, found: list[tuple[int, float, float, bytes]]) -> str:
    """Append the journal's chunk to the recording (open as ``fd``) after its last intact
    frame (unless the writer got to write it before it died).
    """
    count, first, last = found[-1][:3]
    with Recording(path) as rec:
        if rec.indexed and not rec.truncated:
            return ""  # closed cleanly: the chunk is in it
        chunks = [h for h in rec.frames if h.kind is Kind.CHUNK]
        if chunks and chunks[-1].first == first and chunks[-1].count == count:
            return ""  # written before the writer died
        end = max((h.end for h in rec.frames), default=None)
    if end is None:
        return ""
    raw = b"".join(e[3] for e in found)
    payload = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(raw)
    os.ftruncate(fd, end)  # a frame cut by the crash goes
    os.pwrite(fd, pack_frame(Kind.CHUNK, Codec.ZSTD, payload, count, first, last), end)
    os.fsync(fd)
    return f"{path.name}: {count} events of its last {last - first:.0f} s put back from its journal"
