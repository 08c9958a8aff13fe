"""etcd as the apiservers see it: their etcd client metrics.

Available wherever the apiservers' metrics are (a kubeconfig is enough), so on
managed clusters this is the only etcd view there is. Member-only facts (the
leader, WAL fsync, proposals) are not in it. Metric names and labels are in
``docs/panes.md``: ``etcd_request_duration_seconds``, ``etcd_requests_total`` and
``etcd_request_errors_total`` by ``operation, group, resource`` (``operation,
type`` before 1.34), ``apiserver_storage_size_bytes`` (older:
``apiserver_storage_db_total_size_in_bytes``), ``apiserver_storage_objects``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ktop.model.histogram import Buckets, merge_buckets
from ktop.model.series import TargetSeries
from ktop.model.series_window import Key
from ktop.model.snapshot_etcd import EtcdApiserverView, EtcdClientRow, EtcdRequestRow
from ktop.model.values import Val, sum_vals

DURATION = "etcd_request_duration_seconds"
REQUESTS = "etcd_requests_total"
ERRORS = "etcd_request_errors_total"
SIZE = "apiserver_storage_size_bytes"
SIZE_OLD = ("apiserver_storage_db_total_size_in_bytes", "etcd_db_total_size_in_bytes")
"""Before 1.28 (and 1.19-1.25), per etcd endpoint."""
OBJECTS = "apiserver_storage_objects"
BY = ("resource", "group", "type", "operation")
"""The labels the etcd request families carry (``type`` instead of ``resource`` and
``group`` before 1.34)."""
NOT_EXPOSED = "apiserver exposes no etcd client metrics"


def _resource(key: Key) -> tuple[str, str]:
    resource, group, type_, operation = key
    name = f"{resource}.{group}" if resource and group else (resource or type_ or "?")
    return name, operation


def _storage(ts: TargetSeries) -> Val:
    size = ts.gauge(SIZE)
    for old in SIZE_OLD:
        if size.known:
            break
        # Per etcd endpoint: every endpoint reports the same database.
        per = [v for v in ts.gauge_by(old, ("endpoint",)).values() if v.known]
        if per:
            size = max(per, key=lambda v: v.or_(0.0))
    return size if size.known else Val.unknown("no storage size exposed")


def exposes(ts: TargetSeries) -> bool:
    """True when the instance exposes the etcd request histogram or counters."""
    return any(ts.label_values(n, "operation") for n in (REQUESTS, ERRORS)) or bool(
        ts.buckets_by(DURATION, ())
    )


def client_row(instance: str, ts: TargetSeries) -> EtcdClientRow:
    """One apiserver's view of etcd."""
    has_counter = bool(ts.label_values(REQUESTS, "operation"))
    # The per-request groups partition the histogram's series: their sum is the whole, so
    # the instance's quantiles need no pass of their own over the buckets (the request rows
    # read the same groups, answered from the series' memo).
    total = merge_buckets(ts.buckets_by(DURATION, BY).values())
    missing = Val.unknown(f"{DURATION} not exposed")
    return EtcdClientRow(
        instance=instance,
        requests_per_s=ts.rate(REQUESTS) if has_counter else Val.unknown(f"{REQUESTS} not exposed"),
        errors_per_s=ts.rate(ERRORS) if has_counter else Val.unknown(f"{ERRORS} not exposed"),
        p50_s=total.quantile(0.5) if total else missing,
        p99_s=total.quantile(0.99) if total else missing,
        storage_bytes=_storage(ts),
    )


def _request_rows(series: list[TargetSeries]) -> list[EtcdRequestRow]:
    rates: dict[tuple[str, str], list[Val]] = {}
    errors: dict[tuple[str, str], list[Val]] = {}
    buckets: dict[tuple[str, str], list[Buckets]] = {}
    counted = False
    for ts in series:
        counted = counted or bool(ts.label_values(REQUESTS, "operation"))
        for k, v in ts.rate_by(REQUESTS, BY).items():
            rates.setdefault(_resource(k), []).append(v)
        for k, v in ts.rate_by(ERRORS, BY).items():
            errors.setdefault(_resource(k), []).append(v)
        for k, b in ts.buckets_by(DURATION, BY).items():
            buckets.setdefault(_resource(k), []).append(b)
    rows = []
    for key in set(rates) | set(buckets):
        merged = merge_buckets(buckets.get(key, []))
        rows.append(
            EtcdRequestRow(
                resource=key[0],
                operation=key[1],
                requests_per_s=sum_vals(rates[key])
                if key in rates
                else Val.unknown(f"{REQUESTS} not exposed"),
                # A counter without a series has counted nothing yet (no error so far).
                errors_per_s=sum_vals(errors[key])
                if key in errors
                else (Val.of(0.0) if counted else Val.unknown(f"{ERRORS} not exposed")),
                p99_s=merged.quantile(0.99) if merged else Val.unknown(f"{DURATION} not exposed"),
            )
        )
    rows.sort(key=lambda r: (-r.p99_s.or_(-1.0), -r.requests_per_s.or_(0.0), r.resource))
    return rows


def _objects(series: list[TargetSeries]) -> tuple[tuple[str, Val], ...]:
    best: dict[str, Val] = {}
    for ts in series:
        for (resource,), v in ts.gauge_by(OBJECTS, ("resource",)).items():
            if v.or_(-1.0) < 0:
                # -1 means the apiserver could not count (fetch error).
                best.setdefault(resource, Val.unknown("the apiserver could not count them"))
                continue
            if not best.get(resource, Val(None)).known or v.or_(0.0) > best[resource].or_(0.0):
                best[resource] = v
    return tuple(sorted(best.items(), key=lambda kv: (-kv[1].or_(-1.0), kv[0])))


def build_etcd_client_view(series: Mapping[str, TargetSeries]) -> EtcdApiserverView:
    """The apiservers' view of etcd, from each instance's series."""
    exposing = {i: ts for i, ts in sorted(series.items()) if exposes(ts)}
    if not exposing:
        reason = NOT_EXPOSED if series else "no apiserver metrics read"
        return EtcdApiserverView((), (), (), Val.unknown(reason), unknown_reason=reason)
    rows = tuple(client_row(i, ts) for i, ts in exposing.items())
    sizes = [r.storage_bytes for r in rows if r.storage_bytes.known]
    storage = (
        max(sizes, key=lambda v: v.or_(0.0)) if sizes else Val.unknown("no storage size exposed")
    )
    values = list(exposing.values())
    return EtcdApiserverView(
        instances=rows,
        requests=tuple(_request_rows(values)),
        objects=_objects(list(series.values())),
        storage_bytes=storage,
    )
