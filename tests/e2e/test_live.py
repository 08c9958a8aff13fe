"""ktop's live source against the real control plane: it shows the same truth as the API.

ktop runs as a ServiceAccount bound to the ClusterRole in docs/rbac.yaml, so
these tests also prove that role is enough.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from kubernetes_asyncio import client

from ktop.lab import Lab, inject, recover, resolve_target
from ktop.lab.config import ZONE_LABEL
from ktop.model.events import PodWait, Readiness
from ktop.model.snapshot import ClusterSnapshot, ZoneState
from ktop.model.zones import zone_state
from tests.e2e.helpers import promql_by
from tests.e2e.live import account, live, options

UNREACHABLE = "node.kubernetes.io/unreachable"


def _ready(node: Any) -> str:
    for c in node.status.conditions or []:
        if c.type == "Ready":
            return str(c.status)
    return "Unknown"


async def _api_nodes(lab: Lab) -> list[Any]:
    from ktop.lab import kube

    async with kube.api_client(lab.layout.kubeconfig) as api:
        return list((await client.CoreV1Api(api).list_node()).items)


def _truth_by_zone(nodes: list[Any]) -> dict[str, tuple[int, int, ZoneState]]:
    ready: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for n in nodes:
        z = n.metadata.labels.get(ZONE_LABEL, "")
        total[z] += 1
        ready[z] += _ready(n) == "True"
    return {z: (ready[z], total[z], zone_state(ready[z], total[z] - ready[z])) for z in total}


def _ktop_by_zone(s: ClusterSnapshot) -> dict[str, tuple[int, int, ZoneState]]:
    return {z.zone: (z.ready, z.total, z.state or ZoneState.INITIAL) for z in s.nodes.zones}


async def test_reads_every_area_with_the_documented_rbac(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    async with live(options(lab, kubeconfig)) as run:
        truth = _truth_by_zone(await _api_nodes(lab))

        def complete(s: ClusterSnapshot) -> bool:
            return (
                s.nodes.nodes_known
                and _ktop_by_zone(s) == truth
                and s.scheduler.pods_known
                and len([r for r in s.apiservers.instances if r.requests_per_s.known]) == 2
                and len(s.etcd.members) == 3
                and s.etcd.leader != ""
                and bool(s.apf.levels)
                and s.scheduler.queue["active"].known
            )

        snap = await run.until(complete, timeout_s=60, what="every area read")
        failing = [f"{f.name}: {f.error}" for f in snap.freshness if f.error]
        assert failing == []
        assert snap.source_kind == "live"
        # nodes, pending pods, events, resourcequotas, apiserver identities (node Leases
        # are sampled, not watched)
        assert snap.self_cost is not None and snap.self_cost.open_watches == 5


async def test_zone_outage_nodes_and_zone_states_equal_the_api(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    target = resolve_target(lab.layout.kubeconfig)
    async with live(options(lab, kubeconfig)) as run:
        await run.until(lambda s: s.nodes.nodes_known, timeout_s=30, what="nodes listed")
        await inject("zone-outage", target, zone="zone-a")
        try:

            def outage(s: ClusterSnapshot) -> bool:
                zones = {z.zone: z for z in s.nodes.zones}
                a = zones["zone-a"]
                return (
                    a.state is ZoneState.FULL_DISRUPTION
                    and a.unknown == a.total
                    and all(zones[z].state is ZoneState.NORMAL for z in ("zone-b", "zone-c"))
                )

            await run.until(
                outage, timeout_s=lab.cfg.node_monitor_grace_period_s + 90, what="zone-a down"
            )

            async def agree() -> bool:
                api = await _api_nodes(lab)
                return _ktop_by_zone(run.snapshot()) == _truth_by_zone(api)

            for _ in range(60):
                if await agree():
                    break
                await asyncio.sleep(0.5)
            assert await agree()
            s = run.snapshot()
            a_nodes = [
                n for n in await _api_nodes(lab) if n.metadata.labels[ZONE_LABEL] == "zone-a"
            ]
            tainted = {
                n.metadata.name
                for n in a_nodes
                if any(t.key == UNREACHABLE for t in n.spec.taints or [])
            }
            listed = {n.name: n for n in s.nodes.not_ready_nodes}
            assert set(listed) == {n.metadata.name for n in a_nodes}

            def detailed(s: ClusterSnapshot) -> bool:
                got = {n.name: n for n in s.nodes.not_ready_nodes}
                return all(
                    got[name].ready == Readiness.UNKNOWN.value and got[name].tainted_unreachable
                    for name in tainted
                )

            await run.until(detailed, timeout_s=60, what="not-Ready nodes detailed")

            # Lease lag is sampled (each Lease's lag when it was last read, by name every
            # round for a not-Ready node): within a few rounds every stopped kubelet's
            # Lease is read again and lags by more than the lease duration.
            def lagging(s: ClusterSnapshot) -> bool:
                down = s.nodes.not_ready_nodes
                limit = lab.cfg.node_lease_duration_s
                return bool(down) and all(n.lease_lag_s.or_(0) > limit for n in down)

            await run.until(lagging, timeout_s=60, what="every not-Ready node's Lease lagging")
        finally:
            await recover("zone-outage", target, zone="zone-a")
        await run.until(lambda s: s.nodes.ready == s.nodes.total, timeout_s=120, what="zone-a back")


async def test_pending_reasons_equal_the_schedulers_messages(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    target = resolve_target(lab.layout.kubeconfig)
    async with live(options(lab, kubeconfig)) as run:
        await inject("scheduler-backlog", target)
        try:
            from ktop.lab import kube

            async def api_unschedulable() -> dict[str, str]:
                async with kube.api_client(lab.layout.kubeconfig) as api:
                    pods = await client.CoreV1Api(api).list_namespaced_pod("ktop-lab-backlog")
                out = {}
                for p in pods.items:
                    for c in p.status.conditions or []:
                        if c.type == "PodScheduled" and c.reason == "Unschedulable":
                            out[p.metadata.name] = c.message
                return out

            def reasons(s: ClusterSnapshot) -> dict[str, int]:
                return {r.reason: r.pods for r in s.scheduler.reasons}

            await run.until(
                lambda s: s.scheduler.pending_by_wait[PodWait.UNSCHEDULABLE] >= 30,
                timeout_s=90,
                what="30 unschedulable pods",
            )
            truth = await api_unschedulable()
            snap = run.snapshot()
            assert snap.scheduler.pending_by_wait[PodWait.UNSCHEDULABLE] == len(truth)
            got = reasons(snap)
            gpu = sum(1 for m in truth.values() if "Insufficient nvidia.com/gpu" in m)
            taint = sum(1 for m in truth.values() if "untolerated taint" in m)
            assert got["Insufficient nvidia.com/gpu"] == gpu == 20
            assert sum(v for k, v in got.items() if "untolerated taint" in k) >= taint
            samples = {p for r in snap.scheduler.reasons for p in r.sample_pods}
            assert samples and all(p.split("/", 1)[1] in truth for p in samples)
        finally:
            await recover("scheduler-backlog", target)


async def test_apf_and_instances_equal_prometheus(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    target = resolve_target(lab.layout.kubeconfig)
    async with live(options(lab, kubeconfig)) as run:
        await inject("apf-saturation", target)
        try:
            low = "ktop-lab-low"

            def rejecting(s: ClusterSnapshot) -> Any:
                row = next((r for r in s.apf.levels if r.priority_level == low), None)
                return row if row and row.rejected_total_per_s.or_(0) > 0 else None

            await run.until(rejecting, timeout_s=60, what=f"{low} rejections seen by ktop")
            # Gauges and start times agree exactly with what Prometheus scraped.
            starts = promql_by(lab, 'process_start_time_seconds{job="apiserver"}', "instance")
            rows = {r.instance: r for r in run.snapshot().apiservers.instances}
            assert set(rows) == set(starts)
            for inst, start in starts.items():
                assert rows[inst].start_time.value == start

            def limits_agree(s: ClusterSnapshot) -> bool:
                prom = promql_by(
                    lab,
                    f'apiserver_flowcontrol_current_limit_seats{{priority_level="{low}"}}',
                    "instance",
                )
                ktop = {
                    r.instance: r.seats_limit.value
                    for r in s.apf.per_instance
                    if r.priority_level == low
                }
                return len(prom) == 2 and ktop == prom

            await run.until(limits_agree, timeout_s=30, what="seat limits equal Prometheus")
        finally:
            await recover("apf-saturation", target)


async def test_quota_at_its_limit_and_apiserver_identities(lab: Lab) -> None:
    from ktop.lab import kube

    ns = "ktop-quota"
    async with kube.api_client(lab.layout.kubeconfig) as api:
        core = client.CoreV1Api(api)
        meta = client.V1ObjectMeta
        await core.create_namespace(client.V1Namespace(metadata=meta(name=ns)))
        quota = client.V1ResourceQuota(
            metadata=meta(name="tiny"), spec=client.V1ResourceQuotaSpec(hard={"services": "1"})
        )
        await core.create_namespaced_resource_quota(ns, quota)
        service = client.V1Service(
            metadata=meta(name="one"),
            spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)]),
        )
        await core.create_namespaced_service(ns, service)
        # The lab's quota controller counts the service into the quota's status (usually
        # at once, but its workers wait while it resyncs its monitors, and the suite's
        # earlier tests load the controller-manager): what ktop must show is what the API
        # holds, so wait for the API to hold it first.
        last: Any = None
        deadline = asyncio.get_running_loop().time() + 180
        while True:
            status = (await core.read_namespaced_resource_quota("tiny", ns)).status
            last = (status.hard, status.used) if status else None
            if status and (status.used or {}).get("services") == "1":
                break
            assert asyncio.get_running_loop().time() < deadline, (
                f"the lab's quota controller did not count the service in 180 s: {last}"
            )
            await asyncio.sleep(1)
    kubeconfig = await account(lab, "ktop")
    try:
        async with live(options(lab, kubeconfig)) as run:

            def listed(s: ClusterSnapshot) -> Any:
                return next((q for q in s.scheduler.quotas_near_limit if q.namespace == ns), None)

            full = await run.until(listed, timeout_s=60, what="the full quota listed")
            assert (full.name, full.resource, full.hard, full.used) == (
                "tiny",
                "services",
                1.0,
                1.0,
            )
            assert any(f.code == "KT-SCHED-004" for f in run.hub.latest.findings)
            snap = await run.until(
                lambda s: s.apiservers.identities is not None,
                timeout_s=30,
                what="identity leases read",
            )
            # Both lab apiservers run on one host, so they share one identity Lease.
            assert snap.apiservers.identities == 1
    finally:
        async with kube.api_client(lab.layout.kubeconfig) as api:
            await client.CoreV1Api(api).delete_namespace(ns)


async def test_apiserver_skew_per_instance_numbers_equal_prometheus(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    target = resolve_target(lab.layout.kubeconfig)
    b = next(a["url"] for a in lab.info["apiservers"] if a["name"] == "apiserver-b")
    b = b.split("//", 1)[1]
    async with live(options(lab, kubeconfig)) as run:
        await run.until(
            lambda s: len([r for r in s.apiservers.instances if r.requests_per_s.known]) == 2,
            timeout_s=60,
            what="both instances with rates",
        )
        started = {r.instance: r.start_time.value for r in run.snapshot().apiservers.instances}
        result = await inject("apiserver-skew", target)
        assert result["restarted"] == "apiserver-b"

        def restarted(s: ClusterSnapshot) -> bool:
            rows = {r.instance: r for r in s.apiservers.instances}
            return (rows[b].start_time.value or 0) > (started[b] or 0) and not rows[b].error

        await run.until(restarted, timeout_s=90, what="ktop sees apiserver-b restarted")

        def agrees(s: ClusterSnapshot) -> bool:
            prom = promql_by(lab, 'process_start_time_seconds{job="apiserver"}', "instance")
            return {r.instance: r.start_time.value for r in s.apiservers.instances} == prom

        await run.until(agrees, timeout_s=30, what="start times equal Prometheus'")
        titles = [f.title for f in run.hub.latest.findings if f.code == "KT-API-003"]
        assert any(t.startswith(b) for t in titles), titles
