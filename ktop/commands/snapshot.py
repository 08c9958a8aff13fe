"""``ktop snapshot``: the overview once, as plain text, without taking over the terminal.

It reads from the same sources as the app (a live cluster with the same flags,
or the simulator with ``--demo SCENARIO``), waits until every area has
delivered or failed (or ``--timeout`` passed), prints, and says which inputs
did not deliver.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

from ktop import bounds
from ktop.bounds import bounded_float
from ktop.commands.options import simulator_options
from ktop.hub import Hub, Published
from ktop.model.cluster import ClusterModel, ModelConfig
from ktop.model.events import Area
from ktop.model.snapshot import ClusterSnapshot
from ktop.sources.base import Source
from ktop.sources.sim.scenarios import SCENARIOS
from ktop.sources.sim.simulator import Simulator
from ktop.ui.display import Display, to_ascii
from ktop.ui.render.plain import overview_text

POLL_S = 0.25


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``snapshot``; the caller adds the common options."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "snapshot",
        help="print the overview once as plain text (for an incident channel)",
        description="Print the overview once as plain text and exit. Reads like the app "
        "(same flags), waits until every source delivered or timed out, and names those "
        "that did not. ktop only reads the cluster.",
    )
    p.add_argument("--demo", metavar="SCENARIO", help="read the simulator playing SCENARIO")
    p.add_argument(
        "--at",
        type=bounded_float(bounds.SNAPSHOT_AT),
        default=0.0,
        metavar="SECONDS",
        help="with --demo: simulated seconds into the scenario (default 0)",
    )
    simulator_options(p, when="with --demo")
    p.add_argument(
        "--timeout",
        type=bounded_float(bounds.SNAPSHOT_TIMEOUT),
        default=30.0,
        metavar="SECONDS",
        help="longest wait for the sources (default 30)",
    )
    p.add_argument("--width", type=int, help="line width (default: the terminal's, or 100)")
    return p


def missing_inputs(snapshot: ClusterSnapshot) -> list[str]:
    """What has not delivered: areas with no input at all, inputs never read."""
    out: list[str] = []
    for area in Area:
        inputs = snapshot.area_freshness(area)
        if not inputs:
            out.append(f"{area.value}: nothing delivered")
        for f in inputs:
            if f.last_ok is None:
                out.append(f"{area.value}: {f.name}: " + (f.error or "never delivered"))
    return out


def settled(snapshot: ClusterSnapshot) -> bool:
    """Every area has inputs, and each delivered or failed."""
    for area in Area:
        inputs = snapshot.area_freshness(area)
        if not inputs or any(f.last_ok is None and not f.error for f in inputs):
            return False
    return True


async def collect(
    hub: Hub, sources: list[Source], timeout_s: float, clock: Callable[[], float] = time.monotonic
) -> tuple[Published, list[str]]:
    """Run ``sources`` until :func:`settled` or ``timeout_s``; the snapshot and source errors."""
    errors: list[str] = []

    async def guard(source: Source) -> None:
        try:
            await source.run(hub.ingest)
        except Exception as exc:  # a source that raises: report it, keep the others
            errors.append(f"source {source.name} failed: {type(exc).__name__}: {exc}")

    tasks = [asyncio.create_task(guard(s)) for s in sources]
    deadline = clock() + timeout_s
    try:
        while True:
            await asyncio.sleep(POLL_S)
            published = hub.publish(force=True)
            assert published is not None
            if settled(published.snapshot) or clock() >= deadline:
                return published, errors
            if all(t.done() for t in tasks):
                return published, errors
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def demo_published(args: argparse.Namespace) -> Published:
    """The simulator ``--at`` seconds into ``--demo``: no waiting, no clock."""
    sim = Simulator(
        args.demo, nodes=args.nodes, zones=args.zones, seed=args.seed, rack_label=args.rack_label
    )
    hub = Hub(ClusterModel(ModelConfig(rack_label=args.rack_label)))
    hub.ingest(sim.start())
    if args.at > 0:
        hub.ingest(sim.advance(args.at))
    published = hub.publish(force=True)
    assert published is not None
    return published


def render(
    published: Published, args: argparse.Namespace, display: Display, errors: list[str]
) -> str:
    """The text ``ktop snapshot`` prints."""
    width = args.width or shutil.get_terminal_size((100, 24)).columns
    snapshot = published.snapshot
    banner = ""
    if display.is_production(snapshot.context):
        banner = f"PRODUCTION context {snapshot.context} - ktop only reads this cluster"
    text = overview_text(snapshot, published.findings, max(40, width), banner=banner)
    missing = [*errors, *missing_inputs(snapshot)]
    if missing:
        text += "\n\nnot delivered:\n" + "\n".join(f"  {m}" for m in missing)
    else:
        text += "\n\nevery source delivered"
    return to_ascii(text) if display.ascii_only else text


def run(args: argparse.Namespace, live: Callable[[], Coroutine[Any, Any, Source | int]]) -> int:
    """Print one snapshot; ``live`` connects to the cluster (or returns an exit status)."""
    display = Display.from_options(ascii_only=args.ascii, prod_pattern=args.prod_pattern)
    if args.demo is not None:
        if args.demo not in SCENARIOS:
            print(
                f"ktop snapshot: unknown scenario {args.demo!r}; choose one of: "
                f"{', '.join(SCENARIOS)}",
                file=sys.stderr,
            )
            return 2
        print(render(demo_published(args), args, display, []))
        return 0

    async def main() -> int:
        source = await live()
        if isinstance(source, int):
            return source
        hub = Hub(ClusterModel(ModelConfig(rack_label=args.rack_label)))
        published, errors = await collect(hub, [source], args.timeout)
        print(render(published, args, display, errors))
        return 0

    return asyncio.run(main())
