"""Writing bundles for tests: real dumps placed in the bundle layout, and synthetic ones.

Synthetic objects are shaped as ``kubectl get -A -o json`` prints them; metrics
as a component's ``/metrics`` text. Numbers in them are chosen by the tests,
which compute what ktop should report from those same numbers by hand.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
T0 = 1_782_432_000
"""The synthetic bundles' first scrape (2026-06-26 00:00:00 UTC)."""
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_list(root: Path, resource: str, kind: str, items: Sequence[dict[str, Any]]) -> Path:
    path = root / "api" / f"{resource}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {"resourceVersion": "1"},
        "items": list(items),
    }
    path.write_text(json.dumps(doc, indent=4))
    return path


def write_metrics(root: Path, component: str, instance: str, at: int, text: str) -> Path:
    path = root / "metrics" / component / instance / f"{at}.prom"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def node(name: str, zone: str, ready: str, *, region: str = "region-1") -> dict[str, Any]:
    """A Node whose Ready condition has ``status`` = ``ready`` (True, False, Unknown)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {ZONE: zone, REGION: region}},
        "spec": {},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": ready,
                    "reason": "KubeletReady" if ready == "True" else "NodeStatusUnknown",
                    "lastTransitionTime": iso(T0 - 600),
                    "lastHeartbeatTime": iso(T0 - 600),
                }
            ]
        },
    }


def lease(name: str, renew: float) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-node-lease"},
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": 40,
            "renewTime": iso(renew)[:-1] + ".000000Z",
        },
    }


def zone_nodes(
    zones: dict[str, tuple[int, int]], at: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Nodes and Leases: per zone (ready, not ready); not-ready nodes stopped renewing 300 s ago."""
    nodes, leases = [], []
    for zone, (ready, down) in zones.items():
        for i in range(ready + down):
            name = f"{zone}-node-{i:03d}"
            ok = i < ready
            nodes.append(node(name, zone, "True" if ok else "Unknown"))
            leases.append(lease(name, at - (5 if ok else 300)))
    return nodes, leases


def histogram(
    name: str, labels: str, buckets: Iterable[tuple[str, float]], total_sum: float
) -> str:
    """A histogram family's lines: cumulative ``buckets`` as (le, count), then sum and count."""
    sep = "," if labels else ""
    lines = [f"# TYPE {name} histogram"]
    count = 0.0
    for le, c in buckets:
        lines.append(f'{name}_bucket{{{labels}{sep}le="{le}"}} {c:g}')
        count = c
    lines.append(f"{name}_sum{{{labels}}} {total_sum:g}" if labels else f"{name}_sum {total_sum:g}")
    lines.append(f"{name}_count{{{labels}}} {count:g}" if labels else f"{name}_count {count:g}")
    return "\n".join(lines)


def etcd_text(*, changes: int, fsync: Sequence[tuple[str, float]], leader: bool = True) -> str:
    return "\n".join(
        [
            "# TYPE etcd_server_is_leader gauge",
            f"etcd_server_is_leader {1 if leader else 0}",
            "# TYPE etcd_server_has_leader gauge",
            "etcd_server_has_leader 1",
            "# TYPE etcd_server_leader_changes_seen_total counter",
            f"etcd_server_leader_changes_seen_total {changes}",
            histogram("etcd_disk_wal_fsync_duration_seconds", "", fsync, 1.0),
            histogram("etcd_disk_backend_commit_duration_seconds", "", fsync, 1.0),
            "etcd_mvcc_db_total_size_in_bytes 1.048576e+07",
            "etcd_mvcc_db_total_size_in_use_in_bytes 8.388608e+06",
            "etcd_server_quota_backend_bytes 2.147483648e+09",
            "",
        ]
    )


def apiserver_text(
    *,
    requests: float,
    rejected: float,
    queued: int,
    wait: Sequence[tuple[str, float]],
    start: float,
    writes: float | None = None,
    cpu_s: float | None = None,
    watches: int | None = None,
) -> str:
    """An apiserver's /metrics: ``requests`` GETs, ``rejected`` 429s (and APF rejections),
    and, when given, ``writes`` PATCHes and ``cpu_s`` CPU seconds (counters) and
    ``watches`` registered watches; one APF level.
    """
    pl = 'flow_schema="noisy",priority_level="workload-low"'
    rej = "apiserver_flowcontrol_rejected_requests_total"
    extra = []
    if writes is not None:
        extra.append(
            f'apiserver_request_total{{code="200",verb="PATCH",resource="leases"}} {writes:g}'
        )
    if watches is not None:
        watch_lines = [
            "# TYPE apiserver_longrunning_requests gauge",
            f'apiserver_longrunning_requests{{verb="WATCH",resource="pods",scope="cluster"}} '
            f"{watches}",
        ]
    else:
        watch_lines = []
    cpu = (
        []
        if cpu_s is None
        else ["# TYPE process_cpu_seconds_total counter", f"process_cpu_seconds_total {cpu_s:g}"]
    )
    return "\n".join(
        [
            "# TYPE apiserver_request_total counter",
            f'apiserver_request_total{{code="200",verb="GET",resource="pods"}} {requests:g}',
            *extra,
            f'apiserver_request_total{{code="429",verb="LIST",resource="pods"}} {rejected:g}',
            f"# TYPE {rej} counter",
            f'{rej}{{{pl},reason="queue-full"}} {rejected:g}',
            "# TYPE apiserver_flowcontrol_current_inqueue_requests gauge",
            f"apiserver_flowcontrol_current_inqueue_requests{{{pl}}} {queued}",
            "# TYPE apiserver_flowcontrol_current_executing_requests gauge",
            f"apiserver_flowcontrol_current_executing_requests{{{pl}}} 10",
            histogram(
                "apiserver_flowcontrol_request_wait_duration_seconds",
                f'execute="true",{pl}',
                wait,
                1.0,
            ),
            "# TYPE process_start_time_seconds gauge",
            f"process_start_time_seconds {start:g}",
            "# TYPE process_resident_memory_bytes gauge",
            "process_resident_memory_bytes 1.073741824e+09",
            *cpu,
            *watch_lines,
            "",
        ]
    )


