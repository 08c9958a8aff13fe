"""``ktop snapshot``: the overview once, as plain text, without taking over the terminal.

It reads from the same sources as the app (a live cluster with the same flags,
or the simulator with ``--demo SCENARIO``), waits until every area has
delivered or failed (or ``--timeout`` passed), prints, and says which inputs
did not deliver. The sources run into the hub under :mod:`ktop.runner`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ktop import bounds
from ktop.analysis.triage.diagnosis import headline
from ktop.bounds import bounded_float, bounded_int
from ktop.commands.options import (
    look_back_option,
    look_back_s,
    look_back_words,
    simulator_options,
)
from ktop.compose import Demo, Live, OpenedSource, live_options, with_source
from ktop.hub import Hub, Published
from ktop.model.events import FEED_PROMETHEUS_BACKFILL, Area
from ktop.model.providers import provider_words
from ktop.model.snapshot import ClusterSnapshot
from ktop.printable import printable
from ktop.record.frames import FrameTaker
from ktop.runner import Deadline, EndOfSource, Verdict, run_until, running
from ktop.sampling import look_back_info
from ktop.scrub import Secrets
from ktop.sources.base import Source
from ktop.sources.sim.scenarios import SCENARIOS
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
    look_back_option(p)
    p.add_argument(
        "--width",
        type=bounded_int(bounds.SNAPSHOT_WIDTH),
        help=f"line width, {bounds.SNAPSHOT_WIDTH.text()} (default: the terminal's, or 100)",
    )
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
            elif f.listing:
                out.append(f"{area.value}: {f.name}: its first list did not complete")
    return out


def settled(snapshot: ClusterSnapshot) -> bool:
    """Every area has inputs, and each delivered (a feed of objects: its whole first
    list) or failed.
    """
    for area in Area:
        inputs = snapshot.area_freshness(area)
        if not inputs or any((f.last_ok is None and not f.error) or f.listing for f in inputs):
            return False
    return True


async def collect(
    hub: Hub, sources: list[Source], timeout_s: float, clock: Callable[[], float] = time.monotonic
) -> tuple[Published, list[str]]:
    """Run ``sources`` until :func:`settled`, ``timeout_s`` or their end, publishing every
    :data:`POLL_S`; the snapshot and source errors (a source that raises is reported, the
    others go on).
    """
    latest: list[Published] = []

    async def publish() -> None:
        published = hub.publish(force=True)
        assert published is not None
        latest[:] = [published]

    def delivered() -> str | None:
        return "settled" if latest and settled(latest[0].snapshot) else None

    async with running(sources, hub) as run:
        stops = (Verdict(delivered), Deadline(timeout_s, clock=clock), EndOfSource())
        await run.until(*stops, every=POLL_S, tick=publish)
    errors = [f"source {s.name} failed: {type(e).__name__}: {e}" for s, e in run.failures]
    return latest[0], [hub.secrets.scrub(why) for why in errors]


async def demo_published(opened: OpenedSource, until: float | None = None) -> Published:
    """The simulator played to its end (``Demo.until``: ``--at`` seconds into its
    scenario), as fast as it can: no waiting, no clock. The model folds one simulated
    second at a time, so memory stays that of one second's events however far it goes,
    and takes a history frame every :data:`~ktop.record.frames.RECORDING_STEP_S` over the
    hour before ``until``, as a recording of it walked to that moment does.
    """
    frames = FrameTaker(opened.hub.model, until)
    opened.hub.add_sink(frames)
    await run_until(opened.source, opened.hub, EndOfSource())
    opened.hub.remove_sink(frames)
    published = opened.hub.publish(force=True)
    assert published is not None
    return published


def render(
    published: Published,
    args: argparse.Namespace,
    display: Display,
    errors: list[str],
    look_back: str = "",
) -> str:
    """The text ``ktop snapshot`` prints (``look_back``: what a live one-shot judged)."""
    # $COLUMNS can say anything: the terminal's width is held to --width's bounds too
    terminal = shutil.get_terminal_size((100, 24)).columns
    width = args.width or int(min(terminal, bounds.SNAPSHOT_WIDTH.high))
    snapshot = published.snapshot
    banner = ""
    if display.is_production(snapshot.context):
        banner = f"PRODUCTION context {snapshot.context} - ktop only reads this cluster"
    # the diagnosis first: the probable cause, since when, the first direction (or none)
    report = published.triage
    text = overview_text(
        snapshot,
        published.findings,
        max(40, width),
        banner=banner,
        headline=headline(report).text(),
    )
    if provider := provider_words(snapshot.provider, snapshot.provider_because):
        text += f"\n\nprovider: {provider}"
    if look_back:
        text += f"\n\nlook-back: {look_back}"
    missing = [*errors, *missing_inputs(snapshot)]
    if missing:
        text += "\n\nnot delivered:\n" + "\n".join(f"  {m}" for m in missing)
    else:
        text += "\n\nevery source delivered"
    text = printable(text, newlines=True)  # names and messages come from the cluster
    return to_ascii(text) if display.ascii_only else text


def backfill_error(published: Published) -> str:
    """Why Prometheus' backfill did not give the look-back (empty when it did)."""
    feeds = {f.name: f for f in published.snapshot.freshness}
    backfill = feeds.get(FEED_PROMETHEUS_BACKFILL)
    if backfill is None or backfill.last_ok is None:
        return backfill.error if backfill is not None and backfill.error else "not read"
    return backfill.error


def run(args: argparse.Namespace, secrets: Secrets) -> int:
    """Print one snapshot of ``--demo`` or of the live cluster."""
    display = Display.from_options(ascii_only=args.ascii, prod_pattern=args.prod_pattern)
    if args.demo is not None:
        if args.look_back is not None:
            print("ktop snapshot: --look-back goes with a live cluster", file=sys.stderr)
            return 2
        if args.demo not in SCENARIOS:
            print(
                f"ktop snapshot: unknown scenario {args.demo!r}; choose one of: "
                f"{', '.join(SCENARIOS)}",
                file=sys.stderr,
            )
            return 2

        async def step(opened: OpenedSource) -> int:
            print(render(await demo_published(opened, args.at), args, display, []))
            return 0

        plan = replace(Demo.from_args(args, args.demo, speed=0.0), until=args.at)
        return with_source(plan, step, command="ktop snapshot", secrets=secrets)

    async def wait(opened: OpenedSource) -> int:
        published, errors = await collect(opened.hub, [opened.source], args.timeout)
        backfill = opened.hub.config.window_s, bool(args.prometheus), backfill_error(published)
        print(render(published, args, display, errors, look_back_words(look_back_info(*backfill))))
        return 0

    # a one-shot: its window is the look-back (with Prometheus, its range; without, the
    # counters of the processes that started within it), as ktop triage's
    live = Live(replace(live_options(args), window_s=look_back_s(args)))
    # a live cluster's refusals say "ktop:", as the dashboard's do
    return with_source(live, wait, command="ktop", secrets=secrets)
