"""Evidence judged against the cluster's own recent normal as well as its absolute limit.

An etcd leader's WAL fsync p99 that climbs from 2 ms to 25 ms is far under the mixin's
500 ms warning, yet ten times what that disk does normally: the disk is failing, and the
queueing, 429s and slow writes that follow are its consequences. Every triage evidence
that grades one reading of the registry and can make its path suspect is also compared
with its signal's recent normal (:func:`~ktop.analysis.trends.recent_normal`): at
:data:`~ktop.model.limits.BASELINE_SUSPECT` times it, and at least
:data:`~ktop.model.limits.BASELINE_SUSPECT_FLOOR` of its warning limit, it is suspect,
with the value, the multiple of its normal and the absolute limit in its detail. The
onset of its breach is measured from that lower limit too, so it stays where it was
once the absolute limit is also crossed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ktop.analysis.baseline_marks import markable
from ktop.analysis.findings import Severity
from ktop.analysis.trends import recent_normal
from ktop.analysis.triage.evidence import Context, EvidenceReading
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.model.limits import BASELINE_SUSPECT, BASELINE_SUSPECT_FLOOR
from ktop.model.reading import Reading


def normal_limit(ctx: Context, reading: Reading, signal: str) -> tuple[float, float] | None:
    """The signal's recent normal and the value past which it is far above it; None
    without a normal (too little history, or a normal of 0).
    """
    th = reading.threshold
    if th is None or th.warn is None:
        return None
    normal = recent_normal(ctx.snap.history, signal, ctx.snap.at)
    if normal is None or normal <= 0:
        return None
    return normal, max(BASELINE_SUSPECT * normal, BASELINE_SUSPECT_FLOOR * th.warn)


def against_normal(
    ctx: Context,
    spec: EvidenceSpec,
    reading: Reading,
    r: EvidenceReading,
    fmt: Callable[[float], str],
) -> EvidenceReading:
    """``r`` judged against its signal's recent normal too: suspect when far above it
    though under its limits (the value, the multiple and the limit in the detail), and
    resting on the lower of the two limits so that its onset is the earlier crossing.
    """
    suspect_at = spec.suspect_at
    th = reading.threshold
    if suspect_at is None or th is None or th.warn is None or not markable(reading):
        return r
    if r.severity is Severity.UNKNOWN or r.value is None or not r.signal:
        return r
    got = normal_limit(ctx, reading, r.signal)
    if got is None:
        return r
    normal, limit = got
    first = r.threshold if r.threshold is not None else th.fires_at
    onset_limit = min(limit, first)
    if r.severity >= suspect_at or r.value <= limit:
        return replace(r, threshold=onset_limit)
    detail = (
        f"{r.detail}: {r.value / normal:.0f}x its recent normal {fmt(normal)} "
        f"(limit {fmt(th.warn)})"
    )
    return EvidenceReading(suspect_at, r.value, detail, r.signal, onset_limit)
