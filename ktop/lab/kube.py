"""Kubernetes API helpers for the lab (kubernetes-asyncio)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator, Awaitable, Iterable
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from ktop.lab.config import (
    LOW_USER,
    MARKER_NAME,
    MARKER_NAMESPACE,
    RACK_LABEL,
    REGION,
    REGION_LABEL,
    ZONE_LABEL,
)
from ktop.lab.pki import EKS_METRICS_SERVICE
from ktop.lab.util import LabError

FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"


@contextlib.asynccontextmanager
async def api_client(
    kubeconfig: Path | str, context: str | None = None
) -> AsyncIterator[client.ApiClient]:
    """An ApiClient for `kubeconfig` (optionally a given context), closed on exit."""
    cfg = client.Configuration()
    await config.load_kube_config(
        config_file=str(kubeconfig), context=context, client_configuration=cfg
    )
    api = client.ApiClient(configuration=cfg)
    try:
        yield api
    finally:
        await api.close()


async def gather_limited(coros: Iterable[Awaitable[Any]], limit: int = 16) -> list[Any]:
    """Await `coros` with at most `limit` in flight."""
    sem = asyncio.Semaphore(limit)

    async def run(coro: Awaitable[Any]) -> Any:
        async with sem:
            return await coro

    return list(await asyncio.gather(*(run(c) for c in coros)))


def body(obj: dict[str, Any]) -> Any:
    """A request body: kubernetes-asyncio serialises plain dicts, its stubs want models."""
    return obj


def node_name(zone: str, rack: int, index: int) -> str:
    """Fake node name, e.g. `kwok-zone-a-r03-0012`."""
    return f"kwok-{zone}-r{rack:02d}-{index:04d}"


def rack_name(zone: str, rack: int) -> str:
    """Rack label value, e.g. `zone-a-rack-03`."""
    return f"{zone}-rack-{rack:02d}"


def fake_node_manifests(
    count: int, zones: tuple[str, ...], racks_per_zone: int
) -> list[dict[str, Any]]:
    """v1.Node bodies spread round-robin over zones and racks.

    No kwok NoSchedule taint: ordinary pods must be able to schedule onto these nodes (the
    scheduler-backlog scenario contrasts them with pods that cannot). kwok finds them by the
    zone label (one kwok per zone), the annotation only documents that they are fake.
    """
    nodes = []
    for i in range(count):
        zone = zones[i % len(zones)]
        rack = (i // len(zones)) % racks_per_zone
        name = node_name(zone, rack, i)
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {
                        FAKE_NODE_ANNOTATION: "fake",
                        "node.alpha.kubernetes.io/ttl": "0",
                    },
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "kubernetes.io/os": "linux",
                        "kubernetes.io/arch": "amd64",
                        "type": "kwok",
                        ZONE_LABEL: zone,
                        REGION_LABEL: REGION,
                        RACK_LABEL: rack_name(zone, rack),
                    },
                },
                "spec": {},
                "status": {
                    "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                    "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                },
            }
        )
    return nodes


async def create_nodes(api: client.ApiClient, manifests: list[dict[str, Any]]) -> None:
    """Create the nodes (idempotent: existing ones are left alone)."""
    core = client.CoreV1Api(api)

    async def create(manifest: dict[str, Any]) -> None:
        try:
            await core.create_node(body(manifest))
        except ApiException as exc:
            if exc.status != 409:
                raise

    await gather_limited((create(m) for m in manifests), limit=16)


def is_ready(node: Any) -> bool:
    """True when the node's Ready condition is True."""
    for cond in (node.status.conditions or []) if node.status else []:
        if cond.type == "Ready":
            return bool(cond.status == "True")
    return False


def has_condition_taint(node: Any) -> bool:
    """True while the node lifecycle controller still has a node.kubernetes.io/* taint on it
    (e.g. not-ready:NoSchedule from before kwok's first status update).
    """
    taints = (node.spec.taints or []) if node.spec else []
    return any(t.key.startswith("node.kubernetes.io/") for t in taints)


async def ready_node_count(api: client.ApiClient) -> tuple[int, int]:
    """(ready and untainted, total) over all nodes."""
    nodes = await client.CoreV1Api(api).list_node()
    ready = sum(1 for n in nodes.items if is_ready(n) and not has_condition_taint(n))
    return ready, len(nodes.items)


async def write_marker(api: client.ApiClient, lab_id: str) -> None:
    """Create the ConfigMap that tells the injector this cluster is a ktop lab."""
    marker = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": MARKER_NAME, "namespace": MARKER_NAMESPACE},
        "data": {"lab-id": lab_id, "created-by": "ktop.lab"},
    }
    core = client.CoreV1Api(api)
    try:
        await core.create_namespaced_config_map(MARKER_NAMESPACE, body(marker))
    except ApiException as exc:
        if exc.status != 409:
            raise
        await core.replace_namespaced_config_map(MARKER_NAME, MARKER_NAMESPACE, body(marker))


