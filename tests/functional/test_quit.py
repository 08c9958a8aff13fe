"""Quitting: ``q`` gives the shell back within a second on a busy machine, says
"stopping..." while it closes, and loses nothing it recorded (ktop/console.py,
ktop/runner.py's ``run_loop`` and ``stopping_note``).

Before, ``q`` after a few minutes of ``ktop demo`` took 6 to 14 s on a busy machine (23 s
in ``ktop fleet --demo``) with the shell's screen back and no word: the interpreter tore
down the heap object by object and ``asyncio.run`` joined every worker thread.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ktop.record.reader import Recording
from ktop.runner import STOPPING
from tests.pty_run import base_env, ktop_argv, run_in_pty

QUIT_LIMIT_S = 1.0
"""From the quit key to the shell's prompt."""
START_LIMIT_S = 180.0
"""How long a loaded dashboard may take to show every node on a machine this busy."""
NODES = 100_000


@pytest.fixture
def busy_machine() -> Iterator[None]:
    """One process spinning on every core while the test runs."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def test_q_ends_a_loaded_dashboard_within_a_second_and_its_recording_is_whole(
    busy_machine: None, tmp_path: Path
) -> None:
    """A 100,000-node demo, recording, on a machine with every core busy: ``q`` took 1.6 s
    before (with nodes shown in about 8 s), 0.3 s now.
    """
    record_dir = tmp_path / "recordings"
    every_node = f"{NODES:,}/{NODES:,}".encode()
    run = run_in_pty(
        ktop_argv("demo", "--nodes", str(NODES), "--speed", "5", "--record-dir", str(record_dir)),
        env=base_env(),
        size=(120, 40),
        until=lambda out: every_node in out,
        seconds=START_LIMIT_S,
    )
    assert every_node in run.output, "the dashboard never showed every node"
    assert run.returncode == 0
    assert run.quit_s is not None and run.quit_s <= QUIT_LIMIT_S, run.quit_s
    after_quit = run.output[run.quit_at :]
    assert b"\x1b[?1049l" in after_quit  # the screen given back
    assert f"ktop demo: {STOPPING}".encode() in after_quit
    assert after_quit.endswith(b"\r\x1b[K")  # and the note erased, the prompt's line clean
    files = sorted(record_dir.glob("*.ktrec"))
    assert len(files) == 1
    with Recording(files[0]) as recording:
        assert recording.indexed and not recording.truncated and not recording.gaps
        assert recording.end > recording.start


@pytest.mark.parametrize(
    ("argv", "status", "last_line"),
    [
        (["--help"], 0, "usage"),
        (["--no-such-option"], 2, "unrecognized arguments"),
    ],
)
def test_the_console_command_flushes_everything_before_it_ends(
    argv: list[str], status: int, last_line: str
) -> None:
    """The process ends without the interpreter's teardown: what it printed into a pipe
    still arrives whole, with its exit status.
    """
    done = subprocess.run(
        ktop_argv(*argv), check=False, capture_output=True, text=True, env=base_env()
    )
    assert done.returncode == status
    expected = subprocess.run(
        [sys.executable, "-c", f"import sys; from ktop.cli import main; sys.exit(main({argv!r}))"],
        check=False,
        capture_output=True,
        text=True,
        env=base_env(),
    )
    assert (done.stdout, done.stderr) == (expected.stdout, expected.stderr)
    assert last_line in (done.stdout + done.stderr).lower()
