"""The bounds of every numeric command-line value, and argparse ``type=`` checks for them.

One place: the parser's ``type=`` functions, the help text and
docs/security.md read the limits from here. A value outside its bounds (or
``nan``, ``inf``, a word) is an argparse error: one line, exit status 2.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn


@dataclass(frozen=True, slots=True)
class Bound:
    """The accepted range of one option (inclusive), and why it ends there."""

    option: str
    low: float
    high: float
    unit: str
    why: str
    command: str = ""
    """The subcommand the option belongs to, when another command's option has its name."""

    def text(self) -> str:
        """``0.1 to 60 seconds`` (for help and errors)."""
        return f"{_number(self.low)} to {_number(self.high)}{' ' + self.unit if self.unit else ''}"


def _number(value: float) -> str:
    """A bound as written in help and docs: whole numbers in full (``1000000``, never
    ``1e+06``), others in their shortest form (``0.1``).
    """
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


REFRESH = Bound(
    "--refresh", 0.1, 60.0, "seconds", "faster redraws only burn CPU; slower ones look frozen"
)
SPEED = Bound(
    "--speed",
    0.1,
    100.0,
    "",
    "each screen tick simulates SPEED seconds, one second at a time; more stalls the screen",
)
NODES = Bound(
    "--nodes",
    1,
    100_000,
    "",
    "the simulated fleet is held in memory; 100,000 is the largest cluster ktop is built for",
)
ZONES = Bound("--zones", 1, 64, "", "more zones than that is not a real failure-domain layout")
SCRAPE_INTERVAL = Bound(
    "--scrape-interval",
    1.0,
    3600.0,
    "seconds",
    "faster scrapes load the apiservers; slower ones leave rates with no window",
)
PROMETHEUS_OFFSET = Bound(
    "--prometheus-offset",
    0.0,
    600.0,
    "seconds",
    "a store that lags more than ten minutes shows an incident too late to act on",
)
TRIAGE_WINDOW = Bound(
    "--window",
    1.0,
    600.0,
    "seconds",
    "ktop triage samples a live cluster this long; longer belongs in a recording",
)
LOOK_BACK = Bound(
    "--look-back",
    60.0,
    3600.0,
    "seconds",
    "a one-shot judges this much of the recent past; ktop keeps an hour of history",
)
BUNDLE_SCRAPES = Bound(
    "--scrapes", 1, 10, "", "two give rates; every scrape is a full /metrics read of each target"
)
BUNDLE_INTERVAL = Bound(
    "--interval", 1.0, 300.0, "seconds", "the window between a bundle's scrapes of one target"
)
FLOOD_DURATION = Bound(
    "--duration",
    1.0,
    600.0,
    "seconds",
    "the lab's APF flood loads both apiservers as hard as it can; longer is a soak, not a demo",
)
SNAPSHOT_TIMEOUT = Bound(
    "--timeout", 1.0, 600.0, "seconds", "ktop snapshot waits this long for every source"
)
SNAPSHOT_AT = Bound(
    "--at",
    0.0,
    3_600.0,
    "seconds",
    "ktop snapshot --demo plays this far into a scenario, a second at a time (every "
    "scenario unfolds within minutes; an hour of 5,000 nodes takes about half a minute)",
)
METRICS_ONLY_ABOVE = Bound(
    "--metrics-only-above",
    0,
    1_000_000,
    "nodes",
    "ktop fleet reads a cell with more nodes than this metrics-only (0: never by size)",
)
RECORD_DURATION = Bound(
    "--duration",
    1.0,
    604_800.0,
    "seconds",
    "ktop record stops after this much source time; a week is the longest one recording holds",
    "record",
)
REPLAY_SPEED = Bound(
    "--speed",
    0.25,
    64.0,
    "",
    "the slowest and fastest of the speeds replay steps through with + and -",
    "replay",
)
REPLAY_SESSION = Bound(
    "--session",
    1,
    1_000_000,
    "",
    "a record directory's sessions are numbered from 1 (replay --info lists them)",
    "replay",
)
RETAIN = Bound(
    "--retain",
    60.0,
    31 * 86_400.0,
    "seconds",
    "always-on recording keeps at least a minute and at most a month (744h)",
)
MAX_DISK = Bound(
    "--max-disk",
    1 << 20,
    1 << 40,
    "bytes",
    "always-on recording needs room for one file's start (1 MiB) and stops at a terabyte",
)
SNAPSHOT_WIDTH = Bound(
    "--width",
    40,
    10_000,
    "columns",
    "ktop snapshot lays its text out this wide; narrower than 40 columns the tables do not fit",
    "snapshot",
)
SEED = Bound(
    "--seed",
    0,
    (1 << 32) - 1,
    "",
    "the simulator's random seed: any 32-bit number gives its own deterministic cluster",
)
RECORD_MAX_SIZE = Bound(
    "--max-size",
    16 << 10,
    1 << 40,
    "bytes",
    "ktop record needs room for a recording's header and first state (16 KiB) and stops "
    "at a terabyte",
    "record",
)
ALL = (
    REFRESH,
    SPEED,
    NODES,
    ZONES,
    SCRAPE_INTERVAL,
    PROMETHEUS_OFFSET,
    TRIAGE_WINDOW,
    LOOK_BACK,
    BUNDLE_SCRAPES,
    BUNDLE_INTERVAL,
    SNAPSHOT_TIMEOUT,
    SNAPSHOT_AT,
    METRICS_ONLY_ABOVE,
    RECORD_DURATION,
    REPLAY_SPEED,
    REPLAY_SESSION,
    RETAIN,
    MAX_DISK,
    SNAPSHOT_WIDTH,
    SEED,
    RECORD_MAX_SIZE,
)
"""Every bounded option (docs/security.md lists them)."""


