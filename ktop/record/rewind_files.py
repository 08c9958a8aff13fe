"""The rewind recording of a live session: files no other process can reach, that nothing
outlives.

A live session without ``--record-dir`` records itself so that ``[`` and ``{`` can rewind
it (``ktop/ui/rewind.py``), within the last hour and 512 MiB
(:data:`ktop.commands.dashboard.REWIND_RETAIN`). Those files are the session's, not the
user's: :class:`RewindRecorder` makes each one in ``$TMPDIR`` without a name
(``O_TMPFILE``; on a filesystem that cannot, it is created under a random name and
unlinked before a byte is written to it), keeps a descriptor of it, and the rewind reads
it back through ``/proc/self/fd/N``. There is nothing to remove, whatever ends ktop (``q``,
SIGTERM, SIGHUP, SIGINT or kill -9): the kernel frees a file without a name when its last
descriptor closes. The files stay on disk (``$TMPDIR``'s filesystem), not in memory, so
the 512 MiB bound costs no RAM. Retention closes a file instead of deleting it (its space
is freed once a rewind reading it lets it go), and no journal is kept (it would be a file
with a name, and there is nothing to put back after a crash).

Where ``/proc/self/fd`` does not exist (not Linux), :func:`supported` is False and the
dashboard records into a private directory removed when ktop stops, as a named recording.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from functools import partial
from pathlib import Path

from ktop.record.recdir import PROC_FD, StoredFile, fd_path, unnamed
from ktop.record.rotating import RotatingRecorder, to_drop
from ktop.record.session import Recorder
from ktop.record.writer import RecordingWriter


def supported() -> bool:
    """Whether files without a name can be read back by path here (Linux's ``/proc``)."""
    return PROC_FD.is_dir()


def nameless_file(directory: str | Path) -> int:
    """A new file in ``directory``'s filesystem with no name, open to read and write (only
    its owner could have opened it while it had one: mode 0600).
    """
    fd = unnamed(directory, 0o600)
    if fd is not None:
        return fd
    fd, name = tempfile.mkstemp(prefix="ktop-rewind-", dir=directory)
    try:
        os.unlink(name)
    except OSError:
        os.close(fd)
        raise
    return fd


class RewindRecorder(RotatingRecorder):
    """A :class:`RotatingRecorder` whose files have no name (module docstring): it holds a
    descriptor of each, and its :meth:`stored` files are named ``/proc/self/fd/N``.
    """

    journal_s = None

    def _prepare(self) -> None:
        self._kept: dict[Path, int] = {}
        """Each file kept, oldest first, and the descriptor that keeps it."""

    def stored(self) -> list[StoredFile]:
        """The session's files, oldest first."""
        out = []
        for path, fd in list(self._kept.items()):
            st = os.fstat(fd)
            out.append(StoredFile(path, st.st_size, st.st_mtime))
        return out

    def _new_file(self, now: float) -> Recorder:
        """The next file's recorder: a new file without a name, written through a
        descriptor of its own (the writer closes it at rotation; the file stays kept).
        """
        kept = nameless_file(self.directory)
        try:
            file = open(os.dup(kept), "wb")  # noqa: SIM115 - closed by the writer
        except OSError:
            os.close(kept)
            raise
        path = fd_path(kept)
        try:
            rec = Recorder(
                str(path),
                self.state,
                source={**self.source, "session": self.session},
                settings=self.settings,
                opener=partial(RecordingWriter, file=file),
            )
        except BaseException:
            file.close()
            os.close(kept)
            raise
        self._kept[path] = kept
        return rec

    def _drop(self, now: float, held: set[Path]) -> list[Path]:
        """Let go of the files over the limits (never ``held``, the one being written)."""
        gone = [f.path for f in to_drop(self.stored(), now, self.retention, held)]
        for path in gone:
            os.close(self._kept.pop(path))
        return gone

    def close(self) -> None:
        """Let go of every file (stop first): their space is freed."""
        for fd in self._kept.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._kept.clear()
