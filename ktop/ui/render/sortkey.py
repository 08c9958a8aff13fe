"""Sort keys for table cells and rows: the numbers ktop prints, read back with their units,
so that rows order by what the screen shows (never by jitter it does not show).
"""

from __future__ import annotations

from ktop.model.text import Larger, larger_first, numeric

__all__ = ["Larger", "larger_first", "numeric", "sort_key"]


def sort_key(text: str) -> tuple[int, float, str]:
    """Numbers (by value) before text (alphabetical); unknown ``?`` and ``-`` last."""
    value = numeric(text)
    if value is not None:
        return (0, value, text)
    plain = text.strip()
    if plain in ("?", "-", ""):
        return (2, 0.0, plain)
    return (1, 0.0, plain.lower())
