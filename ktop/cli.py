"""Command line: the parser, the options' defaults (environment, config file, built-in)
and the dispatch to the commands.

``ktop`` and ``ktop --context NAME`` read a live cluster (``ktop/commands/dashboard.py``);
every subcommand (``demo``, ``snapshot``, ``record``, ``replay``, ``triage``, ``bundle``,
``fleet``) is a module of ``ktop/commands/``. What a command reads is opened by the
composition root, ``ktop/compose.py``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, Protocol

from ktop import __version__, bounds
from ktop.bounds import OneLineErrorParser, bounded_float, bounded_size
from ktop.commands.options import directory, prometheus_address, provider_name, url
from ktop.config import Config, ConfigError, config_path
from ktop.model.providers import Provider
from ktop.scrub import Secrets
from ktop.sources.live import DEFAULT_CLUSTER_LABEL
from ktop.sources.live.prometheus_flags import PROMETHEUS_DEFAULTS, add_prometheus_flags

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
    **PROMETHEUS_DEFAULTS,
    "metrics_only": False,
    "cluster_label": DEFAULT_CLUSTER_LABEL,
    "cluster": None,
    "no_find_components": False,
    "provider": None,
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
    # always-on recording
    "record_dir": None,
    "retain": 86_400.0,
    "max_disk": 2 << 30,
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


Actions = dict[str, argparse.Action]
"""The common options' actions by ``dest``: what a config-file value is checked against."""


class _AddsArguments(Protocol):
    def add_argument(self, *flags: str, **kwargs: Any) -> argparse.Action: ...


class _Group:
    """An argument group that keeps the actions it adds (``add_argument`` returns them),
    so that nothing reads argparse's private classes or the parser's list of actions.
    """

    def __init__(self, group: _AddsArguments, into: Actions) -> None:
        self._group = group
        self._into = into

    def add_argument(self, *flags: str, **kwargs: Any) -> argparse.Action:
        action = self._group.add_argument(*flags, **kwargs)
        self._into[action.dest] = action
        return action


def _common(p: argparse.ArgumentParser) -> Actions:
    """Add the options every command accepts (display and live-cluster sources); their
    actions by ``dest``.

    Call it on the top-level parser and on every subcommand's parser: defaults are
    ``SUPPRESS`` here and filled in once by :func:`resolve_defaults`.
    """
    s = argparse.SUPPRESS
    actions: Actions = {}
    g = _Group(p.add_argument_group("display"), actions)
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
    _live_options(_Group(p.add_argument_group("live cluster"), actions))
    _record_options(_Group(p.add_argument_group("always-on recording"), actions))
    return actions


def _record_options(g: _Group) -> None:
    s = argparse.SUPPRESS
    g.add_argument(
        "--record-dir",
        type=directory,
        default=s,
        metavar="DIR",
        help="record every dashboard session into rotating files in DIR (ktop replay DIR "
        "plays them as one timeline)",
    )
    g.add_argument(
        "--retain",
        type=bounded_float(bounds.RETAIN),
        default=s,
        metavar="DURATION",
        help=f"with --record-dir: delete files that ended longer ago, {bounds.RETAIN.text()} "
        "(default 24h)",
    )
    g.add_argument(
        "--max-disk",
        type=bounded_size(bounds.MAX_DISK),
        default=s,
        metavar="SIZE",
        help="with --record-dir: delete the oldest files beyond this total (default 2G)",
    )


