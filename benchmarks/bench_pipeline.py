"""Benchmark of the whole pipeline on the simulator: events/s folded, publish cost.

Run with ``.venv/bin/python benchmarks/bench_pipeline.py``. Figures in docs/benchmarks.md.
"""

from __future__ import annotations

import statistics
import time

from ktop.hub import Hub
from ktop.sources.sim.simulator import Simulator


def run(nodes: int, scenario: str = "zone-outage", seconds: int = 240) -> str:
    """Play ``seconds`` of a scenario, then measure 10 one-second ticks."""
    sim = Simulator(scenario, nodes=nodes, seed=1)
    hub = Hub()
    hub.ingest(sim.start())
    hub.ingest(sim.advance(seconds))
    hub.publish()
    sim_s, fold_s, pub_s, events = [], [], [], 0
    for _ in range(10):
        t0 = time.perf_counter()
        batch = sim.advance(1.0)
        t1 = time.perf_counter()
        hub.ingest(batch)
        t2 = time.perf_counter()
        hub.publish()
        t3 = time.perf_counter()
        sim_s.append(t1 - t0)
        fold_s.append(t2 - t1)
        pub_s.append(t3 - t2)
        events += len(batch)
    med = statistics.median
    return (
        f"{nodes:>7} nodes {scenario}: {events / 10:7.0f} events/tick, "
        f"simulate {med(sim_s) * 1e3:6.1f} ms, fold {med(fold_s) * 1e3:6.1f} ms, "
        f"publish (snapshot + findings) {med(pub_s) * 1e3:6.1f} ms"
    )


if __name__ == "__main__":
    for n in (5_000, 100_000):
        print(run(n))
