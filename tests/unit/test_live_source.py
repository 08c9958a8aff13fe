"""The live source against a fake apiserver: instance sets, reads, cost, failures as events."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

import aiohttp
import pytest

from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_CLOCK,
    FEED_DISCOVERY,
    FEED_NODE_DETAILS,
    LOAD_BALANCED,
    Area,
    Component,
    Event,
    FeedFailed,
    MetricsScraped,
    SelfCost,
    Target,
    TargetGone,
)
from ktop.scrub import Secrets
from ktop.sources.live import reads
from ktop.sources.live.backfill import PrometheusBackfill
from ktop.sources.live.client import node_count, probe
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import ApiError
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.prometheus_connect import prometheus_client
from ktop.sources.live.source import LiveSource
from ktop.sources.live.static_pods import ProxyTarget
from ktop.sources.live.transport import KubeTransport, instance_name
from tests.unit.fake_kube import Answer, Call, FakeConnection, status_body
from tests.unit.test_live_prometheus import (
    EXEC as PROM_EXEC,
)
from tests.unit.test_live_prometheus import (
    EXECUTING,
    PROM_TIME,
    FakeHttp,
    apiserver_answer,
    faked,
)
from tests.unit.test_live_prometheus import A as PROM_A

REAL_SLEEP = asyncio.sleep
APISERVER_METRICS = (
    b"# TYPE apiserver_flowcontrol_nominal_limit_seats gauge\n"
    b'apiserver_flowcontrol_nominal_limit_seats{priority_level="exempt"} 0\n'
    b"# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 100\n"
)
DUMP = b"PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests\n"


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, events: Sequence[Event]) -> None:
        self.events.extend(events)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def slices(*addrs: str) -> dict[str, Any]:
    return {
        "items": [
            {
                "ports": [{"name": "https", "port": 6443}],
                "endpoints": [{"addresses": [a], "conditions": {"ready": True}} for a in addrs],
            }
        ]
    }


class Cluster:
    """Answers for every read, with EndpointSlices and failures set by the test."""

    def __init__(self) -> None:
        self.endpoints: Any = slices()
        self.hold = asyncio.Event()
        self.node_get: Answer = Answer(500, status_body(500, "etcdserver: leader changed"))

    def route(self, c: Call) -> Answer | BaseException:
        if c.path == reads.ENDPOINT_SLICES:
            if isinstance(self.endpoints, BaseException):
                return self.endpoints
            return Answer(body=self.endpoints)
        if c.path == reads.METRICS:
            return Answer(body=APISERVER_METRICS)
        if c.path == reads.APF_DUMP:
            return Answer(body=DUMP)
        if c.path.startswith("/api/v1/nodes/"):
            return self.node_get
        if c.verb == "watch":
            return Answer(lines=[], hold=self.hold)
        if c.path == "/api/v1/nodes" and c.verb == "list":
            row = {
                "cells": ["n1", "NotReady"],
                "object": {"metadata": {"name": "n1", "resourceVersion": "3"}},
            }
            return Answer(
                body={
                    "columnDefinitions": [{"name": "Name"}, {"name": "Status"}],
                    "rows": [row],
                    "metadata": {"resourceVersion": "3"},
                }
            )
        if c.path == reads.SYSTEM_PODS:
            return Answer(403, status_body(403, "pods is forbidden"))
        return Answer(body={"items": [], "metadata": {"resourceVersion": "1"}})


def source(cluster: Cluster, **opts: Any) -> tuple[LiveSource, FakeConnection]:
    conn = FakeConnection(cluster.route)
    base: dict[str, Any] = dict(discovery_s=3600.0, apiserver_scrape_s=3600.0, apf_dump_s=3600.0)
    base.update(opts)
    return LiveSource(LiveOptions(**base), clock=lambda: 5.0, conn=conn), conn


async def stop(src: LiveSource) -> None:
    tasks = list(src.loops.tasks.values())
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def settle(check: Any, what: str) -> None:
    for _ in range(3000):
        if check():
            return
        await REAL_SLEEP(0.001)
    pytest.fail(f"timed out waiting for {what}")


async def test_instance_set_changes_start_and_stop_loops() -> None:
    cluster = Cluster()
    src, conn = source(cluster)
    emit = Recorder()
    src.loops.emit = emit
    t = KubeTransport(conn.api, src.meter)
    try:
        # No instance known: the load-balanced address, labelled as such.
        await src.discover_once(t, emit)
        assert src.instances == {LOAD_BALANCED}
        assert {"metrics-" + LOAD_BALANCED, "apf-" + LOAD_BALANCED} <= set(src.loops.tasks)

        # Two instances appear: the load-balanced loops stop, and its rows go.
        cluster.endpoints = slices("10.0.0.1", "10.0.0.2")
        await src.discover_once(t, emit)
        a, b = "10.0.0.1:6443", "10.0.0.2:6443"
        assert src.instances == {a, b}
        assert not any(LOAD_BALANCED in k for k in src.loops.tasks)
        gone = emit.of(TargetGone)
        assert [g.target for g in gone] == [Target(Component.APISERVER, LOAD_BALANCED)]

        # Both are read directly, each under its own name and cost destination.
        await settle(
            lambda: {e.target.instance for e in emit.of(MetricsScraped)} >= {a, b}, "scrapes"
        )
        assert {c.host for c in conn.calls if c.path == reads.METRICS} >= {
            "https://10.0.0.1:6443",
            "https://10.0.0.2:6443",
        }
        assert src.meter.requests_by_destination[f"apiserver {a}"] >= 2

        # One leaves: its loops are cancelled, its client closed, its row dropped.
        cluster.endpoints = slices("10.0.0.1")
        await src.discover_once(t, emit)
        assert src.instances == {a}
        assert not any(b in k for k in src.loops.tasks)
        assert conn.apis["https://10.0.0.2:6443"].closed
        assert emit.of(TargetGone)[-1].target == Target(Component.APISERVER, b)

        # A failed discovery changes nothing, and says so.
        cluster.endpoints = ApiError(503, "get", reads.ENDPOINT_SLICES, "unavailable")
        await src.discover_once(t, emit)
        assert src.instances == {a}
        failed = [e for e in emit.of(FeedFailed) if e.feed == FEED_DISCOVERY]
        assert failed and "503" in failed[-1].reason
    finally:
        await stop(src)


async def test_model_never_sums_the_load_balanced_rows_with_real_ones() -> None:
    cluster = Cluster()
    src, conn = source(cluster)
    emit = Recorder()
    src.loops.emit = emit
    t = KubeTransport(conn.api, src.meter)
    try:
        await src.discover_once(t, emit)
        await settle(lambda: emit.of(MetricsScraped), "load-balanced scrape")
        cluster.endpoints = slices("10.0.0.1")
        await src.discover_once(t, emit)
        await settle(lambda: len({e.target for e in emit.of(MetricsScraped)}) == 2, "scrape")
    finally:
        await stop(src)
    model = ClusterModel()
    model.apply_all(emit.events)
    snap = model.snapshot()
    assert [r.instance for r in snap.apiservers.instances] == ["10.0.0.1:6443"]
    assert {r.instance for r in snap.apf.per_instance} <= {"10.0.0.1:6443"}
    assert not any(LOAD_BALANCED in f.name for f in snap.freshness)


async def test_every_request_is_a_declared_read_and_counted_per_destination() -> None:
    cluster = Cluster()
    src, conn = source(
        cluster, apiservers=("https://10.0.0.9:6443",), node_detail_per_s=1000.0,
        lease_round_s=0.001,
    )  # fmt: skip
    emit = Recorder()
    task = asyncio.create_task(src.run(emit))
    try:
        await settle(
            lambda: (
                any(c.path == reads.APF_DUMP for c in conn.calls)
                # the not-Ready node's Lease, read by name in a sampling round
                and any(c.query.get("fieldSelector") == "metadata.name=n1" for c in conn.calls)
                and any(c.path.startswith("/api/v1/nodes/") for c in conn.calls)
                and sum(1 for c in conn.calls if c.verb == "watch") == len(reads.WATCHES)
                and any(c.path == reads.SYSTEM_PODS for c in conn.calls)
            ),
            "every kind of read",
        )
        await settle(lambda: emit.of(SelfCost), "a cost sample")
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    undeclared = [(c.verb, c.path) for c in conn.calls if not reads.needed(c.path, c.verb)]
    assert undeclared == []
    # Every watch path is one of WATCHES, each watched once.
    watched = Counter(c.path for c in conn.calls if c.verb == "watch")
    assert watched == Counter(w.path for w in reads.WATCHES)
    # The meter counted each request under the host it went to.
    by_host = Counter(
        "apiserver" if c.host == conn.server else f"apiserver {instance_name(c.host)}"
        for c in conn.calls
    )
    assert src.meter.requests_by_destination == dict(by_host)
    # The failing node GET is a feed failure, not swallowed.
    node_fail = [e for e in emit.of(FeedFailed) if e.feed == FEED_NODE_DETAILS]
    assert node_fail and node_fail[0].reason.startswith("node n1: 500 on get /api/v1/nodes/n1")
    # Forbidden component discovery names the permission and stays optional.
    pods = [e for e in emit.of(FeedFailed) if e.feed == "component-discovery"]
    assert pods and "403 Forbidden: RBAC does not allow 'list' on pods in kube-system" in (
        pods[0].reason
    )


async def test_a_failing_loop_is_reported_and_restarted(monkeypatch: pytest.MonkeyPatch) -> None:
    delays: list[float] = []

    async def fast(delay: float, *a: Any) -> None:
        delays.append(delay)
        await REAL_SLEEP(0)

    monkeypatch.setattr("ktop.sources.live.source.asyncio.sleep", fast)
    src, _ = source(Cluster())
    emit = Recorder()
    src.loops.emit = emit
    runs = 0

    async def flaky() -> None:
        nonlocal runs
        runs += 1
        if runs < 3:
            raise RuntimeError("boom")

    src.loops.start("probe", flaky, "probe-feed")
    await settle(lambda: runs == 3 and src.loops.tasks["probe"].done(), "three runs")
    failed = [e.reason for e in emit.of(FeedFailed) if e.feed == "probe-feed"]
    assert failed == ["probe stopped: RuntimeError: boom"] * 2
    assert len(delays) == 2 and 0 <= delays[0] <= 1.0 and 0 <= delays[1] <= 2.0


async def test_probe_and_node_count_are_counted_by_the_source_meter() -> None:
    cluster = Cluster()

    def route(c: Call) -> Answer | BaseException:
        if c.path == reads.VERSION:
            return Answer(body={"gitVersion": "v1.31.0"})
        if c.path == reads.NODES and c.query.get("limit") == "1":
            body = {"items": [{}], "metadata": {"remainingItemCount": 299}}
            return Answer(body=body)
        return cluster.route(c)

    conn = FakeConnection(route)
    assert await probe(conn) == "v1.31.0"
    assert await node_count(conn) == 300
    src = LiveSource(LiveOptions(discovery_s=3600.0), clock=lambda: 5.0, conn=conn)
    emit = Recorder()
    task = asyncio.create_task(src.run(emit))
    try:
        await settle(lambda: emit.of(SelfCost), "a cost sample")
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    # The source counts with the connection's meter: the probe and the size LIST included.
    assert src.meter is conn.meter
    by_path = Counter(c.path for c in conn.calls)
    assert by_path[reads.VERSION] == 1 and src.meter.by_path[reads.VERSION] == 1
    assert src.meter.by_path[reads.NODES] == by_path[reads.NODES] >= 2
    by_host = Counter(
        "apiserver" if c.host == conn.server else f"apiserver {instance_name(c.host)}"
        for c in conn.calls
    )
    assert src.meter.requests_by_destination == dict(by_host)
    assert emit.of(SelfCost)[0].requests_total >= 2


async def test_every_loop_kind_reports_its_failure_in_the_pane_that_needed_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def dead(*a: Any, **kw: Any) -> None:
        raise RuntimeError("boom")

    async def fast(delay: float, *a: Any) -> None:
        await REAL_SLEEP(3600 if delay >= 0.5 else 0)  # one failure per loop is enough

    monkeypatch.setattr("ktop.sources.live.source.scrape_metrics_loop", dead)
    monkeypatch.setattr("ktop.sources.live.control_plane.scrape_metrics_loop", dead)
    monkeypatch.setattr("ktop.sources.live.source.apf_dump_loop", dead)
    monkeypatch.setattr(LiveSource, "_ticks", dead)
    monkeypatch.setattr("ktop.sources.live.source.asyncio.sleep", fast)
    cluster = Cluster()
    src, conn = source(
        cluster, apiservers=("https://10.0.0.1:6443",),
        etcd_metrics=("https://10.0.0.5:2379",), find_components=False,
    )  # fmt: skip
    emit = Recorder()
    src.loops.emit = emit
    t = KubeTransport(conn.api, src.meter)
    src._session = aiohttp.ClientSession()
    try:
        await src.discover_once(t, emit)  # metrics-* and apf-* loops
        src.components.start(t, conn, src._session, emit)  # scrape-* loops
        src.components.start_proxied(
            t, ProxyTarget(Component.SCHEDULER, "s", "kube-scheduler-a", "/p"), emit
        )
        src.loops.start("clock", lambda: src._ticks(emit), FEED_CLOCK)
        await settle(lambda: len(emit.events) >= 5, "five failures")
    finally:
        await stop(src)
        await src._session.close()
    model = ClusterModel()
    model.apply_all(emit.events)
    failed = {(f.area, f.name) for f in model.snapshot().freshness if "boom" in f.error}
    assert failed == {
        (Area.APISERVERS, "apiserver 10.0.0.1:6443"),  # its /metrics loop
        (Area.APF, "apiserver 10.0.0.1:6443"),
        (Area.APF, "apf dump 10.0.0.1:6443"),
        (Area.ETCD, "etcd 10.0.0.5:2379"),
        (Area.SCHEDULER, "scheduler kube-scheduler-a"),
        (Area.NODES, "clock"),  # ticks age not-Ready nodes and Lease lags
    }


async def test_given_apiservers_are_the_only_rows_whatever_prometheus_calls_them() -> None:
    """--apiserver https://kube.example:6443; Prometheus labels the same instance
    10.0.0.1:6443 and also holds 10.0.0.2:6443: one row, APF from that instance alone."""
    cluster = Cluster()
    src, conn = source(cluster, apiservers=("https://kube.example:6443",))
    emit = Recorder()
    src.loops.emit = emit
    http = FakeHttp(apiserver_answer)
    src.prometheus = PrometheusMetrics(
        faked(prometheus_client("http://prom:9090", src.meter, secrets=Secrets()), http),
        "http://prom:9090",
        lambda: 5.0,
        apiservers=("kube.example:6443",),
        resolve=lambda host: frozenset({"10.0.0.1"} if host == "kube.example" else ()),
    )
    t = KubeTransport(conn.api, src.meter)
    try:
        await src.prometheus.poll_once(emit)
        await src.discover_once(t, emit)
        assert src.instances == {"kube.example:6443"}
        # Prometheus serves the given instance under its name: its loops read nothing.
        assert src.prometheus.serves(Component.APISERVER, "kube.example:6443")
    finally:
        await stop(src)
        src.prometheus.calls.close()
    model = ClusterModel()
    model.apply_all(emit.events)
    snap = model.snapshot()
    assert [r.instance for r in snap.apiservers.instances] == ["kube.example:6443"]
    levels = {r.priority_level: r for r in snap.apf.levels}
    for (pl, _), executing in EXECUTING[PROM_A].items():
        assert levels[pl].executing.value == executing


def test_the_history_backfill_names_given_apiservers_the_same_way() -> None:
    def answer(query: str) -> dict[str, Any]:
        if query.startswith(PROM_EXEC + "{") and query.endswith("s]"):
            rows = [
                {
                    "metric": {"__name__": PROM_EXEC, "instance": i, "priority_level": "exempt"},
                    "values": [[PROM_TIME - 10, "1"]],
                }
                for i in ("10.0.0.1:6443", "10.0.0.2:6443")
            ]
            return {"status": "success", "data": {"resultType": "matrix", "result": rows}}
        return apiserver_answer(query)

    client = faked(
        prometheus_client("http://prom:9090", CostMeter(), secrets=Secrets()), FakeHttp(answer)
    )
    backfill = PrometheusBackfill(
        "http://prom:9090",
        lambda: 5.0,
        apiservers=("kube.example:6443",),
        resolve=lambda host: frozenset({"10.0.0.1"} if host == "kube.example" else ()),
    )
    events = backfill.window_events(client, PROM_TIME)
    apiservers = {
        e.target.instance
        for e in events
        if isinstance(e, MetricsScraped) and e.target.component is Component.APISERVER
    }
    assert apiservers == {"kube.example:6443"}
