"""Numbers, times and names in words, for every layer that writes them (the screen, the
plain-text snapshot, triage's text), so that each says the same thing the same way.

Every function returns a short plain string. Unknown values render as
``?``; values computed over the whole process life (``Val.lifetime``) get a
leading ``~``.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime

from ktop.model.values import Val

UNKNOWN = "?"
"""What an unknown value renders as."""
NOTHING = "-"
"""Shown for a value with nothing to measure (read fine, no observations)."""

LIFETIME_MARK = "~"
"""Prefix for values computed over the process lifetime, not the window."""

INFINITE = "∞"
"""What an infinite value (``+Inf`` in the metrics) renders as; ``-∞`` below zero."""

MAX_CLOCK_S = 253_402_300_799
"""The last second a clock can show (9999-12-31 23:59:59 UTC)."""

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def finite_only(fmt: Callable[[float], str]) -> Callable[[float], str]:
    """``fmt`` for every float: ``∞``/``-∞`` for infinities, ``?`` for NaN (the exposition
    format's values; no formatter below rounds or scales one).
    """

    @functools.wraps(fmt)
    def guarded(x: float) -> str:
        if math.isfinite(x):
            return fmt(x)
        if math.isnan(x):
            return UNKNOWN
        return INFINITE if x > 0 else "-" + INFINITE

    return guarded


@finite_only
def fmt_bytes(n: float) -> str:
    """Bytes in binary units: ``512B``, ``1.5KiB``, ``12MiB``, ``8.0GiB``."""
    size = float(n)
    for unit in _BINARY_UNITS:
        if abs(size) < 1024 or unit == _BINARY_UNITS[-1]:
            if unit == "B":
                return f"{size:.0f}B"
            return f"{size:.1f}{unit}" if abs(size) < 100 else f"{size:.0f}{unit}"
        size /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


@finite_only
def fmt_duration(seconds: float) -> str:
    """A duration: ``450µs``, ``4.2ms``, ``612ms``, ``4.2s``, ``42s``, ``3.5m``, ``2.0h``."""
    s = float(seconds)
    if s < 0:
        return "-" + fmt_duration(-s)
    if s == 0:
        return "0s"
    if s < 0.0009995:
        return f"{s * 1e6:.0f}µs"
    if s < 0.00995:
        return f"{s * 1000:.1f}ms"
    if s < 0.9995:
        return f"{s * 1000:.0f}ms"
    if s < 9.95:
        return f"{s:.1f}s"
    if s < 59.5:
        return f"{s:.0f}s"
    if s < 595:
        return f"{s / 60:.1f}m"
    if s < 3570:
        return f"{s / 60:.0f}m"
    if s < 86400:
        return f"{s / 3600:.1f}h"
    return f"{s / 86400:.1f}d"


@finite_only
def fmt_si(x: float) -> str:
    """A number with SI suffix: ``0``, ``0.3``, ``12``, ``812``, ``1.2k``, ``34k``, ``1.2M``."""
    v = float(x)
    if v < 0:
        return "-" + fmt_si(-v)
    if v == 0:
        return "0"
    if v < 10:
        text = f"{v:.1f}"
        return text[:-2] if text.endswith(".0") else text
    if v < 1000:
        return f"{v:.0f}"
    for div, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        scaled = v / div
        if scaled < 10:
            return f"{scaled:.1f}{suffix}"
        if scaled < 1000 or suffix == "G":
            return f"{scaled:.0f}{suffix}"
    raise AssertionError("unreachable")  # pragma: no cover


def fmt_rate(per_s: float) -> str:
    """Events per second: ``0/s``, ``0.3/s``, ``812/s``, ``1.2k/s``."""
    return fmt_si(per_s) + "/s"


@finite_only
def fmt_sig(x: float) -> str:
    """A number to four significant digits: ``0.25``, ``1234``, ``1.235e+05``."""
    return f"{x:.4g}"


@finite_only
def fmt_whole(x: float) -> str:
    """A number rounded to a whole one, without separators: ``1234``."""
    return f"{x:.0f}"


@finite_only
def fmt_count(n: float) -> str:
    """An exact count with thousands separators: ``1,234``."""
    return f"{round(n):,}"


def counted(n: float, noun: str, plural: str = "") -> str:
    """``1 pod``, ``2 pods``, ``1,234 pods``: an exact count and its noun, singular for one
    (``plural`` when the noun does not just take an ``s``).
    """
    word = noun if n == 1 or (math.isfinite(n) and round(n) == 1) else (plural or noun + "s")
    return f"{fmt_count(n)} {word}"


@finite_only
def fmt_pct(ratio: float) -> str:
    """A ratio as a percentage: ``0%``, ``4.5%``, ``45%``, ``100%``."""
    p = float(ratio) * 100
    if p != 0 and abs(p) < 10:
        return f"{p:.1f}%"
    return f"{p:.0f}%"


@finite_only
def fmt_times(ratio: float) -> str:
    """A multiplier such as a skew ratio: ``1.0x``, ``2.4x``, ``12x``."""
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"


@finite_only
def fmt_cores(cores: float) -> str:
    """CPU cores: ``0.25``, ``3.2``, ``12``."""
    if cores < 1:
        return f"{cores:.2f}"
    return f"{cores:.1f}" if cores < 10 else f"{cores:.0f}"


def fmt_val(v: Val, fmt: Callable[[float], str] = fmt_si) -> str:
    """Format a :class:`Val`: ``?`` when unknown, ``~`` prefix for lifetime values."""
    if v.value is None:
        return NOTHING if v.empty else UNKNOWN
    text = fmt(v.value)
    return LIFETIME_MARK + text if v.lifetime else text


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
    """The value of a printed number such as ``1.2k``, ``612ms``, ``982MiB``, ``45%``,
    ``12/s``, ``~3.3s``, ``∞``; None when the text is not one (``?``, ``-``, ``3/5``, a name).
    """
    bare = text.strip().lstrip("~")
    if bare.rstrip("/s") in (INFINITE, "-" + INFINITE):
        return -math.inf if bare.startswith("-") else math.inf
    match = _NUMBER.match(text.strip())
    if match is None:
        return None
    number, unit = match.groups()
    unit = unit.removesuffix("/s")  # a rate reads as its count
    scale = _SCALE.get(unit)
    if scale is None:
        return None
    return float(number.replace(",", "")) * scale


def as_shown(v: Val, fmt: Callable[[float], str] = fmt_si) -> float | None:
    """``v`` rounded the way ``fmt`` prints it (3.27 s prints ``3.3s``: 3.3), so that
    what is ordered by it never moves on jitter the screen does not show; None when
    unknown or empty.
    """
    return numeric(fmt_val(v, fmt))


Larger = tuple[bool, float]
"""What :func:`larger_first` gives: a part of a row's sort key."""


def larger_first(v: Val, fmt: Callable[[float], str] = fmt_si) -> Larger:
    """A row key part for "the largest first" by ``v`` as ``fmt`` prints it: values that
    print the same tie (the rest of the key, a name, decides); unknown and empty last.
    """
    shown = as_shown(v, fmt)
    return (shown is None, -(shown or 0.0))


def short_instance(instance: str) -> str:
    """An instance name without its port when the host is a name: ``apiserver-0:6443`` ->
    ``apiserver-0``. Addresses keep their port (``127.0.0.1:6443``): several instances
    often share one address, and the port is then what tells them apart.
    """
    host, sep, port = instance.rpartition(":")
    if not (sep and host and port.isdigit()):
        return instance
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    return instance


def truncate(text: str, width: int) -> str:
    """Cut ``text`` to ``width`` cells, ending in ``…`` when cut."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: width - 1] + "…"


def truncate_middle(text: str, width: int, tail: int = 3) -> str:
    """Cut ``text`` to ``width`` cells keeping its last ``tail`` characters: names of one
    kind often differ only at the end (``apiserver-0``, ``apiserver-1``).
    """
    if len(text) <= width:
        return text
    if width < tail + 3:
        return truncate(text, width)
    return text[: width - tail - 1] + "…" + text[-tail:]


def fmt_clock(at: float) -> str:
    """The source clock as UTC ``HH:MM:SS``; ``?`` for a time that is not one (infinite)."""
    if not math.isfinite(at) or abs(at) > MAX_CLOCK_S:
        return UNKNOWN
    return datetime.fromtimestamp(at, tz=UTC).strftime("%H:%M:%S")


def fmt_age(seconds: float | None) -> str:
    """A coarse age: ``12s``, ``3m``, ``2h``, ``4d``; ``never`` for None."""
    if seconds is None:
        return "never"
    if not math.isfinite(seconds):
        return UNKNOWN
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h"
    return f"{s // 86400}d"


def listing_text(what: str, listed: int, expected: int | None) -> str:
    """How far a first list is, as a pane says it: ``nodes 41,500 / ~100,000 listed so
    far`` (``expected`` None: the apiserver did not say how many there are).
    """
    of = f" / ~{expected:,}" if expected is not None else ""
    return f"{what} {listed:,}{of} listed so far"
