"""The lab's component command lines."""

from __future__ import annotations

from pathlib import Path

from ktop.lab import components as comp
from ktop.lab.binaries import Binaries
from ktop.lab.config import LabConfig, Layout

BINS = Binaries(
    *(f"/bin/{n}" for n in ("apiserver", "kcm", "sched", "etcd", "kwok", "prom", "kubectl"))
)


def _controllers(cfg: LabConfig, tmp_path: Path) -> list[str]:
    argv = comp.controller_manager_argv(BINS, Layout(tmp_path), cfg, comp.Endpoint("kcm", 1))
    return [a for a in argv if a.startswith("--controllers=")]


def test_every_controller_runs_by_default(tmp_path: Path) -> None:
    assert _controllers(LabConfig(), tmp_path) == ["--controllers=*"]


def test_a_disabled_controller_is_left_off(tmp_path: Path) -> None:
    cfg = LabConfig(disabled_controllers=("ttl", "cronjob"))
    assert _controllers(cfg, tmp_path) == ["--controllers=*,-ttl,-cronjob"]
