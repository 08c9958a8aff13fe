"""Locate the control-plane binaries written by scripts/controlplane/install.sh."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = "run `bash scripts/controlplane/install.sh` (builds them from the Go module proxy)"

#: env-file key -> attribute name
_KEYS = {
    "KTOP_KUBE_APISERVER": "kube_apiserver",
    "KTOP_KUBE_CONTROLLER_MANAGER": "kube_controller_manager",
    "KTOP_KUBE_SCHEDULER": "kube_scheduler",
    "KTOP_ETCD": "etcd",
    "KTOP_KWOK": "kwok",
    "KTOP_PROMETHEUS": "prometheus",
    "KTOP_KUBECTL": "kubectl",
}


def cache_dir() -> Path:
    """The binary cache: $KTOP_CACHE_DIR, else $HOME/.cache/ktop."""
    env = os.environ.get("KTOP_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "ktop"


def env_file() -> Path:
    """The env file install.sh writes with the binary paths."""
    return cache_dir() / "controlplane.env"


@dataclass(frozen=True)
class Binaries:
    """Absolute paths of every executable the lab runs, and the kubectl of the same
    version that tests use to do by hand what a user would.
    """

    kube_apiserver: str
    kube_controller_manager: str
    kube_scheduler: str
    etcd: str
    kwok: str
    prometheus: str
    kubectl: str


def _read_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def _resolve() -> tuple[dict[str, str], list[str]]:
    file_values = _read_env_file(env_file())
    found: dict[str, str] = {}
    missing: list[str] = []
    for key, attr in _KEYS.items():
        candidate = os.environ.get(key) or file_values.get(key)
        if not candidate and attr == "prometheus":
            candidate = shutil.which("prometheus")
        if candidate and os.access(candidate, os.X_OK):
            found[attr] = candidate
        else:
            missing.append(f"{attr} ({key}={candidate or 'unset'})")
    return found, missing


def missing_binaries() -> list[str]:
    """Describe every binary that cannot be found (empty list when all are present)."""
    return _resolve()[1]


def find_binaries() -> Binaries:
    """Return the binaries, from env vars first, then the install.sh env file.

    Raises FileNotFoundError naming what is missing and how to get it.
    """
    found, missing = _resolve()
    if missing:
        raise FileNotFoundError(
            f"control-plane binaries missing: {', '.join(missing)} (looked at KTOP_* env vars "
            f"and {env_file()}); {INSTALL_HINT}"
        )
    return Binaries(**found)
