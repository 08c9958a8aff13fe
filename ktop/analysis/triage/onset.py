"""A suspect path's onset: the start of its suspect episode, which stays put.

A path's trend is the earliest breach among its suspect evidence (``PathResult.trend``).
That alone moves: in a rolling restart the request skew breaches first, the watch skew
later, and once the request skew has been clear for a while the earliest *current*
breach is the watch skew's, so the onset would jump later while the cause never
stopped. The episode chains the first-line evidence's breach runs instead (first-line evidence is
what makes a path suspect): a run (at the limit that makes its evidence suspect, its
clear stretches shorter than :data:`~ktop.analysis.trends.CLEAR_HOLD_S` inside it) that
ended less than that hold before the episode's start, and began earlier, moves the start
back to its own. The
result is a pure function of the history, so the same moment gives the same onset live,
after a replay's seek, in ``snapshot --at`` and in ``triage --recording --at``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ktop.analysis.trends import CLEAR_HOLD_S, Run, Trend, signal_last_run
from ktop.analysis.triage.types import Evidence, PathResult, Status, Verdict
from ktop.model.history import HistoryView


def _runs(ev: Sequence[Evidence], view: HistoryView, now: float) -> list[Run]:
    """Each first-line evidence's latest run past its suspect limit (what makes a path
    suspect): a suspect one's runs to now.
    """
    runs = []
    for e in ev:
        if not e.first_line or not e.signal or e.suspect_limit is None:
            continue
        if e.status is Status.UNKNOWN:
            continue
        t = e.trend
        if e.suspect and t is not None and t.since is not None:
            runs.append(Run(t.since, now, t.since_before_history))
        elif (r := signal_last_run(view, e.signal, e.suspect_limit)) is not None:
            runs.append(r)
    return runs


def episode(trend: Trend, runs: Sequence[Run], hold_s: float = CLEAR_HOLD_S) -> Trend:
    """``trend`` with its start moved back along the runs that overlap it (one that ended
    within ``hold_s`` of the start, and began before it), as far as they chain.
    """
    assert trend.since is not None
    since, before = trend.since, trend.since_before_history
    moved = True
    while moved:
        moved = False
        for r in runs:
            if r.start < since and r.end > since - hold_s:
                since, before, moved = r.start, r.before_history, True
    return replace(trend, since=since, since_before_history=before)


def with_episode(p: PathResult, view: HistoryView, now: float) -> PathResult:
    """A suspect path with its onset at the start of its suspect episode; others as
    they are.
    """
    t = p.trend
    if p.verdict is not Verdict.SUSPECT or t is None or t.since is None:
        return p
    return replace(p, episode=episode(t, _runs(p.evidence, view, now)))
