"""Reading the user's files with a size limit, refusing what is not a file.

Every file ktop reads (kubeconfig, ``config.toml``, themes, recordings, bundle files,
token files) is opened here first: a FIFO with no writer, a device such as
``/dev/zero`` or a directory is refused at once with its path, and a file over its
limit is refused before it is read, so a hostile or mistaken path can neither hang ktop
nor fill its memory. The limits are data (:data:`LIMITS`), listed in ``docs/security.md``.

One exception: a kubeconfig may come through an anonymous pipe, as from the shell's
process substitution (``--kubeconfig <(vault read ...)``). Such a pipe is read to its end
within :data:`PIPE_TIMEOUT_S`, still bounded in size; a named FIFO in the file system is
refused like any other special file.
"""

from __future__ import annotations

import gzip
import os
import select
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True, slots=True)
class FileLimit:
    """What kind of file, and the most ktop reads of it."""

    what: str
    max_bytes: int


KUBECONFIG = FileLimit("kubeconfig", 16 * MiB)
CONFIG = FileLimit("config file", 1 * MiB)
THEME = FileLimit("theme file", 256 * KiB)
TOKEN = FileLimit("token or password file", 64 * KiB)
CERTIFICATE = FileLimit("certificate or key file", 1 * MiB)
BUNDLE_FILE = FileLimit("bundle file", 256 * MiB)
RECORDING = FileLimit("recording", 64 * GiB)
"""Recordings are mapped, not read whole, and read frame by frame (each frame bounded by
``ktop/record/format.py``); the limit only refuses what cannot be a recording."""
JOURNAL = FileLimit("recording journal (FILE.ktrec.tail)", 64 * MiB)
"""A chunk journal holds one chunk's records (the writer cuts chunks at 4 MiB)."""
LIMITS: tuple[FileLimit, ...] = (
    KUBECONFIG,
    CONFIG,
    THEME,
    TOKEN,
    CERTIFICATE,
    BUNDLE_FILE,
    RECORDING,
    JOURNAL,
)
"""Every file ktop reads, and its size limit."""

PIPE_TIMEOUT_S = 10.0
"""How long a kubeconfig pipe (process substitution) may take to reach its end."""


class FileRefusedError(OSError):
    """A path that is not a regular file, or a file over its limit; the message names it
    (and is also its ``strerror``, which callers print after the path).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.strerror = message


def _special(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size_text(n: int) -> str:
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if n >= unit:
            return f"{n / unit:.4g} {name}"
    return f"{n} bytes"


def check_regular(path: str | Path, limit: FileLimit) -> os.stat_result:
    """The file's status, or :class:`FileRefusedError` when it is not a regular file or is over
    the limit. Never opens the file (opening a FIFO can block).
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise FileRefusedError(f"{limit.what} {path} is {_special(st.st_mode)}, not a regular file")
    if st.st_size > limit.max_bytes:
        raise FileRefusedError(
            f"{limit.what} {path} is {_size_text(st.st_size)}, over the limit of "
            f"{_size_text(limit.max_bytes)}"
        )
    return st


def _anonymous_pipe(path: str | Path) -> bool:
    """Whether ``path`` is a process substitution's pipe (``/dev/fd/N`` -> ``pipe:[...]``)."""
    try:
        return os.readlink(path).startswith("pipe:")
    except OSError:
        return False


def read_bounded(path: str | Path, limit: FileLimit, *, allow_pipe: bool = False) -> bytes:
    """The whole file, or :class:`FileRefusedError` (or another :class:`OSError`).

    ``allow_pipe``: an anonymous pipe is read too, within :data:`PIPE_TIMEOUT_S`.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISFIFO(st.st_mode) and allow_pipe and _anonymous_pipe(path):
            return _read_pipe(fd, path, limit)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefusedError(
                f"{limit.what} {path} is {_special(st.st_mode)}, not a regular file"
            )
        if st.st_size > limit.max_bytes:
            raise FileRefusedError(
                f"{limit.what} {path} is {_size_text(st.st_size)}, over the limit of "
                f"{_size_text(limit.max_bytes)}"
            )
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(MiB, limit.max_bytes + 1 - total) or 1):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit.max_bytes:  # it grew while being read
                raise FileRefusedError(
                    f"{limit.what} {path} is over the limit of {_size_text(limit.max_bytes)}"
                )
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_pipe(fd: int, path: str | Path, limit: FileLimit) -> bytes:
    chunks: list[bytes] = []
    total = 0
    deadline = time.monotonic() + PIPE_TIMEOUT_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise FileRefusedError(
                f"{limit.what} {path} (a pipe) did not reach its end within "
                f"{PIPE_TIMEOUT_S:g}s (pipe time limit)"
            )
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            continue
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit.max_bytes:
            raise FileRefusedError(
                f"{limit.what} {path} is over the limit of {_size_text(limit.max_bytes)}"
            )


def read_text_bounded(path: str | Path, limit: FileLimit, *, allow_pipe: bool = False) -> str:
    """:func:`read_bounded` decoded as UTF-8 (:class:`UnicodeDecodeError` when it is not)."""
    return read_bounded(path, limit, allow_pipe=allow_pipe).decode("utf-8")


def has_control_character(text: str) -> bool:
    """Whether ``text`` holds an ASCII control character (line breaks, tabs, NUL, DEL):
    what an HTTP header value (a token, a password) must not.
    """
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def read_secret_file(path: str | Path, limit: FileLimit = TOKEN) -> str:
    """A token or password file's value: read within ``limit``, surrounding whitespace
    trimmed as kubectl trims a ``tokenFile`` (client-go's ``strings.TrimSpace``; Prometheus
    reads its ``password_file`` the same way), so ``echo TOKEN > file`` works.

    :class:`FileRefusedError` naming the file when it is not UTF-8 text or a control
    character (a line break, a NUL) is left inside the value: sent in an HTTP header it
    would be refused by the client, or split the header.
    """
    try:
        value = read_text_bounded(path, limit).strip()
    except UnicodeDecodeError:
        raise FileRefusedError(f"{limit.what} {path} is not UTF-8 text") from None
    if has_control_character(value):
        raise FileRefusedError(
            f"{limit.what} {path} holds a control character (a line break, tab or NUL) "
            "inside its value; only whitespace around it is trimmed"
        )
    return value


def limits_markdown() -> str:
    """The table of :data:`LIMITS` for ``docs/security.md`` (``make docs`` writes it)."""
    rows = [f"| {lim.what} | {_size_text(lim.max_bytes)} |" for lim in LIMITS]
    return "\n".join(["| file | size limit |", "|---|---|", *rows])


def gunzipped(raw: IO[bytes]) -> IO[bytes]:
    """A seekable file's bytes, gunzipped when it is gzip (by its magic number, not its
    name): a cut gzip file raises :class:`EOFError` where it ends.
    """
    magic = raw.read(2)
    raw.seek(0)
    if magic == b"\x1f\x8b":
        return cast("IO[bytes]", gzip.GzipFile(fileobj=raw, mode="rb"))
    return raw


def bounded_lines(stream: IO[bytes], max_bytes: int) -> Iterator[bytes | None]:
    """Each line of ``stream``; None for a line over ``max_bytes``, which is skipped
    without being held (the next line is read after it).
    """
    while True:
        line = stream.readline(max_bytes + 1)
        if not line:
            return
        if len(line) > max_bytes and not line.endswith(b"\n"):
            while (more := stream.readline(MiB)) and not more.endswith(b"\n"):
                pass
            yield None
            continue
        yield line
