"""apiserver instances side by side, and the skew between them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from ktop.model.events import SloDayCounted
from ktop.model.list_sizes import build_list_sizes
from ktop.model.series import TargetSeries
from ktop.model.series_window import IDENTITY
from ktop.model.slo import slo_rows
from ktop.model.slo_budget import InstanceBudget, with_budget
from ktop.model.snapshot_apiservers import ApiserverRow, ApiserversSnapshot
from ktop.model.values import Val

REQUESTS = "apiserver_request_total"
READ_VERBS = frozenset({"GET", "LIST"})
WRITE_VERBS = frozenset({"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"})


def _version(ts: TargetSeries) -> str:
    versions = [v for v in ts.label_values("kubernetes_build_info", "git_version") if v]
    return versions[0] if versions else "?"


def apiserver_row(
    instance: str,
    ts: TargetSeries | None,
    last_ok: float | None,
    error: str,
    budget: InstanceBudget | None = None,
    day: SloDayCounted | None = None,
) -> ApiserverRow:
    """One instance's row; every value unknown (with ``error``) if never scraped.
    ``budget`` is what ktop counted of its SLOs' calls (``ktop/model/slo_budget.py``),
    ``day`` what Prometheus counted of them today (it stands instead when given).
    """
    if ts is None:
        unknown = Val.unknown(error or "never scraped")
        vals: dict[str, Any] = {
            f.name: unknown for f in fields(ApiserverRow) if f.type in ("Val", Val)
        }
        return ApiserverRow(instance=instance, version="?", last_ok=last_ok, error=error, **vals)
    return ApiserverRow(
        instance=instance,
        version=_version(ts),
        requests_per_s=ts.rate(REQUESTS),
        reads_per_s=ts.rate(REQUESTS, {"verb": READ_VERBS}),
        writes_per_s=ts.rate(REQUESTS, {"verb": WRITE_VERBS}),
        inflight_readonly=ts.gauge(
            "apiserver_current_inflight_requests", {"request_kind": "readOnly"}
        ),
        inflight_mutating=ts.gauge(
            "apiserver_current_inflight_requests", {"request_kind": "mutating"}
        ),
        watches=ts.gauge("apiserver_longrunning_requests", {"verb": "WATCH"}),
        cpu_cores=ts.rate("process_cpu_seconds_total"),
        rss_bytes=ts.gauge("process_resident_memory_bytes"),
        start_time=ts.gauge(IDENTITY),
        throttled_per_s=ts.rate(REQUESTS, {"code": "429"}),
        terminations_per_s=ts.rate("apiserver_request_terminations_total"),
        last_ok=last_ok,
        error=error,
        write_p99_s=ts.quantile(0.99, "apiserver_request_duration_seconds", {"verb": WRITE_VERBS}),
        slos=with_budget(slo_rows(ts), ts, budget, day),
        errors_5xx_per_s=_errors_5xx(ts),
    )


def _errors_5xx(ts: TargetSeries) -> Val:
    """Responses with a 5xx code per second (0 when none was counted)."""
    by_code = ts.rate_by(REQUESTS, ("code",))
    if not by_code:
        return ts.rate(REQUESTS)  # unknown, with the reason (or 0: nothing counted)
    five = [v for (code,), v in by_code.items() if code.startswith("5")]
    if any(v.value is None for v in five):
        return next(v for v in five if v.value is None)
    return Val.of(sum(v.or_(0.0) for v in five))


def skew(values: list[Val]) -> Val:
    """Max / mean over the known values; unknown with fewer than two instances."""
    known = [v.value for v in values if v.value is not None]
    if len(known) < 2:
        return Val.unknown("needs two instances with data")
    mean = sum(known) / len(known)
    if mean == 0:
        return Val.unknown("no load")
    return Val.of(max(known) / mean)


def build_apiservers(
    series: Mapping[str, TargetSeries],
    health: Mapping[str, tuple[float | None, str]],
    unknown_reason: str,
    budgets: Mapping[str, InstanceBudget] | None = None,
    days: Mapping[str, SloDayCounted] | None = None,
) -> ApiserversSnapshot:
    """All instances (scraped or failed), sorted by name, with skew ratios; ``budgets``
    the SLOs' calls ktop counted per instance.
    """
    rows = []
    for instance in sorted(set(series) | set(health)):
        last_ok, error = health.get(instance, (None, ""))
        budget = (budgets or {}).get(instance)
        day = (days or {}).get(instance)
        rows.append(apiserver_row(instance, series.get(instance), last_ok, error, budget, day))
    live = [r for r in rows if not r.error]
    sizes, sizes_reason = build_list_sizes(series)
    return ApiserversSnapshot(
        instances=tuple(rows),
        request_skew=skew([r.requests_per_s for r in live]),
        watch_skew=skew([r.watches for r in live]),
        unknown_reason="" if rows else (unknown_reason or "no apiserver metrics source"),
        list_sizes=sizes,
        list_sizes_reason=sizes_reason,
    )
