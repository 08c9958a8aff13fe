"""A component's most recent restart, from its processes' own start times
(``process_start_time_seconds``): evidence that needs no history, so a one-shot triage
sees a restart that happened before it ran (apiservers, etcd members).
"""

from __future__ import annotations

import math

from ktop.analysis.findings import Severity
from ktop.analysis.triage.evidence import Context, EvidenceReading, unknown
from ktop.model.text import fmt_clock, fmt_duration


def recent_restart(
    ctx: Context, starts: list[tuple[str, float | None]], noun: str
) -> EvidenceReading:
    """The latest start among ``starts`` (``(name, start time)``): a warning when it falls
    within the look-back (a one-shot's ``--look-back``, the dashboard's window), with the
    first restart in it as its onset (a rolling restart is one event from its first
    restart on); unknown when no start time is exposed.
    """
    known = [(n, t) for n, t in starts if t is not None and math.isfinite(t)]
    if not known:
        exposed = any(t is not None for _, t in starts)
        return unknown(f"process_start_time_seconds {'not a time' if exposed else 'not exposed'}")
    name, t = max(known, key=lambda x: x[1])
    up = max(0.0, ctx.snap.at - t)
    look_back = fmt_duration(ctx.snap.window_s)
    detail = f"{name} started at {fmt_clock(t)} UTC, {up:.0f} s before the snapshot"
    if up >= ctx.snap.window_s:
        return EvidenceReading(Severity.OK, up, f"{detail}: before the {look_back} look-back")
    restarted = sorted(t for _, t in known if ctx.snap.at - t < ctx.snap.window_s)
    detail += f": a restart within the {look_back} look-back"
    if len(restarted) > 1:
        detail += (
            f" ({len(restarted)} {noun} restarted, the first at {fmt_clock(restarted[0])} UTC)"
        )
    return EvidenceReading(Severity.WARNING, up, detail, onset=restarted[0])
