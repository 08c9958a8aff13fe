"""A measured value that may be unknown, and says why.

Every number a pane shows is a :class:`Val`. A value that could not be read
carries the reason instead of a number, so that a view can print ``?`` with
the reason and an analysis rule can refuse to call it healthy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NAN_REASON = "NaN (not a number) in the metrics"
"""Why a value that came out as NaN is unknown: the exposition format's unknown value, or
arithmetic on infinities (an infinite counter's increase)."""


@dataclass(frozen=True, slots=True)
class Val:
    """A number, or the reason it is unknown.

    ``lifetime`` marks a value computed over the whole life of the process
    (for example a quantile from cumulative histogram buckets before a second
    scrape arrived), not over the observation window.
    """

    value: float | None
    reason: str = ""
    lifetime: bool = False
    empty: bool = False
    """No value because there was nothing to measure (e.g. no request waited in the
    window): read successfully, so not unknown evidence, and shown as ``-``."""

    @property
    def known(self) -> bool:
        """True when a number is present."""
        return self.value is not None

    def or_(self, default: float) -> float:
        """The number, or ``default`` when unknown."""
        return default if self.value is None else self.value

    @staticmethod
    def of(value: float, *, lifetime: bool = False) -> Val:
        """A known value; NaN is not one (it is unknown, :data:`NAN_REASON`), while
        ``+Inf`` and ``-Inf`` are (infinite: beyond any limit, shown as such).
        """
        x = float(value)
        if math.isnan(x):
            return Val(None, NAN_REASON, False)
        return Val(x, "", lifetime)

    @staticmethod
    def unknown(reason: str) -> Val:
        """An unknown value with its reason."""
        return Val(None, reason or "unknown", False)

    @staticmethod
    def nothing(reason: str) -> Val:
        """No value because nothing happened to measure; ``reason`` says what."""
        return Val(None, reason, False, True)


def whole(x: float) -> int | None:
    """``x`` rounded to a whole number; None when it has none (NaN, infinite)."""
    return round(x) if math.isfinite(x) else None


def sum_vals(vals: list[Val], *, empty_reason: str = "no series") -> Val:
    """Sum known values; unknown if any is unknown or there are none."""
    if not vals:
        return Val.unknown(empty_reason)
    total = 0.0
    lifetime = False
    for v in vals:
        if v.value is None:
            return v
        total += v.value
        lifetime = lifetime or v.lifetime
    return Val.of(total, lifetime=lifetime)


def max_val(vals: list[Val], *, empty_reason: str = "no series") -> Val:
    """The largest known value; unknown if any is unknown or there are none."""
    if not vals:
        return Val.unknown(empty_reason)
    best: Val | None = None
    for v in vals:
        if v.value is None:
            return v
        if best is None or (best.value is not None and v.value > best.value):
            best = v
    assert best is not None
    return best


def ratio(num: Val, den: Val, *, zero_reason: str = "denominator is zero") -> Val:
    """``num / den`` with unknowns and zero denominators propagated as reasons."""
    if num.value is None:
        return num
    if den.value is None:
        return den
    if den.value == 0:
        return Val.unknown(zero_reason)
    return Val.of(num.value / den.value, lifetime=num.lifetime or den.lifetime)
