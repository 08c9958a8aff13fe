"""Command line: argument parsing and the composition root.

``ktop`` and ``ktop --context NAME`` read a live cluster; ``ktop demo``
runs the built-in simulated cluster; ``snapshot``, ``record``, ``replay``,
``triage`` and ``bundle`` live in ``ktop/commands/``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ktop import __version__, bounds
from ktop.bounds import OneLineErrorParser, bounded_float
from ktop.commands import snapshot as snapshot_command
from ktop.commands.options import simulator_options
from ktop.config import Config, ConfigError, config_path
from ktop.sources.live import DEFAULT_CLUSTER_LABEL

if TYPE_CHECKING:
    from ktop.sources.live.source import LiveOptions, LiveSource

DEFAULT_RACK_LABEL = "topology.ktop.dev/rack"
DEFAULT_PROD_PATTERN = r"(?i)prod"
LOW_BANDWIDTH_REFRESH_S = 5.0
"""The refresh interval ``--low-bandwidth`` raises ``--refresh`` to (at least)."""
ENV_THEME = "KTOP_THEME"

READ_ONLY = (
    "ktop only reads the cluster: it never creates, changes or deletes anything "
    "(docs/rbac.yaml is the read-only ClusterRole it needs)."
)

DEFAULTS: dict[str, Any] = {
    # display
    "theme": None,
    "rack_label": DEFAULT_RACK_LABEL,
    "refresh": 1.0,
    "low_bandwidth": False,
    "ascii": None,
    "prod_pattern": DEFAULT_PROD_PATTERN,
    # live cluster
    "context": None,
    "kubeconfig": None,
    "prometheus": None,
    "prometheus_token_file": None,
    "prometheus_user": None,
    "prometheus_password_file": None,
    "prometheus_ca": None,
    "prometheus_cert": None,
    "prometheus_key": None,
    "prometheus_insecure": False,
    "metrics_only": False,
    "cluster_label": DEFAULT_CLUSTER_LABEL,
    "cluster": None,
    "no_find_components": False,
    "apiserver": [],
    "etcd_metrics": [],
    "etcd_cert": None,
    "etcd_key": None,
    "etcd_ca": None,
    "scheduler_metrics": [],
    "controller_manager_metrics": [],
    "component_ca": None,
    "insecure_components": False,
    "scrape_interval": 15.0,
}
"""Built-in default of every common option (by ``dest``); applied once, after parsing.

The common options are added to the top-level parser and to every subcommand with
``argparse.SUPPRESS`` defaults, so an option means the same before and after the
subcommand's name; an option missing from both places takes its value from the
environment (``KTOP_THEME``), then the config file, then this table.
"""


def _theme_names() -> list[str]:
    """The bundled themes' names (their file names in ``themes/``)."""
    from importlib.resources import files

    return sorted(
        e.name.removesuffix(".toml")
        for e in files("ktop.themes").iterdir()
        if e.name.endswith(".toml")
    )


def _common(p: argparse.ArgumentParser) -> None:
    """Add the options every command accepts (display and live-cluster sources).

    Call it on the top-level parser and on every subcommand's parser: defaults are
    ``SUPPRESS`` here and filled in once by :func:`resolve_defaults`.
    """
    s = argparse.SUPPRESS
    g = p.add_argument_group("display")
    g.add_argument(
        "--theme",
        default=s,
        help=f"colour theme (default ktop-dark, or ${ENV_THEME}): "
        f"{', '.join(_theme_names())}, or one of your own",
    )
    g.add_argument(
        "--rack-label",
        default=s,
        help=f"node label that names a node's rack (default {DEFAULT_RACK_LABEL})",
    )
    g.add_argument(
        "--refresh",
        type=bounded_float(bounds.REFRESH),
        default=s,
        metavar="SECONDS",
        help=f"screen refresh interval, {bounds.REFRESH.text()} (default 1)",
    )
    g.add_argument(
        "--low-bandwidth",
        action="store_true",
        default=s,
        help=f"for slow links: at least {LOW_BANDWIDTH_REFRESH_S:g}s between redraws, "
        "no sparklines or animations, numbers that keep their state redrawn less often",
    )
    g.add_argument(
        "--ascii",
        action=argparse.BooleanOptionalAction,
        default=s,
        help="only ASCII: no box drawing, sparklines or glyphs (default: on when the "
        "locale cannot encode UTF-8)",
    )
    g.add_argument(
        "--prod-pattern",
        default=s,
        metavar="REGEX",
        help="a context whose name matches shows a production banner "
        f"(default {DEFAULT_PROD_PATTERN!r}; '' turns it off)",
    )
    _live_options(p)


