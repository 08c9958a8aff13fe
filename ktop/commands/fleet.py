"""``ktop fleet``: every cell of a fleet on one screen, worst first (docs/fleet.md).

Cells are the kubeconfig contexts given with ``--context`` (repeatable), those
matching ``--context-glob``, or every context of the kubeconfig; with
``--prometheus URL`` and no context, the clusters that Prometheus holds (one
cell per value of ``--cluster-label``, read metrics-only, no kubeconfig);
``--demo`` plays one simulated cell per simulator scenario instead. Each cell runs its
own source and hub; a cell that cannot be reached stays in the list as
unknown with the reason. Each cell reads its credentials into its own child of the
session's :class:`~ktop.scrub.Secrets` (:mod:`ktop.fleet`).
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ktop import bounds
from ktop.bounds import bounded_float, bounded_int
from ktop.commands.options import simulator_options
from ktop.fleet import CellSpec, CellUnavailableError, OpenedCell
from ktop.scrub import Secrets

if TYPE_CHECKING:
    from ktop.compose import OpenedSource

DEMO_SPEED = 1.0
DEMO_NODES = 1000
"""Nodes per simulated cell: seven cells of 1,000 keep a 2-core machine responsive."""
METRICS_ONLY_ABOVE = 5000
"""Cells with more nodes than this are read metrics-only unless ``--metrics-only-above``
says otherwise: a fleet of large cells must not hold every node and Lease of each."""
SECOND_OUTAGE = "zone-outage"
"""The scenario the demo plays in a second cell, so that a shared cause shows."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``ktop fleet``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "fleet",
        help="every cell of a fleet on one screen, worst first",
        description=(
            "One row per cell (kubeconfig context), worst first: NotReady nodes and zone "
            "states, the worst APF level, apiserver skew, etcd, pending pods, the most "
            "severe triage verdict, data age; causes several cells share. Enter opens a "
            "cell's full dashboard, escape returns. Cells: every --context given, the "
            "contexts matching --context-glob, or every context of the kubeconfig; with "
            "--prometheus URL and no context, every cluster that Prometheus holds "
            "(--cluster-label), read metrics-only without a kubeconfig."
        ),
    )
    p.add_argument(
        "--context-glob",
        metavar="PATTERN",
        help="the kubeconfig contexts whose names match this shell pattern ('prod-cell-*')",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="simulated cells in-process, one per demo scenario (and a second zone outage)",
    )
    p.add_argument(
        "--metrics-only-above",
        metavar="NODES",
        type=bounded_int(bounds.METRICS_ONLY_ABOVE),
        default=METRICS_ONLY_ABOVE,
        help="read a context cell with more nodes than this metrics-only (one LIST of one "
        f"node tells the size; 0: never by size; default {METRICS_ONLY_ABOVE})",
    )
    simulator_options(p, when="with --demo, per cell", nodes=DEMO_NODES)
    p.add_argument(
        "--speed",
        type=bounded_float(bounds.SPEED),
        default=DEMO_SPEED,
        help=f"with --demo: time compression ({bounds.SPEED.text()})",
    )
    return p


def demo_plays(seed: int) -> list[tuple[str, str, int]]:
    """The demo's cells as ``(cell name, scenario, seed)``: one per simulator scenario, in
    the simulator's order, then a second ``zone-outage`` with the next seed.
    """
    from ktop.sources.sim.scenarios import SCENARIOS

    plays = [(name, name, seed) for name in SCENARIOS]
    plays.append((f"{SECOND_OUTAGE}-2", SECOND_OUTAGE, seed + 1))
    return plays


def demo_specs(
    secrets: Secrets, *, nodes: int, zones: int, seed: int, speed: float, rack_label: str
) -> list[CellSpec]:
    """One simulated cell per scenario (in the simulator's order), then a second
    ``zone-outage`` cell with another seed: the same path suspect in two cells at once.
    Each cell's secrets are a child of ``secrets`` (the session's).
    """
    from ktop.compose import Demo, demo_source
    from ktop.hub import HubPolicy

    specs = []
    for cell, scenario, cell_seed in demo_plays(seed):
        # built now: the cell's data age is measured against the simulator's clock
        own = secrets.child()
        plan = Demo(scenario, nodes, zones, cell_seed, rack_label, speed=speed)
        demo = demo_source(plan, HubPolicy(own))

        async def open_sim(demo: OpenedSource = demo) -> OpenedCell:
            return OpenedCell([demo.source], demo.close)

        clock = _clock_of(demo)
        specs.append(CellSpec(cell, open_sim, clock=clock, rack_label=rack_label, secrets=own))
    return specs


