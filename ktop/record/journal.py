"""The chunk journal: what a crash would otherwise lose of a recording.

A chunk is written to the recording whole, when it is full (``chunk_s`` of events), so
a crash loses the chunk being filled. With ``WriterSettings.journal_s`` (always-on
recording sets it), the writer also appends the chunk's new records to ``FILE.tail`` at
most that many seconds apart, synced to disk, and empties it once the chunk is in the
file; the writer holds an exclusive lock on it while it records. :func:`recover` puts a
dead writer's journal back as the recording's last chunk (the next always-on session in
the directory does it for every file), so a crash loses at most ``journal_s``.

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
from typing import BinaryIO

import msgpack
import zstandard

from ktop.record.format import Codec, Kind, pack_frame
from ktop.record.reader import Recording

TAIL = ".tail"
ZSTD_LEVEL = 6
MAX_JOURNAL_BYTES = 64 << 20
"""A journal larger than this is not read back (a chunk is at most 4 MiB of records)."""


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
        self._f: BinaryIO = open(self.path, "wb")  # noqa: SIM115 - closed by close()
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


def _entries(data: bytes) -> list[tuple[int, float, float, bytes]]:
    """The journal's intact entries (a crash may cut the last one)."""
    out: list[tuple[int, float, float, bytes]] = []
    unpacker = msgpack.Unpacker(raw=False, max_buffer_size=len(data) + 1)
    unpacker.feed(data)
    try:
        for item in unpacker:
            if (
                type(item) is not list
                or len(item) != 4
                or type(item[0]) is not int
                or not all(type(x) in (int, float) for x in item[1:3])
                or type(item[3]) is not bytes
            ):
                break
            out.append((item[0], float(item[1]), float(item[2]), item[3]))
    except (ValueError, msgpack.UnpackException):
        pass
    return out


def recover(path: str | Path) -> str:
    """Put a dead writer's journal back as the recording's last chunk; what was done, in
    words (empty when there was nothing to do, or its writer is still alive).
    """
    path = Path(path)
    tail = tail_of(path)
    try:
        f = open(tail, "r+b")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return ""
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return ""  # its writer is alive
        size = os.fstat(f.fileno()).st_size
        entries = _entries(f.read(MAX_JOURNAL_BYTES)) if size <= MAX_JOURNAL_BYTES else []
        done = _append_chunk(path, entries) if entries else ""
        tail.unlink()
    return done


def _append_chunk(path: Path, entries: list[tuple[int, float, float, bytes]]) -> str:
    """Append the journal's chunk after the recording's last intact frame (unless the
    writer got to write it before it died).
    """
    count, first, last = entries[-1][:3]
    with Recording(path) as rec:
        if rec.indexed and not rec.truncated:
            return ""  # closed cleanly: the chunk is in it
        chunks = [h for h in rec.frames if h.kind is Kind.CHUNK]
        if chunks and chunks[-1].first == first and chunks[-1].count == count:
            return ""  # written before the writer died
        end = max((h.end for h in rec.frames), default=None)
    if end is None:
        return ""
    raw = b"".join(e[3] for e in entries)
    payload = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(raw)
    with open(path, "r+b") as out:
        out.truncate(end)  # a frame cut by the crash goes
        out.seek(end)
        out.write(pack_frame(Kind.CHUNK, Codec.ZSTD, payload, count, first, last))
        out.flush()
        os.fsync(out.fileno())
    return f"{path.name}: {count} events of its last {last - first:.0f} s put back from its journal"
