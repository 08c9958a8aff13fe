"""Frame time of the overview and each drill-down on 100,000 simulated nodes (no apiserver).

``python -m benchmarks.scale.frames [--nodes 100000]`` prints one JSON line. A frame is what
the UI's refresh timer does on the event loop: show the published snapshot, then Textual's
layout and render until the app is idle again, at 160x48. The publish (snapshot + findings)
runs in a worker thread before it (``Hub.publish_off_loop``), as do the panes' unknown
reasons (``reasons.prepare``), and is reported on its own.
Times are CPU time of this process (what the frame costs on a free core); wall times are
reported beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from benchmarks.scale.probe import peak_rss_mb
from ktop.hub import Hub
from ktop.model.events import Area
from ktop.sources.sim.simulator import Simulator
from ktop.ui.app import KtopApp
from ktop.ui.render.reasons import prepare as prepare_reasons

SCENARIO = "zone-outage"
WARMUP_S = 240.0


async def measure(nodes: int, frames: int) -> dict[str, Any]:
    """Median frame times per screen, publish time and peak memory."""
    sim = Simulator(SCENARIO, nodes=nodes, seed=1)
    hub = Hub()
    hub.ingest(sim.start())
    hub.ingest(sim.advance(WARMUP_S))
    publish = []
    for _ in range(frames):
        hub.ingest(sim.advance(1.0))
        t0 = time.process_time()
        hub.publish()
        publish.append(time.process_time() - t0)
    app = KtopApp(hub, [], refresh_s=3600.0)
    out: dict[str, Any] = {"nodes": nodes, "publish_ms": 1e3 * statistics.median(publish)}
    drills: dict[str, float] = {}
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        for mode in ["overview", *(a.value for a in Area)]:
            try:
                app.action_goto(mode)
            except Exception as exc:  # a screen this version does not have
                drills[mode] = float("nan")
                out.setdefault("errors", []).append(f"{mode}: {exc}")
                continue
            await pilot.pause()
            times, cpu = [], []
            for _ in range(frames):
                hub.ingest(sim.advance(1.0))
                published = await hub.publish_off_loop()
                if published is not None:  # as the app's refresh does, off the loop
                    await asyncio.to_thread(prepare_reasons, published.snapshot)
                t0, c0 = time.perf_counter(), time.process_time()
                app.present(published)
                await pilot.pause()
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            ms = 1e3 * statistics.median(cpu)
            out.setdefault("wall_ms", {})[mode] = 1e3 * statistics.median(times)
            if mode == "overview":
                out["overview_frame_ms"] = ms
            else:
                drills[mode] = ms
    out["drill_frame_ms"] = drills
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def cli() -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--nodes", type=int, default=100_000)
    p.add_argument("--frames", type=int, default=7)
    args = p.parse_args()
    print(json.dumps(asyncio.run(measure(args.nodes, args.frames))), flush=True)


if __name__ == "__main__":
    cli()
