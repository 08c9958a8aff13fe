"""Scenarios that only use the Kubernetes API (they also work on a kind cluster)."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import Counter
from typing import Any

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ktop.bounds import FLOOD_DURATION
from ktop.lab import kube
from ktop.lab.config import LOW_USER, RACK_LABEL
from ktop.lab.target import LabTarget

BACKLOG_NS = "ktop-lab-backlog"
MAINTENANCE_TAINT = {"key": "ktop.dev/maintenance", "value": "true", "effect": "NoSchedule"}
APF_NAME = "ktop-lab-low"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


def _pod(
    name: str, *, gpu: bool = False, node_selector: dict[str, str] | None = None
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    if gpu:
        resources = {
            "requests": {"cpu": "100m", "nvidia.com/gpu": "1"},
            "limits": {"nvidia.com/gpu": "1"},
        }
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": PAUSE_IMAGE, "resources": resources}],
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": 0,
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/part-of": "ktop-lab"}},
        "spec": spec,
    }


async def _set_taint(core: client.CoreV1Api, node: str, add: bool) -> None:
    """Add or remove the maintenance taint, keeping every other taint."""
    obj = await core.read_node(node)
    taints = [t.to_dict() for t in (obj.spec.taints or [])]
    taints = [
        {k: v for k, v in t.items() if v is not None}
        for t in taints
        if t["key"] != MAINTENANCE_TAINT["key"]
    ]
    if add:
        taints.append(dict(MAINTENANCE_TAINT))
    await core.patch_node(node, {"spec": {"taints": taints}})


async def _ensure_namespace(core: client.CoreV1Api, name: str) -> None:
    try:
        await core.create_namespace(
            kube.body({"metadata": {"name": name, "labels": {"ktop.dev/lab": "scenario"}}})
        )
    except ApiException as exc:
        if exc.status != 409:
            raise
    # ServiceAccount admission needs the namespace's default ServiceAccount.
    deadline = time.monotonic() + 60
    while True:
        try:
            await core.read_namespaced_service_account("default", name)
            return
        except ApiException as exc:
            if exc.status != 404 or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.5)


async def scheduler_backlog(
    target: LabTarget,
    gpu_pods: int = 20,
    tainted_pods: int = 10,
    ok_pods: int = 10,
    rack: str = "zone-b-rack-00",
) -> dict[str, Any]:
    """Create pods the real scheduler cannot place: ones requesting nvidia.com/gpu (no node
    has any) and ones pinned to rack `rack`, whose nodes get a NoSchedule taint they do not
    tolerate. `ok_pods` ordinary pods schedule normally for contrast.
    """
    async with kube.api_client(target.kubeconfig, target.context) as api:
        core = client.CoreV1Api(api)
        nodes = await core.list_node(label_selector=f"{RACK_LABEL}={rack}")
        tainted = [n.metadata.name for n in nodes.items]
        await kube.gather_limited(_set_taint(core, n, True) for n in tainted)
        await _ensure_namespace(core, BACKLOG_NS)
        pods = [_pod(f"gpu-job-{i:03d}", gpu=True) for i in range(gpu_pods)]
        pods += [
            _pod(f"rack-pinned-{i:03d}", node_selector={RACK_LABEL: rack})
            for i in range(tainted_pods)
        ]
        pods += [_pod(f"ordinary-{i:03d}") for i in range(ok_pods)]

        async def create(body: dict[str, Any]) -> None:
            try:
                await core.create_namespaced_pod(BACKLOG_NS, kube.body(body))
            except ApiException as exc:
                if exc.status != 409:
                    raise

        await kube.gather_limited(create(p) for p in pods)
    return {
        "scenario": "scheduler-backlog",
        "namespace": BACKLOG_NS,
        "tainted_nodes": tainted,
        "rack": rack,
        "gpu_pods": gpu_pods,
        "tainted_pods": tainted_pods,
        "ok_pods": ok_pods,
    }


async def recover_scheduler_backlog(
    target: LabTarget, rack: str = "zone-b-rack-00"
) -> dict[str, Any]:
    """Delete the backlog namespace and remove the maintenance taint."""
    async with kube.api_client(target.kubeconfig, target.context) as api:
        core = client.CoreV1Api(api)
        try:
            await core.delete_namespace(BACKLOG_NS)
        except ApiException as exc:
            if exc.status != 404:
                raise
        nodes = await core.list_node(label_selector=f"{RACK_LABEL}={rack}")
        await kube.gather_limited(_set_taint(core, n.metadata.name, False) for n in nodes.items)
    return {"scenario": "scheduler-backlog", "recovered": True}


# -- apf-saturation ------------------------------------------------------------------------
MAX_FLOOD_S = FLOOD_DURATION.high
"""The longest a flood given a duration lasts (``--duration`` is bounded)."""
WATCH_FLOOD_S = 60.0
"""``python -m ktop.lab inject apf-saturation``'s default duration: long enough to watch."""


