"""A live session's rewind recording is never reachable by path, and nothing of it is left
in ``$TMPDIR`` however ktop ends: SIGTERM, SIGHUP and SIGINT stop the dashboard cleanly
(exit 0), and after kill -9 there is nothing to remove either."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ktop.record import rewind_files
from tests.pty_run import base_env, ktop_argv

pytestmark = pytest.mark.skipif(not rewind_files.supported(), reason="needs Linux's /proc")

START_S = 60.0
"""How long ktop may take to start and write the rewind recording's first keyframe (the
recorder writes it as it starts, before the app draws: no later cadence to wait for)."""
EXIT_S = 30.0
"""How long a clean stop may take (the app exits, the recorders are finished)."""


@contextmanager
def dashboard(argv: list[str], tmpdir: Path, cache: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``ktop ARGV`` on a pseudo-terminal of its own, its output drained; killed at the end."""
    master, slave = os.openpty()
    env = base_env(TMPDIR=str(tmpdir), KTOP_CACHE_DIR=str(cache))
    proc = subprocess.Popen(
        ktop_argv(*argv), stdin=slave, stdout=slave, stderr=slave, env=env,
        start_new_session=True, close_fds=True,
    )  # fmt: skip
    os.close(slave)

    def drain() -> None:
        while True:
            try:
                if not os.read(master, 65536):
                    return
            except OSError:
                return

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
        reader.join(5)


def rewind_files_of(pid: int, tmpdir: Path) -> list[tuple[str, int]]:
    """The files in ``tmpdir`` that ``pid`` holds open: where /proc says each is, and its size."""
    out = []
    fds = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(fds):
        try:
            where = os.readlink(fds / fd)
            size = os.stat(fds / fd).st_size
        except OSError:  # closed meanwhile
            continue
        if where.startswith(f"{tmpdir}/"):
            out.append((where, size))
    return out


def wait_for_recording(proc: subprocess.Popen[bytes], tmpdir: Path) -> list[tuple[str, int]]:
    """The rewind files once one holds its first keyframe, and the app has installed its
    signal handlers (it has: the app runs once ktop's main thread waits in its loop).
    """
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"ktop ended with {proc.returncode}"
        held = rewind_files_of(proc.pid, tmpdir)
        if any(size > 0 for _, size in held) and handlers_installed(proc.pid):
            return held
        time.sleep(0.05)  # polling another process's state: no event to wait on
    raise AssertionError(f"no rewind recording within {START_S} s")


def handlers_installed(pid: int) -> bool:
    """Whether ``pid`` catches SIGTERM and SIGHUP (``SigCgt`` in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            caught = int(line.split()[1], 16)
            return all(caught & (1 << (s - 1)) for s in (signal.SIGTERM, signal.SIGHUP))
    return False


def readable_left(tmpdir: Path) -> list[Path]:
    return [p for p in tmpdir.rglob("*")]


COMMANDS = {"demo": ["demo", "--scenario", "steady"]}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGKILL])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_rewind_data_outlives_a_signal(
    command: str, sig: signal.Signals, tmp_path: Path
) -> None:
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    with dashboard(COMMANDS[command], tmpdir, tmp_path / "cache") as proc:
        held = wait_for_recording(proc, tmpdir)
        # recording, yet nothing of it has a name: no other process can open it by path
        assert all(where.endswith(" (deleted)") for where, _ in held), held
        assert readable_left(tmpdir) == []
        proc.send_signal(sig)
        code = proc.wait(EXIT_S)
    assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0)
    assert readable_left(tmpdir) == []
