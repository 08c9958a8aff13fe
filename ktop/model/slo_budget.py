"""The API call latency SLOs' error budget burned, per apiserver instance, counted by ktop.

Each SLO of :mod:`ktop.model.slo` lets ``1 - objective`` of its calls (1 % for a p99
objective) be slower than its limit: its error budget. Scrape after scrape, ktop counts
per instance and SLO, from the SLI histogram's cumulative buckets, the calls and the slow
ones (above the largest bucket bound at or under the limit, as
:func:`~ktop.model.slo.slow_share` does, so never understated). Burned is the slow share
of the counted calls over the budget: 0.38 is 38 % of the budget those calls carry;
above 1 the SLO is missed over the span. The span starts at ktop's first scrape of the
instance (``since``): ktop keeps no longer history than its own run, so the count says
since when it holds (a recording's keyframes carry it, ``ktop/model/state.py``). Where
Prometheus is read, it counts the day so far instead (:class:`~ktop.model.events.SloDayCounted`,
``increase`` since 00:00 UTC), which replaces ktop's own count while it is fresh
(:data:`DAY_FRESH_S`).

A count too short to judge a budget (under :data:`~ktop.model.limits.API_SLO_BUDGET_WARM_UP`:
300 s and 100 calls) is unknown, ``warming up (N s of data)``: neither ok nor burned.

Counter resets: a count lower than at the previous scrape, or a new
``process_start_time_seconds``, is a restart: the new process counted only calls made
since it started, after the previous scrape, so its counts are added from zero. Behind a
load balancer that switched instance (:attr:`~ktop.model.series.TargetSeries.switched`)
the counts are another long-running process's: they become the new base, not counted.

Only the SLI histogram (``apiserver_request_sli_duration_seconds``, or its 1.23-1.25
``_slo_`` name) is counted: the total duration includes APF queue waits and webhooks,
which the SLOs leave out, so with only the total exposed the budget is unknown, and says
why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ktop.model.events import SloDayCounted
from ktop.model.limits import API_SLO_BUDGET_WARM_UP
from ktop.model.series import IngestedRun, TargetSeries
from ktop.model.series_window import IDENTITY
from ktop.model.slo import SLI_FAMILIES, SLOS, TOTAL, Slo, sli_family
from ktop.model.snapshot_apiservers import SloRow
from ktop.model.values import Val

NOT_EXPOSED = f"{SLI_FAMILIES[0]} not exposed (the total duration includes APF waits and webhooks)"
NO_CALLS = "no call counted yet"
DAY_FRESH_S = 900.0
"""A day's count from Prometheus stands for this long after it was read (it is read every
five minutes, ``ktop/sources/live/prometheus.py``); older, ktop's own count is shown."""


@dataclass(frozen=True, slots=True)
class SloCount:
    """One SLO's calls on one instance: as last read, and counted since the first scrape."""

    kind: str
    last_fast: float
    """Cumulative calls within the limit at the last scrape (the instance's lifetime)."""
    last_calls: float
    """Cumulative calls at the last scrape."""
    slow: float = 0.0
    """Slow calls counted since the first scrape."""
    calls: float = 0.0
    """Calls counted since the first scrape."""


@dataclass(frozen=True, slots=True)
class InstanceBudget:
    """One instance's counts per SLO, since ktop's first scrape of it."""

    family: str
    """The SLI histogram counted (a different one starts the count again)."""
    since: float
    """The first scrape counted from (source clock)."""
    last_at: float
    start: float | None
    """``process_start_time_seconds`` at the last scrape (None: not exposed)."""
    counts: tuple[SloCount, ...]


def _cumulative(ts: TargetSeries, family: str, slo: Slo) -> tuple[float, float]:
    """Calls within the limit and all calls, cumulative, in the last scrape."""
    by_le = ts.gauge_by(family + "_bucket", ("le",), slo.match)
    return _fast_calls([(le, v.or_(0.0)) for (le,), v in by_le.items()], slo)


def _fast_calls(by_le: Iterable[tuple[str, float]], slo: Slo) -> tuple[float, float]:
    """Calls within the limit and all calls, from the cumulative count of each bucket."""
    buckets: dict[float, float] = {}
    for le, count in by_le:
        try:
            buckets[float(le)] = count
        except ValueError:
            continue
    calls = buckets.get(math.inf, 0.0)
    fast = max((c for bound, c in buckets.items() if bound <= slo.limit_s), default=0.0)
    return fast, calls


def _bucket_columns(
    by_le: dict[tuple[str, ...], list[float]], slo: Slo
) -> tuple[list[list[float]], list[float] | None]:
    """:func:`_fast_calls` for columns (one value per scrape): the columns of the buckets
    within the limit, and that of all calls (None: no ``+Inf`` bucket).
    """
    buckets: dict[float, list[float]] = {}
    for (le,), column in by_le.items():
        try:
            buckets[float(le)] = column
        except ValueError:
            continue
    fast = [c for bound, c in buckets.items() if bound <= slo.limit_s]
    return fast, buckets.get(math.inf)


def _start(ts: TargetSeries) -> float | None:
    return ts.gauge(IDENTITY).value


def fold(prev: InstanceBudget | None, at: float, ts: TargetSeries) -> InstanceBudget | None:
    """The counts after the scrape at ``at`` (already ingested into ``ts``).

    An instance without the SLI histogram keeps what was counted (None before any).
    """
    family = sli_family(ts)
    if family is None:
        return prev
    now = {slo.kind: _cumulative(ts, family, slo) for slo in SLOS}
    return _tally(prev, at, family, now, _start(ts), ts.switched)


