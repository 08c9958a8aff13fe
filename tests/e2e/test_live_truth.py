"""Live truth on the lab as users have it: only a kubeconfig, or a kubeconfig and Prometheus.

* With ``--prometheus`` and no ``--apiserver``: one row per real instance, no
  ``(load-balanced)`` row, and per-level executing requests and seat limits equal the
  sums over the two instances as Prometheus itself has them.
* With only a kubeconfig: the etcd pane shows etcd as the apiservers see it, equal to
  what Prometheus scraped from the same apiservers and to the API's node count; the
  scheduler's pod-proxy discovery names the missing optional permission, and with
  the optional role it names what the cluster lacks (the lab's components are host
  processes, not static pods: see docs/testing.md).
* The cost meter's Prometheus count equals Prometheus' own count of queries.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from typing import Any

import yaml
from kubernetes_asyncio import client

from ktop.lab import Lab, kube, prom
from ktop.lab.util import http_get
from ktop.model.events import LOAD_BALANCED
from ktop.model.exposition import parse_exposition
from ktop.model.series_window import NEEDS_TWO, SWITCHED
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_etcd import EtcdView
from ktop.sources.live.options import LiveOptions
from tests.e2e.cadence import (
    KTOP_DISCOVERY_S,
    KTOP_PROMETHEUS_S,
    KTOP_SCRAPE_S,
    PROMETHEUS_CALL_LIMIT_S,
    REQUEST_LIMIT_S,
    SNAPSHOT_EVERY_S,
    cycles,
    deadline,
    ktop_rates_s,
    lab_cadence,
    prometheus_first_s,
    steps,
)
from tests.e2e.helpers import promql
from tests.e2e.live import RBAC, account, live, options, until_true


def _sum_by_level(query: str, lab: Lab, at: float) -> tuple[dict[str, float], dict[str, set[str]]]:
    """Per priority level, the sum over instances at Prometheus time ``at``; and the
    instances that have the level's series."""
    out: dict[str, float] = defaultdict(float)
    instances: dict[str, set[str]] = defaultdict(set)
    for s in promql(lab, query, at):
        out[s["metric"]["priority_level"]] += s["value"]
        instances[s["metric"]["priority_level"]].add(s["metric"]["instance"])
    return dict(out), dict(instances)


EXECUTING_BY_LEVEL = (
    "sum by (instance, priority_level) "
    '(apiserver_flowcontrol_current_executing_requests{job="apiserver"})'
)
LIMIT_BY_LEVEL = 'apiserver_flowcontrol_current_limit_seats{job="apiserver"}'
BUILT_IN_LEVELS = {"exempt", "global-default", "workload-low", "catch-all"}


