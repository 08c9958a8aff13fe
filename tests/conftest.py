"""Every test runs without the developer's own ktop config directory (config.toml, themes)."""

from __future__ import annotations

import os
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Point ``KTOP_CONFIG_DIR`` at an empty directory unless a test run sets it."""
    os.environ.setdefault("KTOP_CONFIG_DIR", tempfile.mkdtemp(prefix="ktop-config-"))