def _clock_of(demo: OpenedSource) -> Callable[[], float]:
    sim = demo.simulator
    assert sim is not None
    return lambda: sim.now


def cell_contexts(args: argparse.Namespace, secrets: Secrets) -> list[str]:
    """The contexts to read: ``--context`` (every one given), else ``--context-glob``
    matches, else every context of the kubeconfig (whose credentials are recorded into
    ``secrets``, the session's). Raises ValueError naming the problem.
    """
    from ktop.sources.kubeconfig import KubeconfigError, context_names

    given = list(dict.fromkeys(getattr(args, "contexts", [])))
    if given and args.context_glob:
        raise ValueError("--context and --context-glob cannot be combined")
    if given:
        return given
    try:
        known = context_names(args.kubeconfig, secrets=secrets)
    except KubeconfigError as exc:
        raise ValueError(secrets.scrub(exc)) from None
    if args.context_glob:
        chosen = [c for c in known if fnmatch.fnmatchcase(c, args.context_glob)]
        if not chosen:
            raise ValueError(
                f"no context matches {args.context_glob!r} (known: {', '.join(known) or 'none'})"
            )
        return chosen
    if not known:
        raise ValueError("the kubeconfig defines no context")
    return known


async def _open_live(args: argparse.Namespace, context: str, secrets: Secrets) -> OpenedCell:
    """Connect to one context and probe it (its credentials recorded into ``secrets``, the
    cell's); the reason when it fails.
    """
    from ktop.compose import Live, SourceError, live_options, open_source

    plan = Live(
        replace(live_options(args), context=context), metrics_only_above=args.metrics_only_above
    )
    try:
        opened = await open_source(plan, secrets)
    except SourceError as exc:
        raise CellUnavailableError(str(exc)) from None
    return OpenedCell([opened.source], opened.close)


async def live_specs(
    args: argparse.Namespace, contexts: Sequence[str], secrets: Secrets
) -> list[CellSpec]:
    """Connect to every context at once, before the screen opens (credentials and exec
    plugins that prompt need the terminal); a context that fails becomes a cell that
    reports why. Each cell's secrets are a child of ``secrets`` (the session's).
    """
    owns = [secrets.child() for _ in contexts]
    opening = (_open_live(args, c, own) for c, own in zip(contexts, owns, strict=True))
    results = await asyncio.gather(*opening, return_exceptions=True)
    specs = []
    for context, result, own in zip(contexts, results, owns, strict=True):
        if isinstance(result, BaseException) and not isinstance(result, Exception):
            raise result

        async def opened(result: OpenedCell | BaseException = result) -> OpenedCell:
            if isinstance(result, BaseException):
                raise result
            return result

        specs.append(CellSpec(context, opened, rack_label=args.rack_label, secrets=own))
    return specs


def global_prometheus(args: argparse.Namespace) -> bool:
    """True when the cells are the clusters of one Prometheus: ``--prometheus`` is a URL
    and no context was named (``--context``, ``--context-glob``).
    """
    url = str(getattr(args, "prometheus", None) or "")
    named = getattr(args, "contexts", []) or args.context_glob
    return url.startswith(("http://", "https://")) and not named