async def test_prometheus_per_level_sums_over_the_real_instances(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    prom = str(lab.info["prometheus_url"])
    real = {a["url"].split("//", 1)[1] for a in lab.info["apiservers"]}
    opts = options(lab, kubeconfig, prometheus=prom, prometheus_s=KTOP_PROMETHEUS_S, apiservers=())
    async with live(opts) as run:

        def agree(s: ClusterSnapshot) -> Any:
            # Every query of one poll is evaluated at one Prometheus instant; the same
            # queries, summed here over the instances at that instant, must give ktop's
            # per-level numbers exactly (executing counts and seat limits move under load,
            # so any other instant would not do).
            p = run.source.prometheus
            at = None if p is None else p.evaluated_at
            if at is None:
                return None
            executing, exec_on = _sum_by_level(EXECUTING_BY_LEVEL, lab, at)
            limits, limit_on = _sum_by_level(LIMIT_BY_LEVEL, lab, at)
            seen = set().union(*exec_on.values(), *limit_on.values())
            assert seen == real, seen
            ktop = {r.priority_level: r for r in s.apf.levels}
            # A level deleted by an earlier test keeps its last gauges in the apiservers'
            # /metrics (and so in Prometheus) while ktop lists the levels that exist: compare
            # the levels both know, which must include the built-in ones.
            common = set(ktop) & set(limits)
            assert common >= BUILT_IN_LEVELS, f"levels ktop and Prometheus share: {sorted(common)}"
            wrong = {}
            for pl in common:
                got = (ktop[pl].seats_limit.value, ktop[pl].executing.value)
                # An instance with requests of a level but no seat limit for it (a level
                # that has just come or gone there) makes the level's total limit unknown.
                partial = not exec_on.get(pl, set()) <= limit_on[pl]
                if got[0] is None and pl not in BUILT_IN_LEVELS:
                    # ktop sums a level's limit only when every instance serving the level
                    # exposes one; a lab level created by an earlier test can lack it on an
                    # instance that still has older series of it (unknown, never a guess).
                    partial = True
                want = (None if partial else limits[pl], executing.get(pl, 0.0))
                if got != want:
                    wrong[pl] = (got, want)
            assert not wrong, f"(limit, executing) ktop vs Prometheus: {wrong}"
            return s

        # every reading is Prometheus': the backfill, then polls
        snap = await run.until(
            agree, timeout_s=deadline(prometheus_first_s()), what="per-level sums equal Prometheus'"
        )
        rows = {r.instance for r in snap.apiservers.instances}
        assert rows == real and LOAD_BALANCED not in rows
        assert {r.instance for r in snap.apf.per_instance} == real
        assert not any(LOAD_BALANCED in f.name for f in snap.freshness)
        assert all(
            r.seats_limit.known for r in snap.apf.levels if r.priority_level in BUILT_IN_LEVELS
        )
        # Nothing was read through the load-balanced address once instances were known.
        meter = run.source.meter
        assert "apiserver" in meter.requests_by_destination  # watches and lists
        assert not any(LOAD_BALANCED in k for k in run.source.loops.tasks)


async def test_kubeconfig_only_shows_etcd_as_the_apiservers_see_it(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    opts = LiveOptions(
        kubeconfig=str(kubeconfig),
        apiserver_scrape_s=KTOP_SCRAPE_S,
        apf_dump_s=KTOP_SCRAPE_S,
        discovery_s=KTOP_DISCOVERY_S,
    )
    async with kube.api_client(lab.layout.kubeconfig) as api:
        api_nodes = len((await client.CoreV1Api(api).list_node()).items)
    async with live(opts) as run:

        def seen(s: ClusterSnapshot) -> Any:
            # Each unmet condition raises: the last one is named if the wait times out.
            view = s.etcd.apiserver_view
            assert s.etcd.view is EtcdView.APISERVER and view is not None, s.etcd.view
            # The gauge moves (each apiserver polls etcd's size on its own): ktop's reading
            # must be a value an apiserver reported in the last two minutes.
            sizes = prom.recent_values(
                str(lab.info["prometheus_url"]),
                'apiserver_storage_size_bytes{job="apiserver"}',
                120,
            )
            count = dict(view.objects).get("nodes")
            assert view.storage_bytes.value in sizes, (view.storage_bytes, sorted(sizes))
            assert count is not None and count.value == api_nodes, (count, api_nodes)
            assert view.instances, "no apiserver row"
            rate = view.instances[0].requests_per_s
            assert rate.reason != NEEDS_TWO, (view.instances[0].instance, rate)
            return s

        # the instances discovered, scraped twice for a rate; the static pods looked for
        # (a LIST of kube-system's pods); and a storage size an apiserver polled from etcd
        # in the window read from Prometheus
        seen_s = deadline(
            cycles(1, KTOP_DISCOVERY_S), ktop_rates_s(), steps(1), lab_cadence(lab).in_prometheus_s
        )
        snap = await run.until(seen, timeout_s=seen_s, what="etcd seen by the apiservers")
        view = snap.etcd.apiserver_view
        assert view is not None and view.instances
        # Per apiserver: a latency and a request rate (two scrapes in), as Prometheus has.
        # The lab's instances are read through the load-balanced address, which may reach
        # the other instance at the next scrape: then the rate is unknown, and says why,
        # rather than a rate across two processes.
        row = view.instances[0]
        assert row.p99_s.known
        rate = row.requests_per_s
        assert rate.known or rate.reason == SWITCHED, rate
        # Member-only facts stay unknown, with the reason: the lab runs no static pods.
        assert not snap.etcd.leader_known
        failures = {f.name: f.error for f in snap.freshness if f.error}
        for component, label in (
            ("etcd", "etcd"),
            ("scheduler", "kube-scheduler"),
            ("controller-manager", "kube-controller-manager"),
        ):
            want = f"no static pod labelled component={label} in kube-system"
            assert failures.get(f"{component} (pod proxy)") == want, failures


SCHEDULER_LEASE = "kube-scheduler"


async def _static_scheduler_pod(lab: Lab) -> tuple[str, str]:
    """A scheduler "static pod" on a KWOK node and its leader Lease (the lab's scheduler
    is a host process without leader election); returns (pod name, node)."""
    async with kube.api_client(lab.layout.kubeconfig) as api:
        core = client.CoreV1Api(api)
        node = (await core.list_node(limit=1)).items[0].metadata.name
        pod = f"kube-scheduler-{node}"
        # The client accepts plain dicts as bodies; its annotations name the model classes.
        body: Any = {
            "metadata": {"name": pod, "labels": {"component": "kube-scheduler"}},
            "spec": {
                "nodeName": node,
                "containers": [
                    {
                        "name": "kube-scheduler",
                        "image": "registry.k8s.io/kube-scheduler:v1.35.4",
                        "command": ["kube-scheduler", "--secure-port=10259"],
                    }
                ],
            },
        }
        await core.create_namespaced_pod("kube-system", body)
        lease: Any = {
            "metadata": {"name": SCHEDULER_LEASE},
            "spec": {"holderIdentity": f"{node}_e2e"},
        }
        await client.CoordinationV1Api(api).create_namespaced_lease("kube-system", lease)
    return pod, node


async def _remove_static_scheduler_pod(lab: Lab, pod: str) -> None:
    async with kube.api_client(lab.layout.kubeconfig) as api:
        await client.CoreV1Api(api).delete_namespaced_pod(
            pod, "kube-system", grace_period_seconds=0
        )
        await client.CoordinationV1Api(api).delete_namespaced_lease(SCHEDULER_LEASE, "kube-system")


async def test_pod_proxy_needs_the_optional_role_and_names_the_apiservers_answer(
    lab: Lab,
) -> None:
    pod, _ = await _static_scheduler_pod(lab)
    try:
        # The required role alone: the leader Lease is forbidden, and the pane says so.
        reader = await account(lab, "ktop")
        async with live(LiveOptions(kubeconfig=str(reader), discovery_s=KTOP_DISCOVERY_S)) as run:

            def named(s: ClusterSnapshot) -> Any:
                errors = {f.name: f.error for f in s.freshness if f.error}
                return errors.get("scheduler (pod proxy)")

            # the pod LIST, then the Lease GET that is refused
            reason = await run.until(
                named, timeout_s=deadline(steps(3)), what="scheduler discovery result"
            )
            assert reason.startswith(
                "403 Forbidden: RBAC does not allow 'get' on lease kube-system/kube-scheduler"
            ), reason

        # With the optional role: the leader's pod is read through the apiserver's pod
        # proxy. The lab's pod is not a real process, so the apiserver's answer (an error
        # it names) is what the pane shows for that pod.
        docs = [d for d in yaml.safe_load_all(RBAC.read_text()) if d]
        roles = [d for d in docs if d["kind"] == "ClusterRole"]
        merged = {**roles[0], "rules": [r for role in roles for r in role["rules"]]}
        both = await account(lab, "ktop-components", rbac_docs=merged)
        opts = LiveOptions(
            kubeconfig=str(both), discovery_s=KTOP_DISCOVERY_S, component_scrape_s=KTOP_SCRAPE_S
        )
        async with live(opts) as run:

            def proxied(s: ClusterSnapshot) -> Any:
                errors = {f.name: f.error for f in s.freshness if f.error}
                reason = errors.get(f"scheduler {pod}", "")
                return None if not reason or "is Pending" in reason else reason

            # the pod found and its Lease read, KWOK's pod stage marks it Running, then
            # scrapes through the pod proxy (a proxied request ends at ktop's request
            # limit at worst)
            answered = deadline(steps(3), cycles(2, KTOP_SCRAPE_S), REQUEST_LIMIT_S)
            reason = await run.until(proxied, timeout_s=answered, what="the pod proxy's answer")
            path = f"/api/v1/namespaces/kube-system/pods/https:{pod}:10259/proxy/metrics"
            meter = run.source.meter
            assert meter.by_path.get(path, 0) >= 1 or path in reason, (meter.by_path, reason)
            assert meter.sent_by_destination.get("scheduler via apiserver", 0) >= 1
            # Whatever the pod (or the network behind the apiserver) answered, it is that
            # answer, never mistaken for an RBAC denial: the optional role was enough.
            assert "RBAC does not allow" not in reason, reason
    finally:
        await _remove_static_scheduler_pod(lab, pod)


def _prometheus_queries(prom: str) -> float:
    status, body = http_get(f"{prom}/metrics")
    assert status == 200
    parsed = parse_exposition(body.decode(), ["prometheus_http_requests_total"])
    # Instant queries (the poll, the backfill's window) and range queries (the backfill's hour).
    handlers = {("handler", "/api/v1/query"), ("handler", "/api/v1/query_range")}
    return sum(s.value for s in parsed.samples if handlers & set(s.labels))


async def test_cost_meter_counts_what_prometheus_counted(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    prom = str(lab.info["prometheus_url"])
    opts = options(lab, kubeconfig, prometheus=prom, prometheus_s=KTOP_PROMETHEUS_S)
    before = _prometheus_queries(prom)
    async with live(opts) as run:
        meter = run.source.meter
        # the backfill's queries and a few polls' (each dozens of queries)
        await run.until(
            lambda s: meter.requests_by_destination.get("prometheus", 0) > 100,
            timeout_s=deadline(prometheus_first_s()),
            what="a few Prometheus polls",
        )
    # The source stopped; a query in flight at that moment still completes (and is
    # counted when its answer arrives) or fails at its time limit (sent, never answered:
    # on a busy machine ktop's client can give up on a query Prometheus still answers).
    ends = time.monotonic() + deadline(PROMETHEUS_CALL_LIMIT_S)
    while (
        meter.sent_by_destination["prometheus"] != meter.requests_by_destination["prometheus"]
        and time.monotonic() < ends
    ):
        await asyncio.sleep(SNAPSHOT_EVERY_S)
    sent = meter.sent_by_destination["prometheus"]
    counted = meter.requests_by_destination["prometheus"]
    await until_true(
        lambda: _prometheus_queries(prom) - before >= counted,
        timeout_s=deadline(steps(1)),
        what="Prometheus counted the last query",
    )
    # Exactly what was answered; with queries ktop gave up on, no more than it sent.
    if sent == counted:
        assert _prometheus_queries(prom) - before == counted
    else:
        assert counted <= _prometheus_queries(prom) - before <= sent, (counted, sent)
    # Direct component scrapes are counted under their own destinations.
    assert {d.split(" ", 1)[0] for d in meter.requests_by_destination} >= {
        "apiserver",
        "prometheus",
    }
