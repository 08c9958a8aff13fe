"""Times in words, for every layer that writes them: the source clock and coarse ages.

Kept in the model so that analysis (the triage report's text) and the UI say
the same thing the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime

CLOCK_STEP_S = 5
"""What only the clock changes is shown in steps of this many seconds: a panel border's
age, and the scheduler area's ages and windows (the oldest pending pod's age, quota
rejections and start failures leaving the window), so an idle screen is rebuilt and
redrawn once a step rather than every second. The status line keeps exact seconds."""


def clock_step(at: float) -> float:
    """The start of the :data:`CLOCK_STEP_S` step that holds ``at``."""
    return at - at % CLOCK_STEP_S


def fmt_clock(at: float) -> str:
    """The source clock as UTC ``HH:MM:SS``."""
    return datetime.fromtimestamp(at, tz=UTC).strftime("%H:%M:%S")


def fmt_age(seconds: float | None) -> str:
    """A coarse age: ``12s``, ``3m``, ``2h``, ``4d``; ``never`` for None."""
    if seconds is None:
        return "never"
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h"
    return f"{s // 86400}d"
