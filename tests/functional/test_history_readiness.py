"""A span rebuilt from Prometheus history (``ktop record --from-prometheus``) reads node
readiness per zone from kube-state-metrics, as metrics-only mode does live: against a real
Prometheus whose TSDB is built by ``promtool tsdb create-blocks-from openmetrics`` from
series written here (a zone's nodes NotReady for six minutes), the rows at each step are
those computed here from the same timeline.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ktop.lab.util import free_port, http_ok, wait_for
from ktop.model.events import Event, FeedFailed, NodeReadinessByLabel
from ktop.model.feeds import FEED_KUBE_STATE_METRICS
from ktop.scrub import Secrets
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.prometheus_connect import prometheus_client
from ktop.sources.live.prometheus_queries import cluster_matcher, readiness_labels
from ktop.sources.prometheus_history import PrometheusHistory
from tests.binaries import required_binary

ZONE = "topology.kubernetes.io/zone"
STEP_S = 15
NODES = {"n1": "zone-a", "n2": "zone-a", "n3": "zone-a", "n4": "zone-b", "n5": "zone-b"}
SPAN_S = 20 * 60
DOWN = (8 * 60, 14 * 60)
"""Seconds after the first sample during which zone-b's nodes are not Ready (Unknown)."""
DEFAULT_RACK = LiveOptions().rack_label
READY_LIMIT_S = 60.0
"""Prometheus answers /-/ready within this (it loads two hand-made blocks)."""


def binary(name: str) -> str:
    """A program of Debian's prometheus package."""
    return required_binary(name, "prometheus")


def status(node: str, since_start: float) -> str:
    """The node's Ready condition at ``since_start`` seconds into the timeline."""
    down = NODES[node] == "zone-b" and DOWN[0] <= since_start < DOWN[1]
    return "unknown" if down else "true"


def openmetrics(t0: int) -> str:
    """kube-state-metrics' two families over the span, one sample per series and step."""
    steps = range(0, SPAN_S + 1, STEP_S)
    out = ["# TYPE kube_node_labels gauge"]
    for node, zone in NODES.items():
        labels = f'node="{node}",label_topology_kubernetes_io_zone="{zone}"'
        out += [f"kube_node_labels{{{labels}}} 1 {t0 + s}" for s in steps]
    out.append("# TYPE kube_node_status_condition gauge")
    for node in NODES:
        for st in ("true", "false", "unknown"):
            labels = f'node="{node}",condition="Ready",status="{st}"'
            out += [
                f"kube_node_status_condition{{{labels}}} {int(status(node, s) == st)} {t0 + s}"
                for s in steps
            ]
    out.append("# EOF")
    return "\n".join(out) + "\n"


