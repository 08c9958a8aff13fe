"""Sort keys for table cells: the numbers ktop prints, read back with their units."""

from __future__ import annotations

import re

_NUMBER = re.compile(r"^[~<>]?(-?\d[\d,]*(?:\.\d+)?)\s*([a-zA-Zµ%/]*)")
_SCALE: dict[str, float] = {
    "": 1.0,
    "%": 0.01,
    "x": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "B": 1.0,
    "KiB": 1024.0,
    "MiB": 1024.0**2,
    "GiB": 1024.0**3,
    "TiB": 1024.0**4,
}


def numeric(text: str) -> float | None:
    """The value of a cell such as ``1.2k``, ``612ms``, ``982MiB``, ``45%``, ``3/5``; else None."""
    match = _NUMBER.match(text.strip())
    if match is None:
        return None
    number, unit = match.groups()
    unit = unit.removesuffix("/s")  # a rate reads as its count
    scale = _SCALE.get(unit)
    if scale is None:
        return None
    return float(number.replace(",", "")) * scale


def sort_key(text: str) -> tuple[int, float, str]:
    """Numbers (by value) before text (alphabetical); unknown ``?`` and ``-`` last."""
    value = numeric(text)
    if value is not None:
        return (0, value, text)
    plain = text.strip()
    if plain in ("?", "-", ""):
        return (2, 0.0, plain)
    return (1, 0.0, plain.lower())
