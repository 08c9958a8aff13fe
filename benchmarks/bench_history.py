"""Benchmark of the signal history: memory for an hour at 100,000 nodes, and cost per frame.

The simulator runs a zone outage at ``--nodes`` (100,000 by default) through
the hub, publishing once per simulated second, so the signal set is the one
a cluster that size produces. Then an hour of frames (one per second, the
default refresh) of exactly those signals is recorded, and the history's
memory is measured with tracemalloc and by its arrays' sizes.

Run with ``.venv/bin/python benchmarks/bench_history.py [--nodes 100000] [--write-docs]``;
``--write-docs`` keeps the figures in ``benchmarks/results/history.json`` and rewrites the
history table of docs/benchmarks.md from them (:func:`history_md`; ``make docs`` rewrites
it from the saved file).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ktop import docgen
from ktop.hub import Hub
from ktop.model.history import DEFAULT_RETENTION_S, History
from ktop.model.signals import read_signals
from ktop.sources.sim.simulator import Simulator

RESULTS = Path(__file__).resolve().parent / "results" / "history.json"


def signal_set(nodes: int, seconds: int) -> tuple[dict[str, float], float, float]:
    """The signals of a simulated cluster after ``seconds``; mean publish and history time."""
    sim = Simulator("zone-outage", nodes=nodes, seed=7)
    hub = Hub()
    hub.ingest(sim.start())
    publish_s = 0.0
    for _ in range(seconds):
        hub.ingest(sim.advance(1.0))
        t = time.perf_counter()
        hub.publish()
        publish_s += time.perf_counter() - t
    snap = hub.latest.snapshot
    signals = read_signals(snap)
    t = time.perf_counter()
    for _ in range(100):
        read_signals(snap)
        snap.history.nbytes()
    per_read = (time.perf_counter() - t) / 100
    return signals, publish_s / seconds, per_read


def fill_hour(signals: dict[str, float]) -> tuple[int, int, int, float, float]:
    """Bytes (tracemalloc, arrays) of an hour of these signals; record and view cost."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    h = History(DEFAULT_RETENTION_S, 1.0)
    t0 = 1_767_225_600.0
    frames = int(DEFAULT_RETENTION_S) + 150  # ends mid-chunk: views copy an open chunk
    record_s = 0.0
    for i in range(frames):
        row = {k: v + (i % 7) for k, v in signals.items()}
        t = time.perf_counter()
        h.record(t0 + i, row)
        record_s += time.perf_counter() - t
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    t = time.perf_counter()
    for _ in range(20):
        h.view()
    view_s = (time.perf_counter() - t) / 20
    held = sum(len(c.times) for c in h.view().chunks)
    return traced, h.nbytes(), held, record_s / frames, view_s


def history_md(results: Mapping[str, Any]) -> str:
    """The history table of docs/benchmarks.md from the saved figures."""
    rows = [
        ("nodes", f"{results['nodes']:,}"),
        ("signals with history (per aggregate)", f"{results['signals']}"),
        ("frames held after 1 h + 150 s at 1 s", f"{results['frames_held']:,}"),
        ("history memory, tracemalloc", f"{results['traced_bytes'] / 1e6:.2f} MB"),
        ("of which value and time arrays", f"{results['array_bytes'] / 1e6:.2f} MB"),
        ("record one frame", f"{results['record_s'] * 1e6:.0f} µs"),
        ("view for a snapshot (open chunk copied)", f"{results['view_s'] * 1e6:.0f} µs"),
        ("publish incl. history, mean", f"{results['publish_s'] * 1e3:.1f} ms"),
        ("read the signals of a snapshot", f"{results['read_s'] * 1e6:.0f} µs"),
    ]
    table = "\n".join(["| measure | value |", "|---|---:|", *(f"| {k} | {v} |" for k, v in rows)])
    machine = f"Python {results['python']}, {results['seconds']} simulated seconds first"
    return f"{table}\n\n({machine}.)\n"


def main() -> int:
    """Measure, print, optionally save the figures and write them into the docs."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--seconds", type=int, default=30, help="simulated seconds before measuring")
    ap.add_argument(
        "--write-docs",
        action="store_true",
        help=f"save the figures in {RESULTS.name} and rewrite docs/benchmarks.md's table",
    )
    args = ap.parse_args()
    signals, publish_s, read_s = signal_set(args.nodes, args.seconds)
    traced, arrays, held, record_s, view_s = fill_hour(signals)
    results = {
        "nodes": args.nodes,
        "seconds": args.seconds,
        "python": platform.python_version(),
        "signals": len(signals),
        "frames_held": held,
        "traced_bytes": traced,
        "array_bytes": arrays,
        "record_s": record_s,
        "view_s": view_s,
        "publish_s": publish_s,
        "read_s": read_s,
    }
    print(history_md(results))
    if args.write_docs:
        RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        for path in docgen.write(blocks=docgen.reading("history")):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
