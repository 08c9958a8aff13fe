"""A long list of pending pods against the real apiserver: the first page whole, the rest
continuing the same list (its ``continue`` token) as Table rows without objects, then the
watch of whole objects; the same names in two namespaces.

The pods name a scheduler that does not exist, so they stay Pending without a
PodScheduled condition and no other test's scheduler figures see them; they are deleted
at the end (unbound pods go at once). The truth is the API's own list of Pending pods.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ktop.lab import Lab, kube
from ktop.model.area_scheduler import PendingPods
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_PENDING_PODS,
    Event,
    PodWait,
    is_row,
)
from ktop.scrub import Secrets
from ktop.sources.live.client import connect
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.handlers import PendingPodsHandler
from ktop.sources.live.listwatch import ListWatch
from ktop.sources.live.reads import WATCHES
from ktop.sources.live.transport import KubeTransport
from tests.e2e.cadence import POLL_EVERY_S, deadline, steps

NAMESPACES = ("ktop-rows-a", "ktop-rows-b")
PER_NAMESPACE = 130
"""Two namespaces of 130: more than the first page, the same names in both."""
RESOURCE = next(r for r in WATCHES if r.feed == FEED_PENDING_PODS)


def _pod(name: str) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            scheduler_name="ktop-e2e-nobody",
            automount_service_account_token=False,
            containers=[client.V1Container(name="app", image="registry.example/app:1")],
        ),
    )


async def _default_account(core: client.CoreV1Api, ns: str) -> None:
    """The namespace's ``default`` ServiceAccount, which admission wants before a pod
    (made here rather than waited for from the controller-manager)."""
    account = client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="default"))
    try:
        await core.create_namespaced_service_account(ns, account)
    except ApiException as exc:
        if exc.status != 409:
            raise


async def _create(core: client.CoreV1Api, ns: str, names: Sequence[str]) -> None:
    for i in range(0, len(names), 25):
        await asyncio.gather(*(core.create_namespaced_pod(ns, _pod(n)) for n in names[i : i + 25]))


async def _pending(core: client.CoreV1Api) -> Counter[tuple[str, str]]:
    pods = await core.list_pod_for_all_namespaces(field_selector="status.phase=Pending")
    return Counter((p.metadata.namespace, p.metadata.name) for p in pods.items)


def _names(model: PendingPods) -> Counter[str]:
    return Counter(name for _, name in model.pods)


async def test_rows_after_a_whole_page_count_every_pending_pod(lab: Lab) -> None:
    names = [f"pod-{i:03d}" for i in range(PER_NAMESPACE)]
    async with kube.api_client(lab.layout.kubeconfig) as api:
        core = client.CoreV1Api(api)
        for ns in NAMESPACES:
            await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
            await _default_account(core, ns)
            await _create(core, ns, names)
        conn = await connect(str(lab.layout.kubeconfig), None, secrets=Secrets())
        task: asyncio.Task[None] | None = None
        try:
            meter = CostMeter()
            lw = ListWatch(
                KubeTransport(conn.api, meter), RESOURCE, PendingPodsHandler(), time.time
            )
            cluster = ClusterModel()  # the model's own fold of the events
            model = cluster.pending

            def emit(batch: Sequence[Event]) -> None:
                cluster.apply_all(batch)

            await lw.list_all(emit)
            truth = await _pending(core)
            assert sum(truth.values()) > RESOURCE.whole_first  # the list went past a page
            assert len(model.pods) == sum(truth.values())
            assert _names(model) == Counter(name for _, name in truth)
            rows = [p for p in model.pods.values() if is_row(p.namespace)]
            assert len(rows) == sum(truth.values()) - RESOURCE.whole_first
            ours = [p for p in rows if p.name.startswith("pod-")]
            assert ours and all(p.wait is PodWait.NOT_BOUND and not p.node for p in ours)
            whole = {k for k in model.pods if not is_row(k[0])}
            assert whole <= set(truth)  # the pods read whole are real pods, named whole

            # the watch: deletions among rows and whole pods, new pods of a listed name
            task = asyncio.create_task(lw.run(emit))
            for ns, first in ((NAMESPACES[1], 0), (NAMESPACES[0], 100)):
                await asyncio.gather(
                    *(core.delete_namespaced_pod(n, ns) for n in names[first : first + 20])
                )
            await _create(core, NAMESPACES[0], [f"pod-{i:03d}-new" for i in range(5)])
            expected = await _pending(core)
            ends = time.monotonic() + deadline(steps(2))
            while _names(model) != Counter(name for _, name in expected):
                assert time.monotonic() < ends, (
                    f"{len(model.pods)} pending pods after the watch, "
                    f"{sum(expected.values())} in the API"
                )
                await asyncio.sleep(POLL_EVERY_S)
                expected = await _pending(core)
            assert len(model.pods) == sum(expected.values())
        finally:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            await conn.close()
            for ns in NAMESPACES:
                await core.delete_namespace(ns)
            await _wait_gone(core)


async def _wait_gone(core: client.CoreV1Api) -> None:
    """Until no pod of ours is Pending (so that later tests' lists do not see them)."""
    ends = time.monotonic() + deadline(steps(2))
    while any(ns in NAMESPACES for ns, _ in await _pending(core)):
        assert time.monotonic() < ends, "the test's pods were not deleted"
        await asyncio.sleep(POLL_EVERY_S)
