"""The apiservers area's snapshot: instances side by side and their API call SLOs (see
:mod:`ktop.model.snapshot`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.model.list_sizes import ListSize
from ktop.model.text import fmt_clock
from ktop.model.values import Val

NOT_EXPOSED = Val(None, "not exposed")
NOT_COUNTED = Val(None, "not counted")
"""An SLO row's budget before ktop counted its calls (``ktop/model/slo_budget.py``)."""

# --------------------------------------------------------------------------
# apiservers


@dataclass(frozen=True, slots=True)
class SloRow:
    """One API call latency SLO on one apiserver instance (``ktop/model/slo.py``)."""

    kind: str
    """``mutating``, ``read, one object``, ``read, namespace``, ``read, cluster``."""
    limit_s: float
    p99_s: Val
    """The calls' p99 over the window."""
    slow_share: Val
    """The share of the calls slower than ``limit_s``."""
    total: bool = False
    """True when measured on the total duration (no SLI histogram): it includes APF queue
    waits and webhooks, so it overstates what the SLO measures."""
    budget_burned: Val = NOT_COUNTED
    """The share of the error budget burned by the calls counted since
    ``budget_since`` (``ktop/model/slo_budget.py``): above 1 the SLO is missed over that
    span; empty when no call was counted; unknown without the SLI histogram."""
    budget_since: float | None = None
    """When counting began: ktop's first scrape of the instance, or 00:00 UTC when
    ``budget_today`` (None: not counted)."""
    budget_today: bool = False
    """True when the day so far was counted by Prometheus (``SloDayCounted``), not by ktop
    from its own scrapes."""

    @property
    def budget_span(self) -> str:
        """Over what the budget was counted: ``today`` (by Prometheus, since 00:00 UTC) or
        ``since 14:02`` (UTC, by ktop since its first scrape); empty when not counted.
        """
        if self.budget_since is None:
            return ""
        if self.budget_today:
            return "today"
        return "since " + fmt_clock(self.budget_since)[:5]

    @property
    def ratio(self) -> Val:
        """p99 / limit: above 1 the SLO is missed (unknown for a lifetime value)."""
        p = self.p99_s
        if p.value is None:
            return p
        if p.lifetime:
            return Val.unknown("lifetime value (single scrape): not graded")
        return Val.of(p.value / self.limit_s)


@dataclass(frozen=True, slots=True)
class ApiserverRow:
    """One kube-apiserver instance."""

    instance: str
    version: str
    requests_per_s: Val
    reads_per_s: Val
    """GET and LIST."""
    writes_per_s: Val
    """POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION."""
    inflight_readonly: Val
    inflight_mutating: Val
    watches: Val
    """Long-running WATCH requests (``apiserver_longrunning_requests{verb="WATCH"}``)."""
    cpu_cores: Val
    rss_bytes: Val
    start_time: Val
    """``process_start_time_seconds``: a jump means a restart."""
    throttled_per_s: Val
    """Responses with code 429 per second."""
    terminations_per_s: Val
    last_ok: float | None
    error: str = ""
    write_p99_s: Val = NOT_EXPOSED
    """p99 of ``apiserver_request_duration_seconds`` for mutating verbs over the window."""
    slos: tuple[SloRow, ...] = ()
    """Each API call latency SLO (mutating, reads by scope) on this instance."""
    errors_5xx_per_s: Val = NOT_EXPOSED
    """Responses with a 5xx code per second."""

    @property
    def worst_slo(self) -> SloRow | None:
        """The SLO with the highest p99 / limit (None when none is known)."""
        known = [s for s in self.slos if s.ratio.value is not None]
        return max(known, key=lambda s: s.ratio.or_(0.0)) if known else None

    @property
    def worst_budget(self) -> SloRow | None:
        """The SLO that burned the largest share of its error budget (None when no budget
        is known).
        """
        known = [s for s in self.slos if s.budget_burned.value is not None]
        return max(known, key=lambda s: s.budget_burned.or_(0.0)) if known else None


@dataclass(frozen=True, slots=True)
class ApiserversSnapshot:
    """kube-apiserver instances side by side."""

    instances: tuple[ApiserverRow, ...]
    request_skew: Val
    """max(requests/s) / mean(requests/s) across reachable instances."""
    watch_skew: Val
    """max(watches) / mean(watches) across reachable instances."""
    unknown_reason: str = ""
    """Why there are no instances (empty when at least one was seen)."""
    identities: int | None = None
    """apiserver identity Leases in kube-system (None when not read)."""
    list_sizes: tuple[ListSize, ...] = ()
    """Estimated full-LIST size per resource, largest first (``ktop/model/list_sizes.py``)."""
    list_sizes_reason: str = ""
    """Why there are none, or which resources the apiserver could not estimate."""

    @property
    def answering(self) -> tuple[ApiserverRow, ...]:
        """The instances whose last scrape answered (the others say why in ``error``)."""
        return tuple(r for r in self.instances if not r.error)
