"""E2E fixtures: one real control plane (ktop.lab) per test session.

Binaries come from `scripts/controlplane/install.sh`. When they are missing the e2e tests
are skipped with a hint, except under CI=true where that is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ktop.lab import Lab, missing_binaries
from ktop.lab.binaries import INSTALL_HINT, env_file
from tests.e2e.helpers import e2e_lab_config, running_lab


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: needs the real local control plane (tests/e2e)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


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
