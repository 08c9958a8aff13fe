"""Small statistics over repeated runs (pure)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def median(values: Sequence[float]) -> float | None:
    """The median, or None for no values."""
    return statistics.median(values) if values else None


def spread(values: Sequence[float], fmt: str = "{:.1f}", scale: float = 1.0) -> str:
    """``median (min-max)`` of ``values`` divided by ``scale``; ``-`` when empty."""
    if not values:
        return "-"
    vals = [v / scale for v in values]
    mid = fmt.format(statistics.median(vals))
    if len(vals) == 1 or min(vals) == max(vals):
        return mid
    return f"{mid} ({fmt.format(min(vals))}-{fmt.format(max(vals))})"
