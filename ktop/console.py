"""The ``ktop`` command as a process: :func:`ktop.cli.main`, then an end that does not wait.

When ``main`` returns, everything ktop writes is written: the screen is given back, every
recording is closed with its index, reports and JSON are printed. What a normal
interpreter exit would still do is tear down the heap object by object (at 100,000 nodes
hundreds of MB of records, seconds on a busy machine) and join idle worker threads, with
the terminal already showing the shell and no word from ktop: a user takes that for a
hang. So the process flushes its streams and log handlers and ends at once
(``os._exit``). ``main`` itself stays an ordinary function for tests and embedding.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import NoReturn

from ktop.cli import main


def flush_all() -> None:
    """Flush standard output, standard error and every log handler (errors ignored: a
    closed pipe must not turn a finished run into a failure).
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    logging.shutdown()


def run() -> NoReturn:
    """Run ``ktop`` with the process' arguments and end the process with its status."""
    try:
        status = main()
    except SystemExit as exc:  # argparse's --help and usage errors
        code = exc.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)  # as the interpreter would
    flush_all()
    os._exit(status)
