"""Metrics-only mode and the cluster filter on the lab.

* Three sources at once on the same lab: the full mode (nodes and Leases watched),
  metrics-only with a kubeconfig (the components' metrics read directly), and
  metrics-only with no kubeconfig at all (the lab's Prometheus, its ``cluster`` label
  selecting the lab). Before and during a real zone outage, the metrics-only zone
  states equal the full mode's, and the zone health equals ``node_collector_zone_health``
  as Prometheus has it at the instant ktop's poll was evaluated. The cost meter of the
  metrics-only sources records no node, Lease or pod request and no watch.
* The cluster filter: the lab's Prometheus lists the lab's cluster; a poll for another
  cluster returns no series, one for the lab's returns every component.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import pytest

from ktop.cli import main
from ktop.lab import Lab, inject, recover, resolve_target
from ktop.model.events import Component, MetricsScraped
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.scrub import Secrets
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.prometheus_connect import prometheus_client
from ktop.sources.live.prometheus_queries import cluster_matcher, cluster_values
from tests.e2e.cadence import (
    DEFAULT_SCRAPE_S,
    KTOP_PROMETHEUS_S,
    cycles,
    deadline,
    lab_cadence,
    prometheus_cycle_s,
    prometheus_first_s,
    steps,
)
from tests.e2e.helpers import poll_query, promql
from tests.e2e.live import account, live, options
from tests.e2e.test_after_the_fact_lab import HISTORY_LIMIT_S, ktop, triage

OBJECT_PATHS = re.compile(r"/(nodes|leases|pods)(/|$)")
ZONES = ("zone-a", "zone-b", "zone-c")


def _full(s: ClusterSnapshot) -> dict[str, tuple[ZoneState | None, int, int]]:
    return {z.zone: (z.state, z.total, z.unhealthy) for z in s.nodes.zones}


def _metrics(s: ClusterSnapshot) -> dict[str, tuple[ZoneState | None, int, int]]:
    view = s.nodes.metrics_only
    assert view is not None
    return {z.zone: (z.state, z.size, z.unhealthy) for z in view.zones}


def _prometheus_health(lab: Lab, at: float) -> dict[str, float]:
    """``node_collector_zone_health`` per zone (the part after the NUL) at time ``at``."""
    rows = promql(lab, 'node_collector_zone_health{job="kube-controller-manager"}', at)
    return {r["metric"]["zone"].rpartition(":")[2]: r["value"] for r in rows}


def _no_object_reads(meter: CostMeter) -> None:
    assert not [p for p in meter.by_path if OBJECT_PATHS.search(p)], meter.by_path
    assert meter.open_watches == 0


async def test_metrics_only_zone_states_equal_the_full_mode_and_prometheus(
    lab: Lab, tmp_path: Path
) -> None:
    """Zone states read three ways (full mode, metrics only, Prometheus only) agree, before
    and during a zone outage; and after the fact, the span rebuilt from the lab's
    Prometheus (``ktop record --from-prometheus``) names the outage from the node
    lifecycle controller's gauges it holds.

    Slow: it waits for every zone to be Normal in all three views (an earlier test's outage
    healing at the node lifecycle controller's pace, Prometheus' backfill), then for the
    injected outage to reach FullDisruption after the node grace period in all three: up
    to about two minutes on a loaded two-core machine.
    """
    kubeconfig = await account(lab, "ktop")
    prom = str(lab.info["prometheus_url"])
    full_opts = options(lab, kubeconfig)
    kube_opts = options(lab, kubeconfig, metrics_only=True)
    prom_opts = LiveOptions(
        prometheus=prom, cluster=lab.cfg.cluster, prometheus_s=KTOP_PROMETHEUS_S
    )
    assert prom_opts.without_kubeconfig
    target = resolve_target(lab.layout.kubeconfig)
    cadence = lab_cadence(lab)
    polls = cycles(2, prometheus_cycle_s(KTOP_PROMETHEUS_S))
    async with live(full_opts) as full, live(kube_opts) as kube, live(prom_opts) as glob:

        def agree(want_a: ZoneState) -> Any:
            def check(_: ClusterSnapshot) -> Any:
                f, k, g = full.snapshot(), kube.snapshot(), glob.snapshot()
                if not f.nodes.nodes_known or set(_full(f)) != set(ZONES):
                    return None
                states = {z: v[0] for z, v in _full(f).items()}
                want = {z: want_a if z == "zone-a" else ZoneState.NORMAL for z in ZONES}
                if states != want:
                    return None
                if not (_full(f) == _metrics(k) == _metrics(g)):
                    return None
                return (f, k, g)

            return check

        # the Prometheus view after its backfill, while an earlier test's outage may
        # still be healing
        normal = max(prometheus_first_s(), cadence.zone_back_s + cadence.in_prometheus_s + polls)
        await full.until(
            agree(ZoneState.NORMAL),
            timeout_s=deadline(normal),
            what="all three views: every zone Normal",
        )
        assert glob.source.conn is None  # no kubeconfig at all
        injected = time.time()
        await inject("zone-outage", target, zone="zone-a")
        try:
            f, k, g = await full.until(
                agree(ZoneState.FULL_DISRUPTION),
                timeout_s=deadline(cadence.zone_down_s, cadence.in_prometheus_s, polls),
                what="zone-a FullDisruption, equal in the three views",
            )
            state, total, unhealthy = _full(f)["zone-a"]
            assert unhealthy == total > 0  # every node of zone-a is not Ready
            assert _metrics(k)["zone-a"] == _metrics(g)["zone-a"] == (state, total, unhealthy)
            # The health the global view shows is Prometheus' own, at the poll's instant.
            p = glob.source.prometheus
            assert p is not None and p.evaluated_at is not None

            def health_equal(_: ClusterSnapshot) -> bool:
                assert p.evaluated_at is not None
                view = glob.snapshot().nodes.metrics_only
                assert view is not None
                got = {z.zone: z.health_pct.value for z in view.zones}
                return got == _prometheus_health(lab, p.evaluated_at) and got["zone-a"] == 0.0

            await glob.until(
                health_equal,
                timeout_s=deadline(cycles(1, prometheus_cycle_s(KTOP_PROMETHEUS_S))),
                what="health equal to Prometheus'",
            )
            out = tmp_path / "outage.ktrec"
            span = ("--start", str(injected - 60), "--end", str(p.evaluated_at + 1))
            argv = ("record", "-o", str(out), "--from-prometheus", prom, *span)
            done = await asyncio.to_thread(ktop, *argv, limit_s=HISTORY_LIMIT_S)
            assert done.returncode == 0, done.stderr
            code, doc = await asyncio.to_thread(triage, "--recording", str(out))
            assert code == 1 and doc["cause"]["id"] == "P4", doc["headline"]
            p4 = next(path for path in doc["paths"] if path["id"] == "P4")
            assert "in zone zone-a (FullDisruption" in p4["conclusion"], p4["conclusion"]
        finally:
            await recover("zone-outage", target, zone="zone-a")
        # Every pane of the metrics-only sources says so; none read nodes, Leases or pods.
        for run in (kube, glob):
            snap = run.snapshot()
            assert snap.nodes.metrics_only is not None
            assert snap.scheduler.metrics_only is not None
            assert not snap.nodes.nodes_known and not snap.scheduler.pods_known
            _no_object_reads(run.source.meter)
        assert set(glob.source.meter.requests_by_destination) == {"prometheus"}
        # The full mode did read them (the check above can fail).
        assert [p for p in full.source.meter.by_path if OBJECT_PATHS.search(p)]
        await full.until(
            lambda s: s.nodes.ready == s.nodes.total,
            timeout_s=deadline(cadence.zone_back_s, steps(1)),
            what="zone-a back",
        )


async def test_cluster_filter_on_the_labs_prometheus(lab: Lab) -> None:
    prom = str(lab.info["prometheus_url"])
    meter = CostMeter()
    client = prometheus_client(prom, meter, secrets=Secrets())
    assert cluster_values(client) == [lab.cfg.cluster]
    assert meter.requests_by_destination == {"prometheus": 1}

    async def poll(cluster: str) -> set[Component]:
        events: list[Any] = []
        metrics = PrometheusMetrics(
            prometheus_client(prom, CostMeter(), secrets=Secrets()),
            prom,
            lambda: 0.0,
            matcher=cluster_matcher("cluster", cluster),
        )
        await metrics.poll_once(events.extend)
        assert metrics.healthy, metrics.last_error
        return {e.target.component for e in events if isinstance(e, MetricsScraped)}

    assert await poll("another-cluster") == set()
    assert await poll(lab.cfg.cluster) == set(Component)


def test_snapshot_of_one_cluster_of_prometheus_with_no_kubeconfig(
    lab: Lab, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``ktop snapshot --prometheus URL --cluster NAME`` where no kubeconfig exists at all."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KTOP_CONFIG_DIR", str(tmp_path))
    # An earlier test's outage may still be healing: wait until the node lifecycle
    # controller, as Prometheus has it, counts no unhealthy node in any zone.
    poll_query(
        lab,
        'node_collector_unhealthy_nodes_in_zone{job="kube-controller-manager"}',
        "zone",
        lambda got: len(got) == len(ZONES) and not any(got.values()),
        timeout_s=deadline(lab_cadence(lab).zone_back_s, lab_cadence(lab).in_prometheus_s),
        what="no unhealthy node in any zone, as Prometheus has it",
    )
    zones = {
        r["metric"]["zone"].rpartition(":")[2]: r["value"]
        for r in promql(lab, 'node_collector_zone_size{job="kube-controller-manager"}')
    }
    # ktop's own wait: the backfill, then the first poll at its default interval
    timeout = f"{deadline(prometheus_first_s(DEFAULT_SCRAPE_S, polls=1)):g}"
    argv = ["snapshot", "--prometheus", str(lab.info["prometheus_url"]),
            "--cluster", lab.cfg.cluster, "--timeout", timeout, "--width", "120"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "metrics-only view" in out
    size = int(sum(zones.values()))
    assert f"{size:,}/{size:,} ready · metrics-only view" in out, out
    for zone in ZONES:
        assert re.search(rf"{zone}\s+{int(zones[zone]):,}/{int(zones[zone]):,}\s+0\s+Normal", out)
