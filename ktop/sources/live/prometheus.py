"""Prometheus as a metrics transport.

For every family ktop reads, one instant query returns the raw series summed
by ``instance`` and the labels ktop keeps; the results become the same
``MetricsScraped`` events a direct scrape produces, so rates and quantiles
are computed by the same model code. The PromQL is built by
:func:`family_query` (see docs/panes.md for the per-pane equivalents).

prometheus-api-client is synchronous; its calls run in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_api_client import PrometheusConnect

from ktop.model.events import Component, Event, MetricsScraped, Sample, ScrapeFailed, Target
from ktop.model.wanted import FAMILIES, HISTOGRAMS
from ktop.sources.base import Emit
from ktop.sources.live.scrape import failure_reason

DEFAULT_JOBS: Mapping[Component, str] = {
    Component.APISERVER: ".*apiserver.*",
    Component.ETCD: ".*etcd.*",
    Component.SCHEDULER: ".*scheduler.*",
    Component.CONTROLLER_MANAGER: ".*controller-manager.*",
}
"""Which Prometheus ``job`` labels hold each component (regular expressions)."""


def family_query(family: str, kept: tuple[str, ...] | None, job_re: str) -> str:
    """The PromQL that returns a family's series as ktop keeps them."""
    name = f"{family}_bucket" if family in HISTOGRAMS else family
    labels = ["instance", *(kept or ())]
    if family in HISTOGRAMS:
        labels.append("le")
    selector = f'{name}{{job=~"{job_re}"}}'
    if kept is None:
        return selector
    return f"sum by ({', '.join(labels)}) ({selector})"


def results_to_samples(family: str, results: list[dict[str, Any]]) -> dict[str, list[Sample]]:
    """Instant-query results grouped by instance, as samples."""
    name = f"{family}_bucket" if family in HISTOGRAMS else family
    out: dict[str, list[Sample]] = {}
    for r in results:
        metric = dict(r.get("metric") or {})
        instance = str(metric.pop("instance", ""))
        metric.pop("__name__", None)
        try:
            value = float(r["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        labels = tuple(sorted((str(k), str(v)) for k, v in metric.items()))
        out.setdefault(instance, []).append(Sample(name, labels, value))
    return out


@dataclass(slots=True)
class PrometheusMetrics:
    """Polls Prometheus for every component; tells whether it is healthy."""

    url: str
    clock: Callable[[], float]
    interval_s: float = 15.0
    jobs: Mapping[Component, str] = field(default_factory=lambda: dict(DEFAULT_JOBS))
    healthy: bool = False
    last_error: str = ""
    queries_total: int = 0
    _seen: set[Target] = field(default_factory=set)

    def _poll_sync(self, prom: PrometheusConnect) -> dict[Target, list[Sample]]:
        out: dict[Target, list[Sample]] = {}
        for component, families in FAMILIES.items():
            job_re = self.jobs.get(component)
            if not job_re:
                continue
            for family, kept in families.items():
                self.queries_total += 1
                results = prom.custom_query(family_query(family, kept, job_re))
                for instance, samples in results_to_samples(family, results).items():
                    out.setdefault(Target(component, instance), []).extend(samples)
            self.queries_total += 1
            for r in prom.custom_query(f'up{{job=~"{job_re}"}}'):
                instance = str((r.get("metric") or {}).get("instance", ""))
                target = Target(component, instance)
                if float(r["value"][1]) == 0:
                    out.pop(target, None)
                    out.setdefault(target, [])
        return out

    async def run(self, emit: Emit) -> None:
        """Poll until cancelled; on failure report every known target as failed."""
        prom = PrometheusConnect(url=self.url, disable_ssl=False, timeout=10)
        while True:
            try:
                polled = await asyncio.to_thread(self._poll_sync, prom)
                now = self.clock()
                events: list[Event] = []
                for target, samples in polled.items():
                    if samples:
                        events.append(MetricsScraped(now, target, tuple(samples)))
                    else:
                        events.append(ScrapeFailed(now, target, "Prometheus reports up == 0"))
                    self._seen.add(target)
                emit(events)
                self.healthy, self.last_error = True, ""
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.healthy = False
                self.last_error = f"Prometheus at {self.url} failed: {failure_reason(exc)}"
                now = self.clock()
                emit(
                    [
                        ScrapeFailed(now, t, self.last_error)
                        for t in sorted(self._seen, key=lambda t: (t.component, t.instance))
                    ]
                )
            await asyncio.sleep(self.interval_s)
