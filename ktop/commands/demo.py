"""``ktop demo``: the dashboard on the built-in simulated cluster, or on a kind cluster
playing a scenario (``--kind``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ktop import bounds
from ktop.bounds import bounded_float
from ktop.commands.options import simulator_options
from ktop.scrub import Secrets


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``ktop demo``; the caller adds the common options."""
    demo: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help="run against the built-in simulated cluster",
        description="Run ktop against a built-in, deterministic simulated cluster.",
    )
    demo.add_argument(
        "--scenario",
        help="scenario to play (see --list; default steady, or the first one kind can run "
        "with --kind)",
    )
    demo.add_argument("--list", action="store_true", help="list the scenarios and exit")
    simulator_options(demo)
    demo.add_argument(
        "--speed",
        type=bounded_float(bounds.SPEED),
        default=1.0,
        help=f"time compression: 10 = ten times faster ({bounds.SPEED.text()})",
    )
    demo.add_argument(
        "--kind",
        action="store_true",
        help="create a kind cluster with KWOK nodes and inject the scenario there",
    )
    return demo


def list_scenarios() -> int:
    """Print every scenario with its summary."""
    from ktop.sources.sim.scenarios import SCENARIOS

    width = max(len(n) for n in SCENARIOS)
    for name, spec in SCENARIOS.items():
        print(f"{name:<{width}}  {spec.summary}")
    return 0


def default_scenario(*, kind: bool) -> str:
    """``steady``; with ``--kind`` the first scenario a kind cluster can run."""
    if not kind:
        return "steady"
    from ktop.lab.kind import KIND_SCENARIOS

    print(
        f"ktop demo --kind: playing {KIND_SCENARIOS[0]!r} (choose with --scenario)", file=sys.stderr
    )
    return KIND_SCENARIOS[0]


def run(args: argparse.Namespace, secrets: Secrets) -> int:
    """Run ``ktop demo``."""
    from ktop import compose
    from ktop.commands.dashboard import run_dashboard
    from ktop.sources.sim.scenarios import SCENARIOS

    if args.list:
        return list_scenarios()
    if args.scenario is None:
        args.scenario = default_scenario(kind=args.kind)
    if args.scenario not in SCENARIOS:
        print(
            f"ktop demo: unknown scenario {args.scenario!r}; choose one of: {', '.join(SCENARIOS)}",
            file=sys.stderr,
        )
        return 2
    if args.zones > args.nodes:
        print("ktop demo: --zones cannot exceed --nodes", file=sys.stderr)
        return 2
    if (problem := compose.terminal_problem()) is not None:
        print(f"ktop demo: {problem}", file=sys.stderr)
        return 2
    if args.kind:
        return _run_kind(args, secrets)
    plan = compose.Demo.from_args(args, args.scenario, speed=args.speed)
    return run_dashboard(plan, args, secrets, command="ktop demo")


def _run_kind(args: argparse.Namespace, secrets: Secrets) -> int:
    from ktop.commands.dashboard import run_dashboard
    from ktop.compose import KindCluster, Live, live_options
    from ktop.lab.kind import KIND_SCENARIOS, missing_kind_tools, missing_tools_message

    missing = missing_kind_tools()
    if missing:
        print(missing_tools_message(missing), file=sys.stderr)
        return 2
    if args.scenario not in KIND_SCENARIOS:
        print(
            f"ktop demo --kind: scenario {args.scenario!r} needs the local control plane; "
            f"on kind choose one of: {', '.join(KIND_SCENARIOS)}",
            file=sys.stderr,
        )
        return 2
    plan = KindCluster(args.scenario, Live(live_options(args), needs_terminal=True))
    return run_dashboard(plan, args, secrets, command="ktop")
