"""Grading a number against limits: severities and thresholds (pure values).

The ground floor of every status ktop shows: a :class:`Threshold` says when a reading is
INFO, WARNING or CRITICAL, and :class:`Severity` orders them, UNKNOWN above OK (unknown
is never healthy). Rules, triage evidence and the screen's colours all grade through
:meth:`Threshold.grade_val`, so a reading is coloured exactly where its finding fires.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ktop.model.values import Val


class Severity(IntEnum):
    """How bad a finding is. ``UNKNOWN`` ranks above OK: unknown is never healthy."""

    OK = 0
    INFO = 1
    UNKNOWN = 2
    WARNING = 3
    CRITICAL = 4


@dataclass(frozen=True, slots=True)
class Threshold:
    """Numeric limits for one reading: when it is INFO, WARNING or CRITICAL.

    A reading is compared with ``critical`` first, then ``warn``, then ``info``;
    the first limit it passes gives its severity, otherwise it is OK. Higher is
    worse unless ``below`` is set; ``inclusive`` makes the limit itself count.
    """

    name: str
    """What is measured, in words (``WAL fsync p99``)."""
    unit: str
    """``s``, ``ratio``, ``/s``, ``count`` or ``x`` (a multiple of the mean)."""
    source: str
    warn: float | None = None
    critical: float | None = None
    info: float | None = None
    below: bool = False
    inclusive: bool = False

    def _passes(self, x: float, limit: float | None) -> bool:
        if limit is None:
            return False
        if self.below:
            return x <= limit if self.inclusive else x < limit
        return x >= limit if self.inclusive else x > limit

    @property
    def fires_at(self) -> float:
        """The first limit a reading passes to raise a finding (trends measure from it)."""
        limits = [x for x in (self.info, self.warn, self.critical) if x is not None]
        if not limits:
            raise ValueError(f"threshold {self.name!r} has no limit")
        return max(limits) if self.below else min(limits)

    def grade(self, x: float) -> Severity:
        """Severity of a known reading."""
        if self._passes(x, self.critical):
            return Severity.CRITICAL
        if self._passes(x, self.warn):
            return Severity.WARNING
        if self._passes(x, self.info):
            return Severity.INFO
        return Severity.OK

    def grade_val(self, v: Val) -> Severity:
        """Severity of a reading that may be unknown: unknown is never OK, nor is a
        reading with no observations (nothing measured).
        """
        if v.value is None:
            return Severity.UNKNOWN
        return self.grade(v.value)

    def describe(self) -> str:
        """``> 0.5 s warning, > 1 s critical`` for docs and help."""
        op = ("<=" if self.inclusive else "<") if self.below else (">=" if self.inclusive else ">")
        parts = [
            f"{op} {_num(limit)}{_unit(self.unit)} {word}"
            for limit, word in (
                (self.info, "info"),
                (self.warn, "warning"),
                (self.critical, "critical"),
            )
            if limit is not None
        ]
        return f"{self.name}: " + ", ".join(parts)


WARMING_UP = "warming up"
"""The words that open every warm-up reason (panels let such a note yield its row)."""


def warming_up(span_s: float) -> str:
    """``warming up (42 s of data)``: why a reading with too little data is not graded."""
    return f"{WARMING_UP} ({max(0.0, span_s):.0f} s of data)"


@dataclass(frozen=True, slots=True)
class WarmUp:
    """The data a reading needs before it is graded: until then it is unknown, "warming
    up", neither ok nor past a limit (a few seconds of scrapes are not a day's budget).
    """

    span_s: float
    """The time the data must span."""
    samples: float
    """The observations (calls, scrapes) it must hold."""
    source: str

    def why_not(self, span_s: float | None, samples: float) -> str | None:
        """``warming up (N s of data)`` while ``span_s`` or ``samples`` is short; None once
        there is enough to grade (``span_s`` None: a span known to be long enough, as a
        day's count from Prometheus, where only the samples are judged).
        """
        if (span_s is None or span_s >= self.span_s) and samples >= self.samples:
            return None
        return warming_up(self.span_s if span_s is None else span_s)


def _num(x: float) -> str:
    return f"{x:g}"


def _unit(unit: str) -> str:
    return {"ratio": "", "count": "", "x": "x", "/s": "/s"}.get(unit, f" {unit}")