class _EveryContext(argparse.Action):
    """``--context``: the last one given is *the* context; ``fleet`` reads them all."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.contexts = [*getattr(namespace, "contexts", []), values]


def _live_options(g: _Group) -> None:
    s = argparse.SUPPRESS
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
        type=prometheus_address,
        default=s,
        metavar="URL",
        help="read metrics from Prometheus: a URL, k8s://NAMESPACE/SERVICE:PORT (through "
        "the apiserver's service proxy) or 'auto' (find kube-prometheus / the operator)",
    )
    add_prometheus_flags(g, s)
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
        "--provider",
        type=provider_name,
        default=s,
        metavar="|".join(p.value for p in Provider),
        help="who runs the control plane (default: detected): where the components are read",
    )
    g.add_argument(
        "--apiserver",
        action="append",
        type=url,
        default=s,
        metavar="URL",
        help="an apiserver instance URL (repeat; default: found from EndpointSlices)",
    )
    g.add_argument("--etcd-metrics", action="append", type=url, default=s, metavar="URL")
    g.add_argument("--etcd-cert", default=s, metavar="FILE", help="client certificate for etcd")
    g.add_argument("--etcd-key", default=s, metavar="FILE", help="client key for etcd")
    g.add_argument("--etcd-ca", default=s, metavar="FILE", help="CA bundle for etcd")
    g.add_argument("--scheduler-metrics", action="append", type=url, default=s, metavar="URL")
    g.add_argument(
        "--controller-manager-metrics", action="append", type=url, default=s, metavar="URL"
    )
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
    return _build()[0]


def _build() -> tuple[argparse.ArgumentParser, Actions, dict[str, argparse.ArgumentParser]]:
    parser = OneLineErrorParser(
        prog="ktop",
        description="A terminal dashboard for very large Kubernetes control planes. " + READ_ONLY,
        epilog="Run 'ktop demo' to see it on a built-in simulated cluster. Defaults for "
        f"every option can be set in {config_path()} (keys are the long option names).",
    )
    parser.add_argument("--version", action="version", version=f"ktop {__version__}")
    actions = _common(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parsers = {}
    for name, command in _commands().items():
        parsers[name] = command.add_parser(sub)
        _common(parsers[name])
    return parser, actions, parsers


def _explicit(args: argparse.Namespace, parser: argparse.ArgumentParser | None) -> frozenset[str]:
    """The options given on the command line: every common option present before the
    defaults are filled in, and the command's own options whose value is not its default.
    """
    common = {dest for dest in DEFAULTS if hasattr(args, dest)}
    own = set()
    if parser is not None:
        own = {d for d, v in vars(args).items() if d not in DEFAULTS and parser.get_default(d) != v}
    return frozenset(common | own)


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
    if isinstance(DEFAULTS[action.dest], list):  # a repeatable option (action="append")
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise bad("a string or a list of strings")
    else:
        if convert is str and not isinstance(value, str):
            raise bad("a string")
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise bad("a number" if convert in (int, float) else "a string")
    try:
        if isinstance(DEFAULTS[action.dest], list):
            return [convert(v) for v in items]
        return convert(value)
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f"{where}: {key}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise bad("a number" if convert in (int, float) else "a string") from exc


def resolve_defaults(
    args: argparse.Namespace,
    actions: Actions,
    config: Config,
    environ: Mapping[str, str],
) -> argparse.Namespace:
    """Fill every common option not given on the command line, once.

    Precedence: command line (before or after the subcommand), then the environment
    (``KTOP_THEME``), then the config file, then :data:`DEFAULTS`. Config keys
    that are not options are a :class:`ConfigError` naming the file and the key.
    """
    where = str(config.path)
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
    parser, actions, parsers = _build()
    args = parser.parse_args(argv)
    args.explicit = _explicit(args, parsers.get(args.command))
    try:
        config = read_config(config_path(env))
        args = resolve_defaults(args, actions, config, env)
    except ConfigError as exc:
        parser.exit(2, f"ktop: {exc}\n")
    try:
        re.compile(args.prod_pattern or "")
    except re.error as exc:
        parser.exit(
            2, f"ktop: --prod-pattern {args.prod_pattern!r}: not a regular expression: {exc}\n"
        )
    return args


def _commands() -> dict[str, ModuleType]:
    """Every subcommand, in the order ``--help`` lists them: a module whose
    ``add_parser(subparsers)`` returns the parser that takes the common options and whose
    ``run(args, secrets)`` runs it.
    """
    from ktop.commands import bundle, demo, fleet, record, replay, snapshot, triage

    return {
        "demo": demo,
        "snapshot": snapshot,
        "record": record,
        "replay": replay,
        "triage": triage,
        "bundle": bundle,
        "fleet": fleet,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ktop`` command.

    Every message is scrubbed of secrets; an unexpected error prints two lines
    and leaves the full (scrubbed) report in the cache directory. The run is one
    session: the :class:`~ktop.scrub.Secrets` made here is the one the command records
    every credential it reads into, and the one the log records, the crash report and
    every message are scrubbed with.
    """
    from ktop.crash import install_logging, report_crash

    secrets = Secrets()
    install_logging(secrets)
    try:
        return _main(argv, secrets)
    except KeyboardInterrupt:
        print("ktop: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        argv_list = list(sys.argv[1:] if argv is None else argv)
        print(report_crash(exc, argv_list, secrets), file=sys.stderr)
        return 70  # EX_SOFTWARE


def _main(argv: Sequence[str] | None, secrets: Secrets) -> int:
    from ktop.commands.preflight import learn_url_credentials, refusal

    args = parse_args(argv)  # before any credential is read: config errors need no secrets
    learn_url_credentials(args, secrets)
    problem = refusal(args)
    if problem is not None:
        name = f"ktop {args.command}" if args.command else "ktop"
        print(secrets.scrub(f"{name}: {problem}"), file=sys.stderr)
        return 2
    commands = _commands()
    if args.command in commands:
        return int(commands[args.command].run(args, secrets))
    from ktop.commands import dashboard

    return dashboard.run(args, secrets)


if __name__ == "__main__":
    sys.exit(main())
