"""What ktop does with the unexpected: scrubbed logs, crash reports, terminal checks.

* :func:`install_logging` makes every log record pass through the session's
  :meth:`~ktop.scrub.Secrets.scrub` (a record factory, so records that a
  library builds are scrubbed too, whatever handler receives them) and sends
  warnings to ``ktop.log`` in the cache directory instead of the terminal
  (where they would tear the dashboard).
* :func:`report_crash` writes the full traceback, scrubbed with the session's
  secrets, to a report file and returns a short message that says where it is.
* :func:`terminal_problem` says why the dashboard cannot run here (standard
  input or output is not a terminal), or nothing.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import platform
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import platformdirs

from ktop import __version__
from ktop.scrub import Secrets

LOG_MAX_BYTES = 1 << 20
"""``ktop.log`` is rotated at this size (one old copy kept)."""


def cache_dir() -> Path:
    """Ktop's cache directory (``$KTOP_CACHE_DIR``, else the platform's user cache dir)."""
    env = os.environ.get("KTOP_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("ktop"))


class ScrubbingFormatter(logging.Formatter):
    """A formatter whose output, tracebacks included, is scrubbed with ``secrets``."""

    def __init__(self, secrets: Secrets, fmt: str | None = None) -> None:
        super().__init__(fmt)
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record, scrubbed."""
        return self.secrets.scrub(super().format(record))


class _ScrubbingFactory:
    """A log record factory that scrubs each record's message with ``secrets`` (a
    library's records too, whatever handler receives them).
    """

    def __init__(self, base: Callable[..., logging.LogRecord], secrets: Secrets) -> None:
        self.base = base
        """The factory it wraps (the one before ktop's first)."""
        self.secrets = secrets

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.base(*args, **kwargs)
        try:
            record.msg = self.secrets.scrub(record.getMessage())
        except Exception:  # a bad format string: keep its text, scrubbed
            record.msg = self.secrets.scrub(record.msg)
        record.args = None
        return record


def install_logging(secrets: Secrets, directory: Path | None = None) -> Path | None:
    """Scrub every log record with ``secrets`` (the session's); write warnings to
    ``ktop.log``. Returns the log path.

    Logging is the process's: a later call replaces the earlier one (its factory and
    handler), so the records are scrubbed with the last session's secrets. When the log
    file cannot be opened, records are dropped rather than printed over the dashboard.
    """
    current = logging.getLogRecordFactory()
    base = current.base if isinstance(current, _ScrubbingFactory) else current
    logging.setLogRecordFactory(_ScrubbingFactory(base, secrets))
    threading.excepthook = _thread_excepthook
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "ktop", False):
            root.removeHandler(old)
            old.close()
    path: Path | None = (directory or cache_dir()) / "ktop.log"
    handler: logging.Handler
    try:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        # Opened on the first warning only: most runs write no log at all.
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_MAX_BYTES, backupCount=1, encoding="utf-8", delay=True
        )
    except OSError:
        handler, path = logging.NullHandler(), None
    handler.setLevel(logging.WARNING)
    handler.setFormatter(
        ScrubbingFormatter(secrets, "%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    setattr(handler, "ktop", True)  # noqa: B010 (marks ktop's own handler)
    root.addHandler(handler)
    if root.level > logging.WARNING or root.level == logging.NOTSET:
        root.setLevel(logging.WARNING)
    return path


def _thread_excepthook(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    logging.getLogger("ktop").error(
        "unhandled error in thread %s",
        getattr(args.thread, "name", "?"),
        exc_info=(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback),
    )


def report_text(exc: BaseException, argv: list[str], secrets: Secrets) -> str:
    """The full crash report: versions, the command line and the traceback, all scrubbed
    with ``secrets``.
    """
    lines = [
        f"ktop {__version__} crash report, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        f"python {platform.python_version()} on {platform.platform()}",
        "command: ktop " + " ".join(argv),
        "",
        *traceback.format_exception(exc),
    ]
    return secrets.scrub("\n".join(line.rstrip("\n") for line in lines)) + "\n"


def write_report(
    exc: BaseException, argv: list[str], secrets: Secrets, directory: Path | None = None
) -> Path:
    """Write a crash report (readable by the user only), scrubbed with ``secrets``; return
    its path.
    """
    where = (directory or cache_dir()) / "crash"
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(report_text(exc, argv, secrets))
    return path


def report_crash(
    exc: BaseException, argv: list[str], secrets: Secrets, directory: Path | None = None
) -> str:
    """Write the report; return the short message for the terminal (one or two lines),
    both scrubbed with ``secrets`` (the session's).
    """
    summary = secrets.scrub(f"{type(exc).__name__}: {exc}").splitlines()
    head = (summary[0] if summary else type(exc).__name__)[:200]
    try:
        path = write_report(exc, argv, secrets, directory)
    except OSError as err:
        return (
            f"ktop: internal error ({head}).\n"
            f"ktop: the crash report could not be written: {err.strerror or err}"
        )
    return (
        f"ktop: internal error ({head}). This is a bug in ktop.\n"
        f"ktop: the full report (secrets removed) is in {path}; please attach it to an issue."
    )


def terminal_problem(stdin: TextIO | None, stdout: TextIO | None) -> str | None:
    """Why the interactive dashboard cannot run with these streams, else None."""

    def is_tty(stream: TextIO | None) -> bool:
        try:
            return stream is not None and stream.isatty()
        except (ValueError, OSError):  # closed
            return False

    if not is_tty(stdout):
        return (
            "standard output is not a terminal; ktop is an interactive dashboard "
            "(run it in a terminal, not through a pipe or a file)"
        )
    if not is_tty(stdin):
        return (
            "standard input is not a terminal (closed or redirected); ktop needs a "
            "keyboard: run it in a terminal without '<' or '<&-'"
        )
    return None
