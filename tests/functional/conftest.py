"""Every functional test draws as on a true-colour terminal, whatever the terminal the
tests run in: the app styles some things by the terminal's colours (the critical count
on 16 colours, ``ktop.ui.theming.data_styles``), and snapshots must not depend on the
developer's ``TERM``. A test of the 16-colour case sets its own environment.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def truecolour_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """``COLORTERM=truecolor`` for the apps a test makes (Rich reads it when the app is
    made); subprocesses in a pty get their own explicit environment (``tests/pty_run.py``).
    """
    monkeypatch.setenv("COLORTERM", "truecolor")
