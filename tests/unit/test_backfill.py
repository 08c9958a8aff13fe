"""The Prometheus backfill: API answers to events and history points, and its reads under
a time limit."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from ktop.analysis.rules import evaluate
from ktop.analysis.trends import Direction
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_PROMETHEUS_BACKFILL,
    Component,
    Event,
    FeedFailed,
    FeedSynced,
    HistoryBackfilled,
    MetricsScraped,
    ScrapeFailed,
    Target,
)
from ktop.model.model_inputs import ModelConfig
from ktop.model.reading import key
from ktop.model.signals import SIGNALS
from ktop.model.snapshot_nodes import MetricsOnlyNodes, ZoneHealth, ZoneState
from ktop.model.values import Val
from ktop.model.zones import ZONE_KEY_SEP
from ktop.scrub import Secrets
from ktop.sources.live.backfill import (
    PrometheusBackfill,
    matrix_to_events,
    range_to_points,
    signal_query,
    window_selectors,
)
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.prometheus_calls import PrometheusCalls
from ktop.sources.live.prometheus_connect import prometheus_client
from ktop.sources.live.prometheus_queries import DEFAULT_JOBS
from tests.unit.snapshots import healthy
from tests.unit.test_live_prometheus import PROM_TIME, FakeHttp, faked

T0 = 1_767_225_600.0


def matrix(
    name: str, instance: str, extra: dict[str, str], values: list[tuple[float, float]]
) -> dict[str, Any]:
    metric = {"__name__": name, "instance": instance, "job": "apiserver", **extra}
    return {"metric": metric, "values": [[t, str(v)] for t, v in values]}


def test_raw_window_samples_become_one_scrape_per_instance_and_time() -> None:
    results = [
        matrix(
            "apiserver_request_total",
            "a:6443",
            {"verb": "GET", "code": "200"},
            [(T0, 100), (T0 + 15, 160), (T0 + 30, 220)],
        ),
        matrix(
            "apiserver_request_total",
            "a:6443",
            {"verb": "GET", "code": "404"},
            [(T0, 10), (T0 + 15, 10), (T0 + 30, 40)],
        ),
        matrix(
            "apiserver_request_total",
            "b:6443",
            {"verb": "GET", "code": "200"},
            [(T0 + 5, 1), (T0 + 20, 2)],
        ),
    ]
    events = matrix_to_events(Component.APISERVER, results)
    assert [(e.at, e.target.instance, len(e.samples)) for e in events] == [
        (T0, "a:6443", 2),
        (T0 + 5, "b:6443", 1),
        (T0 + 15, "a:6443", 2),
        (T0 + 20, "b:6443", 1),
        (T0 + 30, "a:6443", 2),
    ]
    # Folded by the model, the window's rate is (220 + 40 - 100 - 10) / 30 s.
    model = ClusterModel(ModelConfig(window_s=60))
    model.apply_all(events)
    rows = {r.instance: r for r in model.snapshot().apiservers.instances}
    assert rows["a:6443"].requests_per_s.value == (260 - 110) / 30
    assert rows["b:6443"].requests_per_s.value == 1 / 15


def test_range_results_become_points_per_signal_key() -> None:
    spec = next(s for s in SIGNALS if s.metric == "apf.rejected_per_s")
    results = [
        {"metric": {"priority_level": "workload-low"}, "values": [[T0, "1.5"], [T0 + 15, "NaN"]]},
        {"metric": {"priority_level": "exempt"}, "values": [[T0, "0"]]},
    ]
    got = range_to_points(spec, results)
    assert got == {
        key("apf.rejected_per_s", "workload-low"): ((T0, 1.5),),
        key("apf.rejected_per_s", "exempt"): ((T0, 0.0),),
    }


def test_every_prometheus_signal_formats_to_promql_with_the_window() -> None:
    for spec in SIGNALS:
        q = signal_query(spec, DEFAULT_JOBS, 300)
        if spec.component is None:
            assert q is None
            continue
        assert q is not None and "{job}" not in q and "{w}" not in q
        assert q.count("(") == q.count(")")
        assert 'job=~"' in q
        if "rate(" in q:
            assert "[300s]" in q
        if "histogram_quantile" in q:
            assert re.search(r"sum by \(\w+, le\) \(rate\(\w+_bucket\{", q)
        if spec.subject_label:
            assert f"by ({spec.subject_label}" in q


def test_window_selectors_read_buckets_of_histograms() -> None:
    assert window_selectors("etcd_disk_wal_fsync_duration_seconds", ".*etcd.*", 300) == [
        'etcd_disk_wal_fsync_duration_seconds_bucket{job=~".*etcd.*"}[300s]'
    ]


def test_backfilled_history_reaches_the_snapshot() -> None:
    model = ClusterModel()
    k = key("api.requests_per_s", "a:6443")
    model.apply(HistoryBackfilled(T0, ((k, ((T0 - 60, 5.0), (T0 - 45, 6.0))),)))
    assert model.snapshot().history.points(k) == ((T0 - 60, 5.0), (T0 - 45, 6.0))


def test_zone_history_backfilled_from_the_node_lifecycle_controller() -> None:
    """``node_collector_unhealthy_nodes_in_zone`` over the last hour becomes the zones'
    not-Ready history (keyed by zone, as the nodes pane names them), so a metrics-only
    zone outage says since when from the first frame.
    """
    step = 15.0
    start = PROM_TIME - 3600
    # zone-a: healthy for 40 minutes, then 2, then all 10 nodes not Ready; zone-b healthy
    zone_a = [(start + i * step, 0 if i < 160 else (2 if i < 170 else 10)) for i in range(241)]
    zone_b = [(start + i * step, 0) for i in range(241)]
    first_bad = next(t for t, v in zone_a if v > 0)

    def answer(query: str) -> dict[str, Any]:
        if "node_collector_unhealthy_nodes_in_zone" not in query:
            return {"status": "success", "data": {"resultType": "matrix", "result": []}}
        result = [
            {"metric": {"zone": f"us-east{ZONE_KEY_SEP}{z}"},
             "values": [[t, str(v)] for t, v in pts]}
            for z, pts in (("zone-a", zone_a), ("zone-b", zone_b))
        ]  # fmt: skip
        return {"status": "success", "data": {"resultType": "matrix", "result": result}}

    http = FakeHttp(answer)
    client = faked(prometheus_client("http://p:9090", CostMeter(), secrets=Secrets()), http)
    event = PrometheusBackfill("http://p:9090", lambda: 7.0).history_event(client, PROM_TIME)
    asked = [parse_qs(urlsplit(str(r.url)).query)["query"][0] for r in http.seen]
    (zone_query,) = [q for q in asked if "node_collector_unhealthy_nodes_in_zone" in q]
    assert 'job=~".*controller-manager.*"' in zone_query and "by (zone)" in zone_query
    series = dict(event.series)
    assert series[key("nodes.unhealthy", "zone-a")] == tuple((t, float(v)) for t, v in zone_a)
    assert set(series[key("nodes.unhealthy", "zone-b")]) == {(t, 0.0) for t, _ in zone_b}
    # folded into the model, the metrics-only zone finding starts where Prometheus says
    model = ClusterModel()
    model.apply(event)
    history = model.snapshot().history
    z = ZoneHealth("us-east", "zone-a", 10, 10, Val.of(0), ZoneState.FULL_DISRUPTION)
    view = MetricsOnlyNodes("metrics only", (z,), "", (), "not read", ())
    snap = healthy()
    nodes = replace(snap.nodes, nodes_known=False, metrics_only=view)
    snap = replace(snap, at=PROM_TIME, nodes=nodes, history=history)
    f = next(f for f in evaluate(snap) if f.code == "KT-NODE-001")
    assert f.trend is not None and f.trend.since == first_bad
    assert f.trend.direction is Direction.STEADY


def test_a_backfill_past_its_time_limit_keeps_what_it_read_and_says_how_far_it_got() -> None:
    """A Prometheus that answers the history's range queries but not one of the window's
    raw reads: the backfill gives up at its time limit, keeps the history (the baseline
    triage compares with: it is read first) and reports the failure with the count of
    queries read; the stuck request is abandoned, not waited for.
    """
    release = threading.Event()
    at = PROM_TIME
    cpu = [(at - 30.0, 0.5), (at - 15.0, 0.75), (at, 1.0)]

    def answer(query: str) -> dict[str, Any]:
        if query.startswith("etcd_request_duration_seconds_bucket{"):
            release.wait(30)  # a raw read that does not come back
        result = []
        if query.startswith("sum by (instance) (rate(process_cpu_seconds_total{"):
            result = [{"metric": {"instance": "a:6443"}, "values": [[t, str(v)] for t, v in cpu]}]
        return {"status": "success", "data": {"resultType": "matrix", "result": result}}

    http = FakeHttp(answer)
    client = faked(prometheus_client("http://p:9090", CostMeter(), secrets=Secrets()), http)
    backfill = PrometheusBackfill("http://p:9090", lambda: at)
    events: list[Event] = []
    # Long enough for every answered (fake, instant) query on a busy machine: the stuck read
    # alone must be what the limit cuts off.
    limit = 3.0
    started = time.monotonic()
    try:
        asyncio.run(backfill.run(events.extend, client, PrometheusCalls(), time_limit_s=limit))
    finally:
        release.set()
    took = time.monotonic() - started
    assert took < limit + 2.0, took
    reads = backfill.window_reads()
    stuck = next(i for i, (_, sel) in enumerate(reads) if sel.startswith("etcd_request_dur"))
    history = len(backfill.history_reads())
    assert not any(isinstance(e, MetricsScraped | FeedSynced) for e in events)
    (filled,) = [e for e in events if isinstance(e, HistoryBackfilled)]
    assert dict(filled.series)[key("api.cpu_cores", "a:6443")] == tuple(cpu)
    (failed,) = [e for e in events if isinstance(e, FeedFailed)]
    assert failed.feed == FEED_PROMETHEUS_BACKFILL
    read = history + stuck
    assert (
        f"not done within {limit:g} s ({read} of {history + len(reads)} queries answered)"
        in failed.reason
    )
    assert backfill.abandoned.is_set()


def test_a_failed_window_query_fails_the_backfill_with_its_reason() -> None:
    http = FakeHttp(requests.ConnectionError("connection refused"))
    client = faked(prometheus_client("http://p:9090", CostMeter(), secrets=Secrets()), http)
    backfill = PrometheusBackfill("http://p:9090", lambda: PROM_TIME)
    events: list[Event] = []
    asyncio.run(backfill.run(events.extend, client, PrometheusCalls(), time_limit_s=30))
    (failed,) = events
    assert isinstance(failed, FeedFailed) and failed.feed == FEED_PROMETHEUS_BACKFILL
    assert "connection refused" in failed.reason
    assert f"(0 of {len(backfill.window_reads()) + len(backfill.history_reads())}" in failed.reason


def test_thinned_window_keeps_the_rates_and_quantiles_of_every_raw_scrape() -> None:
    """A Prometheus scraping every second returns 300 scrapes per target for the window;
    one per step (plus both sides of a counter reset) gives the model the same numbers.
    Expected: increases summed by hand from the raw values (a restart at T0 + 137 s
    drops the counters to the count since the restart), over the 299 s the points span.
    """
    ts = [T0 + i for i in range(300)]
    restart = 137

    def counter(before: float, after: float) -> list[float]:
        return [before * i if i < restart else after * (i - restart + 1) for i in range(300)]

    requests_ = counter(7.0, 3.0)
    le_01, le_1 = counter(0.5, 0.25), counter(1.0, 0.5)  # the +Inf bucket equals le=1

    def increase(values: list[float]) -> float:
        return values[restart - 1] + values[-1]  # both runs start from zero

    write = {"verb": "POST"}
    results = [
        matrix("apiserver_request_total", "a:6443", {"verb": "GET", "code": "200"},
               list(zip(ts, requests_, strict=True))),
        *(
            matrix("apiserver_request_duration_seconds_bucket", "a:6443", {**write, "le": le},
                   list(zip(ts, values, strict=True)))
            for le, values in (("0.1", le_01), ("1", le_1), ("+Inf", le_1))
        ),
    ]  # fmt: skip
    backfill = PrometheusBackfill("http://p:9090", lambda: T0, step_s=15)
    events = backfill.window_merged(matrix_to_events(Component.APISERVER, results))
    kept = [e.at for e in events]
    assert len(kept) <= 300 / 15 + 4
    assert kept[0] == ts[0] and kept[-1] == ts[-1]
    assert {ts[restart - 1], ts[restart]} <= set(kept)
    model = ClusterModel(ModelConfig(window_s=600))
    model.apply_all(events)
    row = model.snapshot().apiservers.instances[0]
    assert row.requests_per_s.value == pytest.approx(increase(requests_) / 299, rel=1e-12)
    # histogram_quantile: the rank 0.99 x total falls in (0.1, 1]; linear inside it
    c01, c1 = increase(le_01), increase(le_1)
    p99 = 0.1 + 0.9 * (0.99 * c1 - c01) / (c1 - c01)
    assert row.write_p99_s.value == pytest.approx(p99, rel=1e-12)


def test_prometheus_dying_before_its_first_poll_marks_the_backfilled_targets_failed() -> None:
    """The window made an etcd member known; Prometheus then stops before the poller's
    first answer: the failed poll says so for that member instead of leaving it to go
    quietly stale (unknown is not healthy).
    """
    at = PROM_TIME

    def answer(query: str) -> dict[str, Any]:
        result = []
        if query.startswith("etcd_server_has_leader{"):
            m = matrix("etcd_server_has_leader", "e0:2379", {}, [(at - 15, 1.0), (at, 1.0)])
            result = [m]
        return {"status": "success", "data": {"resultType": "matrix", "result": result}}

    client = faked(
        prometheus_client("http://p:9090", CostMeter(), secrets=Secrets()), FakeHttp(answer)
    )
    backfill = PrometheusBackfill("http://p:9090", lambda: at)
    events: list[Event] = []
    asyncio.run(backfill.run(events.extend, client, PrometheusCalls(), time_limit_s=30))
    member = Target(Component.ETCD, "e0:2379")
    assert member in {e.target for e in events if isinstance(e, MetricsScraped)}
    dead = faked(
        prometheus_client("http://p:9090", CostMeter(), secrets=Secrets()),
        FakeHttp(requests.ConnectionError("connection refused")),
    )
    poller = PrometheusMetrics(dead, "http://p:9090", lambda: at + 5, seen=set(backfill.targets))
    events.clear()
    asyncio.run(poller.poll_once(events.extend))
    failed = {e.target: e.reason for e in events if isinstance(e, ScrapeFailed)}
    assert "connection refused" in failed[member]
