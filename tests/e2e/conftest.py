"""E2E fixtures: one real control plane (ktop.lab) per test session.

Binaries come from `scripts/controlplane/install.sh`. When they are missing the e2e tests
are skipped with a hint, except under CI=true where that is a failure.

``KTOP_E2E_BUSY=N`` runs the session on a busy machine: N CPU burners (one busy Python
process each) start before the first e2e test and are stopped at the end of the session,
also when a test fails or the run is interrupted (docs/testing.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ktop.lab import Lab, missing_binaries
from ktop.lab.binaries import INSTALL_HINT, env_file
from tests.e2e.helpers import e2e_lab_config, running_lab


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: needs the real local control plane (tests/e2e)")


E2E_GROUP = "e2e"
"""The pytest-xdist group of the e2e tests that share the session's lab (``--dist
loadgroup``): they run in one worker, one after the other. A module that sets
``XDIST_GROUP`` (``KUBEADM_GROUP``) runs in that group instead."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            module = getattr(item, "module", None)
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.xdist_group(getattr(module, "XDIST_GROUP", E2E_GROUP)))


def _binaries_or_skip() -> None:
    missing = missing_binaries()
    if not missing:
        return
    message = (
        f"e2e control-plane binaries missing: {'; '.join(missing)} (looked at KTOP_* env vars "
        f"and {env_file()}); {INSTALL_HINT}"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


BUSY_ENV = "KTOP_E2E_BUSY"
"""How many CPU burners run beside the e2e session (0 or unset: none)."""
BURNER = (
    "import os\n"
    "parent = os.getppid()\n"
    "while os.getppid() == parent:\n"
    "    for _ in range(1_000_000):\n"
    "        pass\n"
)
"""``while True: pass`` that also ends when the test run that started it is gone (killed
with SIGKILL, where no teardown runs): its parent changes when it is orphaned."""
BURNER_STOP_S = 10.0
"""How long a burner gets to exit after SIGTERM before it is killed."""


def busy_count() -> int:
    """The number of burners ``KTOP_E2E_BUSY`` asks for."""
    raw = os.environ.get(BUSY_ENV, "").strip() or "0"
    try:
        n = int(raw)
    except ValueError:
        raise pytest.UsageError(f"{BUSY_ENV}={raw!r}: give a number of CPU burners") from None
    if n < 0:
        raise pytest.UsageError(f"{BUSY_ENV}={raw!r}: give a number of CPU burners")
    return n


def _stop_burners(burners: list[subprocess.Popen[bytes]]) -> list[int]:
    """Stop every burner; return the pids of those that had already ended by themselves."""
    died = [b.pid for b in burners if b.poll() is not None]
    for b in burners:
        if b.poll() is None:
            b.terminate()
    for b in burners:
        try:
            b.wait(timeout=BURNER_STOP_S)
        except subprocess.TimeoutExpired:
            b.kill()
            b.wait()
    return died


@pytest.fixture(scope="session", autouse=True)
def busy_machine() -> Iterator[list[subprocess.Popen[bytes]]]:
    """``KTOP_E2E_BUSY`` CPU burners for the whole e2e session (none by default)."""
    n = busy_count() if not missing_binaries() else 0
    burners: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(n):
            burners.append(
                subprocess.Popen(
                    [sys.executable, "-c", BURNER],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        yield burners
    finally:
        died = _stop_burners(burners)
    assert not died, f"CPU burners ended before the session did (the load was not there): {died}"


@pytest.fixture(scope="session")
def binaries_present() -> None:
    """Skip (or, under CI=true, fail) when the control-plane binaries are missing."""
    _binaries_or_skip()


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A running lab: 3 etcd members, 2 apiservers, scheduler, controller-manager,
    one kwok per zone with KTOP_E2E_NODES (default 200) nodes, and Prometheus."""
    _binaries_or_skip()
    with running_lab(tmp_path_factory.mktemp("ktop-lab"), e2e_lab_config()) as instance:
        yield instance
