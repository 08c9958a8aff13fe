"""Converters on real API objects."""

from __future__ import annotations

import json
from pathlib import Path

from ktop.model.events import PodWait, Readiness
from ktop.sources.convert import node_record, parse_time, pending_pod_record

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _nodes() -> list[dict[str, object]]:
    data = json.loads((FIXTURES / "openshift-insights_gcp-3zone_nodelist.json").read_text())
    items: list[dict[str, object]] = data["items"]
    return items


def test_real_nodes_carry_region_zone_and_readiness() -> None:
    records = [node_record(n, "topology.ktop.dev/rack") for n in _nodes()]
    assert len(records) == len(_nodes())
    zones = {r.zone for r in records}
    assert len(zones) == 3 and all(z.startswith("us-east1-") for z in zones)
    assert {r.region for r in records} == {"us-east1"}
    for raw, rec in zip(_nodes(), records, strict=True):
        conds = raw["status"]["conditions"]  # type: ignore[index]
        ready = next(c for c in conds if c["type"] == "Ready")
        assert rec.ready is Readiness(ready["status"])
        assert rec.ready_since == parse_time(ready["lastTransitionTime"])
        assert rec.rack == ""


def test_rack_label_and_taints_and_cordon() -> None:
    node = {
        "metadata": {
            "name": "n1",
            "labels": {"rack": "r7", "node.kubernetes.io/exclude-disruption": ""},
        },
        "spec": {
            "unschedulable": True,
            "taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}],
        },
        "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]},
    }
    rec = node_record(node, "rack")
    assert rec.rack == "r7" and rec.unschedulable and rec.unreachable_taint
    assert not rec.not_ready_taint and rec.exclude_disruption
    assert rec.ready is Readiness.UNKNOWN


def test_node_without_ready_condition_is_unknown() -> None:
    assert node_record({"metadata": {"name": "x"}}, "rack").ready is Readiness.UNKNOWN


def test_real_pending_pod_is_unschedulable_with_scheduler_message() -> None:
    pod = json.loads((FIXTURES / "openshift-insights_pending-pod_router-default.json").read_text())
    rec = pending_pod_record(pod)
    assert rec is not None
    assert rec.wait is PodWait.UNSCHEDULABLE
    assert rec.message.startswith("0/")
    assert rec.namespace == pod["metadata"]["namespace"]


def test_gated_bound_and_running_pods() -> None:
    gated = {
        "metadata": {"name": "g"},
        "spec": {"schedulingGates": [{"name": "kueue"}]},
        "status": {"phase": "Pending"},
    }
    bound = {"metadata": {"name": "b"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Pending"}}
    running = {"metadata": {"name": "r"}, "status": {"phase": "Running"}}
    g, b = pending_pod_record(gated), pending_pod_record(bound)
    assert g is not None and g.wait is PodWait.GATED
    assert b is not None and b.wait is PodWait.BOUND_NOT_STARTED and b.node == "n1"
    assert pending_pod_record(running) is None
