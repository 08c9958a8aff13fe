"""ktop keeps working while components fail, and its cost meter tells the truth."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import yaml
from kubernetes_asyncio import client

from ktop.lab import Lab, kube, procs
from ktop.lab.util import http_get, http_ok
from ktop.model.events import FEED_EVENTS, Event, FeedFailed, FeedSynced
from ktop.model.exposition import parse_exposition
from ktop.model.snapshot import ClusterSnapshot
from ktop.scrub import Secrets
from ktop.sources.live.client import connect
from ktop.sources.live.cost import PF_FLOW_SCHEMA_UID, CostMeter
from ktop.sources.live.handlers import WarningEventsHandler
from ktop.sources.live.listwatch import ListWatch, Resource
from ktop.sources.live.transport import KubeTransport
from tests.e2e.cadence import (
    KTOP_DISCOVERY_S,
    KTOP_PROMETHEUS_S,
    KTOP_SCRAPE_S,
    KTOP_WATCH_TIMEOUT_S,
    POLL_EVERY_S,
    PROMETHEUS_CALL_LIMIT_S,
    RELIST_BACKOFF_S,
    cycles,
    deadline,
    ktop_rates_s,
    lab_cadence,
    prometheus_first_s,
    steps,
)
from tests.e2e.live import RBAC, SA_NAMESPACE, account, http_json_post, live, options, until_true

MOMENT_EVERY_S = 0.01
"""How often the cost-meter test looks for a moment with no request unanswered (such a
moment is short: not a deadline)."""
SCRAPE_TARGETS = 9
"""What ktop scrapes each cycle in ``live.options``: two apiservers' metrics and APF
dumps, three etcd members, the scheduler and the controller-manager."""


def _rows(s: ClusterSnapshot) -> dict[str, Any]:
    return {r.instance: r for r in s.apiservers.instances}


def _instance(lab: Lab, name: str) -> str:
    url = next(a["url"] for a in lab.info["apiservers"] if a["name"] == name)
    return str(url).split("//", 1)[1]


async def _all_nodes_ready(lab: Lab) -> None:
    async def count() -> bool:
        async with kube.api_client(lab.layout.kubeconfig) as api:
            ready, total = await kube.ready_node_count(api)
        return ready == total == lab.cfg.nodes

    # KWOK's clients on the stopped apiserver renew their Leases again; nodes that went
    # Unknown meanwhile are brought back as a zone is
    ends = time.monotonic() + deadline(lab_cadence(lab).zone_back_s)
    while not await count():
        assert time.monotonic() < ends, "nodes did not all come back Ready"
        await asyncio.sleep(POLL_EVERY_S)


async def test_dead_apiserver_goes_stale_while_the_other_continues(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    a, b = _instance(lab, "apiserver-a"), _instance(lab, "apiserver-b")
    async with live(options(lab, kubeconfig)) as run:
        await run.until(
            lambda s: all(r.requests_per_s.known for r in _rows(s).values()) and len(_rows(s)) == 2,
            timeout_s=deadline(ktop_rates_s()),
            what="both apiservers scraped twice",
        )
        procs.stop(lab.dir, "apiserver-b")
        try:
            # b is gone when stop returns: its next scrape fails at once
            snap = await run.until(
                lambda s: _rows(s)[b].error != "",
                timeout_s=deadline(cycles(2, KTOP_SCRAPE_S)),
                what="apiserver-b failing",
            )
            b_last = _rows(snap)[b].last_ok
            assert b_last is not None
            # two more scrapes of a after b's last good one
            later = await run.until(
                lambda s: (_rows(s)[a].last_ok or 0) > b_last + 2 * KTOP_SCRAPE_S,
                timeout_s=deadline(cycles(3, KTOP_SCRAPE_S)),
                what="a goes on",
            )
            rows = _rows(later)
            assert rows[a].error == "" and rows[b].last_ok == b_last
            assert "ScrapeFailed" not in rows[b].error and rows[b].error
            assert rows[b].requests_per_s.known  # last values kept, marked stale by their age
            assert later.nodes.nodes_known and later.nodes.total == lab.cfg.nodes
            assert any(f.code == "KT-API-010" for f in run.hub.latest.findings)
        finally:
            procs.restart(lab.dir, "apiserver-b")
            url = next(x["url"] for x in lab.info["apiservers"] if x["name"] == "apiserver-b")
            await until_true(
                lambda: http_ok(f"{url}/readyz", lab.info["admin_token"]),
                timeout_s=deadline(lab_cadence(lab).component_restart_s),
                what="apiserver-b ready again",
            )
        await run.until(
            lambda s: _rows(s)[b].error == "",
            timeout_s=deadline(cycles(2, KTOP_SCRAPE_S)),
            what="b back",
        )
    await _all_nodes_ready(lab)


async def test_prometheus_down_falls_back_to_direct_scraping(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    prom = str(lab.info["prometheus_url"])
    opts = options(lab, kubeconfig, prometheus=prom, prometheus_s=2.0, etcd_metrics=())
    async with live(opts) as run:
        await run.until(
            lambda s: len(s.etcd.members) == 3 and s.etcd.leader and len(_rows(s)) == 2,
            timeout_s=deadline(prometheus_first_s()),
            what="etcd and apiservers through Prometheus",
        )
        procs.stop(lab.dir, "prometheus")
        stopped = time.time()
        try:

            def fell_back(s: ClusterSnapshot) -> bool:
                etcd_unknown = all("Prometheus" in m.error for m in s.etcd.members)
                direct = all(
                    r.error == "" and (r.last_ok or 0) > stopped + 1 for r in _rows(s).values()
                )
                return etcd_unknown and direct

            # The poll in flight when Prometheus stopped ends at its time limit, the next
            # one fails; discovery then reads the instances directly (at once, or at its
            # next round), and each is scraped twice.
            fallen = deadline(
                PROMETHEUS_CALL_LIMIT_S,
                cycles(1, KTOP_PROMETHEUS_S),
                cycles(1, KTOP_DISCOVERY_S),
                cycles(2, KTOP_SCRAPE_S),
            )
            snap = await run.until(fell_back, timeout_s=fallen, what="direct scrapes, etcd unknown")
            assert not snap.etcd.leader_known or snap.etcd.leader == ""
            codes = {f.code for f in run.hub.latest.findings}
            assert "KT-ETCD-010" in codes
        finally:
            procs.restart(lab.dir, "prometheus")
            await until_true(
                lambda: http_get(f"{prom}/-/ready")[0] == 200,
                timeout_s=deadline(lab_cadence(lab).component_restart_s),
                what="Prometheus ready again",
            )


def _compact_etcd(lab: Lab) -> int:
    """Compact etcd up to its current revision (etcd's JSON gateway); return the revision."""
    url = lab.info["etcd"][0]["client_url"]
    rev = int(http_json_post(f"{url}/v3/kv/range", {"key": "AA=="})["header"]["revision"])
    http_json_post(f"{url}/v3/kv/compaction", {"revision": str(rev), "physical": True})
    return rev


async def test_watch_resumes_after_410_without_losing_state(lab: Lab) -> None:
    conn = await connect(str(lab.layout.kubeconfig), None, secrets=Secrets())
    try:
        t = KubeTransport(conn.api, CostMeter())
        # The lab serves Events from etcd (no watch cache), so an old resourceVersion is
        # really gone once etcd is compacted.
        res = Resource(FEED_EVENTS, "/api/v1/events", "events", page_size=50)
        events: list[Event] = []
        lw = ListWatch(
            t, res, WarningEventsHandler(), time.time, watch_timeout_s=KTOP_WATCH_TIMEOUT_S
        )
        await lw.list_all(events.extend)
        listed = set(lw.keys)
        pages = t.meter.requests_total
        assert listed and pages == -(-len(listed) // 50)  # paginated
        _compact_etcd(lab)
        lw.rv = "1"  # resume from a compacted resourceVersion: the apiserver answers 410
        events.clear()
        task = asyncio.create_task(lw.run(events.extend))
        try:
            # the watch's 410, ktop's first back-off, the paginated relist
            await until_true(
                lambda: any(isinstance(e, FeedSynced) for e in events),
                timeout_s=deadline(cycles(1, RELIST_BACKOFF_S), steps(2)),
                what="relist after 410",
            )
        finally:
            task.cancel()
        failed = [e for e in events if isinstance(e, FeedFailed)]
        assert failed and "410 Gone on events" in failed[0].reason
        assert lw.relists == 1
        assert listed <= lw.keys  # nothing lost: every object listed before is still known
    finally:
        await conn.close()


async def test_forbidden_feed_names_the_missing_permission(lab: Lab) -> None:
    role = next(d for d in yaml.safe_load_all(RBAC.read_text()) if d["kind"] == "ClusterRole")
    for rule in role["rules"]:
        if "resources" in rule:
            rule["resources"] = [r for r in rule["resources"] if r != "events"]
    kubeconfig = await account(lab, "ktop-no-events", rbac_docs=role)
    async with live(options(lab, kubeconfig)) as run:

        def forbidden(s: ClusterSnapshot) -> Any:
            f = next((f for f in s.freshness if f.name == FEED_EVENTS and f.error), None)
            return f if f and s.nodes.nodes_known else None

        # the nodes listed and the events' LIST refused
        f = await run.until(forbidden, timeout_s=deadline(steps(2)), what="events feed forbidden")
        assert "403 Forbidden" in f.error
        assert "'list' on events (type=Warning)" in f.error
        s = run.snapshot()
        assert s.nodes.total == lab.cfg.nodes and s.scheduler.pods_known
        unknown = [x for x in run.hub.latest.findings if x.code == "KT-SCHED-010"]
        assert any("403" in x.title for x in unknown)


def _to_apiservers(by_destination: dict[str, int]) -> int:
    """Requests that reached an apiserver: to one (``apiserver``, ``apiserver HOST:PORT``)
    or through one (``... via apiserver``: pod and service proxy)."""
    return sum(
        n
        for d, n in by_destination.items()
        if d.startswith("apiserver") or d.endswith("via apiserver")
    )


async def _dispatched(lab: Lab, flow_schema: str) -> float:
    total = 0.0
    for a in lab.info["apiservers"]:
        status, body = http_get(f"{a['url']}/metrics", token=lab.info["admin_token"])
        assert status == 200
        parsed = parse_exposition(
            body.decode(), ["apiserver_flowcontrol_dispatched_requests_total"]
        )
        total += sum(s.value for s in parsed.samples if ("flow_schema", flow_schema) in s.labels)
    return total


async def test_cost_meter_equals_what_the_apiservers_counted(lab: Lab) -> None:
    sa = "ktop-metered"
    kubeconfig = await account(lab, sa)
    schema = {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": sa},
        "spec": {
            "matchingPrecedence": 100,
            "priorityLevelConfiguration": {"name": "workload-high"},
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [
                        {
                            "kind": "ServiceAccount",
                            "serviceAccount": {"name": sa, "namespace": SA_NAMESPACE},
                        }
                    ],
                    "resourceRules": [
                        {
                            "verbs": ["*"],
                            "apiGroups": ["*"],
                            "resources": ["*"],
                            "clusterScope": True,
                            "namespaces": ["*"],
                        }
                    ],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                }
            ],
        },
    }
    async with kube.api_client(lab.layout.kubeconfig) as api:
        # The client accepts plain dicts as bodies; its annotations name the model class.
        flowcontrol = client.FlowcontrolApiserverV1Api(api)
        created = await flowcontrol.create_flow_schema(schema)  # type: ignore[arg-type]
    uid = created.metadata.uid
    try:
        # Wait until both apiservers classify the account's requests into the schema.
        conn = await connect(str(kubeconfig), None, secrets=Secrets())
        try:
            for a in lab.info["apiservers"]:
                t = KubeTransport(conn.instance_client(a["url"]), CostMeter(), host=a["url"])

                async def classified(t: KubeTransport = t) -> bool:
                    resp = await t.get("/version")
                    return resp.headers.get(PF_FLOW_SCHEMA_UID) == uid

                # the apiserver's APF configuration controller takes up the new schema
                ends = time.monotonic() + deadline(steps(1))
                while not await classified():
                    assert time.monotonic() < ends, "FlowSchema never took effect"
                    await asyncio.sleep(POLL_EVERY_S)
                await t.api.close()
        finally:
            await conn.close()
        before = await _dispatched(lab, sa)
        async with live(options(lab, kubeconfig)) as run:
            # connected, and the first answer carried the schema's header
            await run.until(
                lambda s: s.self_cost is not None and s.self_cost.flow_schema == sa,
                timeout_s=deadline(steps(2)),
                what="the meter resolves its own flow schema",
            )
            meter = run.source.meter
            wanted = 30
            await run.until(
                lambda s: meter.requests_total > wanted,
                timeout_s=deadline(cycles(-(-wanted // SCRAPE_TARGETS) + 1, KTOP_SCRAPE_S)),
                what=f"{wanted} requests made",
            )
            # Stop at a moment when every request sent has been answered (open watches
            # included): every loop is cancelled in the same step, so none sends another.
            ends = time.monotonic() + deadline(steps(1))
            while _to_apiservers(meter.sent_by_destination) != _to_apiservers(
                meter.requests_by_destination
            ):
                assert time.monotonic() < ends, "requests never all answered at once"
                await asyncio.sleep(MOMENT_EVERY_S)
            for task in [*run.source.loops.tasks.values(), run.task]:
                task.cancel()
        answered = _to_apiservers(meter.requests_by_destination)
        assert answered > 10
        assert meter.throttled_total == 0  # a 429 is answered but never dispatched
        # The apiservers' own count of what they dispatched for ktop's FlowSchema (which
        # matches only ktop's account): equal to what the meter counted as answered.
        ends = time.monotonic() + deadline(steps(1))
        while (counted := await _dispatched(lab, sa) - before) != answered:
            assert time.monotonic() < ends, (answered, counted)
            await asyncio.sleep(POLL_EVERY_S)
        assert run.snapshot().self_cost is not None
    finally:
        async with kube.api_client(lab.layout.kubeconfig) as api:
            await client.FlowcontrolApiserverV1Api(api).delete_flow_schema(sa)
