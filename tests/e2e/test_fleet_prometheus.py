"""``ktop fleet --prometheus URL`` with no kubeconfig: the lab's Prometheus labels every
target with the lab's cluster, so the fleet has that one cell, read metrics-only, and its
row's zones and unhealthy counts are the node lifecycle controller's as Prometheus has
them."""

from __future__ import annotations

import asyncio
import time

from ktop.cli import parse_args
from ktop.commands.fleet import global_prometheus, prometheus_specs
from ktop.fleet import Fleet
from ktop.lab import Lab
from ktop.model.snapshot_nodes import ZoneState
from ktop.scrub import Secrets
from tests.e2e.cadence import DEFAULT_SCRAPE_S, POLL_EVERY_S, deadline, prometheus_first_s
from tests.e2e.helpers import promql

CELL_READ_S = deadline(prometheus_first_s(DEFAULT_SCRAPE_S, polls=2))
"""The cell reads Prometheus at ktop's default interval: the backfill, then two polls."""


async def test_fleet_of_a_global_prometheus_needs_no_kubeconfig(lab: Lab) -> None:
    url = str(lab.info["prometheus_url"])
    args = parse_args(["fleet", "--prometheus", url], environ={})
    assert global_prometheus(args)
    clusters = sorted(s["metric"]["cluster"] for s in promql(lab, "count by (cluster) (up)"))
    specs = await prometheus_specs(args, Secrets())
    assert [s.name for s in specs] == clusters == [lab.cfg.cluster]
    fleet = Fleet(specs)
    tasks = [asyncio.create_task(c.run()) for c in fleet.cells]
    try:
        ends = time.monotonic() + CELL_READ_S
        while True:
            (row,) = fleet.refresh().cells
            # the evidence is read in a thread: the cell runs in this event loop
            sizes = {
                s["metric"]["zone"].split(":\x00:")[-1]: s["value"]
                for s in await asyncio.to_thread(promql, lab, "node_collector_zone_size > 0")
            }
            unhealthy = "node_collector_unhealthy_nodes_in_zone"
            bad = sum(s["value"] for s in await asyncio.to_thread(promql, lab, unhealthy))
            if (
                not row.reason
                and {z for z, _ in row.zones} == set(sizes)
                and row.nodes_total.value == sum(sizes.values())
                and row.not_ready.value == bad
            ):
                break
            failing = [
                f"{f.name}: {f.error}"
                for c in fleet.cells
                for f in c.hub.latest.snapshot.freshness
                if f.error
            ]
            assert time.monotonic() < ends, (row, sizes, bad, failing)
            await asyncio.sleep(POLL_EVERY_S)
        # A healthy lab: every zone Normal, as the controller has it.
        assert all(state is ZoneState.NORMAL for _, state in row.zones) == (bad == 0)
        # Metrics-only: the cell read no object from any apiserver (it has no kubeconfig).
        (cell,) = fleet.cells
        assert cell.hub.latest.snapshot.nodes.metrics_only is not None
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_context_cell_above_the_size_threshold_is_read_metrics_only(lab: Lab) -> None:
    from kubernetes_asyncio import client

    from ktop.compose import too_big
    from ktop.lab import kube
    from ktop.sources.live.client import connect, node_count

    async with kube.api_client(lab.layout.kubeconfig) as api:
        nodes = len((await client.CoreV1Api(api).list_node()).items)
    conn = await connect(str(lab.layout.kubeconfig), None, secrets=Secrets())
    try:
        assert await node_count(conn) == nodes
        assert await too_big(conn, nodes - 1)
        assert not await too_big(conn, nodes)
        assert not await too_big(conn, 0)  # 0: never by size
        args = parse_args(
            ["fleet", "--kubeconfig", str(lab.layout.kubeconfig), "--context", "x",
             "--metrics-only-above", str(nodes - 1)],
            environ={},
        )  # fmt: skip
        assert args.metrics_only_above == nodes - 1
    finally:
        await conn.close()
