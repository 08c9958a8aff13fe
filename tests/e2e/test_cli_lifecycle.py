"""`python -m ktop.lab up` / `down`: a small lab starts, `down` stops it from another process
and nothing is left running."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ktop.lab import LabConfig, procs
from tests.e2e.cadence import PROCESS_START_S, SUPERVISOR_WAIT_S, deadline, lab_stop_s
from tests.e2e.helpers import poll

COMPONENTS = {
    "etcd-0",
    "apiserver-a",
    "apiserver-b",
    "kube-scheduler",
    "kube-controller-manager",
    "kwok-zone-a",
    "kwok-zone-b",
    "kwok-zone-c",
}
"""The processes of a lab without Prometheus and with one etcd member."""
UP_S = deadline(PROCESS_START_S, LabConfig().start_timeout_s)
"""`up` starts, then the lab starts within its own limit."""
STOP_S = deadline(lab_stop_s(len(COMPONENTS)))
"""Every component stopped, each within the lab's SIGTERM-then-SIGKILL limit."""
DOWN_S = deadline(PROCESS_START_S, SUPERVISOR_WAIT_S, lab_stop_s(len(COMPONENTS)))
"""`down` starts, waits for the foreground `up`, then stops what is left."""


def test_up_then_down_leaves_nothing_behind(binaries_present: None, tmp_path: Path) -> None:
    lab_dir = tmp_path / "lab"
    up = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ktop.lab",
            "up",
            "--dir",
            str(lab_dir),
            "--nodes",
            "6",
            "--no-prometheus",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def started() -> bool:
            info = lab_dir / "cluster-info.json"
            return info.is_file() and "start_seconds" in json.loads(info.read_text())

        poll(started, timeout_s=UP_S, what="`up` to report the lab ready")
        running = procs.running_components(lab_dir)
        assert set(running) >= COMPONENTS
        pids = [procs.component(lab_dir, n)["pid"] for n in running]

        down = subprocess.run(
            [sys.executable, "-m", "ktop.lab", "down", "--dir", str(lab_dir)],
            capture_output=True,
            text=True,
            timeout=DOWN_S,
            check=False,
        )
        assert down.returncode == 0, down.stderr
        assert up.wait(timeout=STOP_S) == 0
        assert procs.running_components(lab_dir) == []
        for pid in pids:
            assert (
                not Path(f"/proc/{pid}").exists()
                or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
            )
    finally:
        if up.poll() is None:
            up.terminate()
            up.wait(timeout=STOP_S)
        subprocess.run(
            [sys.executable, "-m", "ktop.lab", "down", "--dir", str(lab_dir)],
            capture_output=True,
            timeout=DOWN_S,
            check=False,
        )
