"""The live side of metrics-only mode and of a global query endpoint: the cluster matcher
in every query, listing clusters, kube-state-metrics readiness, no object reads."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from ktop.model.events import (
    FEED_KUBE_STATE_METRICS,
    FeedFailed,
    MetricsOnlyMode,
    NodeReadinessByLabel,
    SourceStarted,
)
from ktop.scrub import Secrets
from ktop.sources.live import reads
from ktop.sources.live.backfill import PrometheusBackfill
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.prometheus_connect import PrometheusConfigError, prometheus_client
from ktop.sources.live.prometheus_queries import (
    SLO_DAY_EVERY_S,
    cluster_matcher,
    cluster_values,
    readiness_query,
    readiness_rows,
)
from ktop.sources.live.source import LiveSource
from tests.unit.test_live_prometheus import PROM_TIME, FakeHttp, faked, vector
from tests.unit.test_live_source import Cluster, Recorder, settle, source

SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}")


def answer(query: str) -> dict[str, Any]:
    if query == "time()":
        return {"status": "success", "data": {"resultType": "scalar",
                                              "result": [PROM_TIME, str(PROM_TIME)]}}  # fmt: skip
    if query.startswith("count by (cluster) (up)"):
        return vector([({"cluster": "prod-b"}, 3), ({"cluster": "prod-a"}, 5), ({}, 1)])
    if query.startswith("sum by (label_topology_kubernetes_io_zone, status)"):
        lab = "label_topology_kubernetes_io_zone"
        return vector([({lab: "zone-a", "status": "true"}, 0.0),
                       ({lab: "zone-a", "status": "unknown"}, 3.0),
                       ({lab: "zone-a", "status": "false"}, 1.0),
                       ({lab: "zone-b", "status": "true"}, 4.0)])  # fmt: skip
    return vector([])


def queries(http: FakeHttp) -> list[str]:
    return [parse_qs(urlsplit(str(r.url)).query).get("query", [""])[0] for r in http.seen]


def assert_every_selector_scoped(qs: list[str], matcher: str) -> None:
    selectors = [(q, m) for q in qs for m in SELECTOR.finditer(q)]
    assert selectors
    for q, m in selectors:
        assert matcher in m.group(2), (q, m.group(0))


def test_every_poll_query_selects_one_cluster() -> None:
    http = FakeHttp(answer)
    client = faked(prometheus_client("http://global:9090", CostMeter(), secrets=Secrets()), http)
    matcher = cluster_matcher("cluster", "prod-a")
    prom = PrometheusMetrics(client, "http://global:9090", lambda: 7.0, matcher=matcher)
    asyncio.run(prom.poll_once(Recorder()))
    qs = queries(http)
    assert qs[0] == "time()"
    assert_every_selector_scoped(qs[1:], 'cluster="prod-a"')


def test_every_backfill_query_selects_one_cluster() -> None:
    http = FakeHttp(answer)
    client = faked(prometheus_client("http://global:9090", CostMeter(), secrets=Secrets()), http)
    matcher = cluster_matcher("k8s_cluster", 'we"ird')
    backfill = PrometheusBackfill("http://global:9090", lambda: 7.0, matcher=matcher)
    backfill.read(client, PROM_TIME)
    qs = queries(http)
    assert len(qs) == backfill.queries_total > 0
    assert_every_selector_scoped(qs, 'k8s_cluster="we\\"ird"')


def test_the_cluster_label_must_be_a_label_name() -> None:
    assert cluster_matcher("cluster", None) == ""
    with pytest.raises(PrometheusConfigError, match="not a Prometheus label name"):
        cluster_matcher("clu-ster", "a")


def test_cluster_values_is_one_counted_query() -> None:
    meter = CostMeter()
    http = FakeHttp(answer)
    client = faked(prometheus_client("http://global:9090", meter, secrets=Secrets()), http)
    assert cluster_values(client) == ["prod-a", "prod-b"]  # the unlabelled series left out
    assert queries(http) == ["count by (cluster) (up)"]
    assert meter.requests_by_destination == {"prometheus": 1}


def test_readiness_per_label_from_kube_state_metrics() -> None:
    label = "topology.kubernetes.io/zone"
    q = readiness_query(label, cluster_matcher("cluster", "prod-a"))
    assert 'kube_node_status_condition{condition="Ready",cluster="prod-a"}' in q
    assert 'kube_node_labels{cluster="prod-a"}' in q
    http = FakeHttp(answer)
    client = faked(prometheus_client("http://p:9090", CostMeter(), secrets=Secrets()), http)
    prom = PrometheusMetrics(client, "http://p:9090", lambda: 7.0, readiness_labels=(label,))
    emit = Recorder()
    asyncio.run(prom.poll_once(emit))
    (ev,) = [e for e in emit.events if isinstance(e, NodeReadinessByLabel)]
    # zone-a: 0 ready, 3 Unknown + 1 False not ready; zone-b: 4 ready.
    assert ev.rows == (("zone-a", 0, 4), ("zone-b", 4, 0))
    # Without kube-state-metrics the feed says why.
    prom.readiness_labels = ("example.com/rack",)
    emit = Recorder()
    asyncio.run(prom.poll_once(emit))
    (failed,) = [e for e in emit.events if isinstance(e, FeedFailed)]
    assert failed.feed == FEED_KUBE_STATE_METRICS and "example.com/rack" in failed.reason
    assert readiness_rows(label, []) == ()


async def test_metrics_only_reads_no_node_lease_or_pod() -> None:
    cluster = Cluster()
    src, conn = source(cluster, apiservers=("https://10.0.0.9:6443",), metrics_only=True)
    emit = Recorder()
    task = asyncio.create_task(src.run(emit))
    try:
        await settle(
            lambda: {reads.APF_DUMP, reads.METRICS} <= {c.path for c in conn.calls},
            "an APF dump and a scrape",
        )
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert emit.of(MetricsOnlyMode) == [MetricsOnlyMode(5.0, "--metrics-only")]
    assert [c for c in conn.calls if c.verb == "watch"] == []
    paths = [c.path for c in conn.calls]
    assert not [p for p in paths if re.search(r"/(nodes|leases|pods)(/|$)", p)], paths
    assert not [p for p in src.meter.by_path if re.search(r"/(nodes|leases|pods)(/|$)", p)]
    assert src.meter.open_watches == 0
    # What it reads at all: APF object names, and each instance's metrics and APF dumps
    # (the instance is given, so no EndpointSlices).
    assert set(paths) == {
        reads.FLOW_SCHEMAS,
        reads.PRIORITY_LEVELS,
        reads.METRICS,
        reads.APF_DUMP,
        reads.APF_REQUESTS,
    }


def test_without_kubeconfig_only_when_prometheus_is_a_url() -> None:
    url = "http://global:9090"
    assert LiveOptions(prometheus=url, cluster="a").without_kubeconfig
    assert LiveOptions(prometheus=url, metrics_only=True).without_kubeconfig
    assert not LiveOptions(prometheus=url, cluster="a", context="ctx").without_kubeconfig
    assert not LiveOptions(prometheus="k8s://m/p:web", cluster="a").without_kubeconfig
    assert not LiveOptions(prometheus=url).without_kubeconfig
    assert LiveOptions(prometheus=url, cluster="a").metrics_only_why == (
        "no kubeconfig: Prometheus only"
    )


async def test_without_kubeconfig_reads_prometheus_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    http = FakeHttp(answer)
    real = prometheus_client

    def client(*args: Any, **kw: Any) -> Any:
        assert kw.get("kube") is None
        return faked(real(*args, **kw), http)

    monkeypatch.setattr("ktop.sources.live.source.prometheus_client", client)
    opts = LiveOptions(prometheus="http://global:9090", cluster="prod-a", prometheus_s=3600.0)
    src = LiveSource(opts, clock=lambda: 5.0)
    emit = Recorder()
    task = asyncio.create_task(src.run(emit))
    try:
        await settle(lambda: src.prometheus is not None and src.prometheus.healthy, "a poll")
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert src.conn is None
    started = emit.of(SourceStarted)
    assert [(s.kind, s.context) for s in started] == [("live", "prod-a")]
    assert emit.of(MetricsOnlyMode)[0].why == "no kubeconfig: Prometheus only"
    assert set(src.meter.requests_by_destination) == {"prometheus"}
    assert_every_selector_scoped([q for q in queries(http) if q != "time()"], 'cluster="prod-a"')


DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_metrics_only_cost_is_what_the_docs_say() -> None:
    """One poll and the start-up backfill of a metrics-only source, counted by the meter."""
    meter = CostMeter()
    client = faked(prometheus_client("http://p:9090", meter, secrets=Secrets()), FakeHttp(answer))
    labels = LiveSource(LiveOptions(metrics_only=True))._readiness_labels()
    assert len(labels) == 2  # zone and rack
    prom = PrometheusMetrics(client, "http://p:9090", lambda: 7.0, readiness_labels=labels)
    asyncio.run(prom.poll_once(Recorder()))
    first = meter.requests_by_destination["prometheus"]
    asyncio.run(prom.poll_once(Recorder()))  # within five minutes: no day query
    per_poll = meter.requests_by_destination["prometheus"] - first
    day = first - per_poll
    PrometheusBackfill("http://p:9090", lambda: 7.0).read(client, PROM_TIME)
    backfill = meter.requests_by_destination["prometheus"] - first - per_poll
    cost = (DOCS / "cost.md").read_text()
    assert f"**{per_poll} instant queries per refresh**" in cost
    assert f"**{day} more every {SLO_DAY_EVERY_S / 60:g} minutes**" in cost
    assert f"**{backfill} queries once at start**" in cost


def test_panes_doc_lists_what_each_pane_cannot_know() -> None:
    from ktop.model.area_metrics_only import CANNOT_KNOW
    from ktop.model.events import Area

    text = (DOCS / "panes.md").read_text()
    section = text.split("## Metrics-only mode", 1)[1].split("\n## ", 1)[0]
    names = {Area.APF: "APF", Area.APISERVERS: "apiservers", Area.ETCD: "etcd",
             Area.SCHEDULER: "scheduler", Area.NODES: "nodes"}  # fmt: skip
    for area, name in names.items():
        (row,) = [r for r in section.splitlines() if r.startswith(f"| {name} |")]
        last = row.rstrip(" |").rsplit(" | ", 1)[1]
        assert last == ("; ".join(CANNOT_KNOW[area]) or "-"), (area, last)
