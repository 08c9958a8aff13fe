"""The screen's clock steps: what only the clock changes is rebuilt once a step (the
clock and ages in words are in :mod:`ktop.model.text`).
"""

from __future__ import annotations

CLOCK_STEP_S = 5
"""What only the clock changes is shown in steps of this many seconds: a panel border's
age, and the scheduler area's ages and windows (the oldest pending pod's age, quota
rejections and start failures leaving the window), so an idle screen is rebuilt and
redrawn once a step rather than every second. The status line keeps exact seconds."""


def clock_step(at: float) -> float:
    """The start of the :data:`CLOCK_STEP_S` step that holds ``at``."""
    return at - at % CLOCK_STEP_S
