"""The files of a record directory, touched only when ktop wrote them and nobody holds them.

A record directory (``--record-dir``, ``config.toml``'s ``record-dir``) may be shared by
several ktop sessions at once, and may hold the user's own files. Everything that
deletes, renames or rewrites a file in it goes through here, and:

* works inside the directory opened once (``dir_fd``), never through a path that a link
  could send elsewhere: a name is opened with ``O_NOFOLLOW``, and only a regular file with
  one link (a hard link's other name could be anywhere) is touched;
* touches only names this module gives (:data:`NAME`, exact ASCII: ``[0-9]``, no
  trailing newline) and their journals (``NAME.tail``);
* leaves alone every file a live writer holds: a writer holds an exclusive ``flock`` on its
  recording (``ktop/record/writer.py``) and on its journal (``ktop/record/journal.py``)
  while it records, and a file is deleted or rewritten only under that same lock, taken
  without waiting;
* never deletes what is damaged: it is renamed aside (``NAME.damaged``), a name this module
  never touches again.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

NAME = re.compile(r"ktop-([0-9]{8}T[0-9]{6}Z)(?:-([0-9]{1,6}))?\.ktrec", re.ASCII)
"""The names ktop gives the files of a record directory (and the only ones it ever deletes);
matched whole (``fullmatch``)."""
TAIL = ".tail"
"""A recording's journal is named after it: ``NAME.tail``."""
DAMAGED = ".damaged"
"""What a damaged file or journal is renamed to (after its name), instead of deleted."""

PROC_FD = Path("/proc/self/fd")
"""Where Linux names every open file, also one without a name in any directory."""

_OPEN = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)


def ours(name: str) -> bool:
    """Whether ``name`` is one ktop gives its recordings (exactly, in ASCII)."""
    return NAME.fullmatch(name) is not None


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One file of a record directory."""

    path: Path
    size: int
    ended: float
    """When it was last written (its modification time)."""


def stored(directory: Path) -> list[StoredFile]:
    """The record directory's recordings, oldest first (their names sort by start time):
    regular files named by ktop, not links.
    """
    out = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for name in sorted(os.listdir(directory)):
            if not ours(name):
                continue
            with contextlib.suppress(FileNotFoundError):
                st = os.lstat(directory / name)
                if stat.S_ISREG(st.st_mode):
                    out.append(StoredFile(directory / name, st.st_size, st.st_mtime))
    return out


class Directory:
    """A record directory opened once: every name is looked up inside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def close(self) -> None:
        """Release the directory."""
        os.close(self.fd)

    def __enter__(self) -> Directory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open_own(self, name: str, flags: int = os.O_RDONLY) -> int | None:
        """A descriptor of ``name`` when it is a regular file with one link, not a link;
        None when it is anything else or missing.
        """
        try:
            fd = os.open(name, flags | _OPEN, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENXIO, errno.EISDIR):
                return None
            raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        return fd

    def same(self, name: str, fd: int) -> bool:
        """Whether ``name`` in the directory is still the file open as ``fd``."""
        try:
            st = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)

    @contextlib.contextmanager
    def locked(self, name: str, flags: int = os.O_RDONLY) -> Iterator[int | None]:
        """``name`` opened (:meth:`open_own`) and locked exclusively, its writer dead; None
        when it is not ktop's to touch, or a live writer holds it.
        """
        fd = self.open_own(name, flags)
        if fd is None:
            yield None
            return
        try:
            if not lock(fd):
                yield None
                return
            yield fd
        finally:
            os.close(fd)

    def unlink(self, name: str, fd: int) -> None:
        """Delete ``name`` if it is still the file open (and locked) as ``fd``."""
        if self.same(name, fd):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=self.fd)

    def set_aside(self, name: str, fd: int) -> str:
        """Rename ``name`` (open and locked as ``fd``) to ``NAME.damaged`` (or ``-2``, ...),
        never over an existing file; the new name (empty when it could not be done).
        """
        if not self.same(name, fd):
            return ""
        for n in range(1, 100):
            new = name + DAMAGED + (f"-{n}" if n > 1 else "")
            try:
                os.link(name, new, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
            except FileExistsError:
                continue
            except OSError:  # no hard links here: rename, unless the name is taken
                if os.path.lexists(self.path / new):
                    continue
                os.rename(name, new, src_dir_fd=self.fd, dst_dir_fd=self.fd)
                return new
            os.unlink(name, dir_fd=self.fd)
            return new
        return ""


def fd_path(fd: int) -> Path:
    """A path that opens the file open as ``fd`` again (a new descriptor of its own), whether
    or not it has a name in a directory (Linux's ``/proc/self/fd/N``).
    """
    return PROC_FD / str(fd)


def unnamed(directory: str | Path, mode: int = 0o666) -> int | None:
    """A new, empty file in ``directory``'s filesystem that has no name (``O_TMPFILE``), open
    to read and write: until it is linked (:func:`link_unnamed`) no other process
    can find, lock or delete it, and when it is closed without a name (even by kill -9) it
    is gone. None where this system or the directory's filesystem cannot make one (not
    Linux, no ``/proc``, a filesystem without ``O_TMPFILE``).
    """
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not PROC_FD.is_dir():
        return None
    try:
        return os.open(directory, flag | os.O_RDWR | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            return None
        raise


def link_unnamed(fd: int, path: str | Path) -> None:
    """Give the file made by :func:`unnamed` (open as ``fd``) the name ``path``, never over
    an existing file (:class:`FileExistsError`).
    """
    directory = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:  # linkat(AT_SYMLINK_FOLLOW): Python calls it only when given a directory descriptor
        os.link(
            fd_path(fd),
            os.path.basename(path),
            src_dir_fd=directory,
            dst_dir_fd=directory,
            follow_symlinks=True,
        )
    finally:
        os.close(directory)


def lock(fd: int) -> bool:
    """Take the writer's lock on ``fd`` without waiting; False when a live writer holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def remove(directory: Directory, name: str) -> bool:
    """Delete the recording ``name`` and its journal, unless a live writer holds either (or
    either is not ktop's regular file); whether it was deleted.
    """
    with directory.locked(name) as fd:
        if fd is None:
            return False
        tail = directory.open_own(name + TAIL)
        try:
            if tail is not None and not lock(tail):
                return False  # a writer of an older ktop locks only its journal
            directory.unlink(name, fd)
            if tail is not None:
                directory.unlink(name + TAIL, tail)
        finally:
            if tail is not None:
                os.close(tail)
    return True