async def prometheus_specs(args: argparse.Namespace, secrets: Secrets) -> list[CellSpec]:
    """One metrics-only cell per cluster the Prometheus holds (one counted query to list
    them), each with a child of ``secrets`` (the session's). Raises ValueError when it
    holds none or cannot be read.
    """
    from ktop.compose import Live, SourceError, live_options, open_source
    from ktop.sources.live.cost import CostMeter
    from ktop.sources.live.prometheus_connect import prometheus_client
    from ktop.sources.live.prometheus_queries import cluster_values

    opts = replace(live_options(args), kubeconfig=None, context=None, metrics_only=True)
    if opts.prometheus is None:
        raise ValueError("cells of a Prometheus need --prometheus URL")
    # The query that lists the clusters is counted by the first cell's meter: one request
    # to one Prometheus, counted once.
    meter = CostMeter()
    client = prometheus_client(opts.prometheus, meter, auth=opts.prometheus_auth, secrets=secrets)
    try:
        clusters = await asyncio.to_thread(cluster_values, client, opts.cluster_label)
    except Exception as exc:
        raise ValueError(f"Prometheus at {opts.prometheus}: {secrets.scrub(exc)}") from None
    finally:
        client.close()
    if not clusters:
        raise ValueError(
            f"Prometheus at {opts.prometheus} has no target with a {opts.cluster_label!r} "
            "label (give --cluster-label, or name contexts)"
        )
    specs = []
    for i, cluster in enumerate(clusters):
        cell_meter = meter if i == 0 else CostMeter()
        own = secrets.child()

        async def opened(
            cluster: str = cluster, m: CostMeter = cell_meter, own: Secrets = own
        ) -> OpenedCell:
            try:
                cell = await open_source(Live(replace(opts, cluster=cluster), meter=m), own)
            except SourceError as exc:
                raise CellUnavailableError(str(exc)) from None
            return OpenedCell([cell.source], cell.close)

        specs.append(CellSpec(cluster, opened, rack_label=args.rack_label, secrets=own))
    return specs


async def _main(args: argparse.Namespace, specs: list[CellSpec], secrets: Secrets) -> int:
    from ktop.commands.dashboard import app_options
    from ktop.fleet import Fleet
    from ktop.runner import stop_on_signals
    from ktop.ui.fleet_app import FleetApp

    app = FleetApp(Fleet(specs, secrets), **app_options(args))
    with stop_on_signals(app.stop_soon):
        await app.run_async()
    if app.crash is not None:
        raise app.crash
    return 0


async def _live(args: argparse.Namespace, contexts: list[str], secrets: Secrets) -> int:
    from ktop.compose import terminal_problem

    specs = await live_specs(args, contexts, secrets)
    problem = terminal_problem()
    if problem is not None:
        for spec in specs:  # release every connection opened
            try:
                opened = await spec.open()
            except CellUnavailableError:
                continue
            await opened.close()
        return _refuse(problem, secrets)
    return await _main(args, specs, secrets)


def _refuse(why: object, secrets: Secrets) -> int:
    """Say why the fleet cannot start, in one line scrubbed of the session's ``secrets``
    (as every other command's refusal, :class:`ktop.compose.SourceError`, is); status 2.

    Every refusal of ``ktop fleet`` is printed here: a message that quotes an option (a
    ``--prometheus`` URL with a password in it) or a library's error cannot skip the
    scrubbing.
    """
    print(f"ktop fleet: {secrets.scrub(why)}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace, secrets: Secrets) -> int:
    """Run ``ktop fleet``."""
    from ktop.compose import terminal_problem
    from ktop.runner import run_loop

    if args.demo:
        if getattr(args, "contexts", []) or args.context_glob:
            return _refuse("--demo cannot be combined with contexts", secrets)
        if args.zones > args.nodes:
            return _refuse("--zones cannot exceed --nodes", secrets)
        if (problem := terminal_problem()) is not None:
            return _refuse(problem, secrets)
        specs = demo_specs(
            secrets,
            nodes=args.nodes,
            zones=args.zones,
            seed=args.seed,
            speed=args.speed,
            rack_label=args.rack_label,
        )
        return run_loop(_main(args, specs, secrets))
    if global_prometheus(args):
        if (problem := terminal_problem()) is not None:
            return _refuse(problem, secrets)
        try:
            specs = asyncio.run(prometheus_specs(args, secrets))
        except ValueError as exc:
            return _refuse(exc, secrets)
        return run_loop(_main(args, specs, secrets))
    try:
        contexts = cell_contexts(args, secrets)
    except ValueError as exc:
        return _refuse(exc, secrets)
    return run_loop(_live(args, contexts, secrets))