class _EveryContext(argparse.Action):
    """``--context``: the last one given is *the* context; ``fleet`` reads them all."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.contexts = [*getattr(namespace, "contexts", []), values]


def _live_options(p: argparse.ArgumentParser) -> None:
    s = argparse.SUPPRESS
    g = p.add_argument_group("live cluster")
    g.add_argument(
        "--context",
        default=s,
        action=_EveryContext,
        help="kubeconfig context to read (default: current; 'fleet' takes several)",
    )
    g.add_argument(
        "--kubeconfig", default=s, help="kubeconfig file (default: $KUBECONFIG or ~/.kube)"
    )
    g.add_argument(
        "--prometheus",
        default=s,
        metavar="URL",
        help="read metrics from Prometheus: a URL, k8s://NAMESPACE/SERVICE:PORT (through "
        "the apiserver's service proxy) or 'auto' (find kube-prometheus / the operator)",
    )
    g.add_argument(
        "--prometheus-token-file", default=s, metavar="FILE", help="bearer token for Prometheus"
    )
    g.add_argument(
        "--prometheus-user", default=s, metavar="USER", help="basic-auth user for Prometheus"
    )
    g.add_argument("--prometheus-password-file", default=s, metavar="FILE", help="its password")
    g.add_argument("--prometheus-ca", default=s, metavar="FILE", help="CA bundle for Prometheus")
    g.add_argument(
        "--prometheus-cert", default=s, metavar="FILE", help="client certificate for Prometheus"
    )
    g.add_argument("--prometheus-key", default=s, metavar="FILE", help="client key for Prometheus")
    g.add_argument(
        "--prometheus-insecure",
        action="store_true",
        default=s,
        help="skip TLS verification of Prometheus",
    )
    g.add_argument(
        "--metrics-only",
        action="store_true",
        default=s,
        help="read no node, Lease or pod objects: zones, readiness and pending pods from "
        "the control plane's metrics (docs/panes.md says what each pane then cannot know)",
    )
    g.add_argument(
        "--cluster-label",
        default=s,
        metavar="NAME",
        help="the label that names a cluster in a Prometheus that holds many "
        f"(default {DEFAULT_CLUSTER_LABEL})",
    )
    g.add_argument(
        "--cluster",
        default=s,
        metavar="VALUE",
        help="read only this cluster's series from --prometheus; without --context or "
        "--kubeconfig, Prometheus alone is read (metrics-only)",
    )
    g.add_argument(
        "--no-find-components",
        action="store_true",
        default=s,
        help="do not look for static scheduler/controller-manager/etcd pods (pod proxy)",
    )
    g.add_argument(
        "--apiserver",
        action="append",
        default=s,
        metavar="URL",
        help="an apiserver instance URL (repeat; default: found from EndpointSlices)",
    )
    g.add_argument("--etcd-metrics", action="append", default=s, metavar="URL")
    g.add_argument("--etcd-cert", default=s, metavar="FILE", help="client certificate for etcd")
    g.add_argument("--etcd-key", default=s, metavar="FILE", help="client key for etcd")
    g.add_argument("--etcd-ca", default=s, metavar="FILE", help="CA bundle for etcd")
    g.add_argument("--scheduler-metrics", action="append", default=s, metavar="URL")
    g.add_argument("--controller-manager-metrics", action="append", default=s, metavar="URL")
    g.add_argument(
        "--component-ca", default=s, metavar="FILE", help="CA bundle for scheduler/controller"
    )
    g.add_argument(
        "--insecure-components",
        action="store_true",
        default=s,
        help="skip TLS verification of scheduler and controller-manager endpoints",
    )
    g.add_argument(
        "--scrape-interval",
        type=bounded_float(bounds.SCRAPE_INTERVAL),
        default=s,
        metavar="SECONDS",
        help=f"seconds between metrics reads, {bounds.SCRAPE_INTERVAL.text()} (default 15)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``ktop`` argument parser."""
    parser = OneLineErrorParser(
        prog="ktop",
        description="A terminal dashboard for very large Kubernetes control planes. " + READ_ONLY,
        epilog="Run 'ktop demo' to see it on a built-in simulated cluster. Defaults for "
        f"every option can be set in {config_path()} (keys are the long option names).",
    )
    parser.add_argument("--version", action="version", version=f"ktop {__version__}")
    _common(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
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
    _common(demo)
    _common(snapshot_command.add_parser(sub))

    for command in _commands().values():
        _common(command.add_parser(sub))
    return parser


def _option_actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The common options' actions by ``dest`` (for checking config values)."""
    return {a.dest: a for a in parser._actions if a.dest in DEFAULTS}


def _config_value(action: argparse.Action, key: str, value: Any, where: str) -> Any:
    """A config-file value checked and converted the way the option's parser would."""
    flag = max(action.option_strings, key=len)

    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{where}: {key}: expected {expected} (as for {flag}), got {value!r}")

    if action.nargs == 0:
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    convert = action.type if callable(action.type) else str
    if isinstance(action, argparse._AppendAction):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise bad("a string or a list of strings")
        return [convert(v) for v in items]
    if convert is str and not isinstance(value, str):
        raise bad("a string")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise bad("a number" if convert in (int, float) else "a string")
    try:
        return convert(value)  # type: ignore[arg-type]
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f"{where}: {key}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise bad("a number" if convert in (int, float) else "a string") from exc


def resolve_defaults(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    config: Config,
    environ: Mapping[str, str],
) -> argparse.Namespace:
    """Fill every common option not given on the command line, once.

    Precedence: command line (before or after the subcommand), then the environment
    (``KTOP_THEME``), then the config file, then :data:`DEFAULTS`. Config keys
    that are not options are a :class:`ConfigError` naming the file and the key.
    """
    where = str(config.path)
    actions = _option_actions(parser)
    unknown = sorted(set(config.values) - set(actions))
    if unknown:
        known = ", ".join(sorted(k.replace("_", "-") for k in actions))
        names = ", ".join(k.replace("_", "-") for k in unknown)
        raise ConfigError(f"{where}: unknown option {names}; known: {known}")
    from_config = {
        dest: _config_value(actions[dest], dest.replace("_", "-"), value, where)
        for dest, value in config.values.items()
    }
    from_env = {"theme": environ[ENV_THEME]} if environ.get(ENV_THEME) else {}
    for dest, default in DEFAULTS.items():
        if not hasattr(args, dest):
            value = from_env.get(dest, from_config.get(dest, default))
            setattr(args, dest, list(value) if isinstance(value, list) else value)
    if args.low_bandwidth:
        args.refresh = max(args.refresh, LOW_BANDWIDTH_REFRESH_S)
    return args


def parse_args(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> argparse.Namespace:
    """Parse ``argv`` and fill in the defaults (environment, config file, built-in).

    Exits with status 2 and a message naming the file and key for a broken config file.
    """
    import os

    from ktop.config import read_config

    env = os.environ if environ is None else environ
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = read_config(config_path(env))
        args = resolve_defaults(args, parser, config, env)
    except ConfigError as exc:
        parser.exit(2, f"ktop: {exc}\n")
    try:
        re.compile(args.prod_pattern or "")
    except re.error as exc:
        parser.exit(
            2, f"ktop: --prod-pattern {args.prod_pattern!r}: not a regular expression: {exc}\n"
        )
    return args


def _commands() -> dict[str, Any]:
    """Subcommands with their own module: ``add_parser(subparsers)`` returns the parser
    that takes the common options, ``run(args)`` runs it.
    """
    from ktop.commands import bundle, fleet, record, replay, triage

    return {"record": record, "replay": replay, "triage": triage, "bundle": bundle, "fleet": fleet}


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
    if args.scenario is None:
        args.scenario = _default_scenario(kind=args.kind)
    if args.scenario not in SCENARIOS:
        print(
            f"ktop demo: unknown scenario {args.scenario!r}; choose one of: {', '.join(SCENARIOS)}",
            file=sys.stderr,
        )
        return 2
    if args.zones > args.nodes:
        print("ktop demo: --zones cannot exceed --nodes", file=sys.stderr)
        return 2
    if (problem := _terminal_problem()) is not None:
        print(f"ktop demo: {problem}", file=sys.stderr)
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
    app = KtopApp(hub, [SimulatorSource(sim, speed=args.speed)], **app_options(args))
    app.run()
    if app.crash is not None:
        raise app.crash
    return 0


def _default_scenario(*, kind: bool) -> str:
    """``steady``; with ``--kind`` the first scenario a kind cluster can run."""
    if not kind:
        return "steady"
    from ktop.lab.kind import KIND_SCENARIOS

    print(
        f"ktop demo --kind: playing {KIND_SCENARIOS[0]!r} (choose with --scenario)", file=sys.stderr
    )
    return KIND_SCENARIOS[0]


def app_options(args: argparse.Namespace) -> dict[str, Any]:
    """The app's keyword arguments from the resolved common options."""
    from ktop.ui.display import Display

    return {
        "refresh_s": args.refresh,
        "theme": args.theme,
        "display": Display.from_options(
            ascii_only=args.ascii, low_bandwidth=args.low_bandwidth, prod_pattern=args.prod_pattern
        ),
    }


def _terminal_problem() -> str | None:
    from ktop.crash import terminal_problem

    return terminal_problem(sys.stdin, sys.stdout)


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
    from ktop.model.scrub import scrub

    result = kind_demo(scenarios=(args.scenario,))
    if not result.ok or result.kubeconfig is None:
        print(scrub(result.message), file=sys.stderr)
        return 1
    print(scrub(result.message), file=sys.stderr)
    args.kubeconfig, args.context = str(result.kubeconfig), None
    return _run_live(args)


def _live_opts(args: argparse.Namespace) -> LiveOptions:
    from ktop.sources.live.components import TlsFiles
    from ktop.sources.live.prometheus import PrometheusAuth
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
        prometheus_auth=PrometheusAuth(
            bearer_token_file=opt("prometheus_token_file"),
            username=opt("prometheus_user"),
            password_file=opt("prometheus_password_file"),
            ca=opt("prometheus_ca"),
            cert=opt("prometheus_cert"),
            key=opt("prometheus_key"),
            insecure=bool(opt("prometheus_insecure")),
        ),
        prometheus_s=every,
        find_components=not opt("no_find_components", False),
        etcd_metrics=tuple(opt("etcd_metrics", [])),
        etcd_tls=TlsFiles(opt("etcd_cert"), opt("etcd_key"), opt("etcd_ca")),
        scheduler_metrics=tuple(opt("scheduler_metrics", [])),
        controller_manager_metrics=tuple(opt("controller_manager_metrics", [])),
        component_tls=TlsFiles(ca=opt("component_ca"), insecure=bool(opt("insecure_components"))),
        component_scrape_s=every,
        apiservers=tuple(opt("apiserver", [])),
        metrics_only=bool(opt("metrics_only")),
        cluster_label=str(opt("cluster_label", DEFAULT_CLUSTER_LABEL)),
        cluster=opt("cluster"),
    )


def _cluster_problem(opts: LiveOptions) -> str:
    """Why ``--cluster`` / ``--cluster-label`` cannot work as given (empty when they can)."""
    from ktop.sources.live.prometheus import PrometheusConfigError, cluster_matcher

    if opts.cluster is not None and not opts.prometheus:
        return "--cluster selects one cluster of a Prometheus: give --prometheus too"
    try:
        cluster_matcher(opts.cluster_label, opts.cluster)
    except PrometheusConfigError as exc:
        return f"--cluster-label: {exc}"
    return ""


async def _connect_live(
    args: argparse.Namespace, *, needs_terminal: bool = True
) -> LiveSource | int:
    """A live source, connected and probed before anything takes the terminal; or an exit
    status after printing why not. The terminal is checked after the connection, so a
    broken kubeconfig is reported as such whatever the terminal; commands that print
    text (``snapshot``) pass ``needs_terminal=False``.
    """
    from ktop.model.scrub import scrub
    from ktop.sources.kubeconfig import KubeconfigError
    from ktop.sources.live.client import ConnectError, connect, probe
    from ktop.sources.live.source import LiveSource

    opts = _live_opts(args)
    refused = _cluster_problem(opts)
    if refused:
        print(f"ktop: {refused}", file=sys.stderr)
        return 2
    if opts.without_kubeconfig:
        problem = _terminal_problem() if needs_terminal else None
        if problem is not None:
            print(f"ktop: {problem}", file=sys.stderr)
            return 2
        return LiveSource(opts)
    try:
        # Credentials (and exec plugins that may prompt) before the UI takes the terminal.
        conn = await connect(args.kubeconfig, args.context)
    except KubeconfigError as exc:
        print(f"ktop: {scrub(exc)}", file=sys.stderr)
        return 2
    try:
        await probe(conn)
        problem = _terminal_problem() if needs_terminal else None
    except ConnectError as exc:
        await conn.close()
        print(f"ktop: {scrub(exc)}", file=sys.stderr)
        return 2
    except BaseException:
        await conn.close()
        raise
    if problem is not None:
        await conn.close()
        print(f"ktop: {problem}", file=sys.stderr)
        return 2
    return LiveSource(opts, conn=conn)


async def _live_main(args: argparse.Namespace) -> int:
    from ktop.hub import Hub
    from ktop.model.cluster import ClusterModel, ModelConfig
    from ktop.ui.app import KtopApp

    source = await _connect_live(args)
    if isinstance(source, int):
        return source
    hub = Hub(ClusterModel(ModelConfig(rack_label=args.rack_label)))
    app = KtopApp(hub, [source], **app_options(args))
    try:
        await app.run_async()
    finally:
        if source.conn is not None:  # also when the source never started: no unclosed session
            await source.conn.close()
    if app.crash is not None:
        raise app.crash
    return 0


def _run_live(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_live_main(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ktop`` command.

    Every message is scrubbed of secrets; an unexpected error prints two lines
    and leaves the full (scrubbed) report in the cache directory.
    """
    from ktop.crash import install_logging, report_crash

    install_logging()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("ktop: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        print(report_crash(exc, list(sys.argv[1:] if argv is None else argv)), file=sys.stderr)
        return 70  # EX_SOFTWARE


def _main(argv: Sequence[str] | None) -> int:
    args = parse_args(argv)
    if args.command == "demo":
        return _run_demo(args)
    if args.command == "snapshot":
        return snapshot_command.run(args, lambda: _connect_live(args, needs_terminal=False))
    if args.command in _commands():
        return int(_commands()[args.command].run(args))
    return _run_live(args)


if __name__ == "__main__":
    sys.exit(main())
