"""ktop's live source and model without the UI, in a process of its own.

``python -m benchmarks.scale.probe --kubeconfig K --nodes N --t0 T [--apiserver URL ...]``
prints one JSON line: seconds from ``T`` (the parent's clock when it started this process) to
the first complete overview, bytes and requests until then (ktop's own cost meter), the
seconds until each feed was synced (``phases``) and ktop's own CPU seconds until then
(``cpu_s``: against the wall time, whether ktop or the apiserver held it up), peak
memory (and resident memory after the imports and, garbage collected, once complete: the
difference to the peak is transient), then the steady load over ``--steady`` seconds.

Complete means: every list+watch feed synced, ``N`` nodes in the nodes area, and every
apiserver instance given read once. The first answer (``first_answer_s``) comes when every
area has real data: APF, apiservers and etcd from a first scrape, the pending pods listed,
and the nodes' zones from ktop's own list or, meanwhile, from the node lifecycle
controller (``--controller-manager-metrics``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ktop.gc_policy import Collector
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_EVENTS,
    FEED_IDENTITIES,
    FEED_LEASES,
    FEED_NODES,
    FEED_PENDING_PODS,
    FEED_QUOTAS,
    LOAD_BALANCED,
    Component,
    Event,
    NodeUpserted,
)
from ktop.sources.live.components import TlsFiles
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.source import LiveSource

ANSWER_CHECK_S = 0.25
"""How often the probe takes a snapshot to see whether every area has data."""
FEEDS = (FEED_NODES, FEED_LEASES, FEED_PENDING_PODS, FEED_EVENTS, FEED_QUOTAS, FEED_IDENTITIES)


def complete(hub: Hub, nodes: int, instances: int) -> tuple[bool, bool]:
    """(nodes area complete, whole overview complete), read off the model's own state:
    no snapshot (at 100,000 nodes one takes tens of ms, and this runs every 50 ms).
    """
    model = hub.model
    feeds = model.feeds
    nodes_feed = feeds.get(FEED_NODES)
    nodes_done = bool(nodes_feed and nodes_feed.synced) and len(model.nodes.nodes) >= nodes
    synced = all(getattr(feeds.get(f), "synced", False) for f in FEEDS)
    scraped = sum(
        1
        for t, h in model.targets.items()
        if t.component == Component.APISERVER and t.instance != LOAD_BALANCED and h.last_ok
    )
    return nodes_done, nodes_done and synced and scraped >= instances


def first_answer(hub: Hub) -> bool:
    """Every area of the overview has real data: APF, apiservers and etcd from a first
    scrape, the scheduler's pending pods listed, and the nodes area's zones, from ktop's
    own list or meanwhile from the node lifecycle controller (issue 24 item 1).
    """
    snap = hub.model.snapshot()
    n = snap.nodes
    return (
        not snap.apf.unknown_reason
        and any(i.last_ok is not None for i in snap.apiservers.instances)
        and (not snap.etcd.unknown_reason or snap.etcd.apiserver_view is not None)
        and snap.scheduler.pods_known
        and (n.nodes_known or (n.interim is not None and bool(n.interim.zones)))
    )


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb() -> float:
    """Peak resident memory of this process since it started (VmHWM; ``ru_maxrss`` would
    include the size of the parent it was forked from).
    """
    return _status_mb("VmHWM")


def rss_mb() -> float:
    """Resident memory of this process now (VmRSS)."""
    return _status_mb("VmRSS")


def cpu_s() -> float:
    """CPU seconds used by this process."""
    return time.process_time()


async def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run the source until complete, then measure the steady window."""
    out: dict[str, Any] = {"rss_imported_mb": rss_mb()}
    collector = Collector()  # as the dashboard's process collects its garbage
    collector.install()
    hub = Hub(ClusterModel())
    source = LiveSource(
        LiveOptions(
            kubeconfig=args.kubeconfig,
            apiservers=tuple(args.apiserver),
            controller_manager_metrics=tuple(args.controller_manager_metrics),
            component_tls=TlsFiles(insecure=True),  # the lab's self-signed serving certs
        )
    )
    node_events = [0]

    def ingest(events: Sequence[Event]) -> None:
        node_events[0] += sum(1 for e in events if type(e) is NodeUpserted)
        hub.ingest(events)

    task = asyncio.create_task(source.run(ingest))
    deadline = time.time() + args.timeout
    next_answer_check = 0.0
    phases: dict[str, float] = {}
    """Seconds from start until each list+watch feed was first synced."""
    while time.time() < deadline and "wall_s" not in out:
        await asyncio.sleep(0.05)
        collector.tick()
        if task.done():
            task.result()
        nodes_done, all_done = complete(hub, args.nodes, len(args.apiserver))
        m = source.meter
        for f in FEEDS:
            if f not in phases and getattr(hub.model.feeds.get(f), "synced", False):
                phases[f] = time.time() - args.t0
        if "first_answer_s" not in out and time.time() >= next_answer_check:
            next_answer_check = time.time() + ANSWER_CHECK_S
            if first_answer(hub):
                out.update(first_answer_s=time.time() - args.t0, first_answer_bytes=m.bytes_total)
        if nodes_done and "nodes_wall_s" not in out:
            out.update(nodes_wall_s=time.time() - args.t0, nodes_bytes=m.bytes_total)
            out["nodes_requests"] = m.requests_total
        if all_done:
            out.update(
                wall_s=time.time() - args.t0, bytes=m.bytes_total, bytes_decoded=m.decoded_total
            )
            out.update(requests=m.requests_total, by_path=dict(m.by_path))
            out.update(phases=phases, cpu_s=cpu_s())
    hub.publish()
    out["peak_rss_mb"] = peak_rss_mb()
    gc.collect()
    out["rss_complete_mb"] = rss_mb()  # what stays: imports, model, connections
    if "wall_s" in out and args.steady > 0:
        await asyncio.sleep(args.settle)
        m = source.meter
        b0, r0, c0, t0, e0 = m.bytes_total, m.requests_total, cpu_s(), time.time(), hub.events_total
        n0 = node_events[0]
        paths0 = dict(m.by_path)
        dest0 = dict(m.bytes_by_destination)
        while time.time() - t0 < args.steady:
            await asyncio.sleep(1.0)
            collector.tick()
            hub.publish()
        dt = time.time() - t0
        out["steady"] = {
            "seconds": dt,
            "bytes_per_s": (m.bytes_total - b0) / dt,
            "requests_per_s": (m.requests_total - r0) / dt,
            "events_per_s": (hub.events_total - e0) / dt,
            "node_events_per_s": (node_events[0] - n0) / dt,
            "cpu_pct": 100 * (cpu_s() - c0) / dt,
            "bytes_per_s_by_destination": {
                d: (n - dest0.get(d, 0)) / dt for d, n in m.bytes_by_destination.items()
            },
            "requests_by_path": {
                p: n - paths0.get(p, 0) for p, n in m.by_path.items() if n - paths0.get(p, 0)
            },
        }
        out["peak_rss_mb"] = peak_rss_mb()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    return out


def cli() -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--apiserver", action="append", default=[])
    p.add_argument(
        "--controller-manager-metrics",
        action="append",
        default=[],
        help="the controller-manager's /metrics URL (its zones are the nodes' first answer)",
    )
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--t0", type=float, default=time.time())
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--steady", type=float, default=0.0)
    p.add_argument("--settle", type=float, default=5.0)
    print(json.dumps(asyncio.run(main(p.parse_args()))), flush=True)


if __name__ == "__main__":
    cli()
