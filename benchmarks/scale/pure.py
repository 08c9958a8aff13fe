"""Figures that need no apiserver: ingest rate, model memory, exposition parsing."""

from __future__ import annotations

import gc
import json
import time
import tracemalloc
from typing import Any

from benchmarks.scale import objects
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_LEASES,
    FEED_NODES,
    FEED_PENDING_PODS,
    Component,
    FeedSynced,
    LeaseRenewed,
    NodeUpserted,
    PendingPodUpserted,
)
from ktop.model.exposition import parse_exposition
from ktop.model.wanted import FAMILIES
from ktop.sources.convert import node_record, pending_pod_record
from ktop.sources.live.handlers import LeasesHandler
from ktop.sources.sim.simulator import Simulator

APISERVER_METRICS = objects.FIXTURES / "nri-k8s-1.35_kube-apiserver_metrics.prom"


def lease_watch_line(name: str, renew: float, rv: int) -> bytes:
    """A Lease MODIFIED watch event as the apiserver sends it (kubelet managedFields)."""
    obj = objects.lease(name, renew)
    obj["metadata"].update(
        uid="6b4ea1a5-53ea-4b3c-9f0c-9e4c0b1f6c1d",
        resourceVersion=str(rv),
        creationTimestamp=objects.rfc3339(renew - 86400),
        ownerReferences=[
            {"apiVersion": "v1", "kind": "Node", "name": name,
             "uid": "0b9d1a52-5a1f-4a8e-8b0e-1f3c0d4e5a6b"}
        ],
        managedFields=[
            {"manager": "kubelet", "operation": "Update", "apiVersion": "coordination.k8s.io/v1",
             "time": objects.rfc3339(renew), "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:ownerReferences": {".": {},
                          'k:{"uid":"0b9d1a52-5a1f-4a8e-8b0e-1f3c0d4e5a6b"}': {}}},
                          "f:spec": {"f:holderIdentity": {}, "f:leaseDurationSeconds": {},
                                     "f:renewTime": {}}}}
        ],
    )  # fmt: skip
    return json.dumps({"type": "MODIFIED", "object": obj}).encode() + b"\n"


def pipeline_events_per_s(nodes: int = 10_000, events: int = 50_000) -> float:
    """Lease watch lines decoded, turned into events and folded (one per ``hub.ingest``, as
    the list-watch loop does) per second of this process's CPU.
    """
    hub = Hub(ClusterModel())
    now = time.time()
    hub.ingest([NodeUpserted(now, node_record(b, objects.RACK_LABEL))
                for b in objects.nodes(min(nodes, 2_000), now)])  # fmt: skip
    hub.ingest([FeedSynced(now, FEED_NODES), FeedSynced(now, FEED_LEASES)])
    lines = [lease_watch_line(objects.node_name(i % nodes), now + i, i) for i in range(events)]
    handler = LeasesHandler()
    t0 = time.process_time()
    for line in lines:
        ev = json.loads(line)
        hub.ingest(handler.upsert(now, ev["object"]))
    return events / (time.process_time() - t0)


def fold_lease_events_per_s(nodes: int = 100_000) -> float:
    """LeaseRenewed events folded by the model alone."""
    m = ClusterModel()
    now = time.time()
    m.apply_all(NodeUpserted(now, node_record(b, objects.RACK_LABEL))
                for b in objects.nodes(nodes, now))  # fmt: skip
    renewals = [LeaseRenewed(now, objects.node_name(i), now + 10) for i in range(nodes)]
    t0 = time.process_time()
    m.apply_all(renewals)
    return nodes / (time.process_time() - t0)


def bytes_per_node(nodes: int = 20_000) -> float:
    """What the model holds per node (record and Lease), by tracemalloc."""
    now = time.time()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    m = ClusterModel()
    for body in objects.nodes(nodes, now):
        m.apply(NodeUpserted(now, node_record(body, objects.RACK_LABEL)))
        m.apply(LeaseRenewed(now, body["metadata"]["name"], now))
    m.apply(FeedSynced(now, FEED_NODES))
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del m
    return held / nodes


def bytes_per_pending_pod(pods: int = 10_000) -> float:
    """What the model holds per pending pod (record, index, FailedScheduling reason)."""
    now = time.time()
    statuses = next(iter(objects.pending_pods(1)))[1]["status"]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    m = ClusterModel()
    for body, _ in objects.pending_pods(pods):
        body["status"] = statuses
        body["metadata"]["creationTimestamp"] = objects.rfc3339(now)
        rec = pending_pod_record(body)
        if rec is not None:
            m.apply(PendingPodUpserted(now, rec))
    m.apply(FeedSynced(now, FEED_PENDING_PODS))
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del m
    return held / pods


def parse_throughput() -> tuple[float, float]:
    """(MB/s, best ms) parsing the real 3.1 MB kube-apiserver exposition for ktop's families."""
    text = APISERVER_METRICS.read_text(encoding="utf-8")
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        parse_exposition(text, FAMILIES[Component.APISERVER])
        best = min(best, time.perf_counter() - t0)
    return len(text.encode()) / 1e6 / best, best * 1e3


HISTORY_SCENARIO = "steady"
HISTORY_NODES = 1_000


def publish_with_history_ms(history_s: int, publishes: int = 20) -> float:
    """Median CPU ms of a refresh's analysis (snapshot, findings, triage, timeline) on a
    simulated cluster after ``history_s`` seconds of history, one frame a second: what
    every publish of a dashboard that has run that long costs.
    """
    sim = Simulator(HISTORY_SCENARIO, nodes=HISTORY_NODES, seed=1)
    hub = Hub()
    hub.ingest(sim.start())
    for _ in range(history_s):  # as the dashboard does: triage and timeline every publish
        hub.ingest(sim.advance(1.0))
        published = hub.publish()
        assert published is not None
        _ = published.triage, published.timeline
    times = []
    for _ in range(publishes):
        hub.ingest(sim.advance(1.0))
        t0 = time.process_time()
        published = hub.publish()
        assert published is not None
        _ = published.triage, published.timeline
        times.append(time.process_time() - t0)
    return 1e3 * sorted(times)[len(times) // 2]


def run() -> dict[str, Any]:
    """All of the above."""
    mbps, ms = parse_throughput()
    return {
        "publish_history_1min_ms": publish_with_history_ms(60),
        "publish_history_1h_ms": publish_with_history_ms(3600),
        "pipeline_events_per_s": pipeline_events_per_s(),
        "fold_lease_events_per_s": fold_lease_events_per_s(),
        "bytes_per_node": bytes_per_node(),
        "bytes_per_pending_pod": bytes_per_pending_pod(),
        "parse_mb_per_s": mbps,
        "parse_ms": ms,
    }
