"""Prometheus as a metrics transport: :class:`PrometheusMetrics` polls it.

For every family ktop reads, one instant query returns the raw series summed
by ``instance`` and the labels ktop keeps; the results become the same
``MetricsScraped`` events a direct scrape produces, so rates and quantiles
are computed by the same model code. The PromQL is built in
:mod:`ktop.sources.live.prometheus_queries` (see docs/panes.md for the per-pane
equivalents), the client in :mod:`ktop.sources.live.prometheus_connect` (every
request counted), and the blocking calls run in
:mod:`ktop.sources.live.prometheus_calls`' worker threads.

One poll is one instant: it first asks Prometheus for its own time (``time()``,
so a skewed local clock does not matter) and evaluates every query of the poll
at that time, so that families read in one poll are a consistent cut even when
the poll takes seconds on a loaded server.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ktop.model.events import (
    FEED_KUBE_STATE_METRICS,
    FEED_SLO_DAY,
    Component,
    Event,
    FeedFailed,
    MetricsScraped,
    NodeReadinessByLabel,
    Sample,
    ScrapeFailed,
    SloDayCounted,
    Target,
)
from ktop.model.slo import SLOS
from ktop.model.wanted import FAMILIES
from ktop.scrub import Secrets
from ktop.sources.base import Emit
from ktop.sources.live.prometheus_calls import PrometheusCalls
from ktop.sources.live.prometheus_queries import (
    DEFAULT_JOBS,
    SLO_DAY_EVERY_S,
    SLO_DAY_RETRY_S,
    at_instant,
    day_start,
    family_query,
    given_apiservers,
    no_readiness,
    readiness_query,
    readiness_rows,
    results_to_samples,
    slo_day_counts,
    slo_day_query,
)
from ktop.sources.live.scrape import failure_reason
from ktop.sources.live.transport import (
    Resolve,
    instance_name,
    resolve_host,
)

if TYPE_CHECKING:
    from prometheus_api_client import PrometheusConnect

SloCount = tuple[str, float, float]
"""``(SLO kind, slow calls, calls)``."""


@dataclass(slots=True)
class PrometheusMetrics:
    """Polls Prometheus for every component; tells whether it is healthy and which
    instances it knows (so that nothing else reads them through a load balancer).
    """

    client: PrometheusConnect
    where: str
    """The address the user gave (for messages)."""
    clock: Callable[[], float]
    interval_s: float = 15.0
    jobs: Mapping[Component, str] = field(default_factory=lambda: dict(DEFAULT_JOBS))
    calls: PrometheusCalls = field(default_factory=PrometheusCalls)
    healthy: bool = False
    last_error: str = ""
    queries_total: int = 0
    instances: dict[Component, frozenset[str]] = field(default_factory=dict)
    """Instances of each component that Prometheus scrapes (from ``up``)."""
    polled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set after every poll, successful or not (discovery waits for the first)."""
    on_instances: Callable[[], None] | None = None
    """Called when the set of apiserver instances changes."""
    evaluated_at: float | None = None
    """Prometheus' time at which the last successful poll's queries were evaluated."""
    matcher: str = ""
    """:func:`cluster_matcher`: selects one cluster of a Prometheus that holds many."""
    readiness_labels: tuple[str, ...] = ()
    """Node labels to read readiness per value of from kube-state-metrics (metrics-only)."""
    offset_s: float = 0.0
    """``--prometheus-offset``: the polls read Prometheus this long back, so their scrapes
    are stamped that much earlier (a pane's age then counts it)."""
    apiservers: tuple[str, ...] = ()
    """The apiserver instances given (``--apiserver``): when set, the only ones. Prometheus'
    instances are named as the given one at the same address (one row each whatever the
    transport); the others are not read (:func:`same_instances`)."""
    resolve: Resolve = resolve_host
    seen: set[Target] = field(default_factory=set)
    """Targets Prometheus gave data for (its polls, and the backfill's window before the
    first poll): a failed poll reports each of them failed, so none goes quietly stale."""
    day_due_at: float | None = None
    """Prometheus' time at which the day's SLO counts are next read (every
    :data:`SLO_DAY_EVERY_S`, or :data:`SLO_DAY_RETRY_S` after a failure); None: at once."""
    secrets: Secrets = field(default_factory=Secrets, repr=False)
    """The session's credentials, which a failure's reason is scrubbed with."""
    _extra: list[Event] = field(default_factory=list)
    _stopping: threading.Event = field(default_factory=threading.Event)

    def _server_time(self) -> float:
        """Prometheus' own clock (the instant every query of a poll is evaluated at)."""
        self.queries_total += 1
        result: Any = self.client.custom_query("time()")
        try:
            return float(result[0])
        except (IndexError, TypeError, ValueError):
            raise ValueError(f"time() returned {str(result)[:80]!r}, not a scalar") from None

    def _readiness_sync(self, pinned: Mapping[str, str]) -> list[Event]:
        """Readiness per label from kube-state-metrics, or the feed's failure."""
        events: list[Event] = []
        for label in self.readiness_labels:
            self.queries_total += 1
            try:
                results = self.client.custom_query(
                    readiness_query(label, self.matcher), params=dict(pinned)
                )
            except Exception as exc:  # the metrics still count; this feed says what failed
                reason = (
                    f"kube-state-metrics readiness by {label}: {failure_reason(exc, self.secrets)}"
                )
                return [FeedFailed(self.clock(), FEED_KUBE_STATE_METRICS, reason)]
            rows = readiness_rows(label, results)
            if rows:
                events.append(NodeReadinessByLabel(self.clock(), label, rows))
        if self.readiness_labels and not events:
            reason = no_readiness(self.readiness_labels)
            events.append(FeedFailed(self.clock(), FEED_KUBE_STATE_METRICS, reason))
        return events

    def _slo_day_sync(
        self, at: float, pinned: Mapping[str, str]
    ) -> dict[str, list[SloCount]] | FeedFailed:
        """The day so far's calls of every SLO per apiserver instance, when due (one range
        query per SLO), or the failure (ktop's own count stands meanwhile and says since
        when; asked again after :data:`SLO_DAY_RETRY_S`).
        """
        if self.day_due_at is not None and at < self.day_due_at:
            return {}
        job_re = self.jobs.get(Component.APISERVER)
        seconds = int(at - day_start(at))
        if not job_re or seconds < 1:
            return {}
        out: dict[str, list[SloCount]] = {}
        for slo in SLOS:
            self.queries_total += 1
            try:
                results = self.client.custom_query(
                    slo_day_query(slo, seconds, job_re, self.matcher), params=dict(pinned)
                )
            except Exception as exc:
                self.day_due_at = at + SLO_DAY_RETRY_S
                reason = f"SLO calls of the day ({slo.kind}): {failure_reason(exc, self.secrets)}"
                return FeedFailed(self.clock(), FEED_SLO_DAY, reason)
            for instance, (slow, calls) in slo_day_counts(slo, results).items():
                out.setdefault(instance, []).append((slo.kind, slow, calls))
        self.day_due_at = at + SLO_DAY_EVERY_S
        return out

    def _day_events(self, at: float, days: dict[str, list[SloCount]]) -> list[Event]:
        """The day's counts as events, named as the apiservers' samples are."""
        if self.apiservers:
            seen = self.instances.get(Component.APISERVER, frozenset()) | set(days)
            rename = given_apiservers(self.apiservers, seen, self.resolve)
            named = {
                t.instance: days[i]
                for i in days
                if (t := rename(Target(Component.APISERVER, i))) is not None
            }
        else:
            named = days
        since = day_start(at)
        return [
            SloDayCounted(self.clock(), instance, since, tuple(counts))
            for instance, counts in sorted(named.items())
        ]

    def _poll_sync(
        self,
    ) -> tuple[float, dict[Target, list[Sample]], dict[Component, frozenset[str]]]:
        prom = self.client
        at = self._server_time()
        pinned = at_instant(at)
        out: dict[Target, list[Sample]] = {}
        instances: dict[Component, frozenset[str]] = {}
        for component, families in FAMILIES.items():
            job_re = self.jobs.get(component)
            if not job_re:
                continue
            for family, kept in families.items():
                if self._stopping.is_set():
                    raise asyncio.CancelledError  # the source stopped: no more queries
                self.queries_total += 1
                query = family_query(family, kept, job_re, self.matcher)
                results = prom.custom_query(query, params=pinned)
                for instance, samples in results_to_samples(family, results).items():
                    out.setdefault(Target(component, instance), []).extend(samples)
            self.queries_total += 1
            up = prom.custom_query(f'up{{job=~"{job_re}"{self.matcher}}}', params=pinned)
            names = set()
            for r in up:
                instance = instance_name(str((r.get("metric") or {}).get("instance", "")))
                names.add(instance)
                target = Target(component, instance)
                if float(r["value"][1]) == 0:
                    out.pop(target, None)
                    out.setdefault(target, [])
            instances[component] = frozenset(names)
        if self.apiservers:
            out, instances = self._given_apiservers(out, instances)
        days = self._slo_day_sync(at, pinned)
        day: list[Event] = [days] if isinstance(days, FeedFailed) else self._day_events(at, days)
        self._extra = self._readiness_sync(pinned) + day
        return at, out, instances

    def _given_apiservers(
        self, out: dict[Target, list[Sample]], instances: dict[Component, frozenset[str]]
    ) -> tuple[dict[Target, list[Sample]], dict[Component, frozenset[str]]]:
        """Rename Prometheus' apiserver instances to the given ones; drop the others.
        Resolves host names: runs in a worker thread, like the poll.
        """
        seen = instances.get(Component.APISERVER, frozenset())
        rename = given_apiservers(self.apiservers, seen, self.resolve)
        renamed: dict[Target, list[Sample]] = {}
        for target, samples in out.items():
            if (kept := rename(target)) is not None:
                renamed[kept] = samples
        targets = (rename(Target(Component.APISERVER, n)) for n in seen)
        named = frozenset(t.instance for t in targets if t is not None)
        return renamed, {**instances, Component.APISERVER: named}

    async def poll_once(self, emit: Emit) -> None:
        """One poll; its results (or the failure, for every target seen) as events."""
        try:
            at, polled, instances = await self.calls.call(self._poll_sync)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.healthy = False
            self.last_error = (
                f"Prometheus at {self.where} failed: {failure_reason(exc, self.secrets)}"
            )
            now = self.clock() - self.offset_s
            emit(
                [
                    ScrapeFailed(now, t, self.last_error)
                    for t in sorted(self.seen, key=lambda t: (t.component, t.instance))
                ]
            )
            self.polled.set()
            return
        changed = instances.get(Component.APISERVER) != self.instances.get(Component.APISERVER)
        self.instances = instances
        self.evaluated_at = at
        self.healthy, self.last_error = True, ""
        self.polled.set()
        if changed and self.on_instances is not None:
            self.on_instances()
        now = self.clock() - self.offset_s
        events: list[Event] = []
        for target, samples in polled.items():
            if samples:
                events.append(MetricsScraped(now, target, tuple(samples)))
            else:
                events.append(ScrapeFailed(now, target, "Prometheus reports up == 0"))
            self.seen.add(target)
        events.extend(self._extra)
        emit(events)

    def serves(self, component: Component, instance: str) -> bool:
        """True when the last poll succeeded and returned this instance."""
        return self.healthy and instance in self.instances.get(component, frozenset())

    async def run(self, emit: Emit) -> None:
        """Poll until cancelled."""
        try:
            while not self._stopping.is_set():
                await self.poll_once(emit)
                await asyncio.sleep(self.interval_s)
        finally:
            self._stopping.set()
            self.calls.close()
            self.client.close()
