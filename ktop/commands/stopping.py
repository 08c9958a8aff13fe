"""The signals that stop a command cleanly: SIGTERM, SIGHUP (the terminal or the SSH
session went away) and SIGINT.

Python's default for SIGTERM and SIGHUP ends the process at once: no ``finally`` runs, so
the terminal is left in the app's modes and the always-on recording is left without its
index (its journal is put back by the next session). While a dashboard, ``ktop fleet`` or
``ktop record`` runs, each of these signals instead asks it to stop as ``q`` (or the end
of ``--duration``) does, on the event loop: the app exits, its recorders are finished and
released, and the command returns. Textual installs handlers only for SIGTSTP, SIGCONT and
SIGWINCH, so these are left to ktop.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""The signals that stop a running command cleanly."""


@contextlib.contextmanager
def stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Call ``stop`` on the running event loop when one of :data:`STOP_SIGNALS` arrives,
    while the block runs (where the loop cannot watch signals, their defaults stay).
    """
    loop = asyncio.get_running_loop()
    watched = []
    for sig in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop)
            watched.append(sig)
    try:
        yield
    finally:
        for sig in watched:
            loop.remove_signal_handler(sig)