def fold_run(prev: InstanceBudget | None, run: IngestedRun) -> InstanceBudget | None:
    """The counts after each scrape of ``run`` (already ingested), in order: what
    :func:`fold` after each would give, read from the run's columns.
    """
    budget = prev
    identity = run.gauge_columns(IDENTITY, (), None).get(())
    by_family: dict[str, list[tuple[list[list[float]], list[float] | None]]] = {}
    for i, at in enumerate(run.ats):
        family = next((n for n in SLI_FAMILIES if run.present(n + "_bucket", i)), None)
        if family is None or family == TOTAL:
            continue  # as sli_family: no SLI histogram, the counts stay
        per_slo = by_family.get(family)
        if per_slo is None:
            name = family + "_bucket"
            each = run.gauge_columns_each(name, ("le",), [slo.match or {} for slo in SLOS])
            per_slo = by_family[family] = [
                _bucket_columns(by_le, slo) for by_le, slo in zip(each, SLOS, strict=True)
            ]
        now = {
            slo.kind: (
                max((col[i] for col in fast), default=0.0),
                0.0 if every is None else every[i],
            )
            for slo, (fast, every) in zip(SLOS, per_slo, strict=True)
        }
        start = None if identity is None else identity[i]
        budget = _tally(budget, at, family, now, start, False)  # one process: not switched
    return budget


def _tally(
    prev: InstanceBudget | None,
    at: float,
    family: str,
    now: dict[str, tuple[float, float]],
    start: float | None,
    switched: bool,
) -> InstanceBudget:
    """The counts after a scrape at ``at`` that read ``now`` (per SLO: calls within the
    limit and all calls, cumulative) and ``start``.
    """
    if prev is None or prev.family != family:
        counts = tuple(SloCount(k, fast, calls) for k, (fast, calls) in now.items())
        return InstanceBudget(family, at, at, start, counts)
    if at <= prev.last_at:
        return prev
    last = {c.kind: c for c in prev.counts}
    dropped = any(
        kind in last and (fast < last[kind].last_fast or calls < last[kind].last_calls)
        for kind, (fast, calls) in now.items()
    )
    restarted = dropped or (start is not None and prev.start is not None and start != prev.start)
    tallied = []
    for kind, (fast, calls) in now.items():
        c = last.get(kind, SloCount(kind, 0.0, 0.0))
        if switched:  # another process's lifetime counts: the new base only
            d_fast, d_calls = 0.0, 0.0
        elif restarted:  # the new process counted from zero, after the last scrape
            d_fast, d_calls = fast, calls
        else:
            d_fast, d_calls = fast - c.last_fast, calls - c.last_calls
        tallied.append(
            SloCount(kind, fast, calls, c.slow + max(0.0, d_calls - d_fast), c.calls + d_calls)
        )
    return replace(prev, last_at=at, start=start, counts=tuple(tallied))


def burned(budget: InstanceBudget | None, slo: Slo) -> Val:
    """The share of ``slo``'s error budget burned since ``budget.since``: empty when no
    call was counted, unknown without counts.
    """
    if budget is None:
        return Val.unknown("not counted (no scrape of the instance was folded)")
    c = next((c for c in budget.counts if c.kind == slo.kind), None)
    if c is None or c.calls <= 0:
        return Val.nothing(NO_CALLS)
    return _graded_once_warm(c.slow, c.calls, budget.last_at - budget.since, slo)


def _graded_once_warm(slow: float, calls: float, span_s: float | None, slo: Slo) -> Val:
    """The share of the budget ``slow`` of ``calls`` burned over ``span_s`` (None: a day
    counted by Prometheus, whose clock is not the source's); unknown, warming up, while
    the count is too short or too small to grade (:data:`API_SLO_BUDGET_WARM_UP`).
    """
    why = API_SLO_BUDGET_WARM_UP.why_not(span_s, calls)
    if why is not None:
        return Val.unknown(why)
    return Val.of(min(max(slow, 0.0), calls) / calls / slo.budget)


def burned_today(day: SloDayCounted, slo: Slo) -> Val:
    """The share of ``slo``'s error budget burned since 00:00 UTC, as Prometheus counted
    the day's calls: empty when it counted none of that SLO's calls.
    """
    got = next(((slow, calls) for kind, slow, calls in day.counts if kind == slo.kind), None)
    if got is None or got[1] <= 0:
        return Val.nothing("no call today")
    slow, calls = got
    return _graded_once_warm(slow, calls, None, slo)


def with_budget(
    rows: tuple[SloRow, ...],
    ts: TargetSeries,
    budget: InstanceBudget | None,
    day: SloDayCounted | None = None,
) -> tuple[SloRow, ...]:
    """``rows`` with the budget burned of each SLO: over the day so far when Prometheus
    counted it (``day``), else since ktop's first scrape (unknown while the instance does
    not expose the SLI histogram, whatever was counted before).
    """
    slos = {s.kind: s for s in SLOS}
    exposed = sli_family(ts) is not None
    out = []
    for row in rows:
        slo = slos.get(row.kind)
        if slo is None:
            out.append(row)
        elif day is not None:
            value = burned_today(day, slo)
            out.append(replace(row, budget_burned=value, budget_since=day.since, budget_today=True))
        else:
            value = burned(budget, slo) if exposed else Val.unknown(NOT_EXPOSED)
            since = budget.since if exposed and budget is not None else None
            out.append(replace(row, budget_burned=value, budget_since=since))
    return tuple(out)