def _check(bound: Bound, value: float, text: str) -> None:
    if not math.isfinite(value) or not bound.low <= value <= bound.high:
        raise argparse.ArgumentTypeError(
            f"{text[:40]} is out of range: {bound.option} takes {bound.text()}"
        )


DURATION_UNITS: dict[str, float] = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
"""The suffixes a duration option takes (``90``, ``90s``, ``1.5m``, ``1h30m``, ``500ms``)."""
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_duration(text: str) -> float | None:
    """Seconds of ``90``, ``2s``, ``1.5m``, ``1h30m`` or ``500ms``; None when it is not one."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    if not text or len(text) > 40:
        return None
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(text):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * DURATION_UNITS[m.group(2)]
        pos = m.end()
    return total if pos == len(text) else None


def bounded_float(bound: Bound) -> Callable[[str], float]:
    """An argparse ``type=`` for a finite float within ``bound``; an option in seconds also
    takes a duration with a unit (:func:`parse_duration`), as ``--max-size`` takes ``200M``.
    """
    seconds = bound.unit == "seconds"

    def parse(text: str) -> float:
        text = str(text)  # a config file gives numbers as numbers
        value = parse_duration(text) if seconds else None
        if value is None:
            try:
                value = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"{text[:40]!r} is not a "
                    f"{'duration (90, 90s, 1.5m, 1h30m)' if seconds else 'number'} "
                    f"({bound.option} takes {bound.text()})"
                ) from None
        _check(bound, value, text)
        return value

    parse.__name__ = bound.option.lstrip("-").replace("-", "_")
    return parse


def bounded_int(bound: Bound) -> Callable[[str], int]:
    """An argparse ``type=`` for an integer within ``bound``."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", "")) if len(text) <= 20 else None
        except ValueError:
            value = None
        if value is None:
            raise argparse.ArgumentTypeError(
                f"{text[:40]!r} is not a whole number ({bound.option} takes {bound.text()})"
            )
        _check(bound, value, text)
        return value

    parse.__name__ = bound.option.lstrip("-").replace("-", "_")
    return parse


SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
"""The suffixes a size takes (``500000``, ``200k``, ``20M``, ``2G``, ``1T``; powers of 1024)."""


def parse_size(text: str) -> int:
    """``500000``, ``200k``, ``20M``, ``2G`` or ``1T`` to bytes."""
    t = str(text).strip().lower().removesuffix("b").removesuffix("i")
    unit = t[-1:] if t[-1:] in SIZE_UNITS and not t[-1:].isdigit() else ""
    number = t[: len(t) - len(unit)]
    try:
        value = float(number) * SIZE_UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 500k, 20M, 1G)") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError("the size must be positive")
    return int(value)


def bounded_size(bound: Bound) -> Callable[[str], int]:
    """An argparse ``type=`` for a size (:func:`parse_size`) within ``bound``."""

    def parse(text: str) -> int:
        value = parse_size(text)
        _check(bound, value, str(text))
        return value

    parse.__name__ = bound.option.lstrip("-").replace("-", "_")
    return parse


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block), exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``prog: message (see prog --help)`` and exit with status 2."""
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")
