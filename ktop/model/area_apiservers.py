"""apiserver instances side by side, and the skew between them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ktop.model.events import LOAD_BALANCED, SloDayCounted
from ktop.model.limits import SKEW_FLOOR
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


@dataclass(frozen=True, slots=True)
class Peers:
    """The instance whose load (requests/s or watches) stands furthest from its peers':
    the busiest, or the idlest (after a rolling restart the last instance back sits idle
    while the others carry its clients), against the mean of every other instance.
    """

    instance: str
    """The busiest or the idlest instance, whichever is further from the others."""
    load: float
    others: float
    """The mean load of every other instance."""

    @property
    def skew(self) -> float:
        """The larger of ``load`` and ``others`` over the smaller, each counted as at
        least :data:`~ktop.model.limits.SKEW_FLOOR`: against its peers, so that two
        instances can show any imbalance (max / mean never passes 2 with two), and an idle
        instance among busy ones shows as well as a busy one among idle ones.
        """
        mine, theirs = max(self.load, SKEW_FLOOR), max(self.others, SKEW_FLOOR)
        return max(mine, theirs) / min(mine, theirs)

    def words(self, unit: str) -> str:
        """``apiserver-a 900 req/s, the others 80 on average``."""
        return f"{self.instance} {self.load:.0f} {unit}, the others {self.others:.0f} on average"


@dataclass(frozen=True, slots=True)
class Load:
    """One load skew is measured on: its name, unit and reading of an instance's row."""

    name: str
    unit: str
    of: Callable[[ApiserverRow], Val]


def served_per_s(row: ApiserverRow) -> Val:
    """Requests per second the instance answered with anything but 429: the load it carries.
    A rejection costs an apiserver almost nothing, so a flood APF rejects (or one instance
    rejecting faster than another takes the same flood) is no imbalance of load.
    """
    total, rejected = row.requests_per_s, row.throttled_per_s
    if total.value is None:
        return total
    if rejected.value is None:
        return rejected
    return Val.of(max(0.0, total.value - rejected.value))


REQUEST_LOAD = Load("request", "req/s", served_per_s)
WATCH_LOAD = Load("watch", "watches", lambda r: r.watches)


def peers(rows: Sequence[ApiserverRow], load: Callable[[ApiserverRow], Val]) -> Peers | None:
    """Of the instances that answer and have ``load``, the busiest against the others or
    the idlest against the others, whichever skew is larger (the busiest on a tie, as
    with two instances, where both are the same); None with fewer than two such instances.
    """
    known = [(r.instance, v) for r in rows if not r.error and (v := load(r).value) is not None]
    if len(known) < 2:
        return None

    def against_the_others(instance: str, amount: float) -> Peers:
        others = [v for i, v in known if i != instance]
        return Peers(instance, amount, sum(others) / len(others))

    high = against_the_others(*max(known, key=lambda iv: (iv[1], iv[0])))
    low = against_the_others(*min(known, key=lambda iv: (iv[1], iv[0])))
    return low if low.skew > high.skew else high


BEHIND_A_LOAD_BALANCER = (
    "read through a load balancer, one instance per scrape: skew and per-instance figures "
    "cannot be measured from here (give each apiserver's URL with --apiserver, or --prometheus)"
)
"""Why per-instance comparisons are unknown when only the load-balanced address is read."""


def skew(rows: Sequence[ApiserverRow], load: Callable[[ApiserverRow], Val]) -> Val:
    """:attr:`Peers.skew` of ``load``; unknown with fewer than two instances with data
    (saying so plainly when the one row is the load-balanced address: whichever instance
    answered is no peer of another).
    """
    p = peers(rows, load)
    if p is not None:
        return Val.of(p.skew)
    if rows and all(r.instance == LOAD_BALANCED for r in rows):
        return Val.unknown(BEHIND_A_LOAD_BALANCER)
    return Val.unknown("needs two instances with data")


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
    sizes, sizes_reason = build_list_sizes(series)
    return ApiserversSnapshot(
        instances=tuple(rows),
        request_skew=skew(rows, REQUEST_LOAD.of),
        watch_skew=skew(rows, WATCH_LOAD.of),
        unknown_reason="" if rows else (unknown_reason or "no apiserver metrics source"),
        list_sizes=sizes,
        list_sizes_reason=sizes_reason,
    )
