"""Benchmark of the signal history: memory for an hour at 100,000 nodes, and cost per frame.

The simulator runs a zone outage at ``--nodes`` (100,000 by default) through
the hub, publishing once per simulated second, so the signal set is the one
a cluster that size produces. Then an hour of frames (one per second, the
default refresh) of exactly those signals is recorded, and the history's
memory is measured with tracemalloc and by its arrays' sizes.

Run with ``.venv/bin/python benchmarks/bench_history.py [--nodes 100000] [--write-docs]``;
``--write-docs`` replaces the history section of docs/benchmarks.md with the figures.
"""

from __future__ import annotations

import argparse
import gc
import platform
import time
import tracemalloc
from pathlib import Path

from ktop.hub import Hub
from ktop.model.history import DEFAULT_RETENTION_S, History
from ktop.model.signals import read_signals
from ktop.sources.sim.simulator import Simulator

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
START = "<!-- bench_history:start -->"
END = "<!-- bench_history:end -->"


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


def main() -> int:
    """Measure, print, optionally write the figures into docs/benchmarks.md."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--seconds", type=int, default=30, help="simulated seconds before measuring")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    signals, publish_s, read_s = signal_set(args.nodes, args.seconds)
    traced, arrays, held, record_s, view_s = fill_hour(signals)
    rows = [
        ("nodes", f"{args.nodes:,}"),
        ("signals with history (per aggregate)", f"{len(signals)}"),
        ("frames held after 1 h + 150 s at 1 s", f"{held:,}"),
        ("history memory, tracemalloc", f"{traced / 1e6:.2f} MB"),
        ("of which value and time arrays", f"{arrays / 1e6:.2f} MB"),
        ("record one frame", f"{record_s * 1e6:.0f} µs"),
        ("view for a snapshot (open chunk copied)", f"{view_s * 1e6:.0f} µs"),
        ("publish incl. history, mean", f"{publish_s * 1e3:.1f} ms"),
        ("read the signals of a snapshot", f"{read_s * 1e6:.0f} µs"),
    ]
    table = "\n".join(["| measure | value |", "|---|---:|", *(f"| {k} | {v} |" for k, v in rows)])
    print(table)
    if args.write_docs:
        text = DOCS.read_text(encoding="utf-8")
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        machine = f"Python {platform.python_version()}, {args.seconds} simulated seconds first"
        block = (
            f"{START}\n"
            "<!-- written by benchmarks/bench_history.py --write-docs; do not edit -->\n\n"
            f"{table}\n\n({machine}.)\n{END}"
        )
        DOCS.write_text(head + block + tail, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
