"""Backfill from Prometheus at start: the first frame already has a window and an hour.

Two kinds of read, once, when ktop starts with ``--prometheus``:

* **the observation window**: for every family ktop reads, one instant query
  of a range selector (``name{job=~"..."}[300s]``) returns Prometheus' raw
  samples with their scrape timestamps. They become the same
  ``MetricsScraped`` events a scrape gives (one per target and timestamp),
  so ktop's own math (``ktop/model/series_window.py``) computes rates and
  quantiles over the window from the first frame, and nothing is shown as
  lifetime-only when Prometheus holds the data;
* **the last hour of every history signal**: one range query per signal of
  ``ktop/model/signals.py`` (the PromQL of its readings: ``rate`` over the window,
  ``histogram_quantile`` on summed bucket rates), folded into the history
  as a ``HistoryBackfilled`` event.

The client is the one :func:`ktop.sources.live.prometheus_connect.prometheus_client`
builds (authenticated, counted by the cost meter); prometheus-api-client is
synchronous, so the reads run in the Prometheus call pool, under its time limit.
A failure is reported as the ``prometheus-backfill`` feed's failure: the history
then starts when ktop starts, and the pane says why.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ktop.model.events import (
    FEED_PROMETHEUS_BACKFILL,
    Component,
    Event,
    FeedFailed,
    FeedSynced,
    HistoryBackfilled,
    Labels,
    MetricsScraped,
    Sample,
    Target,
)
from ktop.model.reading import Reading, key
from ktop.model.series import WINDOW_S, counts, kept_labels
from ktop.model.signals import SIGNALS
from ktop.model.wanted import FAMILIES, HISTOGRAMS
from ktop.scrub import Secrets
from ktop.sources.base import Emit
from ktop.sources.live.prometheus_calls import PrometheusCalls
from ktop.sources.live.prometheus_queries import DEFAULT_JOBS, at_instant, given_apiservers, scoped
from ktop.sources.live.scrape import failure_reason
from ktop.sources.live.transport import Resolve, resolve_host

if TYPE_CHECKING:
    from prometheus_api_client import PrometheusConnect

DEFAULT_HISTORY_S = 3600.0
DEFAULT_STEP_S = 15.0
_SKIP_LABELS = frozenset({"__name__", "instance"})


def window_selectors(family: str, job_re: str, window_s: float, matcher: str = "") -> list[str]:
    """The range selectors that return a family's raw samples over the window (of one
    cluster, with :func:`~ktop.sources.live.prometheus_queries.cluster_matcher`'s ``matcher``).
    """
    names = [f"{family}_bucket"] if family in HISTOGRAMS else [family]
    return [f'{n}{{job=~"{job_re}"{matcher}}}[{int(window_s)}s]' for n in names]


def matrix_to_events(component: Component, results: list[dict[str, Any]]) -> list[MetricsScraped]:
    """Raw range-vector results as one ``MetricsScraped`` per (instance, timestamp).

    Labels the model drops are dropped here, once per series, and the samples that then
    coincide are summed (in the order the model would sum them, so its math is unchanged):
    a histogram read raw is thousands of series whose dropped labels would otherwise be
    reduced sample by sample on the event loop.
    """
    by: dict[tuple[str, float], dict[tuple[str, Labels], float]] = {}
    for r in results:
        metric = dict(r.get("metric") or {})
        name = str(metric.get("__name__", ""))
        instance = str(metric.get("instance", ""))
        raw = tuple(sorted((str(k), str(v)) for k, v in metric.items() if k not in _SKIP_LABELS))
        labels = kept_labels(component, name, raw)
        if labels is None:
            continue
        series = (name, labels)
        for ts, text in r.get("values") or ():
            try:
                value = float(text)
            except (TypeError, ValueError):
                continue
            scrape = by.setdefault((instance, float(ts)), {})
            scrape[series] = scrape.get(series, 0.0) + value
    events = [
        MetricsScraped(
            at,
            Target(component, instance),
            tuple(Sample(n, labels, v) for (n, labels), v in samples.items()),
        )
        for (instance, at), samples in by.items()
    ]
    events.sort(key=lambda e: (e.at, e.target.instance))
    return events


def thinned(events: list[Event], step_s: float) -> list[Event]:
    """The window's scrapes of each target at most one per ``step_s`` (the first, then
    the first at least ``step_s`` after the last kept, and always the last), plus the
    scrapes on either side of a counter reset.

    The model's rates and quantiles use the first and last points of a series and the
    drops between them (resets), so these scrapes give the same numbers as all of them,
    at the cadence the model keeps anyway: a Prometheus that scrapes every second
    returns 300 scrapes per target for a 300 s window, which would take minutes to fold
    on a loaded machine.
    """
    scrapes: dict[Target, list[MetricsScraped]] = {}
    others: list[Event] = []
    for e in events:
        if isinstance(e, MetricsScraped):
            scrapes.setdefault(e.target, []).append(e)
        else:
            others.append(e)
    out: list[Event] = list(others)
    for target_scrapes in scrapes.values():
        target_scrapes.sort(key=lambda e: e.at)
        keep = [False] * len(target_scrapes)
        last: dict[tuple[str, Labels], float] = {}
        kept_at: float | None = None
        for i, e in enumerate(target_scrapes):
            if kept_at is None or e.at - kept_at >= step_s or i == len(target_scrapes) - 1:
                keep[i], kept_at = True, e.at
            for sample in e.samples:
                if not counts(sample.name):
                    continue
                series = (sample.name, sample.labels)
                before = last.get(series)
                if before is not None and sample.value < before:
                    keep[i] = keep[i - 1] = True  # a reset: keep what it dropped from
                last[series] = sample.value
        out.extend(e for e, k in zip(target_scrapes, keep, strict=True) if k)
    out.sort(key=lambda e: (e.at, e.target.instance if isinstance(e, MetricsScraped) else ""))
    return out


def signal_query(
    spec: Reading, jobs: Mapping[Component, str], window_s: float, matcher: str = ""
) -> str | None:
    """A signal's PromQL for these jobs and window (and cluster ``matcher``), or None
    when Prometheus lacks it.
    """
    if not spec.promql or spec.component is None or not jobs.get(spec.component):
        return None
    job = jobs[spec.component]
    return scoped(spec.promql.format(job=job, w=int(window_s)), job, matcher)


def range_to_points(
    spec: Reading, results: list[dict[str, Any]]
) -> dict[str, tuple[tuple[float, float], ...]]:
    """Range-query results as history points per signal key (NaN and Inf left out)."""
    out: dict[str, tuple[tuple[float, float], ...]] = {}
    for r in results:
        metric = r.get("metric") or {}
        subject = str(metric.get(spec.subject_label, "")) if spec.subject_label else ""
        if spec.subject_of is not None:
            subject = spec.subject_of(subject)
        pts: list[tuple[float, float]] = []
        for ts, raw in r.get("values") or ():
            try:
                v = float(raw)
            except (TypeError, ValueError):
                continue
            if math.isfinite(v):
                pts.append((float(ts), v))
        out[key(spec.metric, subject)] = tuple(pts)
    return out


@dataclass(slots=True)
class PrometheusBackfill:
    """Reads the window and the last hour from Prometheus once, then stops."""

    address: str
    """Where Prometheus is (for messages only)."""
    clock: Callable[[], float]
    window_s: float = WINDOW_S
    """The model's observation window: how much raw data the first frame needs (a
    one-shot's look-back, whose increases and rates then count all of it)."""
    signal_window_s: float = WINDOW_S
    """The rate window of the history signals' PromQL: the dashboard's, whatever the raw
    window, so that a one-shot's baseline and timeline read as the dashboard's do."""
    history_s: float = DEFAULT_HISTORY_S
    step_s: float = DEFAULT_STEP_S
    jobs: Mapping[Component, str] = field(default_factory=lambda: dict(DEFAULT_JOBS))
    errors: list[str] = field(default_factory=list)
    queries_total: int = 0
    matcher: str = ""
    """Selects one cluster of a Prometheus that holds many (``cluster_matcher``)."""
    apiservers: tuple[str, ...] = ()
    """``--apiserver`` instances, authoritative (see ``PrometheusMetrics.apiservers``)."""
    resolve: Resolve = resolve_host
    targets: set[Target] = field(default_factory=set)
    """The targets the window gave scrapes of (the poller reports them if Prometheus fails
    before its first answer)."""
    abandoned: threading.Event = field(default_factory=threading.Event)
    """Set when :meth:`run` gives up: a read still running then drops its answer rather
    than spend a core converting samples nobody will fold.
    """
    secrets: Secrets = field(default_factory=Secrets, repr=False)
    """The session's credentials, which a failure's reason is scrubbed with."""

    def window_reads(self, window_s: float | None = None) -> list[tuple[Component, str]]:
        """The window's queries: one range selector per family (and component), over
        ``window_s`` (default :attr:`window_s`).
        """
        span = self.window_s if window_s is None else window_s
        out: list[tuple[Component, str]] = []
        for component, families in FAMILIES.items():
            job_re = self.jobs.get(component)
            if not job_re:
                continue
            for family in families:
                for sel in window_selectors(family, job_re, span, self.matcher):
                    out.append((component, sel))
        return out

    def window_read(
        self, prom: PrometheusConnect, component: Component, selector: str, at: float
    ) -> list[MetricsScraped]:
        """One window query (blocking: the answer is decoded where it is read)."""
        self.queries_total += 1
        results = prom.custom_query(selector, params=at_instant(at))
        if self.abandoned.is_set():
            return []
        return matrix_to_events(component, results)

    def window_merged(self, events: list[MetricsScraped]) -> list[Event]:
        """The window's samples named as the given apiservers, one event per scrape kept
        (:func:`thinned` to one per ``step_s``), in time order (blocking: naming resolves
        host names).
        """
        seen = {e.target.instance for e in events if e.target.component is Component.APISERVER}
        rename = given_apiservers(self.apiservers, seen, self.resolve)
        kept = [replace(e, target=t) for e in events if (t := rename(e.target)) is not None]
        return thinned(merge_by_target(kept), self.step_s)

    def window_events(
        self, prom: PrometheusConnect, at: float, window_s: float | None = None
    ) -> list[Event]:
        """The raw samples of the window ending at ``at`` (``window_s`` long, default
        :attr:`window_s`), as scrape events in time order.
        """
        events: list[MetricsScraped] = []
        for component, selector in self.window_reads(window_s):
            events.extend(self.window_read(prom, component, selector, at))
        return self.window_merged(events)

    def history_reads(self) -> list[tuple[Reading, str]]:
        """The history's queries: one per signal Prometheus can compute."""
        out: list[tuple[Reading, str]] = []
        for spec in SIGNALS:
            query = signal_query(spec, self.jobs, self.signal_window_s, self.matcher)
            if query is not None:
                out.append((spec, query))
        return out

    def history_read(
        self, prom: PrometheusConnect, spec: Reading, query: str, at: float
    ) -> dict[str, tuple[tuple[float, float], ...]] | None:
        """One signal over ``history_s`` up to ``at`` (blocking). A failed query loses that
        signal only: it is listed in ``errors``, None is returned, and the others still fill.
        """
        start = datetime.fromtimestamp(at - self.history_s, tz=UTC)
        end = datetime.fromtimestamp(at, tz=UTC)
        self.queries_total += 1
        try:
            results = prom.custom_query_range(query, start, end, f"{self.step_s:g}s")
        except Exception as exc:
            self.errors.append(f"{spec.metric}: {failure_reason(exc, self.secrets)}")
            return None
        return range_to_points(spec, results)

    def history_event(self, prom: PrometheusConnect, at: float) -> HistoryBackfilled:
        """Every signal Prometheus can compute, over ``history_s`` up to ``at``."""
        series: dict[str, tuple[tuple[float, float], ...]] = {}
        for spec, query in self.history_reads():
            series.update(self.history_read(prom, spec, query, at) or {})
        return HistoryBackfilled(at, tuple(sorted(series.items())))

    def read(self, prom: PrometheusConnect, at: float) -> list[Event]:
        """Both reads (blocking): window events first, then the history."""
        events = self.window_events(prom, at)
        events.append(self.history_event(prom, at))
        return events

    async def run(
        self,
        emit: Emit,
        prom: PrometheusConnect,
        calls: PrometheusCalls,
        time_limit_s: float = math.inf,
    ) -> None:
        """Read once, one query per call of ``calls`` (so that giving up abandons one
        query, not the rest of the backfill), within ``time_limit_s`` in all; report the
        outcome as the backfill feed's state. The history goes first: one small answer
        per signal, and the baseline triage compares with. The window's raw samples
        follow: series x window / scrape interval samples, millions at a 1 s scrape
        interval. What was read before a failure is kept: the history of the signals
        read, and the window if it was read whole.
        """
        at = self.clock()
        window: list[MetricsScraped] = []
        merged: list[Event] | None = None
        series: dict[str, tuple[tuple[float, float], ...]] = {}
        history = self.history_reads()
        reads = self.window_reads()
        total, done = len(reads) + len(history), 0
        why = ""
        try:
            async with asyncio.timeout(time_limit_s):
                for spec, query in history:
                    got = await calls.call(self.history_read, prom, spec, query, at)
                    if got is not None:
                        series.update(got)
                        done += 1
                for component, selector in reads:
                    window += await calls.call(self.window_read, prom, component, selector, at)
                    done += 1
                merged = await calls.call(self.window_merged, window)
        except asyncio.CancelledError:
            self.abandoned.set()
            raise
        except TimeoutError as exc:
            self.abandoned.set()
            why = f": {failure_reason(exc, self.secrets)}"
            if done < total and math.isfinite(time_limit_s):
                why = f" not done within {time_limit_s:g} s"
        except Exception as exc:
            self.abandoned.set()
            why = f" failed: {failure_reason(exc, self.secrets)}"
        failure = (
            f"history backfill from {self.address}{why} ({done} of {total} queries answered)"
            if why
            else ""
        )
        events: list[Event] = list(merged or ())
        self.targets.update(e.target for e in events if isinstance(e, MetricsScraped))
        if series:
            events.append(HistoryBackfilled(at, tuple(sorted(series.items()))))
        if events:
            emit(events)
        if failure:
            self.errors.append(failure)
            emit([FeedFailed(self.clock(), FEED_PROMETHEUS_BACKFILL, failure)])
        elif self.errors:
            lost = "; ".join(self.errors[:3])
            reason = f"history backfill: {len(self.errors)} signal(s) not read ({lost})"
            emit([FeedFailed(self.clock(), FEED_PROMETHEUS_BACKFILL, reason)])
        else:
            emit([FeedSynced(self.clock(), FEED_PROMETHEUS_BACKFILL)])


def merge_by_target(events: list[MetricsScraped]) -> list[Event]:
    """One event per (target, timestamp): families queried apart share a scrape."""
    merged: dict[tuple[Target, float], list[Sample]] = {}
    for e in events:
        merged.setdefault((e.target, e.at), []).extend(e.samples)
    out: list[Event] = [MetricsScraped(at, t, tuple(s)) for (t, at), s in merged.items()]
    out.sort(key=lambda e: (e.at, e.target.instance if isinstance(e, MetricsScraped) else ""))
    return out
