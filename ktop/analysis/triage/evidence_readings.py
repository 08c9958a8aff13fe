"""The reader of every evidence that grades one registry reading
(:func:`~ktop.analysis.triage.evidence_specs.of_reading`): the reading's worst readable
subject, by the reading's own threshold, resting on that subject's signal.

Which subjects can be read is the area's business (an etcd member that did not answer, an
apiserver instance that failed, APF or the nodes that could not be read at all): its
``readable`` in the area registry (:data:`ktop.model.areas.AREAS`).
"""

from __future__ import annotations

from collections.abc import Callable

from ktop.analysis.triage.baseline_normal import against_normal
from ktop.analysis.triage.evidence import (
    Context,
    EvidenceReading,
    fmt_count,
    fmt_rate,
    fmt_ratio,
    fmt_s,
    fmt_times,
    unknown,
    worst_reading,
)
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.model.areas import AREAS
from ktop.model.signals import BY_METRIC
from ktop.model.text import fmt_bytes

FORMATS: dict[str, Callable[[float], str]] = {
    "s": fmt_s,
    "/s": fmt_rate,
    "ratio": fmt_ratio,
    "count": fmt_count,
    "": fmt_count,
    "x": fmt_times,
    "B": fmt_bytes,
}
"""How a value of each unit is written in an evidence's detail (every unit of the
readings registry: a reading without a unit is a count)."""


def reading_evidence(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """The evidence ``spec`` of a registry reading: its worst readable subject, graded."""
    reading = BY_METRIC[spec.reading]
    assert reading.area is not None and reading.extract is not None, spec.id
    area = AREAS[reading.area]
    readable = area.readable(ctx.snap)
    if readable.why_none is not None:
        return unknown(readable.why_none)
    rows = [(s, v) for s, v in reading.extract(ctx.snap) if readable.keeps(s)]
    fmt = FORMATS[reading.unit]
    r = worst_reading(spec, rows, area.subject, fmt, reading.metric)
    return against_normal(ctx, spec, reading, r, fmt)
