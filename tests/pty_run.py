"""Run ktop in a real pseudo-terminal and keep every byte it writes (tests and benchmarks)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

SGR = re.compile(rb"\x1b\[([0-9;:]*)m")
"""Select Graphic Rendition sequences: where colours are set."""


def colour_params(data: bytes) -> list[str]:
    """Every SGR parameter in ``data`` that sets a colour (30-39, 40-49, 90-97, 100-107).

    ``38``/``48`` (256 and true colour) and ``39``/``49`` (default colour) count too;
    the sub-parameters of ``38;5;N`` are not reported separately.
    """
    found: list[str] = []
    for match in SGR.finditer(data):
        params = match.group(1).decode().replace(":", ";").split(";")
        i = 0
        while i < len(params):
            p = params[i]
            n = int(p) if p.isdigit() else 0
            if n in (38, 48):
                found.append(";".join(params[i : i + 3]))
                i += 5 if params[i + 1 : i + 2] == ["2"] else 3
                continue
            if 30 <= n <= 49 or 90 <= n <= 97 or 100 <= n <= 107:
                found.append(p)
            i += 1
    return found


@dataclass(frozen=True)
class PtyRun:
    """What a run wrote, how long it ran, and how it ended."""

    output: bytes
    seconds: float
    returncode: int | None
    quit_s: float | None = None
    """Seconds from the quit key to the process' end (None: it was not typed, or the
    process had to be killed)."""
    quit_at: int = 0
    """How many bytes of ``output`` came before the quit key."""


def ktop_argv(*args: str) -> list[str]:
    """``python -m ktop ARGS`` with this interpreter."""
    return [sys.executable, "-m", "ktop", *args]


def run_in_pty(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    size: tuple[int, int] = (80, 24),
    until: Callable[[bytes], bool] | None = None,
    seconds: float = 60.0,
    quit_key: bytes = b"q",
) -> PtyRun:
    """Run ``argv`` on a pty of ``size`` (columns, rows) and read what it writes.

    Reads until ``until(output)`` is true (or, without ``until``, for ``seconds``),
    then types ``quit_key`` and reads on until the program exits (killed after 15 s).
    ``seconds`` is also the limit when ``until`` never becomes true.

    The parent keeps its end of the terminal open until the program has ended and
    everything it wrote is read: Linux drops what is still buffered in a pty once its
    last writer closes, which would lose the bytes a program writes as it ends (the
    sequences that give the screen back).
    """
    master, slave = os.openpty()
    cols, rows = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(
        list(argv),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=dict(env),
        start_new_session=True,
        close_fds=True,
    )
    out = bytearray()
    start = time.monotonic()

    def read_ready(wait: float) -> bool:
        """Read what is there within ``wait`` seconds; whether anything was."""
        ready, _, _ = select.select([master], [], [], wait)
        if ready:
            out.extend(os.read(master, 65536))
        return bool(ready)

    def pump(deadline: float) -> bool:
        """Read until ``deadline`` or ``until``; False when the program ended first."""
        while time.monotonic() < deadline:
            if read_ready(0.02):
                if until is not None and until(bytes(out)):
                    return True
            elif proc.poll() is not None:
                return False
        return True

    open_ = pump(start + seconds)
    elapsed = time.monotonic() - start
    quit_s, quit_at = None, len(out)
    if open_ and proc.poll() is None:
        typed = time.monotonic()
        os.write(master, quit_key)
        until = None
        pump(typed + 15)
        if proc.poll() is not None:
            quit_s = time.monotonic() - typed
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    while read_ready(0.0):  # the last bytes written
        pass
    os.close(slave)
    os.close(master)
    return PtyRun(bytes(out), elapsed, proc.returncode, quit_s, quit_at)


def base_env(**extra: str) -> dict[str, str]:
    """A small, explicit environment: UTF-8 locale, xterm-256color, no config file."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "KTOP_CONFIG_DIR": os.devnull,
    }
    env.update(extra)
    return env
