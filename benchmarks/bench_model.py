"""Benchmarks of the model: memory per node, fold and snapshot cost, parse speed.

Run with ``.venv/bin/python benchmarks/bench_model.py [--nodes 100000]``.
Figures from this machine are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_LEASES,
    FEED_NODES,
    Component,
    FeedSynced,
    LeaseRenewed,
    NodeRecord,
    NodeUpserted,
    Readiness,
)
from ktop.model.exposition import parse_exposition
from ktop.model.wanted import FAMILIES

T0 = 1_767_225_600.0
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"


def nodes(n: int) -> list[NodeRecord]:
    """``n`` nodes over 3 zones and 40-node racks, strings interned as sources do."""
    out = []
    for i in range(n):
        zone = sys.intern(f"zone-{'abc'[i % 3]}")
        rack = sys.intern(f"rack-{(i // 3) // 40:04d}")
        ready = Readiness.TRUE if i % 50 else Readiness.UNKNOWN
        out.append(NodeRecord(f"node-{i:06d}", "region-1", zone, rack, ready, T0 - i % 600))
    return out


def bench_memory(n: int) -> float:
    """Bytes held by the model per node (node record + lease), measured by tracemalloc."""
    records = nodes(n)  # built outside the measurement: names come from the API anyway
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    m = ClusterModel()
    m.apply_all(NodeUpserted(T0, r) for r in records)
    m.apply_all(LeaseRenewed(T0, r.name, T0 - 1.0 + (i % 10)) for i, r in enumerate(records))
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del m
    # Node records are counted once: the model holds them, the source does not.
    per_record = sum(sys.getsizeof(r) for r in records[:1000]) / 1000
    return (after - before) / n + per_record


def bench_fold_and_snapshot(n: int) -> tuple[float, float]:
    """Lease renewals folded per second, and seconds per nodes snapshot."""
    m = ClusterModel()
    records = nodes(n)
    m.apply_all(NodeUpserted(T0, r) for r in records)
    m.apply_all([FeedSynced(T0, FEED_NODES), FeedSynced(T0, FEED_LEASES)])
    renewals = [LeaseRenewed(T0 + 10, r.name, T0 + 10) for r in records]
    t = time.perf_counter()
    m.apply_all(renewals)
    fold = n / (time.perf_counter() - t)
    m.observe()
    t = time.perf_counter()
    rounds = 5
    for _ in range(rounds):
        m.apply(renewals[0])
        m.observe()
    snap = (time.perf_counter() - t) / rounds
    return fold, snap


def bench_parse() -> tuple[float, int, int]:
    """Seconds to parse the real 3 MB apiserver exposition, lines in, samples kept."""
    text = (FIXTURES / "nri-k8s-1.35_kube-apiserver_metrics.prom").read_text()
    best = min(
        _timed(lambda: parse_exposition(text, FAMILIES[Component.APISERVER])) for _ in range(5)
    )
    parsed = parse_exposition(text, FAMILIES[Component.APISERVER])
    return best, parsed.lines_total, len(parsed.samples)


def _timed(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


def main() -> None:
    """Print the figures."""
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, nargs="*", default=[5_000, 100_000])
    args = p.parse_args()
    for n in args.nodes:
        mem = bench_memory(n)
        fold, snap = bench_fold_and_snapshot(n)
        print(
            f"{n:>7} nodes: {mem:6.0f} B/node held, fold {fold / 1e3:6.0f}k lease events/s, "
            f"nodes snapshot {snap * 1e3:6.1f} ms"
        )
    secs, lines, kept = bench_parse()
    print(f"apiserver exposition 3.1 MB: {lines} lines -> {kept} samples in {secs * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
