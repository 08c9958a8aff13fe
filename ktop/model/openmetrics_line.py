"""One sample line of a timestamped OpenMetrics slice (``promtool tsdb dump-openmetrics``:
``name{label="value",...} VALUE TIMESTAMP``, series by series, ``# EOF`` at the end).

Pure: a line in, ``(name, labels, value, seconds)`` out, or :class:`SliceLineError`
saying what is wrong. Label values are unescaped as OpenMetrics escapes them (``\\\\``,
``\\"``, ``\\n``).
"""

from __future__ import annotations

import math
import re

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)[ \t]+(\S+)[ \t]*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_ESCAPE = re.compile(r"\\(.)")


class SliceLineError(ValueError):
    """A line that is not a timestamped sample; the message says why."""


def _unescaped(value: str) -> str:
    return _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def _labels(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = _LABEL.match(text, pos)
        if m is None:
            raise SliceLineError(f"labels not readable at {text[pos : pos + 30]!r}")
        out[m.group(1)] = _unescaped(m.group(2))
        pos = m.end()
    return out


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SliceLineError(f"{what} {text[:30]!r} is not a number") from None
    return value


def parse_sample(line: str) -> tuple[str, dict[str, str], float, float]:
    """``(name, labels, value, timestamp in seconds)`` of one sample line."""
    m = _SAMPLE.match(line)
    if m is None:
        raise SliceLineError("not 'name{labels} value timestamp'")
    name, labels, value, stamp = m.groups()
    at = _number(stamp, "timestamp")
    if not math.isfinite(at) or at < 0:
        raise SliceLineError(f"timestamp {stamp[:30]!r} is not a time")
    return name, _labels(labels or ""), _number(value, "value"), at