def expected(t0: int, at: float) -> tuple[tuple[str, int, int], ...]:
    """(zone, ready, not ready) at ``at``: each node's latest sample at or before it."""
    latest = (int(at) - t0) // STEP_S * STEP_S
    by: dict[str, list[int]] = {}
    for node, zone in NODES.items():
        counts = by.setdefault(zone, [0, 0])
        counts[0 if status(node, latest) == "true" else 1] += 1
    return tuple((z, c[0], c[1]) for z, c in sorted(by.items()))


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A Prometheus serving the timeline's TSDB; its URL and the timeline's start."""
    t0 = (int(time.time()) - 3600) // STEP_S * STEP_S
    source = tmp_path / "ksm.om"
    source.write_text(openmetrics(t0))
    data = tmp_path / "data"
    subprocess.run(
        [binary("promtool"), "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
        check=True,
        capture_output=True,
    )
    config = tmp_path / "prometheus.yml"
    config.write_text("global: {}\n")
    url = f"http://127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [
            binary("prometheus"),
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address={url.removeprefix('http://')}",
            "--storage.tsdb.retention.time=30d",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: http_ok(f"{url}/-/ready"), timeout_s=READY_LIMIT_S, what="Prometheus")
        yield url, t0
    finally:
        proc.kill()
        proc.wait()


def rebuild(
    url: str, start: float, end: float, labels: tuple[str, ...], matcher: str = ""
) -> list[Event]:
    client = prometheus_client(url, CostMeter(), secrets=Secrets())
    history = PrometheusHistory(
        client, url, start, end, matcher=matcher, chunk_s=300, step_s=STEP_S,
        readiness_labels=labels,
    )  # fmt: skip
    events: list[Event] = []
    asyncio.run(history.run(events.extend))
    assert history.error == ""
    return events


def test_readiness_per_zone_at_each_step_of_the_span(prometheus: tuple[str, int]) -> None:
    url, t0 = prometheus
    start, end = t0 + 60, t0 + SPAN_S - 60
    events = rebuild(url, start, end, (ZONE,))
    ready = [e for e in events if isinstance(e, NodeReadinessByLabel)]
    assert ready, events
    for e in ready:
        assert e.label == ZONE
        assert e.rows == expected(t0, e.at), e.at
    # every step of the span, once, in time order, and the outage among them
    times = [e.at for e in ready]
    assert times == sorted(set(times))
    assert times[0] - start <= STEP_S and end - times[-1] <= STEP_S
    assert any(dict((z, nr) for z, _, nr in e.rows)["zone-b"] == 2 for e in ready)
    assert not [
        e for e in events if isinstance(e, FeedFailed) and e.feed == FEED_KUBE_STATE_METRICS
    ]
    # the whole stream stays in time order with the readiness merged in
    stamps = [e.at for e in events[2:]]
    assert stamps == sorted(stamps)


def test_nodes_without_the_label_are_one_row_with_no_value(prometheus: tuple[str, int]) -> None:
    """No node carries the rack label: every node is counted under the empty value (the
    pane's "no rack"), not lost, and kube-state-metrics is not said to be absent.
    """
    url, t0 = prometheus
    events = rebuild(url, t0 + 60, t0 + 300, ("example.com/rack",))
    ready = [e for e in events if isinstance(e, NodeReadinessByLabel)]
    assert ready
    for e in ready:
        by_zone = expected(t0, e.at)
        assert e.rows == (("", sum(r for _, r, _ in by_zone), sum(n for _, _, n in by_zone)),)
    assert not [
        e for e in events if isinstance(e, FeedFailed) and e.feed == FEED_KUBE_STATE_METRICS
    ]


def test_without_kube_state_metrics_the_feed_says_why(prometheus: tuple[str, int]) -> None:
    """Another cluster's series only (a Prometheus that holds many): none of this one."""
    url, t0 = prometheus
    matcher = cluster_matcher("cluster", "elsewhere")
    events = rebuild(url, t0 + 60, t0 + 300, ("example.com/rack",), matcher)
    assert not [e for e in events if isinstance(e, NodeReadinessByLabel)]
    (failed,) = [
        e for e in events if isinstance(e, FeedFailed) and e.feed == FEED_KUBE_STATE_METRICS
    ]
    assert "example.com/rack" in failed.reason and "Prometheus history" in failed.reason


def test_the_rebuilds_cost_is_what_the_docs_say(prometheus: tuple[str, int]) -> None:
    """Queries a rebuild sends, counted by the cost meter: once for the baseline, then per
    chunk (one and two chunks read, the difference per chunk); docs/cost.md states them."""
    url, t0 = prometheus

    def queries(chunks: int) -> int:
        meter = CostMeter()
        client = prometheus_client(url, meter, secrets=Secrets())
        start = t0 + 60
        history = PrometheusHistory(
            client, url, start, start + chunks * 300, chunk_s=300, step_s=STEP_S,
            readiness_labels=readiness_labels(DEFAULT_RACK),
        )  # fmt: skip
        asyncio.run(history.run(lambda _: None))
        assert history.error == ""
        return meter.requests_by_destination["prometheus"]

    one, two = queries(1), queries(2)
    per_chunk = two - one
    cost = (Path(__file__).resolve().parents[2] / "docs" / "cost.md").read_text()
    assert f"**{one - per_chunk} queries once** for the baseline" in cost
    assert f"**{per_chunk} queries per five-minute chunk**" in cost


def test_a_failed_label_loses_only_itself(prometheus: tuple[str, int]) -> None:
    """The rack label's query refused (a Prometheus that times it out): the zone's rows,
    read from the real Prometheus, are kept, and the failure names the rack label."""
    url, t0 = prometheus
    real = prometheus_client(url, CostMeter(), secrets=Secrets())
    rack = "example.com/rack"

    class RefusesTheRack:
        def custom_query_range(self, query: str, *args: object) -> object:
            if "label_example_com_rack" in query:
                raise TimeoutError("query timed out")
            return real.custom_query_range(query, *args)

    history = PrometheusHistory(
        RefusesTheRack(), url, t0 + 60, t0 + 360, step_s=STEP_S,
        readiness_labels=(ZONE, rack),
    )  # fmt: skip
    events = history.readiness(t0 + 60, t0 + 360)
    ready = [e for e in events if isinstance(e, NodeReadinessByLabel)]
    assert ready and all(e.label == ZONE and e.rows == expected(t0, e.at) for e in ready)
    (failed,) = [e for e in events if isinstance(e, FeedFailed)]
    assert failed.feed == FEED_KUBE_STATE_METRICS and rack in failed.reason
