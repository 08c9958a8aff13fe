"""A past incident rebuilt from Prometheus history: a source that emits, in time order,
the raw samples Prometheus kept of every family ktop reads between two moments, as the
scrapes they were (``ktop record --from-prometheus``).

The same reads as the live backfill (``ktop/sources/live/backfill.py``), walked across
the span: for each chunk, one instant query of a range selector per family and
component returns the raw samples with their scrape times, thinned to the recording's
cadence (the first and last of each chunk and every counter reset kept, so rates and
quantiles are those of all of them). Before the first chunk, the hour before the start
fills the history (the baseline triage compares with). Queries are bounded in time
(chunks of ``chunk_s``) and run one at a time; the apiserver is never touched.

What history cannot give is said once, as failed feeds with the reason, and in the
recording's header: the API's objects (nodes, Leases, pending pods and their reasons,
events, quotas) and the APF request dumps (top talkers) are not in Prometheus. Node
readiness per zone and rack comes, as in metrics-only mode, from kube-state-metrics where
Prometheus has it: one range query per label and chunk, at the recording's cadence.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ktop.model.events import (
    ClockTick,
    Event,
    FeedFailed,
    MetricsOnlyMode,
    NodeReadinessByLabel,
    SourceStarted,
)
from ktop.model.feeds import FEED_KUBE_STATE_METRICS, FEED_PROMETHEUS_BACKFILL, OBJECT_FEEDS
from ktop.scrub import Secrets
from ktop.sources.base import Emit
from ktop.sources.live.backfill import PrometheusBackfill
from ktop.sources.live.prometheus_queries import (
    no_readiness,
    readiness_over_time,
    readiness_query,
)
from ktop.sources.live.scrape import failure_reason

if TYPE_CHECKING:
    from prometheus_api_client import PrometheusConnect

NOT_IN_HISTORY = (
    "not in Prometheus history: the API's objects (nodes, Leases, pending pods and their "
    "reasons, events, quotas) and the APF request dumps (top talkers)"
)
HISTORY_FEEDS = OBJECT_FEEDS
"""The feeds a history cannot fill (failed once, with :data:`NOT_IN_HISTORY`)."""


def from_metrics(at: float, what: str) -> list[Event]:
    """What a span rebuilt from metrics (``what``: where they come from) says at its start:
    nodes and pending pods are known only from the control plane's metrics, as in
    metrics-only mode (zone states from the node lifecycle controller's gauges), and the
    feeds of objects are failed with the reason.
    """
    why = NOT_IN_HISTORY.replace("Prometheus history", what)
    failed: list[Event] = [FeedFailed(at, feed, why) for feed in HISTORY_FEEDS]
    return [MetricsOnlyMode(at, f"rebuilt from {what}"), *failed]


DEFAULT_CHUNK_S = 300.0
"""The span one query covers: a chunk's raw samples are series x chunk / scrape interval."""
DEFAULT_STEP_S = 15.0
"""The cadence kept: at most one scrape per target per step (as the live backfill)."""


@dataclass
class PrometheusHistory:
    """Emits the raw samples Prometheus holds between ``start`` and ``end``."""

    prom: PrometheusConnect
    address: str
    start: float
    end: float
    context: str = ""
    """The cluster's name as the recording names it (``--cluster``, else the address)."""
    matcher: str = ""
    """Selects one cluster of a Prometheus that holds many (``cluster_matcher``)."""
    chunk_s: float = DEFAULT_CHUNK_S
    step_s: float = DEFAULT_STEP_S
    progress: Callable[[str], None] | None = None
    secrets: Secrets = field(default_factory=Secrets, repr=False)
    readiness_labels: tuple[str, ...] = ()
    """Node labels whose readiness kube-state-metrics gives, read over each chunk
    (:func:`~ktop.sources.live.prometheus_queries.readiness_labels`)."""
    error: str = ""
    """Why the rebuild stopped before ``end`` (empty when it reached it)."""
    readiness_queries: int = 0
    """Range queries of kube-state-metrics' readiness sent."""
    _readiness_read: bool = False
    """Some chunk had readiness, or a query of it failed (else the feed says, once, at
    the end, that Prometheus holds none)."""
    _readiness_until: float = float("-inf")
    """The last step read: a chunk's range starts at the one before's end, read once."""

    @property
    def name(self) -> str:
        """``prometheus-history``."""
        return "prometheus-history"

    def reader(self, history_s: float = 3600.0) -> PrometheusBackfill:
        """The backfill reads, over one chunk (and the baseline's hour)."""
        return PrometheusBackfill(
            self.address,
            lambda: self.start,
            window_s=self.chunk_s,
            history_s=history_s,
            step_s=self.step_s,
            matcher=self.matcher,
            secrets=self.secrets,
        )

    async def run(self, emit: Emit) -> None:
        """Emit the span chunk by chunk; a failed query stops it (the recording keeps what
        came before, :attr:`error` says where it stopped, and so does a failed feed).
        """
        try:
            await self._walk(emit)
        except Exception as exc:  # any failure of the client or of Prometheus: said, kept
            self.error = f"{self.address}: {failure_reason(exc, self.secrets)}"
            emit([FeedFailed(self.start, FEED_PROMETHEUS_BACKFILL, self.error)])

    async def _walk(self, emit: Emit) -> None:
        read = self.reader()
        detail = f"{self.address} from {self.start:.0f} to {self.end:.0f}; {NOT_IN_HISTORY}"
        first: list[Event] = [SourceStarted(self.start, "prometheus-history", self.context, detail)]
        first += from_metrics(self.start, "Prometheus history")
        emit(first)
        emit([await asyncio.to_thread(read.history_event, self.prom, self.start)])
        at = self.start
        chunks = max(1, int((self.end - self.start + self.chunk_s - 1) // self.chunk_s))
        for n in range(1, chunks + 1):
            at = min(self.start + n * self.chunk_s, self.end)
            span = at - (self.start + (n - 1) * self.chunk_s)
            events = await asyncio.to_thread(read.window_events, self.prom, at, span)
            ready = await asyncio.to_thread(self.readiness, at - span, at)
            # both in time order: one stream in time order (a tie keeps the scrape first)
            emit([*heapq.merge(events, ready, key=lambda e: e.at), ClockTick(at)])
            if self.progress is not None:
                queries = read.queries_total + self.readiness_queries
                self.progress(f"{n} of {chunks} chunks read ({queries} queries)")
        if self.readiness_labels and not self._readiness_read:
            why = no_readiness(self.readiness_labels, "Prometheus history")
            emit([FeedFailed(self.end, FEED_KUBE_STATE_METRICS, why)])
        self.error = ""

    def readiness(self, start: float, end: float) -> list[Event]:
        """Readiness per label from kube-state-metrics from ``start`` to ``end`` at the
        recording's cadence, in time order (blocking); a failed query is the feed's
        failure (the other labels and the metrics still count, and the walk goes on).
        """
        out: list[Event] = []
        failed: list[Event] = []
        since = datetime.fromtimestamp(start, tz=UTC)
        until = datetime.fromtimestamp(end, tz=UTC)
        for label in self.readiness_labels:
            self.readiness_queries += 1
            try:
                results = self.prom.custom_query_range(
                    readiness_query(label, self.matcher), since, until, f"{self.step_s:g}s"
                )
            except Exception as exc:
                why = failure_reason(exc, self.secrets)
                why = f"kube-state-metrics readiness by {label}: {why}"
                failed.append(FeedFailed(end, FEED_KUBE_STATE_METRICS, why))
                continue
            steps = readiness_over_time(label, results)
            out += [
                NodeReadinessByLabel(at, label, rows)
                for at, rows in steps
                if rows and at > self._readiness_until
            ]
        self._readiness_until = end
        self._readiness_read = self._readiness_read or bool(out) or bool(failed)
        return [*sorted(out, key=lambda e: e.at), *failed]
