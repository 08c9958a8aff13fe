"""Status levels: colour AND a symbol, so status reads without colour.

The colours come from the active theme (``[status]`` in a theme file): levels
are styled with named Rich styles (``ktop.ok`` ...) that the theme defines.

Thresholds for colouring single readings live here; the findings carry the
authoritative verdicts. Thresholds follow the upstream mixins quoted in
``control-plane-signals.md`` where one exists.
"""

from __future__ import annotations

from enum import IntEnum

from rich.text import Text

from ktop.analysis.findings import Severity
from ktop.model.snapshot import ZoneState
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

SEVERITY_LEVEL: dict[Severity, Level] = {
    Severity.OK: Level.OK,
    Severity.INFO: Level.NEUTRAL,
    Severity.UNKNOWN: Level.UNKNOWN,
    Severity.WARNING: Level.WARN,
    Severity.CRITICAL: Level.CRIT,
}

SEVERITY_SYMBOL: dict[Severity, str] = {
    Severity.OK: "✓",
    Severity.INFO: "i",
    Severity.UNKNOWN: "?",
    Severity.WARNING: "▲",
    Severity.CRITICAL: "✖",
}

ZONE_LEVEL: dict[ZoneState, Level] = {
    ZoneState.INITIAL: Level.UNKNOWN,
    ZoneState.NORMAL: Level.OK,
    ZoneState.PARTIAL_DISRUPTION: Level.WARN,
    ZoneState.FULL_DISRUPTION: Level.CRIT,
}


def styled(text: str, level: Level) -> Text:
    """``text`` in the style of ``level``."""
    return Text(text, style=STYLE[level])


def badge(level: Level) -> Text:
    """The level's symbol, styled."""
    return styled(SYMBOL[level], level)


def above(v: Val, warn: float, crit: float | None = None) -> Level:
    """Level of a reading where higher is worse; unknown stays unknown."""
    if v.value is None:
        return Level.NEUTRAL if v.empty else Level.UNKNOWN
    if crit is not None and v.value > crit:
        return Level.CRIT
    if v.value > warn:
        return Level.WARN
    return Level.NEUTRAL


def worst(levels: list[Level]) -> Level:
    """The worst of some levels (OK when there are none)."""
    return max(levels, default=Level.OK)


# Thresholds (seconds, ratios, counts). Sources: etcd and kubernetes mixins.
FSYNC_WARN_S, FSYNC_CRIT_S = 0.5, 1.0
COMMIT_WARN_S, COMMIT_CRIT_S = 0.25, 0.5
PEER_RTT_WARN_S = 0.15
DB_QUOTA_WARN, DB_QUOTA_CRIT = 0.8, 0.95
FRAGMENTATION_WARN = 0.5
SKEW_WARN, SKEW_CRIT = 1.5, 2.5
APF_WAIT_WARN_S, APF_WAIT_CRIT_S = 1.0, 5.0
SEATS_WARN = 0.9
LEASE_LAG_WARN_S, LEASE_LAG_CRIT_S = 20.0, 40.0
RECENT_RESTART_S = 600.0
STALE_AFTER_S = 60.0
"""An area whose stalest input is older than this is highlighted as stale."""
