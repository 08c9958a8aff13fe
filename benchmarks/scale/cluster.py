"""The benchmark's cluster: the lab control plane, filled with static real-shaped objects."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.scale import objects
from benchmarks.scale.api import Api, Server, limited
from ktop.lab import Lab, LabConfig

NODES = "/api/v1/nodes"
LEASES = f"/apis/coordination.k8s.io/v1/namespaces/{objects.LEASE_NAMESPACE}/leases"
PODS = f"/api/v1/namespaces/{objects.PENDING_NAMESPACE}/pods"
GRACE_S = 3600
"""Node monitor grace period: static nodes stay Ready for the run without 1,000 writes/s."""
MONITOR_PERIOD_S = 5
"""The node lifecycle controller's period: Kubernetes' default (the lab's e2e default of
2 s walked 50,000 nodes every 2 s, half a core of the controller-manager beside ktop)."""
QUIET_CONTROLLERS = ("ttl",)
"""Controllers the benchmark's lab runs without. The TTL controller writes every node's
``node.alpha.kubernetes.io/ttl`` annotation again each time the cluster's size crosses one
of its boundaries (100, 500, 1,000, 2,000, 10,000 nodes) and every new node once: creating
thousands of nodes in minutes made it rewrite them for many minutes after (at 50,000 nodes
longer than the run), so the steady and idle windows measured its writes, not a cluster
at rest."""
QUIET_ADMISSION = ("TaintNodesByCondition",)
"""Admission plugins the benchmark's apiservers run without. TaintNodesByCondition gives
every node created the ``node.kubernetes.io/not-ready:NoSchedule`` taint, which the node
lifecycle controller then removes from each Ready node, a GET and a PATCH a node at the
controller-manager's 300 requests/s: after 100,000 nodes, 12 minutes of 140 node writes a
second and two cores busy (the lab never settled within the probe's wait, and ktop's start
measured that churn). A cluster at rest has no such taint on its Ready nodes, which is what
the benchmark's nodes are meant to be."""


def log(msg: str) -> None:
    """Progress on stderr."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def start_lab(lab_dir: Path, kwok_nodes: int) -> Lab:
    """One etcd, two apiservers, scheduler, controller-manager, kwok; no Prometheus."""
    cfg = LabConfig(
        nodes=kwok_nodes,
        etcd_members=1,
        prometheus=False,
        node_monitor_grace_period_s=GRACE_S,
        node_monitor_period_s=MONITOR_PERIOD_S,
        max_requests_inflight=400,
        max_mutating_requests_inflight=200,
        start_timeout_s=600.0,
        disabled_controllers=QUIET_CONTROLLERS,
        extra_apiserver_args=("--disable-admission-plugins=" + ",".join(QUIET_ADMISSION),),
    )
    lab = Lab(lab_dir, cfg)
    lab.start()
    return lab


def server(info: dict[str, Any], lab_dir: Path) -> Server:
    """The first apiserver, as the lab's admin."""
    return Server(info["apiservers"][0]["url"], info["admin_token"], str(lab_dir / "pki/ca.crt"))


async def populate(
    api: Api, nodes: int, pods: int, concurrency: int, *, racks: bool = True
) -> float:
    """Create the nodes (with rack labels or without), their Leases and the pending pods;
    seconds taken.
    """
    t0 = time.monotonic()
    now = time.time()

    def node_jobs() -> Any:
        for body in objects.nodes(nodes, now, racks=racks):
            yield lambda body=body: api.create(NODES, body)

    def lease_jobs() -> Any:
        for i in range(nodes):
            body = objects.lease(objects.node_name(i), now)
            yield lambda body=body: api.create(LEASES, body)

    await limited(node_jobs(), concurrency)
    log(f"{nodes} nodes created in {time.monotonic() - t0:.0f}s")
    await limited(lease_jobs(), concurrency)
    log(f"{nodes} Leases created ({time.monotonic() - t0:.0f}s)")
    if pods:
        ns = {"apiVersion": "v1", "kind": "Namespace"}
        ns["metadata"] = {"name": objects.PENDING_NAMESPACE}  # type: ignore[assignment]
        await api.create("/api/v1/namespaces", ns)

        def pod_jobs() -> Any:
            for body, status in objects.pending_pods(pods):
                yield lambda body=body, status=status: _pod(api, body, status)

        await limited(pod_jobs(), concurrency)
        log(f"{pods} pending pods created ({time.monotonic() - t0:.0f}s)")
    return time.monotonic() - t0


async def _pod(api: Api, body: dict[str, Any], status: dict[str, Any]) -> None:
    await api.create(PODS, body)
    code, text = await api.request(
        "PATCH",
        f"{PODS}/{body['metadata']['name']}/status",
        status,
        content_type="application/merge-patch+json",
    )
    if code != 200:
        raise RuntimeError(f"pod status: {code} {text[:200]!r}")


@dataclass
class Renewer:
    """Renews node Leases like kubelets do, at a rate the machine can carry."""

    api: Api
    nodes: int
    per_s: float
    running: asyncio.Event = field(default_factory=asyncio.Event)
    renewed: int = 0

    async def run(self) -> None:
        """Renew round-robin, ``per_s`` Leases a second, while ``running`` is set."""
        i = 0
        sem = asyncio.Semaphore(16)
        tasks: set[asyncio.Task[None]] = set()
        next_at = time.monotonic()
        while True:
            await self.running.wait()
            next_at = max(next_at + 1.0 / self.per_s, time.monotonic() - 1.0)
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            name = objects.node_name(i % self.nodes)
            i += 1
            await sem.acquire()
            task = asyncio.create_task(self._renew(name, sem))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def _renew(self, name: str, sem: asyncio.Semaphore) -> None:
        try:
            patch = {"spec": {"renewTime": objects.rfc3339_micro(time.time())}}
            code, _ = await self.api.request(
                "PATCH", f"{LEASES}/{name}", patch, "application/merge-patch+json"
            )
            if code == 200:
                self.renewed += 1
        except aiohttp.ClientError:
            pass  # the lab is stopping, or a renewal failed: a kubelet would try again
        finally:
            sem.release()
