"""API call latency against Kubernetes' scalability SLOs, per apiserver instance.

SIG Scalability's SLOs (``sig-scalability/slos``): over 5-minute windows, the 99th
percentile of mutating API calls is at most 1 s; of read-only calls at most 1 s for a
single object (scope ``resource``), 5 s within a namespace and 30 s cluster-wide. WATCH
and the long-running subresources are excluded. They are measured, as clusterloader2's
APIResponsivenessPrometheus measures them, from ``apiserver_request_sli_duration_seconds``
(1.26+; ``apiserver_request_slo_duration_seconds`` from 1.23, deprecated since), which
leaves out the time spent in APF queues and webhooks; where neither is exposed the total
``apiserver_request_duration_seconds`` stands in, and the row says so.

The SLOs are data (:data:`SLOS`): the limits, the docs and the evidence derive from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.model.series import TargetSeries
from ktop.model.snapshot_apiservers import SloRow
from ktop.model.values import Val

SLI_FAMILIES = (
    "apiserver_request_sli_duration_seconds",
    "apiserver_request_slo_duration_seconds",
    "apiserver_request_duration_seconds",
)
"""The latency histograms in order of preference (the SLI leaves out APF waits and
webhooks; the last one, the total, includes them)."""
TOTAL = SLI_FAMILIES[-1]
EXCLUDED_VERBS = frozenset({"WATCH", "CONNECT", "WATCHLIST"})
QUANTILE = 0.99


@dataclass(frozen=True, slots=True)
class Slo:
    """One SLO: which calls, and the p99 they must stay under."""

    kind: str
    verbs: frozenset[str]
    scope: str | None
    """The ``scope`` label of the calls (None: any)."""
    limit_s: float
    objective: float = QUANTILE
    """The share of the calls that must be within ``limit_s``: a p99 at most the limit is
    99 % of the calls at most the limit. One minus it is the SLO's error budget."""

    @property
    def budget(self) -> float:
        """The share of the calls that may be slower than ``limit_s`` (the error budget)."""
        return 1.0 - self.objective

    @property
    def match(self) -> dict[str, str | frozenset[str]]:
        """The label matchers of the SLO's calls."""
        out: dict[str, str | frozenset[str]] = {"verb": self.verbs}
        if self.scope is not None:
            out["scope"] = self.scope
        return out


MUTATING = frozenset({"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"})
READS = frozenset({"GET", "LIST"})

SLOS: tuple[Slo, ...] = (
    Slo("mutating", MUTATING, None, 1.0),
    Slo("read, one object", READS, "resource", 1.0),
    Slo("read, namespace", READS, "namespace", 5.0),
    Slo("read, cluster", READS, "cluster", 30.0),
)
"""Kubernetes' API call latency SLOs (sig-scalability/slos/api_call_latency.md)."""


def _family(ts: TargetSeries) -> str | None:
    """The first latency histogram the instance exposes (None: none)."""
    for name in SLI_FAMILIES:
        if ts.label_values(name + "_bucket", "verb"):
            return name
    return None


def sli_family(ts: TargetSeries) -> str | None:
    """The SLI histogram the instance exposes, never the total duration (None: neither)."""
    name = _family(ts)
    return None if name == TOTAL else name


def slow_share(ts: TargetSeries, name: str, slo: Slo) -> Val:
    """The share of calls slower than the SLO's limit over the window: one minus the share
    in the largest bucket bound at or under the limit (so never understated).
    """
    buckets = ts.buckets_by(name, (), slo.match).get(())
    if buckets is None:
        return Val.unknown(f"{name} not exposed")
    counts = sorted(buckets.counts.items())
    total = counts[-1][1] if counts else 0.0
    if total <= 0:
        return Val.nothing("no calls in window")
    fast = max((c for bound, c in counts if bound <= slo.limit_s), default=0.0)
    return Val.of(max(0.0, 1.0 - fast / total), lifetime=buckets.lifetime)


def slo_rows(ts: TargetSeries) -> tuple[SloRow, ...]:
    """Each SLO's p99 and slow share on one instance. With a latency histogram exposed
    but no call of an SLO's kind in it, that SLO has nothing to measure (not unknown).
    """
    name = _family(ts)
    rows = []
    for slo in SLOS:
        if name is None:
            none = Val.unknown(f"{SLI_FAMILIES[0]} not exposed")
            rows.append(SloRow(slo.kind, slo.limit_s, none, none))
            continue
        groups = ts.quantile_by(QUANTILE, name, (), slo.match)
        no_calls = Val.nothing("no such calls in the window")
        rows.append(
            SloRow(
                kind=slo.kind,
                limit_s=slo.limit_s,
                p99_s=groups.get((), no_calls),
                slow_share=slow_share(ts, name, slo) if groups else no_calls,
                total=name == TOTAL,
            )
        )
    return tuple(rows)
