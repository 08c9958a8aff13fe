"""A credential plugin that never answers stops every command within its documented time.

The plugin is a shell script whose child (``sleep``) holds the pipes: killing the script
alone leaves them open, and asyncio then waits for them forever (the hang users saw).
Every command runs at once, with the default limit, as a user would start it; the app
and the fleet on a real pseudo-terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ktop.sources.live.exec_plugin import EXEC_TIMEOUT_S, KILL_GRACE_S
from tests.pty_run import base_env, ktop_argv, run_in_pty

EXIT_ALLOWANCE_S = 5.0
"""From the plugin's kill to the command's exit (the message, closing what is open), on a
busy machine. Python's start and ktop's imports come before the plugin starts and are not
part of the plugin's time limit: six commands starting at once on two cores take longer
to import than the limit allows for."""
LIMIT_S = EXEC_TIMEOUT_S + KILL_GRACE_S + EXIT_ALLOWANCE_S
"""The documented time: from the plugin's start to the command's exit."""
START_ALLOWANCE_S = 60.0
"""How long the six commands may take to start the plugin at all (the run's timeout)."""

COMMANDS: dict[str, list[str]] = {
    "app": [],
    "snapshot": ["snapshot"],
    "triage": ["triage"],
    "record": ["record", "-o", "{out}/rec.ktrec", "--duration", "60"],
    "bundle capture": ["bundle", "capture", "{out}/bundle"],
    "fleet": ["fleet"],
}
ON_A_TERMINAL = {"app", "fleet"}
STAYS_OPEN = {"fleet"}
"""The fleet names the failed cell on its screen and keeps watching the others."""


def _silent_plugin(tmp_path: Path) -> Path:
    script = tmp_path / "silent-plugin"
    script.write_text(f'#!/bin/sh\necho $$ > "{tmp_path}/plugin.pid"\nsleep 3600\n')
    script.chmod(0o755)
    return script


def _kubeconfig(tmp_path: Path, plugin: Path) -> Path:
    path = tmp_path / "kubeconfig"
    exec_ = {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin)}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"exec": {**exec_, "interactiveMode": "Never"}}}],
    }
    path.write_text(json.dumps(config))
    return path


def _sleepers(tmp_path: Path) -> list[int]:
    """Live processes whose command line runs the plugin's ``sleep`` for this case."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().split(") ")[-1][:1]
        except OSError:
            continue
        if cmd[:2] == [b"sleep", b"3600"] and state != "Z":
            with contextlib.suppress(OSError):
                if str(tmp_path).encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
    return found


def _run(name: str, tmp_path: Path) -> tuple[str, int | None, float, str]:
    """Run one command; its exit code, seconds from the plugin's start to its exit, output."""
    case = tmp_path / name.replace(" ", "-")
    case.mkdir()
    kubeconfig = _kubeconfig(case, _silent_plugin(case))
    argv = [a.format(out=case) for a in COMMANDS[name]]
    env = base_env(KTOP_CACHE_DIR=str(case / "cache"), KTOP_CASE=str(case))
    full = ktop_argv(*argv, "--kubeconfig", str(kubeconfig))
    if name in ON_A_TERMINAL:
        # The fleet shows a failed cell's reason on its screen and goes on with the other
        # cells: wide enough for the whole line, pytest's long temporary path in it (a
        # wrapped line is split by the sequences that draw its next row).
        run = run_in_pty(
            full, env=env, size=(400, 40), seconds=LIMIT_S + START_ALLOWANCE_S, until=_exited
        )
        text = run.output.decode(errors="replace")
        code = run.returncode
    else:
        proc = subprocess.run(
            full,
            env=env,
            capture_output=True,
            text=True,
            timeout=LIMIT_S + START_ALLOWANCE_S,
            check=False,
        )
        text, code = proc.stdout + proc.stderr, proc.returncode
    ended = time.time()
    pid_file = case / "plugin.pid"
    started = pid_file.stat().st_mtime if pid_file.exists() else float("nan")
    return name, code, ended - started, text


def _exited(output: bytes) -> bool:
    return b"did not answer" in output


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_every_command_stops_with_the_plugin_named_and_the_plugin_gone(tmp_path: Path) -> None:
    with ThreadPoolExecutor(len(COMMANDS)) as pool:
        results = list(pool.map(lambda n: _run(n, tmp_path), COMMANDS))
    limit = f"within {EXEC_TIMEOUT_S:g}s (exec plugin time limit)"
    for name, code, seconds, text in results:
        assert "'silent-plugin'" in text and limit in text, (name, text)
        assert seconds < LIMIT_S, (name, seconds)  # nan (the plugin never ran) fails too
        if name not in STAYS_OPEN:
            assert code == 2, (name, code, text)
        if name not in ON_A_TERMINAL:
            lines = [line for line in text.splitlines() if line.strip()]
            assert len(lines) == 1, (name, text)
    end = time.monotonic() + KILL_GRACE_S + 5
    while _sleepers(tmp_path) and time.monotonic() < end:
        time.sleep(0.1)
    assert _sleepers(tmp_path) == [], "a plugin's child outlived the command"
    for name in COMMANDS:
        pid = int((tmp_path / name.replace(" ", "-") / "plugin.pid").read_text())
        assert not os.path.exists(f"/proc/{pid}") or "Z" in Path(f"/proc/{pid}/stat").read_text()
