"""ktop inside a real tmux, with the TERM values tmux and screen set: the pane reads right.

The byte-level tests (test_terminal.py) check the colour depth ktop writes for
each TERM; this one lets a real tmux interpret those bytes and reads its pane
back with ``tmux capture-pane -p``, polling until the overview is drawn.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests.binaries import required_binary
from tests.pty_run import base_env, ktop_argv

pytestmark = pytest.mark.slow

DEMO = ("demo", "--scenario", "zone-outage", "--nodes", "300", "--speed", "5")
TITLES = ("1 APF", "2 apiservers", "3 etcd", "4 scheduler", "5 nodes")
ZONE_ROW = re.compile(r"[│┃][✖✓▲?] (us-east-1[abc])\s+(\d+)/(\d+)\s+[✖▲]?(\d+)\s+[✖▲?]?(\w+)")
"""A zone row of the nodes panel: symbol, zone, ready/total, not ready, state."""
DEADLINE_S = 60.0


def tmux_binary() -> str:
    """tmux's path; in CI a missing tmux fails the test (.ci/run installs it)."""
    return required_binary("tmux", "tmux")


class Pane:
    """One detached tmux session on its own server socket, running one command."""

    def __init__(self, tmux: str, socket: Path, term: str, argv: list[str]) -> None:
        self.tmux = tmux
        self.base = [tmux, "-u", "-S", str(socket)]
        conf = socket.with_suffix(".conf")
        conf.write_text(f'set -g default-terminal "{term}"\nset -g status off\n')
        env = base_env()
        subprocess.run(
            [*self.base, "-f", str(conf), "new-session", "-d", "-s", "ktop", "-x", "100",
             "-y", "30", shlex.join(argv)],
            env=env,
            check=True,
            timeout=10,
        )  # fmt: skip

    def run(self, *args: str) -> str:
        """A tmux command's output."""
        return subprocess.run(
            [*self.base, *args], capture_output=True, text=True, check=True, timeout=10
        ).stdout

    def capture(self) -> str:
        """What the pane shows, as text."""
        return self.run("capture-pane", "-p", "-t", "ktop")

    def wait_for(self, ready: re.Pattern[str] | str, deadline_s: float) -> str:
        """Capture until ``ready`` is on the pane (or fail with the last capture)."""
        end = time.monotonic() + deadline_s
        text = ""
        while time.monotonic() < end:
            text = self.capture()
            if re.search(ready, text):
                return text
            time.sleep(0.2)  # a poll interval, not a wait for luck: the deadline decides
        pytest.fail(f"not on the pane within {deadline_s:.0f}s: {ready!r}\n{text}")

    def close(self) -> None:
        """Stop the server (and ktop with it)."""
        subprocess.run([*self.base, "kill-server"], check=False, capture_output=True, timeout=10)

    def alive(self) -> bool:
        """Whether the session (ktop) is still running."""
        has = [*self.base, "has-session", "-t", "ktop"]
        return subprocess.run(has, check=False, capture_output=True, timeout=10).returncode == 0


@pytest.fixture
def tmux() -> str:
    return tmux_binary()


@pytest.mark.parametrize("term", ["tmux-256color", "screen-256color"])
def test_overview_reads_right_in_a_real_tmux_pane(tmux: str, tmp_path: Path, term: str) -> None:
    # ktop sees the TERM tmux gives its panes (default-terminal), as over SSH into tmux.
    pane = Pane(tmux, tmp_path / "tmux.sock", term, ktop_argv(*DEMO))
    try:
        assert pane.run("display-message", "-p", "-t", "ktop", "#{pane_pid}").strip()
        # The nodes panel's title and, below it, the status line: a capture taken while
        # the first frame is still being written has the one without the other.
        text = pane.wait_for(
            r"\d+/\d+ ready · \d+ not ready(?s:.*)demo sim/zone-outage", DEADLINE_S
        )
        for title in TITLES:
            assert title in text, (title, text)
        zones = ZONE_ROW.findall(text)
        assert {z[0] for z in zones} == {"us-east-1a", "us-east-1b", "us-east-1c"}, text
        for zone, ready, total, not_ready, state in zones:
            assert int(ready) + int(not_ready) == int(total), (zone, text)
            assert state in ("Normal", "PartialDisruption", "FullDisruption", "Initial"), text
        assert "demo sim/zone-outage" in text, text
        lines = text.splitlines()
        assert len(lines) >= 29 and all(len(line) <= 100 for line in lines), text
        # box drawing survives tmux: the panels' corners are where they belong
        assert lines[0].startswith(("╭", "┏")), text
        assert "\x1b" not in text and "\ufffd" not in text, text
        pane.run("send-keys", "-t", "ktop", "q")
        end = time.monotonic() + 15
        while time.monotonic() < end:
            if not pane.alive():
                break
            time.sleep(0.2)
        else:
            pytest.fail("ktop did not quit on q inside tmux")
    finally:
        pane.close()
