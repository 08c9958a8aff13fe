"""Benchmark of recording size and seek time on the simulator.

Records ``--minutes`` of a scenario at ``--nodes`` nodes (scrapes every 5 s,
the simulator's interval) through the hub, as ``ktop record`` does, and
prints the file size per hour and the time to seek to the middle and the
end. Run with ``.venv/bin/python benchmarks/bench_recording.py``; figures
in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.sources.sim.simulator import Simulator


def run(nodes: int, minutes: float, scenario: str) -> str:
    """One line of the figures table."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.ktrec"
        sim = Simulator(scenario, nodes=nodes, seed=1)
        hub = Hub(ClusterModel())
        rec = Recorder(str(path), hub.model, source={"kind": "demo", "context": scenario})
        hub.add_sink(rec)
        hub.ingest(sim.start())
        t0 = time.perf_counter()
        seconds = int(minutes * 60)
        for _ in range(seconds):
            hub.ingest(sim.advance(1.0))
        rec.stop()
        write_s = time.perf_counter() - t0
        size = path.stat().st_size
        per_hour = size / seconds * 3600 / 1e6
        with Recording(path) as r:
            seeks = []
            for frac in (0.5, 1.0):
                t1 = time.perf_counter()
                r.cursor(r.start + frac * (r.end - r.start))
                seeks.append(time.perf_counter() - t1)
        return (
            f"| {scenario} | {nodes:,} | {minutes:g} min | {size / 1e6:.1f} MB | "
            f"{per_hour:.1f} MB/h | {write_s / seconds * 1000:.1f} ms | "
            f"{seeks[0]:.2f} s / {seeks[1]:.2f} s |"
        )


def main() -> None:
    """Print the table rows."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--nodes", type=int, default=10_000)
    p.add_argument("--minutes", type=float, default=20.0)
    p.add_argument("--scenario", action="append", default=[])
    args = p.parse_args()
    print(
        "| scenario | nodes | recorded | file | per hour "
        "| write per 1 s of events | seek middle / end |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for scenario in args.scenario or ["steady", "zone-outage"]:
        print(run(args.nodes, args.minutes, scenario), flush=True)


if __name__ == "__main__":
    main()
