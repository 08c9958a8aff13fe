"""What a reading is (:class:`Reading`, its :class:`Chart`) and how its history is keyed;
the registry of every reading is :mod:`ktop.model.signals`.

A signal key is ``"<metric>|<subject>"`` (subject empty for cluster-wide
signals), a plain string so that history can be serialized as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from ktop.model.events import Area, Component
from ktop.model.grading import Severity, Threshold
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.text import fmt_si
from ktop.model.values import Val

QUANTILE = 0.99
"""The quantile of every ``p99`` signal."""


Combine = Literal["sum", "max"]
Extract = Callable[[ClusterSnapshot], Iterable[tuple[str, Val]]]
"""Reads a reading from a snapshot: ``(subject, value)`` for every subject it has."""


@dataclass(frozen=True, slots=True)
class Chart:
    """A reading's chart in its area's drill-down (and sparkline in its overview panel)."""

    combine: Combine
    """How its subjects become one line: summed, or the worst (largest) one."""
    title: str
    rank: int
    """Its place among the area's charts, most telling first (lowest first)."""


@dataclass(frozen=True, slots=True)
class Column:
    """A reading's column in its area's drill-down table of subjects (the etcd members
    table): its cell is the subject's value, coloured by the reading's threshold.
    """

    key: str
    """The column's id (its sort and filter key)."""
    header: str
    width: int
    rank: int
    """Its place among the table's columns, the table's own included (lowest first)."""
    fmt: Callable[[float], str] = fmt_si


JsonKind = Literal["number", "whole", "flag"]
"""How a value is written in JSON: as it is, rounded, or true when at least 1."""


@dataclass(frozen=True, slots=True)
class JsonField:
    """A reading's field in the triage JSON's object of each of its subjects
    (``signals.etcd[]``, docs/triage-json.md).
    """

    name: str
    rank: int
    """Its place among the object's fields, the report's own included (lowest first)."""
    kind: JsonKind = "number"


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading: what it is, how it is read, graded and charted, and how Prometheus
    computes it.

    ``promql`` has two placeholders: ``{job}`` (the component's job regular
    expression) and ``{w}`` (the observation window in seconds). It groups
    by ``subject_label`` (or by nothing for cluster-wide signals). Rates
    are ``rate(counter[w])`` and quantiles ``histogram_quantile(q, sum by
    (subject, le) (rate(bucket[w])))``: the same as ktop's own windowed math
    (``ktop/model/series_window.py``), see docs/panes.md.
    """

    metric: str
    """The reading's id: the metric part of its history keys and its JSON name."""
    label: str
    """Its title where it is shown (a chart's axis, a sparkline's label)."""
    unit: str
    component: Component | None
    subject_label: str = ""
    promql: str = ""
    higher_is_worse: bool = True
    subject_of: Callable[[str], str] | None = None
    """Turns the value of ``subject_label`` in Prometheus' answer into the subject the
    snapshot uses (None: the same string)."""
    area: Area | None = None
    extract: Extract | None = None
    threshold: Threshold | None = None
    """What grades it (the screen's colour, a finding's trend); None: it is context."""
    chart: Chart | None = None
    column: Column | None = None
    json: JsonField | None = None

    def status(self, v: Val) -> Severity:
        """How ``v`` grades: by the reading's threshold; unknown is never OK, nor is a
        value with no observations; a reading without a threshold is OK when known.
        """
        if self.threshold is not None:
            return self.threshold.grade_val(v)
        return Severity.OK if v.known else Severity.UNKNOWN


def key(metric: str, subject: str = "") -> str:
    """The history key of one signal of one subject."""
    return f"{metric}|{subject}"


def split_key(signal_key: str) -> tuple[str, str]:
    """``(metric, subject)`` of a history key."""
    metric, _, subject = signal_key.partition("|")
    return metric, subject
