"""Command line: argument parsing and the composition root.

``ktop`` and ``ktop --context NAME`` read a live cluster; ``ktop demo``
runs the built-in simulated cluster. Subcommands that later work adds
(``record``, ``replay``, ``triage``, ``bundle``) say plainly that they are
not available yet.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ktop import __version__
from ktop.commands import bundle as bundle_cmd
from ktop.commands import triage as triage_cmd

if TYPE_CHECKING:
    from ktop.sources.live.source import LiveOptions

NOT_YET = {
    "record": "recording a session",
    "replay": "replaying a recording",
}
DEFAULT_RACK_LABEL = "topology.ktop.dev/rack"


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--theme", help="colour theme: ktop-dark (default), ktop-light, ansi-dark, ...")
    p.add_argument(
        "--rack-label",
        default=DEFAULT_RACK_LABEL,
        help=f"node label that names a node's rack (default {DEFAULT_RACK_LABEL})",
    )
    p.add_argument(
        "--refresh",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="screen refresh interval (default 1)",
    )


def _live_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("live cluster")
    g.add_argument("--prometheus", metavar="URL", help="read metrics from this Prometheus")
    g.add_argument(
        "--apiserver",
        action="append",
        default=[],
        metavar="URL",
        help="an apiserver instance URL (repeat; default: found from EndpointSlices)",
    )
    g.add_argument("--etcd-metrics", action="append", default=[], metavar="URL")
    g.add_argument("--etcd-cert", metavar="FILE", help="client certificate for etcd")
    g.add_argument("--etcd-key", metavar="FILE", help="client key for etcd")
    g.add_argument("--etcd-ca", metavar="FILE", help="CA bundle for etcd")
    g.add_argument("--scheduler-metrics", action="append", default=[], metavar="URL")
    g.add_argument("--controller-manager-metrics", action="append", default=[], metavar="URL")
    g.add_argument("--component-ca", metavar="FILE", help="CA bundle for scheduler/controller")
    g.add_argument(
        "--insecure-components",
        action="store_true",
        help="skip TLS verification of scheduler and controller-manager endpoints",
    )
    g.add_argument(
        "--scrape-interval",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="seconds between metrics reads (default 15)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``ktop`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="ktop",
        description="A terminal dashboard for very large Kubernetes control planes.",
        epilog="Run 'ktop demo' to see it on a built-in simulated cluster.",
    )
    parser.add_argument("--version", action="version", version=f"ktop {__version__}")
    parser.add_argument("--context", help="kubeconfig context to read (default: current)")
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube)")
    _common(parser)
    _live_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="run against the built-in simulated cluster",
        description="Run ktop against a built-in, deterministic simulated cluster.",
    )
    demo.add_argument("--scenario", default="steady", help="scenario to play (see --list)")
    demo.add_argument("--list", action="store_true", help="list the scenarios and exit")
    demo.add_argument("--nodes", type=int, default=5000, help="number of nodes (default 5000)")
    demo.add_argument("--zones", type=int, default=3, help="number of zones (default 3)")
    demo.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    demo.add_argument(
        "--speed", type=float, default=1.0, help="time compression: 10 = ten times faster"
    )
    demo.add_argument(
        "--kind",
        action="store_true",
        help="create a kind cluster with KWOK nodes and inject the scenario there",
    )
    _common(demo)

    _live_options(triage_cmd.add_parser(sub))
    _live_options(bundle_cmd.add_parser(sub))
    for name, what in NOT_YET.items():
        p = sub.add_parser(name, help=f"{what} (not available yet)")
        p.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def _list_scenarios() -> int:
    from ktop.sources.sim.scenarios import SCENARIOS

    width = max(len(n) for n in SCENARIOS)
    for name, spec in SCENARIOS.items():
        print(f"{name:<{width}}  {spec.summary}")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    from ktop.sources.sim.scenarios import SCENARIOS

    if args.list:
        return _list_scenarios()
    if args.scenario not in SCENARIOS:
        print(
            f"ktop demo: unknown scenario {args.scenario!r}; choose one of: {', '.join(SCENARIOS)}",
            file=sys.stderr,
        )
        return 2
    if args.nodes < 1 or args.zones < 1 or args.speed <= 0:
        print("ktop demo: --nodes and --zones must be >= 1 and --speed > 0", file=sys.stderr)
        return 2
    if args.kind:
        return _run_kind(args)

    from ktop.hub import Hub
    from ktop.model.cluster import ClusterModel, ModelConfig
    from ktop.sources.sim.simulator import Simulator
    from ktop.sources.sim.source import SimulatorSource
    from ktop.ui.app import KtopApp

    sim = Simulator(
        args.scenario,
        nodes=args.nodes,
        zones=args.zones,
        seed=args.seed,
        rack_label=args.rack_label,
    )
    hub = Hub(ClusterModel(ModelConfig(rack_label=args.rack_label)))
    app = KtopApp(
        hub, [SimulatorSource(sim, speed=args.speed)], refresh_s=args.refresh, theme=args.theme
    )
    app.run()
    return 0


def _run_kind(args: argparse.Namespace) -> int:
    from ktop.lab.kind import KIND_SCENARIOS, kind_demo, missing_kind_tools, missing_tools_message

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
    result = kind_demo(scenarios=(args.scenario,))
    if not result.ok or result.kubeconfig is None:
        print(result.message, file=sys.stderr)
        return 1
    print(result.message, file=sys.stderr)
    args.kubeconfig, args.context = str(result.kubeconfig), None
    return _run_live(args)


def _live_opts(args: argparse.Namespace) -> LiveOptions:
    from ktop.sources.live.components import TlsFiles
    from ktop.sources.live.source import LiveOptions

    def opt(name: str, default: object = None) -> Any:
        return getattr(args, name, default)

    every = float(opt("scrape_interval", 15.0))
    return LiveOptions(
        kubeconfig=args.kubeconfig,
        context=args.context,
        rack_label=args.rack_label,
        apiserver_scrape_s=every,
        apf_dump_s=every,
        prometheus=opt("prometheus"),
        prometheus_s=every,
        etcd_metrics=tuple(opt("etcd_metrics", [])),
        etcd_tls=TlsFiles(opt("etcd_cert"), opt("etcd_key"), opt("etcd_ca")),
        scheduler_metrics=tuple(opt("scheduler_metrics", [])),
        controller_manager_metrics=tuple(opt("controller_manager_metrics", [])),
        component_tls=TlsFiles(ca=opt("component_ca"), insecure=bool(opt("insecure_components"))),
        component_scrape_s=every,
        apiservers=tuple(opt("apiserver", [])),
    )


async def _live_main(args: argparse.Namespace) -> int:
    from ktop.hub import Hub
    from ktop.model.cluster import ClusterModel, ModelConfig
    from ktop.sources.kubeconfig import KubeconfigError
    from ktop.sources.live.client import ConnectError, connect, probe
    from ktop.sources.live.source import LiveSource
    from ktop.ui.app import KtopApp

    try:
        # Credentials (and exec plugins that may prompt) before the UI takes the terminal.
        conn = await connect(args.kubeconfig, args.context)
    except KubeconfigError as exc:
        print(f"ktop: {exc}", file=sys.stderr)
        return 2
    try:
        await probe(conn)
    except ConnectError as exc:
        await conn.close()
        print(f"ktop: {exc}", file=sys.stderr)
        return 2
    hub = Hub(ClusterModel(ModelConfig(rack_label=args.rack_label)))
    source = LiveSource(_live_opts(args), conn=conn)
    app = KtopApp(hub, [source], refresh_s=args.refresh, theme=args.theme)
    await app.run_async()
    return 0


def _run_live(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_live_main(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ktop`` command."""
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        return _run_demo(args)
    if args.command == "triage":
        return triage_cmd.run(args)
    if args.command == "bundle":
        return bundle_cmd.run(args)
    if args.command in NOT_YET:
        print(
            f"ktop {args.command}: {NOT_YET[args.command]} is not available in this version yet.",
            file=sys.stderr,
        )
        return 2
    return _run_live(args)


if __name__ == "__main__":
    sys.exit(main())