async def read_marker(api: client.ApiClient) -> str | None:
    """The lab id stored in the marker ConfigMap, or None when there is no marker."""
    try:
        cm = await client.CoreV1Api(api).read_namespaced_config_map(MARKER_NAME, MARKER_NAMESPACE)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    data = cm.data or {}
    value = data.get("lab-id")
    return str(value) if value else None


async def created(*creates: Awaitable[Any]) -> None:
    """Await each create in turn; one that finds its object there already (409) is done."""
    for create in creates:
        try:
            await create
        except ApiException as exc:
            if exc.status != 409:
                raise


async def grant_low_user_read(api: client.ApiClient, user: str = LOW_USER) -> None:
    """Let the low-privilege `user` get/list/watch everything (it floods LISTs in
    apf-saturation).
    """
    rbac = client.RbacAuthorizationV1Api(api)
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "ktop-lab-reader"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "ktop-lab-reader"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "ktop-lab-reader",
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    await created(
        rbac.create_cluster_role(body(role)), rbac.create_cluster_role_binding(body(binding))
    )


async def create_control_plane(
    api: client.ApiClient, nodes: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> None:
    """Create the control-plane nodes, then their components' pods (idempotent; the
    namespace's ``default`` ServiceAccount first, which admission wants before the
    controller-manager would make it), and post each pod's ``status`` as its kubelet would.
    """
    await create_nodes(api, nodes)
    core = client.CoreV1Api(api)
    namespaces = {p["metadata"]["namespace"] for p in pods}
    new = sorted(namespaces - {"kube-system", "default"})
    await created(*(core.create_namespace(body({"metadata": {"name": ns}})) for ns in new))
    await created(
        *(
            core.create_namespaced_service_account(
                ns, body({"metadata": {"name": "default", "namespace": ns}})
            )
            for ns in sorted(namespaces)
        )
    )
    await created(*(core.create_namespaced_pod(p["metadata"]["namespace"], body(p)) for p in pods))
    for p in pods:  # the kubelet's part for a static pod's mirror: its status
        if status := p.get("status"):
            meta = p["metadata"]
            await core.patch_namespaced_pod_status(
                meta["name"], meta["namespace"], body({"status": status})
            )


def schemaless_crd(group: str, kind: str, plural: str, scope: str) -> dict[str, Any]:
    """A CustomResourceDefinition of ``kind`` in ``group`` (v1) that keeps any field: an
    OpenShift kind the lab's apiservers serve as OpenShift's do, without its schema.
    """
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


OPENSHIFT_CONFIG_CRD = schemaless_crd(
    "config.openshift.io", "ClusterVersion", "clusterversions", "Cluster"
)
"""OpenShift's ClusterVersion, a CRD there too: with it the apiservers list the
``config.openshift.io`` group, as an OpenShift cluster's do."""


async def serve_openshift_config_group(api: client.ApiClient) -> None:
    """Create the ClusterVersion CRD (idempotent) and wait until discovery lists its group."""
    ext = client.ApiextensionsV1Api(api)
    await created(ext.create_custom_resource_definition(body(OPENSHIFT_CONFIG_CRD)))
    group = OPENSHIFT_CONFIG_CRD["spec"]["group"]
    for _ in range(120):
        groups = await client.ApisApi(api).get_api_versions()
        if any(g.name == group for g in groups.groups or []):
            return
        await asyncio.sleep(0.5)
    raise LabError(f"the apiservers never listed the API group {group}")


async def register_eks_metrics(api: client.ApiClient, host: str, port: int, ca: bytes) -> None:
    """Serve ``metrics.eks.amazonaws.com`` through the apiservers: a Service without a
    selector, its Endpoints at ``host:port``, and the APIService (idempotent); returns
    once the APIService is Available.
    """
    ns, name = EKS_METRICS_SERVICE
    core = client.CoreV1Api(api)
    service = {
        "metadata": {"name": name, "namespace": ns},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
    }
    endpoints = {
        "metadata": {"name": name, "namespace": ns},
        "subsets": [{"addresses": [{"ip": host}], "ports": [{"name": "https", "port": port}]}],
    }
    apiservice = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1.metrics.eks.amazonaws.com"},
        "spec": {
            "group": "metrics.eks.amazonaws.com",
            "version": "v1",
            "service": {"namespace": ns, "name": name, "port": 443},
            "caBundle": base64.b64encode(ca).decode(),
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
    await created(
        core.create_namespaced_service(ns, body(service)),
        core.create_namespaced_endpoints(ns, body(endpoints)),
        client.ApiregistrationV1Api(api).create_api_service(body(apiservice)),
    )
    reg = client.ApiregistrationV1Api(api)
    for _ in range(120):
        got = await reg.read_api_service("v1.metrics.eks.amazonaws.com")
        conditions = (got.status.conditions if got.status else None) or []
        if any(c.type == "Available" and c.status == "True" for c in conditions):
            return
        await asyncio.sleep(0.5)
    raise LabError("the metrics.eks.amazonaws.com APIService never became Available")