def pod(
    name: str,
    *,
    node: str = "",
    unschedulable: str = "",
    namespace: str = "shop",
    created: float = T0 - 600,
) -> dict[str, Any]:
    """A Pending pod as kubectl prints it: bound to ``node``, or refused by the scheduler
    with the message ``unschedulable``, or (neither) not yet tried."""
    conditions = []
    if unschedulable:
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable,
                "lastTransitionTime": iso(created + 1),
            }
        )
    elif node:
        conditions.append(
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(created + 1)}
        )
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "registry.example/app:1"}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": iso(created)},
        "spec": spec,
        "status": {"phase": "Pending", "conditions": conditions},
    }


def warning(
    pod_name: str, reason: str, message: str, at: float, *, namespace: str = "shop"
) -> dict[str, Any]:
    """A Warning Event about a pod, as ``kubectl get events -A -o json`` prints it."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "type": "Warning",
        "metadata": {"name": f"{pod_name}.{reason.lower()}", "namespace": namespace},
        "involvedObject": {"kind": "Pod", "namespace": namespace, "name": pod_name},
        "reason": reason,
        "message": message,
        "count": 3,
        "firstTimestamp": iso(at - 120),
        "lastTimestamp": iso(at),
    }


REAL_CAPTURED_AT = 1_782_468_800
"""When :func:`real_bundle`'s scrapes were taken: 70 s after the minikube etcd member's
process started, years after the qubership member's."""


def real_bundle(root: Path) -> Path:
    """The real dumps in the bundle layout (one scrape each, so values are lifetime, but
    for the counters of a process started within the look-back: since its start)."""
    at = REAL_CAPTURED_AT
    f = FIXTURES
    copies = {
        "nri-k8s-1.35_kube-apiserver_metrics.prom": f"metrics/apiserver/minikube/{at}.prom",
        "nri-k8s-1.35_etcd_metrics.prom": f"metrics/etcd/minikube/{at}.prom",
        "qubership_etcd-3.4.3_follower_metrics.prom": f"metrics/etcd/qubership/{at}.prom",
        "nri-k8s-1.35_kube-scheduler_metrics.prom": f"metrics/scheduler/minikube/{at}.prom",
        "nri-k8s-1.35_kube-controller-manager_metrics.prom": (
            f"metrics/controller-manager/minikube/{at}.prom"
        ),
        "apf_dump_priority_levels.kueue-issue-2973.txt": f"apf/kind/{at}.txt",
        "openshift-insights_gcp-3zone_nodelist.json": "api/nodes.json",
    }
    for src, dst in copies.items():
        (root / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f / src, root / dst)
    pods = yaml.safe_load((f / "nri-k8s-1.35_pods.yaml").read_text())
    (root / "api" / "pods.json").write_text(json.dumps(pods, indent=4))
    return root


def _sample_family(line: str) -> str:
    name = line.partition(" ")[0].partition("{")[0]
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def with_value(text: str, families: Iterable[str], value: str) -> str:
    """A scrape with every sample of ``families`` set to ``value`` (``NaN``, ``+Inf``,
    ``-Inf``), and a sample of each family it lacks added with that value (a histogram's
    as a ``+Inf`` bucket, a sum and a count).
    """
    wanted = set(families)
    seen: set[str] = set()
    lines = []
    for line in text.splitlines():
        family = _sample_family(line)
        if line and not line.startswith("#") and family in wanted:
            seen.add(family)
            line = f"{line.rsplit(' ', 1)[0]} {value}"
        lines.append(line)
    for family in sorted(wanted - seen):
        lines += [
            f'{family}_bucket{{le="+Inf"}} {value}',
            f"{family}_sum {value}",
            f"{family}_count {value}",
            f"{family} {value}",
        ]
    return "\n".join(lines) + "\n"
