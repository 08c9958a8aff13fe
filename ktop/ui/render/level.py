"""Status levels: colour AND a symbol, so status reads without colour.

The colours come from the active theme (``[status]`` in a theme file): levels
are styled with named Rich styles (``ktop.ok`` ...) that the theme defines.

The thresholds for colouring single readings are read from the finding
catalogue (``ktop.analysis.catalogue``), so a reading is coloured exactly
where its finding fires.
"""

from __future__ import annotations

from enum import IntEnum

from rich.text import Text

from ktop.analysis import catalogue
from ktop.analysis.findings import Severity
from ktop.model.grading import Threshold
from ktop.model.reading import Reading
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.values import Val


class Level(IntEnum):
    """How a reading looks on screen, worst last."""

    NEUTRAL = 0
    OK = 1
    UNKNOWN = 2
    WARN = 3
    CRIT = 4


SYMBOL: dict[Level, str] = {
    Level.NEUTRAL: " ",
    Level.OK: "✓",
    Level.UNKNOWN: "?",
    Level.WARN: "▲",
    Level.CRIT: "✖",
}
"""One-cell symbol per level (meaning survives NO_COLOR and 16 colours)."""

STATUS_NAME: dict[Level, str] = {
    Level.OK: "ok",
    Level.UNKNOWN: "unknown",
    Level.WARN: "warn",
    Level.CRIT: "bad",
}
"""The name of each level's data colour in a theme file's ``[status]`` table."""

STALE = "stale"
"""The theme's ``[status]`` entry for stale or failing inputs."""

THEME_STATUSES: tuple[str, ...] = (*STATUS_NAME.values(), STALE)
"""Every data colour a theme must define."""


def style_name(status: str) -> str:
    """The Rich style name a theme's ``[status]`` entry is registered as: ``ktop.warn``."""
    return f"ktop.{status}"


STYLE: dict[Level, str] = {
    Level.NEUTRAL: "",
    **{level: style_name(name) for level, name in STATUS_NAME.items()},
}
"""Rich style (a theme style name) per level; the active theme says what it looks like."""

STALE_STYLE = style_name(STALE)
"""Rich style for a stale or failing input (the theme's ``[status] stale``)."""

CRITICAL_COUNT_STYLE = style_name("critical-count")
"""Rich style for the count of critical findings (status line, findings screen): the
theme's ``bad``, or a pair readable on 16 colours (``ktop.ui.theming.data_styles``)."""

SEVERITY_LEVEL: dict[Severity, Level] = {
    Severity.OK: Level.OK,
    Severity.INFO: Level.NEUTRAL,
    Severity.UNKNOWN: Level.UNKNOWN,
    Severity.WARNING: Level.WARN,
    Severity.CRITICAL: Level.CRIT,
}

SEVERITY_SYMBOL: dict[Severity, str] = {
    sev: "i" if level is Level.NEUTRAL else SYMBOL[level] for sev, level in SEVERITY_LEVEL.items()
}
"""A finding's symbol: its level's (``i`` for information)."""

LEGEND_WORD: dict[Level, str] = {
    Level.CRIT: "critical",
    Level.WARN: "warning",
    Level.UNKNOWN: "unknown (reason shown)",
    Level.OK: "ok",
}
"""What each level's symbol means, in the order the legend lists them."""


def legend() -> str:
    """``✖ critical  ▲ warning  ? unknown (reason shown)  ✓ ok`` (help and docs)."""
    return "  ".join(f"{SYMBOL[level]} {word}" for level, word in LEGEND_WORD.items())


ZONE_LEVEL: dict[ZoneState, Level] = {
    ZoneState.INITIAL: Level.UNKNOWN,
    ZoneState.NORMAL: Level.OK,
    ZoneState.PARTIAL_DISRUPTION: Level.WARN,
    ZoneState.FULL_DISRUPTION: Level.CRIT,
}


MARKED: frozenset[Level] = frozenset({Level.UNKNOWN, Level.WARN, Level.CRIT})
"""Levels a single reading never shows by colour alone: it carries its :data:`SYMBOL` too."""


def marked(text: str, level: Level, sep: str = "") -> str:
    """``text`` with the level's symbol (and ``sep``) in front when the level is in
    :data:`MARKED`: ``▲612ms``, ``? connection refused``.

    A reading that already starts with the symbol (``?`` for an unknown value,
    a status column that is only the symbol) is left as it is.
    """
    if level not in MARKED or text.startswith(SYMBOL[level]):
        return text
    return SYMBOL[level] + sep + text


def styled(text: str, level: Level, sep: str = "") -> Text:
    """``text`` in the style of ``level``, with the level's symbol when it is marked."""
    return Text(marked(text, level, sep), style=STYLE[level])


GRADE_LEVEL: dict[Severity, Level] = {Severity.CRITICAL: Level.CRIT, Severity.WARNING: Level.WARN}
"""The level a graded reading shows (below its warning limit it is plain)."""


def graded(threshold: Threshold, v: Val) -> Level:
    """How a reading looks, graded by its threshold exactly as its finding is (inclusive and
    lower-is-worse limits included); unknown stays unknown, nothing to measure is plain.
    """
    if v.value is None:
        return Level.NEUTRAL if v.empty else Level.UNKNOWN
    return GRADE_LEVEL.get(threshold.grade(v.value), Level.NEUTRAL)


def reading_level(reading: Reading, v: Val) -> Level:
    """How a value of a graded reading of the registry looks (its own threshold)."""
    assert reading.threshold is not None, reading.metric
    return graded(reading.threshold, v)


def shown_level(reading: Reading, v: Val) -> Level:
    """How a value of any reading looks: by its threshold, plain when it has none (unknown
    stays unknown).
    """
    if reading.threshold is None:
        return Level.NEUTRAL if v.known or v.empty else Level.UNKNOWN
    return graded(reading.threshold, v)


def worst(levels: list[Level]) -> Level:
    """The worst of some levels (OK when there are none)."""
    return max(levels, default=Level.OK)


def _warn(t: Threshold) -> float:
    """A threshold's warning limit (every threshold the screen uses has one)."""
    assert t.warn is not None, t.name
    return t.warn


# Limits the screen compares with directly (not a reading of the registry).
RECENT_RESTART_S = _warn(catalogue.API_UPTIME)
STALE_AFTER_S = _warn(catalogue.STALE_AFTER)
"""An area whose stalest input is older than this is highlighted as stale."""
