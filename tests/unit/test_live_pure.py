"""The pure parts of the live source: table rows, slices, PromQL, cost, error texts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ktop.model.events import NodeUpserted, PendingPodDeleted, PendingPodUpserted, Readiness
from ktop.sources.live.cost import PF_FLOW_SCHEMA_UID, PF_PRIORITY_LEVEL_UID, CostMeter
from ktop.sources.live.discovery import endpoints_from_slices
from ktop.sources.live.errors import describe, status_message
from ktop.sources.live.handlers import NodesHandler, PendingPodsHandler, table_node_record
from ktop.sources.live.prometheus_queries import family_query, results_to_samples
from ktop.sources.live.rows import Row
from ktop.sources.live.transport import same_instances

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _row(name: str, status: str, **labels: str) -> dict[str, object]:
    return {"metadata": {"name": name, "labels": labels}, "cells": {"Name": name, "Status": status}}


@pytest.mark.parametrize(
    ("status", "ready", "cordoned"),
    [
        ("Ready", Readiness.TRUE, False),
        ("NotReady", Readiness.FALSE, False),
        ("Ready,SchedulingDisabled", Readiness.TRUE, True),
        ("NotReady,SchedulingDisabled", Readiness.FALSE, True),
        ("Unknown", Readiness.UNKNOWN, False),
    ],
)
def test_table_status_cell(status: str, ready: Readiness, cordoned: bool) -> None:
    rec = table_node_record(
        _row("n1", status, **{"topology.kubernetes.io/zone": "z1", "rack": "r9"}), "rack"
    )
    assert (rec.ready, rec.unschedulable, rec.zone, rec.rack) == (ready, cordoned, "z1", "r9")


def test_not_ready_rows_ask_for_detail_and_keep_it() -> None:
    wanted: list[str] = []
    h = NodesHandler("rack", wanted.append)
    assert isinstance(h.upsert(1.0, Row(_row("n1", "Ready")))[0], NodeUpserted)
    assert wanted == []
    h.upsert(2.0, Row(_row("n1", "NotReady")))
    assert wanted == ["n1"]
    detailed = table_node_record(_row("n1", "NotReady"), "rack")
    from dataclasses import replace

    h.detail(3.0, replace(detailed, ready=Readiness.UNKNOWN, unreachable_taint=True))
    again = h.upsert(4.0, Row(_row("n1", "NotReady,SchedulingDisabled")))[0]
    assert isinstance(again, NodeUpserted)
    assert again.node.ready is Readiness.UNKNOWN and again.node.unreachable_taint
    assert again.node.unschedulable  # fresh from the row
    back = h.upsert(5.0, Row(_row("n1", "Ready")))[0]
    assert isinstance(back, NodeUpserted) and back.node.ready is Readiness.TRUE
    assert "n1" not in h.detailed


def test_pod_leaving_pending_is_a_deletion() -> None:
    pod = json.loads((FIXTURES / "openshift-insights_pending-pod_router-default.json").read_text())
    h = PendingPodsHandler()
    assert isinstance(h.upsert(1.0, Row(pod))[0], PendingPodUpserted)
    pod["status"]["phase"] = "Running"
    gone = h.upsert(2.0, Row(pod))[0]
    assert isinstance(gone, PendingPodDeleted) and gone.name == pod["metadata"]["name"]


def test_endpoints_from_slices() -> None:
    body = {
        "items": [
            {
                "ports": [{"name": "https", "port": 6443}],
                "endpoints": [
                    {"addresses": ["10.0.0.1"], "conditions": {"ready": True}},
                    {"addresses": ["10.0.0.2"], "conditions": {"ready": False}},
                    {"addresses": ["fd00::3"]},
                ],
            }
        ]
    }
    assert endpoints_from_slices(body) == ["https://10.0.0.1:6443", "https://[fd00::3]:6443"]


def test_family_query_keeps_labels_and_le() -> None:
    q = family_query("etcd_disk_wal_fsync_duration_seconds", (), ".*etcd.*")
    assert (
        q == 'sum by (instance, le) (etcd_disk_wal_fsync_duration_seconds_bucket{job=~".*etcd.*"})'
    )
    q = family_query("apiserver_request_total", ("verb", "code"), "apiserver")
    assert q == 'sum by (instance, verb, code) (apiserver_request_total{job=~"apiserver"})'


def test_results_to_samples_groups_by_instance() -> None:
    results = [
        {"metric": {"instance": "a:6443", "verb": "GET", "code": "200"}, "value": [1, "5"]},
        {"metric": {"instance": "b:6443", "verb": "GET", "code": "200"}, "value": [1, "7"]},
        {"metric": {"instance": "b:6443"}, "value": [1, "not-a-number"]},
    ]
    out = results_to_samples("apiserver_request_total", results)
    assert set(out) == {"a:6443", "b:6443"}
    assert out["b:6443"][0].value == 7.0
    assert out["b:6443"][0].labels == (("code", "200"), ("verb", "GET"))


def test_cost_meter_rates_and_apf_names() -> None:
    m = CostMeter(window_s=10)
    m.sample(0.0, {})
    for _ in range(20):
        m.request("/api/v1/nodes", {PF_FLOW_SCHEMA_UID: "fs1", PF_PRIORITY_LEVEL_UID: "pl1"}, 200)
        m.received(1000)
    m.request("/metrics", {}, 429)
    m.watch_opened()
    s = m.sample(10.0, {"fs1": "ktop", "pl1": "workload-low"})
    assert s.requests_per_s == pytest.approx(2.1)
    assert s.bytes_per_s == pytest.approx(2000)
    assert (s.flow_schema, s.priority_level) == ("ktop", "workload-low")
    assert s.open_watches == 1 and s.throttled_total == 1 and s.requests_total == 21


def test_error_descriptions_name_what_is_missing() -> None:
    msg = status_message(
        b'{"kind":"Status","message":"nodes is forbidden: User \\"u\\" cannot list resource'
        b' \\"nodes\\""}'
    )
    text = describe(403, "list", "nodes", msg)
    assert "403 Forbidden" in text and "'list' on nodes" in text and "cannot list" in text
    assert "expired" in describe(401, "get", "/version", "")
    assert "relisting" in describe(410, "watch", "nodes", "")
    assert describe(500, "get", "/metrics", "boom") == "500 on get /metrics: boom"


def test_same_instances_maps_names_at_one_address_to_the_given_one() -> None:
    dns = {"kube.example": frozenset({"10.0.0.1"}), "other.example": frozenset({"10.0.0.9"})}
    given = ["kube.example:6443", "10.0.0.2:6443"]
    seen = ["10.0.0.1:6443", "10.0.0.2:6443", "10.0.0.3:6443", "10.0.0.1:443"]
    got = same_instances(given, seen, lambda h: dns.get(h, frozenset()))
    # 10.0.0.3 is not given; 10.0.0.1:443 is another port.
    assert got == {"10.0.0.1:6443": "kube.example:6443", "10.0.0.2:6443": "10.0.0.2:6443"}
    # Two names at one address: one row, never two.
    seen = ["10.0.0.1:6443", "kube.example:6443"]
    both = same_instances(["kube.example:6443"], seen, lambda h: dns.get(h, frozenset()))
    assert both == {"kube.example:6443": "kube.example:6443"}
