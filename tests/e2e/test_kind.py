"""kind demo support: only the missing-tool path can be tested without Docker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ktop.lab import kind


def test_missing_tools_are_named_with_install_hints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert kind.missing_kind_tools() == ["kind", "docker"]
    result = kind.kind_demo(name="never-created")
    assert not result.ok and result.kubeconfig is None
    assert "missing kind, docker" in result.message
    assert "go install sigs.k8s.io/kind@" in result.message
    assert "Docker Engine" in result.message


def test_this_machine_reports_what_it_lacks() -> None:
    missing = kind.missing_kind_tools()
    if shutil.which("kind") and not missing:
        pytest.skip("kind and a docker daemon are available here")
    result = kind.kind_demo(name="never-created")
    assert not result.ok
    for tool in missing:
        assert kind.INSTALL_HINTS[tool] in result.message


def test_docker_cli_without_daemon_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert kind.missing_kind_tools() == ["kind", "docker-daemon"]
    assert "no daemon answers" in kind.kind_demo().message


def test_kind_config_has_one_worker_per_zone() -> None:
    config = kind.kind_config()
    for zone in ("zone-a", "zone-b", "zone-c"):
        assert f'"topology.kubernetes.io/zone": "{zone}"' in config
