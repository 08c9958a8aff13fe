"""Programs from the Debian packages CI installs (.ci/run): their path, or a failing test in
CI (a missing program must not pass quietly as a skip) and a skipped one elsewhere."""

from __future__ import annotations

import os
import shutil

import pytest


def required_binary(name: str, package: str) -> str:
    """``name``'s path on ``PATH``; in CI its absence fails the test, elsewhere skips it."""
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not installed (apt-get install {package})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found
