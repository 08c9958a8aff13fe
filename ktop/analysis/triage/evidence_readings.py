"""The reader of every evidence that grades one registry reading
(:func:`~ktop.analysis.triage.evidence_specs.of_reading`): the reading's worst readable
subject, by the reading's own threshold, resting on that subject's signal.

Which subjects can be read is the area's business (an etcd member that did not answer, an
apiserver instance that failed, APF that could not be read at all): :data:`READABLE`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from ktop.analysis.triage.evidence import (
    Context,
    EvidenceReading,
    api_rows,
    fmt_count,
    fmt_rate,
    fmt_ratio,
    fmt_s,
    unknown,
    worst_reading,
)
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.model.events import Area
from ktop.model.signals import BY_METRIC

Readable = Callable[[Context], Collection[str] | EvidenceReading]
"""The subjects of an area that can be read now, or the unknown reading that says why none
can."""


def _apf(ctx: Context) -> Collection[str] | EvidenceReading:
    a = ctx.snap.apf
    if a.unknown_reason:
        return unknown(a.unknown_reason)
    return [r.priority_level for r in a.levels]


def _apiservers(ctx: Context) -> Collection[str] | EvidenceReading:
    a = ctx.snap.apiservers
    if not a.instances:
        return unknown(a.unknown_reason or "no apiserver seen")
    rows = api_rows(ctx)
    if not rows:
        return unknown("; ".join(f"{r.instance}: {r.error}" for r in a.instances))
    return [r.instance for r in rows]


def _etcd(ctx: Context) -> Collection[str] | EvidenceReading:
    e = ctx.snap.etcd
    if e.unknown_reason:
        return unknown(e.unknown_reason)
    rows = [m.instance for m in e.answering]
    if not rows:
        return unknown("; ".join(f"{m.instance}: {m.error}" for m in e.members) or "no member")
    return rows


READABLE: dict[Area, tuple[str, Readable]] = {
    Area.APF: ("priority level", _apf),
    Area.APISERVERS: ("instance", _apiservers),
    Area.ETCD: ("member", _etcd),
}
"""Per area: what its subjects are called, and which can be read."""

FORMATS: dict[str, Callable[[float], str]] = {
    "s": fmt_s,
    "/s": fmt_rate,
    "ratio": fmt_ratio,
    "count": fmt_count,
}
"""How a value of each unit is written in an evidence's detail."""


def reading_evidence(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """The evidence ``spec`` of a registry reading: its worst readable subject, graded."""
    reading = BY_METRIC[spec.reading]
    assert reading.area is not None and reading.extract is not None, spec.id
    what, readable = READABLE[reading.area]
    subjects = readable(ctx)
    if isinstance(subjects, EvidenceReading):
        return subjects
    keep = set(subjects)
    rows = [(s, v) for s, v in reading.extract(ctx.snap) if s in keep]
    return worst_reading(spec, rows, what, FORMATS[reading.unit], reading.metric)
