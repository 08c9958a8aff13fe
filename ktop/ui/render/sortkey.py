"""Sort keys for table cells and rows: the numbers ktop prints, read back with their units,
so that rows order by what the screen shows (never by jitter it does not show).
"""

from __future__ import annotations

from collections.abc import Callable

from ktop.model.text import as_shown, fmt_si, numeric
from ktop.model.values import Val

__all__ = ["Larger", "larger_first", "numeric", "sort_key"]

Larger = tuple[bool, float]
"""What :func:`larger_first` gives: a part of a row's sort key."""


def sort_key(text: str) -> tuple[int, float, str]:
    """Numbers (by value) before text (alphabetical); unknown ``?`` and ``-`` last."""
    value = numeric(text)
    if value is not None:
        return (0, value, text)
    plain = text.strip()
    if plain in ("?", "-", ""):
        return (2, 0.0, plain)
    return (1, 0.0, plain.lower())


def larger_first(v: Val, fmt: Callable[[float], str] = fmt_si) -> Larger:
    """A row key part for "the largest first" by ``v`` as ``fmt`` prints it: values that
    print the same tie (the rest of the key, a name, decides); unknown and empty last.
    """
    shown = as_shown(v, fmt)
    return (shown is None, -(shown or 0.0))
