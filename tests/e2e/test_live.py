"""ktop's live source against the real control plane: it shows the same truth as the API.

ktop runs as a ServiceAccount bound to the ClusterRole in docs/rbac.yaml, so
these tests also prove that role is enough.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from typing import Any

from kubernetes_asyncio import client

from ktop.analysis.triage.diagnosis import headline
from ktop.analysis.triage.evaluate import triage
from ktop.lab import Lab, inject, recover, resolve_target
from ktop.lab.config import LOW_USER, ZONE_LABEL
from ktop.model.events import PodWait, Readiness
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.zones import zone_state
from tests.e2e.cadence import (
    KTOP_NODE_DETAIL_PER_S,
    KTOP_SCRAPE_S,
    LEASE_ROUND_S,
    LEASES_BY_NAME_PER_ROUND,
    POLL_EVERY_S,
    REQUEST_LIMIT_S,
    SNAPSHOT_EVERY_S,
    cycles,
    deadline,
    ktop_rates_s,
    lab_cadence,
    steps,
)
from tests.e2e.helpers import promql_by
from tests.e2e.live import account, live, options

LISTED_S = deadline(steps(2))
"""ktop connected and an object list read (one LIST, then its snapshot)."""

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

        # rates need two scrapes; the nodes, pods and APF dump one LIST or read each
        snap = await run.until(
            complete, timeout_s=deadline(ktop_rates_s(), steps(1)), what="every area read"
        )
        failing = [f"{f.name}: {f.error}" for f in snap.freshness if f.error]
        assert failing == []
        assert snap.source_kind == "live"
        # nodes, pending pods, events, resourcequotas, apiserver identities (node Leases
        # are sampled, not watched)
        assert snap.self_cost is not None and snap.self_cost.open_watches == 5


async def test_zone_outage_nodes_and_zone_states_equal_the_api(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    target = resolve_target(lab.layout.kubeconfig)
    cadence = lab_cadence(lab)
    async with live(options(lab, kubeconfig)) as run:
        await run.until(lambda s: s.nodes.nodes_known, timeout_s=LISTED_S, what="nodes listed")
        await inject("zone-outage", target, zone="zone-a")
        try:

            def outage(s: ClusterSnapshot) -> bool:
                zones = {z.zone: z for z in s.nodes.zones}
                a = zones["zone-a"]
                # an unmet condition raises: the last state is named if the wait times out
                assert (
                    a.state is ZoneState.FULL_DISRUPTION
                    and a.unknown == a.total
                    and all(zones[z].state is ZoneState.NORMAL for z in ("zone-b", "zone-c"))
                ), {z.zone: (z.state, z.ready, z.unknown, z.total) for z in s.nodes.zones}
                return True

            # ktop's node watch delivers each change as one event
            await run.until(
                outage, timeout_s=deadline(cadence.zone_down_s, steps(1)), what="zone-a down"
            )

            async def agree() -> bool:
                api = await _api_nodes(lab)
                return _ktop_by_zone(run.snapshot()) == _truth_by_zone(api)

            # the API read and ktop's watch event of the last change: one step each
            ends = time.monotonic() + deadline(steps(2))
            while not await agree():
                assert time.monotonic() < ends, "ktop's zones never equalled the API's"
                await asyncio.sleep(SNAPSHOT_EVERY_S)
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

            # every node of the zone tainted at the eviction rate, each read whole at
            # ktop's node-detail rate
            details = cycles(cadence.nodes_per_zone, 1 / KTOP_NODE_DETAIL_PER_S)
            taints = cycles(cadence.nodes_per_zone, 1 / cadence.eviction_rate)
            await run.until(
                detailed, timeout_s=deadline(details, taints), what="not-Ready nodes detailed"
            )

            # Lease lag is sampled (each Lease's lag when it was last read, by name every
            # round for a not-Ready node): within a few rounds every stopped kubelet's
            # Lease is read again and lags by more than the lease duration.
            def lagging(s: ClusterSnapshot) -> bool:
                down = s.nodes.not_ready_nodes
                limit = lab.cfg.node_lease_duration_s
                return bool(down) and all(n.lease_lag_s.or_(0) > limit for n in down)

            # the zone's Leases, a round's worth by name each round, and one round more
            rounds = math.ceil(cadence.nodes_per_zone / LEASES_BY_NAME_PER_ROUND) + 1
            await run.until(
                lagging,
                timeout_s=deadline(cycles(rounds, LEASE_ROUND_S)),
                what="every not-Ready node's Lease lagging",
            )
        finally:
            await recover("zone-outage", target, zone="zone-a")
        await run.until(
            lambda s: s.nodes.ready == s.nodes.total,
            timeout_s=deadline(cadence.zone_back_s, steps(1)),
            what="zone-a back",
        )


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

            # steps: the scheduler's first attempt at each pod, its status writes, ktop's
            # watch events (the injector created the pods)
            await run.until(
                lambda s: s.scheduler.pending_by_wait[PodWait.UNSCHEDULABLE] >= 30,
                timeout_s=deadline(steps(3)),
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

            # the flood is over: two scrapes give the rejections' rate
            await run.until(
                rejecting, timeout_s=deadline(ktop_rates_s()), what=f"{low} rejections seen by ktop"
            )
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

            # a moving gauge: ktop's next scrapes and Prometheus' next ones read one value
            agreed = deadline(cycles(2, KTOP_SCRAPE_S), lab_cadence(lab).in_prometheus_s)
            await run.until(limits_agree, timeout_s=agreed, what="seat limits equal Prometheus")
        finally:
            await recover("apf-saturation", target)


async def test_the_flooding_user_is_the_top_talker_on_both_apiservers(lab: Lab) -> None:
    """ktop names the injector's user as the client holding its priority level, on both
    apiservers, with the whole of the level's seats: the level's FlowSchema admits that
    user alone, so every request in it is the injector's."""
    kubeconfig = await account(lab, "ktop")
    target = resolve_target(lab.layout.kubeconfig)
    # long enough for two rate scrapes and two request dumps of each apiserver
    flood_s = ktop_rates_s() + cycles(2, KTOP_SCRAPE_S)
    async with live(options(lab, kubeconfig)) as run:
        flood = asyncio.create_task(inject("apf-saturation", target, duration_s=flood_s))
        try:

            def named(s: ClusterSnapshot) -> Any:
                answering = {r.instance for r in s.apiservers.instances if not r.error}
                clients = s.apf.talkers.of_level(LOW_USER)
                top = clients[0] if clients else None
                if top is None or len(answering) != 2 or set(top.instances) != answering:
                    return None
                return top

            top = await run.until(
                named,
                timeout_s=deadline(flood_s),
                what=f"{LOW_USER} named as the top talker of its level on both apiservers",
            )
            snap = run.snapshot()
            assert [c.client for c in snap.apf.talkers.of_level(LOW_USER)] == [LOW_USER]
            assert top.client == LOW_USER and top.load_share == 1.0
            assert snap.apf.talkers.executing_listed  # 1.28+: seats are known
            assert top.what.startswith("list ")

            def in_headline(s: ClusterSnapshot) -> str | None:
                text = headline(triage(s)).text()
                return text if f"top talker: {LOW_USER}: " in text else None

            line = await run.until(
                in_headline, timeout_s=deadline(flood_s), what="the top talker in the headline"
            )
            assert LOW_USER in line.split("top talker:")[1]
        finally:
            await flood
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
        # at once, on the service's event; but its workers wait while it resyncs its
        # monitors, and an event missed then is counted at its next full resync): what
        # ktop must show is what the API holds, so wait for the API to hold it first.
        counted = deadline(lab_cadence(lab).quota_sync_s)
        last: Any = None
        ends = time.monotonic() + counted
        while True:
            status = (await core.read_namespaced_resource_quota("tiny", ns)).status
            last = (status.hard, status.used) if status else None
            if status and (status.used or {}).get("services") == "1":
                break
            assert time.monotonic() < ends, (
                f"the lab's quota controller did not count the service in {counted:.0f} s: {last}"
            )
            await asyncio.sleep(POLL_EVERY_S)
    kubeconfig = await account(lab, "ktop")
    try:
        async with live(options(lab, kubeconfig)) as run:

            def listed(s: ClusterSnapshot) -> Any:
                return next((q for q in s.scheduler.quotas_near_limit if q.namespace == ns), None)

            full = await run.until(listed, timeout_s=LISTED_S, what="the full quota listed")
            assert (full.name, full.resource, full.hard, full.used) == (
                "tiny",
                "services",
                1.0,
                1.0,
            )
            assert any(f.code == "KT-SCHED-004" for f in run.hub.latest.findings)
            snap = await run.until(
                lambda s: s.apiservers.identities is not None,
                timeout_s=LISTED_S,
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
            timeout_s=deadline(ktop_rates_s()),
            what="both instances with rates",
        )
        started = {r.instance: r.start_time.value for r in run.snapshot().apiservers.instances}
        result = await inject("apiserver-skew", target, duration_s=0)
        assert result["restarted"] == "apiserver-b"

        def restarted(s: ClusterSnapshot) -> bool:
            rows = {r.instance: r for r in s.apiservers.instances}
            return (rows[b].start_time.value or 0) > (started[b] or 0) and not rows[b].error

        # b is ready again (the injector waited for it): a scrape in flight at the restart
        # ends at its limit, then two scrapes
        seen = deadline(REQUEST_LIMIT_S, cycles(2, KTOP_SCRAPE_S))
        await run.until(restarted, timeout_s=seen, what="ktop sees apiserver-b restarted")

        def agrees(s: ClusterSnapshot) -> bool:
            prom = promql_by(lab, 'process_start_time_seconds{job="apiserver"}', "instance")
            return {r.instance: r.start_time.value for r in s.apiservers.instances} == prom

        agreed = deadline(cycles(1, KTOP_SCRAPE_S), lab_cadence(lab).in_prometheus_s)
        await run.until(agrees, timeout_s=agreed, what="start times equal Prometheus'")
        titles = [f.title for f in run.hub.latest.findings if f.code == "KT-API-003"]
        assert any(t.startswith(b) for t in titles), titles
