"""Benchmark of recording size and seek time on the simulator.

Records each scenario at ``--nodes`` nodes (scrapes every 5 s, the simulator's interval)
through the hub, as ``ktop record`` does, as fast as the simulator allows, then seeks to
``SEEKS`` evenly spaced times in the file, each from a fresh open. By default ``steady``
(every kubelet keeps renewing: the largest file) is recorded for one hour, the span of the
seek target, and ``zone-outage`` for 20 minutes.

Run with ``.venv/bin/python -m benchmarks.bench_recording``; it writes
``benchmarks/results/recording.json``, from which ``python -m benchmarks.scale docs``
writes the recording table and the recording rows of the targets in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.record.writer import DEFAULT_CHUNK_S, DEFAULT_KEYFRAME_S
from ktop.sources.sim.simulator import Simulator

RESULTS = Path(__file__).resolve().parent / "results" / "recording.json"
SEEKS = 12
"""Seeks per recording (default), to the middles of as many equal stretches of it."""
DEFAULT_RUNS = (("steady", 60.0), ("zone-outage", 20.0))


def run(nodes: int, minutes: float, scenario: str, seeks: int = SEEKS) -> dict[str, Any]:
    """Record ``minutes`` of ``scenario``, then time the seeks; the figures of one row."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.ktrec"
        sim = Simulator(scenario, nodes=nodes, seed=1)
        hub = Hub(ClusterModel())
        rec = Recorder(str(path), hub, source={"kind": "demo", "context": scenario})
        hub.add_sink(rec)
        hub.ingest(sim.start())
        t0 = time.perf_counter()
        seconds = int(minutes * 60)
        for _ in range(seconds):
            hub.ingest(sim.advance(1.0))
        rec.stop()
        write_s = time.perf_counter() - t0
        size = path.stat().st_size
        seeks_ms: list[float] = []
        folded: list[int] = []
        for i in range(seeks):
            with Recording(path) as r:
                at = r.start + (i + 0.5) / seeks * (r.end - r.start)
                t1 = time.perf_counter()
                cursor = r.cursor(at)
                seeks_ms.append(1e3 * (time.perf_counter() - t1))
                folded.append(cursor.folded)
        return {
            "scenario": scenario,
            "nodes": nodes,
            "minutes": minutes,
            "bytes": size,
            "mb_per_hour": size / seconds * 3600 / 1e6,
            "generate_s": write_s,
            "write_ms_per_s": write_s / seconds * 1e3,
            "seek_ms": seeks_ms,
            "seek_ms_median": statistics.median(seeks_ms),
            "seek_ms_max": max(seeks_ms),
            "folded_max": max(folded),
        }


def main() -> None:
    """Record, seek, write the results file."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--nodes", type=int, default=10_000)
    p.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="SCENARIO:MINUTES",
        help="a scenario and how long to record it (default: steady:60, zone-outage:20)",
    )
    p.add_argument("--seeks", type=int, default=SEEKS, help=f"seeks per recording ({SEEKS})")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--contended", default="", help="say what else ran on the machine")
    args = p.parse_args()
    runs = [(s, float(m)) for s, m in (r.split(":") for r in args.run)] or list(DEFAULT_RUNS)
    load0 = os.getloadavg()[0]
    rows = []
    for scenario, minutes in runs:
        rows.append(run(args.nodes, minutes, scenario, args.seeks))
        print(json.dumps(rows[-1]), flush=True)
    load = f"load average {load0:.1f} at start, {os.getloadavg()[0]:.1f} at end"
    results = {
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "python": platform.python_version(),
            "cores": os.cpu_count(),
            "contended": f"{load}; {args.contended}" if args.contended else load,
            "keyframe_s": DEFAULT_KEYFRAME_S,
            "chunk_s": DEFAULT_CHUNK_S,
            "seeks": args.seeks,
        },
        "runs": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}; now: python -m benchmarks.scale docs")


if __name__ == "__main__":
    main()
