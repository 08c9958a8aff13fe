"""Objects the benchmark creates, shaped like real ones (pure: no I/O but reading fixtures).

Nodes are copies of a real OpenShift worker Node (``tests/fixtures/
openshift-insights_gcp-3zone_nodelist.json``, gathered from a live GCP cluster), renamed and
spread over that cluster's three zones; every field the kubelet would write is kept, including
``managedFields``. Pending pods are copies of a real Pending pod (``tests/fixtures/
openshift-insights_pending-pod_router-default.json``) whose scheduler does not exist, with the
real scheduler's Unschedulable condition written into their status.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
NODE_LIST = FIXTURES / "openshift-insights_gcp-3zone_nodelist.json"
PENDING_POD = FIXTURES / "openshift-insights_pending-pod_router-default.json"

ZONE_LABEL = "topology.kubernetes.io/zone"
RACK_LABEL = "topology.ktop.dev/rack"
"""ktop's default rack label: the real node has none, so the benchmark adds it."""
NODES_PER_RACK = 40
NAME_PREFIX = "bench-node"
PENDING_NAMESPACE = "bench-pending"
NO_SCHEDULER = "ktop-bench-no-scheduler"
"""A scheduler that does not exist: the pods stay Pending and nothing retries them."""
LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_S = 40
"""The kubelet's default ``nodeLeaseDurationSeconds``; it renews every quarter of that."""

Obj = dict[str, Any]
_SERVER_FIELDS = ("uid", "resourceVersion", "selfLink", "creationTimestamp", "generation")


def rfc3339(t: float) -> str:
    """A Kubernetes timestamp (seconds)."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(t: float) -> str:
    """A Kubernetes MicroTime (Lease renewTime)."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def real_worker_node() -> Obj:
    """The first worker Node of the real node list."""
    items: list[Obj] = json.loads(NODE_LIST.read_text(encoding="utf-8"))["items"]
    for item in items:
        if "node-role.kubernetes.io/worker" in item["metadata"].get("labels", {}):
            return item
    raise ValueError(f"{NODE_LIST.name} has no worker node")


def real_zones() -> tuple[str, ...]:
    """The zones of the real cluster, in order of first appearance."""
    items: list[Obj] = json.loads(NODE_LIST.read_text(encoding="utf-8"))["items"]
    zones: list[str] = []
    for item in items:
        zone = item["metadata"]["labels"].get(ZONE_LABEL)
        if zone and zone not in zones:
            zones.append(zone)
    return tuple(zones)


def node_name(i: int) -> str:
    """The name of benchmark node ``i``."""
    return f"{NAME_PREFIX}-{i:06d}"


def nodes(
    count: int, now: float, template: Obj | None = None, *, racks: bool = True
) -> Iterator[Obj]:
    """``count`` Node bodies copied from the real worker, Ready with a heartbeat at ``now``.

    Node ``i`` is in zone ``i % zones`` and (with ``racks``) rack
    ``i // zones // NODES_PER_RACK`` of it.
    """
    base = copy.deepcopy(template or real_worker_node())
    meta = base["metadata"]
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    old_name = meta["name"]
    zones = real_zones()
    stamp = rfc3339(now)
    for cond in base["status"].get("conditions", []):
        cond["lastHeartbeatTime"] = stamp
    text = json.dumps(base)
    for i in range(count):
        name = node_name(i)
        zone = zones[i % len(zones)]
        body: Obj = json.loads(text.replace(old_name, name))
        labels = body["metadata"]["labels"]
        for key in list(labels):
            if labels[key] in zones:
                labels[key] = zone
        if racks:
            labels[RACK_LABEL] = f"{zone}-rack-{i // len(zones) // NODES_PER_RACK:04d}"
        body["apiVersion"], body["kind"] = "v1", "Node"
        yield body


def lease(name: str, renew: float) -> Obj:
    """The node Lease the kubelet keeps for node ``name``."""
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": LEASE_NAMESPACE},
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": LEASE_DURATION_S,
            "renewTime": rfc3339_micro(renew),
        },
    }


def real_pending_pod() -> Obj:
    """The real Pending pod."""
    pod: Obj = json.loads(PENDING_POD.read_text(encoding="utf-8"))
    return pod


def pending_pods(count: int, template: Obj | None = None) -> Iterator[tuple[Obj, Obj]]:
    """``count`` (pod body, status body) pairs copied from the real Pending pod.

    The pod names no existing scheduler, owner, service account or priority value, so the API
    accepts it and nothing schedules, adopts or deletes it; the status body carries the real
    pod's Unschedulable condition (the scheduler's own message).
    """
    src = template or real_pending_pod()
    status = {"status": {"phase": "Pending", "conditions": src["status"]["conditions"]}}
    base = copy.deepcopy(src)
    meta = base["metadata"]
    for key in (*_SERVER_FIELDS, "ownerReferences", "generateName"):
        meta.pop(key, None)
    meta["namespace"] = PENDING_NAMESPACE
    spec = base["spec"]
    for key in ("serviceAccountName", "serviceAccount", "priority", "nodeName"):
        spec.pop(key, None)
    spec["schedulerName"] = NO_SCHEDULER
    spec["automountServiceAccountToken"] = False
    base.pop("status", None)
    prefix = src["metadata"].get("generateName") or src["metadata"]["name"] + "-"
    text = json.dumps(base)
    for i in range(count):
        body: Obj = json.loads(text)
        body["metadata"]["name"] = f"{prefix}{i:06d}"
        body["apiVersion"], body["kind"] = "v1", "Pod"
        yield body, status