def _apf_objects(user: str) -> tuple[dict[str, Any], dict[str, Any]]:
    plc = {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": APF_NAME},
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 1,
                "lendablePercent": 0,
                "borrowingLimitPercent": 0,
                "limitResponse": {
                    "type": "Queue",
                    "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 2},
                },
            },
        },
    }
    fs = {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": APF_NAME},
        "spec": {
            "priorityLevelConfiguration": {"name": APF_NAME},
            "matchingPrecedence": 500,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": user}}],
                    "resourceRules": [
                        {
                            "verbs": ["*"],
                            "apiGroups": ["*"],
                            "resources": ["*"],
                            "namespaces": ["*"],
                            "clusterScope": True,
                        }
                    ],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                }
            ],
        },
    }
    return plc, fs


async def _apply_apf(api: client.ApiClient, user: str) -> None:
    flow = client.FlowcontrolApiserverV1Api(api)
    plc, fs = _apf_objects(user)
    for create, replace, body in (
        (flow.create_priority_level_configuration, flow.replace_priority_level_configuration, plc),
        (flow.create_flow_schema, flow.replace_flow_schema, fs),
    ):
        try:
            await create(kube.body(body))
        except ApiException as exc:
            if exc.status != 409:
                raise
            current = await (
                flow.read_priority_level_configuration(APF_NAME)
                if body is plc
                else flow.read_flow_schema(APF_NAME)
            )
            body["metadata"]["resourceVersion"] = current.metadata.resource_version
            await replace(APF_NAME, kube.body(body))


async def _flood(
    urls: list[str],
    token: str,
    *,
    conns: int,
    max_requests: int,
    max_seconds: float,
    min_rejected: int,
    duration_s: float | None = None,
) -> Counter[int]:
    """Concurrent cluster-wide LISTs as the low user, bounded in count and time: until
    enough are rejected (at least 3 s), or for exactly ``duration_s`` when it is given
    (at most :data:`MAX_FLOOD_S`, whatever the request count).
    """
    statuses: Counter[int] = Counter()
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    started = time.monotonic()
    if duration_s is not None:
        deadline = started + min(max(duration_s, 0.0), MAX_FLOOD_S)
    else:
        deadline = started + max_seconds
    sent = 0

    def keep_going() -> bool:
        if time.monotonic() >= deadline:
            return False
        if duration_s is not None:
            return True
        if sent >= max_requests:
            return False
        # Enough evidence: stop early, but flood for at least 3 s so Prometheus scrapes it.
        return not (statuses[429] >= min_rejected and time.monotonic() - started > 3.0)

    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(ssl=ctx, limit=conns * len(urls)),
        headers={"Authorization": f"Bearer {token}"},
        timeout=aiohttp.ClientTimeout(total=30),
    ) as session:

        async def worker(url: str) -> None:
            nonlocal sent
            paths = ("/api/v1/nodes", "/api/v1/pods", "/api/v1/events", "/api/v1/configmaps")
            i = 0
            while keep_going():
                sent += 1
                i += 1
                try:
                    async with session.get(url + paths[i % len(paths)]) as resp:
                        await resp.read()
                        statuses[resp.status] += 1
                except (TimeoutError, aiohttp.ClientError):
                    statuses[0] += 1

        await asyncio.gather(*(worker(u) for u in urls for _ in range(conns)))
    return statuses


async def apf_saturation(
    target: LabTarget,
    low_token: str | None = None,
    conns: int = 48,
    max_requests: int = 20000,
    max_seconds: float = 20.0,
    min_rejected: int = 50,
    user: str = LOW_USER,
    duration_s: float | None = None,
) -> dict[str, Any]:
    """Put the low-privilege user in a tiny priority level (1 share, 1 queue of 2) and flood
    expensive LISTs as that user until the level queues and rejects with 429, or for
    ``duration_s`` seconds when it is given (to watch it: at most :data:`MAX_FLOOD_S`).
    """
    token = low_token or (target.info or {}).get("low_user", {}).get("token")
    if not token:
        raise ValueError("apf-saturation needs the low-privilege user's token")
    async with kube.api_client(target.kubeconfig, target.context) as api:
        await _apply_apf(api, user)
        host = api.configuration.host
    urls = [str(a["url"]) for a in target.info["apiservers"]] if target.info else [str(host)]
    await asyncio.sleep(2.0)  # let both apiservers' APF config controllers see the objects
    statuses = await _flood(
        urls,
        token,
        conns=conns,
        max_requests=max_requests,
        max_seconds=max_seconds,
        min_rejected=min_rejected,
        duration_s=duration_s,
    )
    return {
        "scenario": "apf-saturation",
        "priority_level": APF_NAME,
        "user": user,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
    }


async def recover_apf_saturation(target: LabTarget) -> dict[str, Any]:
    """Delete the FlowSchema and PriorityLevelConfiguration."""
    async with kube.api_client(target.kubeconfig, target.context) as api:
        flow = client.FlowcontrolApiserverV1Api(api)
        for delete in (flow.delete_flow_schema, flow.delete_priority_level_configuration):
            try:
                await delete(APF_NAME)
            except ApiException as exc:
                if exc.status != 404:
                    raise
    return {"scenario": "apf-saturation", "recovered": True}
