"""Checks of the resolved command line before a command runs: an option the command would
silently ignore, and a value that would only fail once the dashboard is up (an unknown
theme, a ``--record-dir`` that is a file).

Each refusal is one line naming the option and why; the caller exits with status 2. Only
what was given on the command line (:attr:`argparse.Namespace.explicit`, set by
:func:`ktop.cli.parse_args`) can be *ignored*: ``config.toml`` applies to every command, so
a default there that a command does not use is no error. A value a command does use is
checked wherever it came from.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ktop.scrub import Secrets, url_credentials
from ktop.sources.live.prometheus_flags import PROMETHEUS_FLAGS

LIVE = (
    "context",
    "kubeconfig",
    "prometheus",
    *(f.dest for f in PROMETHEUS_FLAGS),
    "metrics_only",
    "cluster_label",
    "cluster",
    "no_find_components",
    "provider",
    "apiserver",
    "etcd_metrics",
    "etcd_cert",
    "etcd_key",
    "etcd_ca",
    "scheduler_metrics",
    "controller_manager_metrics",
    "component_ca",
    "insecure_components",
    "scrape_interval",
)
"""The common options that say how to read a live cluster."""
DASHBOARD_LOOK = ("theme", "refresh", "low_bandwidth")
"""The common options only the full-screen dashboard reads."""
TEXT_LOOK = ("ascii", "prod_pattern")
"""The common options the dashboard and ``snapshot``'s text read."""
RECORDING = ("record_dir", "retain", "max_disk")
"""The always-on recording of a dashboard session (``ktop`` and ``ktop demo``)."""
EVERYWHERE = ("rack_label",)
"""Common options every command that reads a cluster (or the simulator) uses."""
DASHBOARDS = (None, "demo", "replay", "fleet")
"""The commands that open the dashboard (and read ``--theme``)."""


@dataclass(frozen=True, slots=True)
class Unused:
    """Options a command does not read when ``when`` holds, and why."""

    dests: tuple[str, ...]
    why: str
    when: Callable[[argparse.Namespace], bool] = lambda args: True


def _given(args: argparse.Namespace, dest: str) -> bool:
    return getattr(args, dest, None) not in (None, False)


UNUSED: dict[str | None, tuple[Unused, ...]] = {
    None: (),
    "demo": (
        Unused(LIVE, "ktop demo plays the simulator", lambda a: not a.kind),
        Unused(("context", "kubeconfig"), "ktop demo --kind reads the kind cluster it makes"),
    ),
    "replay": (
        Unused(LIVE + EVERYWHERE, "ktop replay reads the recording"),
        Unused(RECORDING, "a replay is not recorded"),
        Unused(("speed", "at", "paused"), "--info prints and exits", lambda a: a.info),
    ),
    "snapshot": (
        Unused(DASHBOARD_LOOK, "ktop snapshot prints text, it opens no dashboard"),
        Unused(RECORDING, "ktop snapshot records nothing (ktop record does)"),
        Unused((*LIVE, "timeout"), "--demo reads the simulator", lambda a: _given(a, "demo")),
        Unused(("at", "nodes", "zones", "seed"), "it goes with --demo", lambda a: not a.demo),
    ),
    "record": (
        Unused(DASHBOARD_LOOK + TEXT_LOOK, "ktop record draws nothing"),
        Unused(RECORDING, "ktop record writes -o FILE (--record-dir records dashboards)"),
        Unused(LIVE, "--demo reads the simulator", lambda a: _given(a, "demo")),
        Unused(LIVE, "--from copies a recording", lambda a: _given(a, "from_file")),
        Unused(("speed", "nodes", "zones", "seed"), "it goes with --demo", lambda a: not a.demo),
        Unused(
            ("duration",), "--from copies the whole recording", lambda a: _given(a, "from_file")
        ),
    ),
    "triage": (
        Unused(DASHBOARD_LOOK + TEXT_LOOK, "ktop triage prints a report, it opens no dashboard"),
        Unused(RECORDING, "ktop triage records nothing"),
        Unused(("window",), "it samples a live cluster", lambda a: bool(a.bundle or a.recording)),
    ),
    "bundle": (
        Unused(DASHBOARD_LOOK + TEXT_LOOK, "ktop bundle writes files, it opens no dashboard"),
        Unused(RECORDING, "ktop bundle records nothing"),
    ),
    "fleet": (
        Unused(RECORDING, "ktop fleet records nothing"),
        Unused(("speed", "nodes", "zones", "seed"), "it goes with --demo", lambda a: not a.demo),
        Unused(("metrics_only_above",), "--demo cells are simulated", lambda a: a.demo),
    ),
}
"""What each command (None: the dashboard on a live cluster) leaves unread."""


def flag(dest: str) -> str:
    """The option's name on the command line (``record_dir`` -> ``--record-dir``)."""
    return "--" + {"from_file": "from"}.get(dest, dest).replace("_", "-")


def ignored_option(args: argparse.Namespace) -> str | None:
    """The first option given on the command line that the command would not read, with
    why (None: every one is read).
    """
    explicit: frozenset[str] = getattr(args, "explicit", frozenset())
    for rule in UNUSED.get(args.command, ()):
        if rule.when(args):
            for dest in rule.dests:
                if dest in explicit:
                    return f"{flag(dest)} is not used here: {rule.why}"
    return None


def recording_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the always-on recording options of a command that records
    (``ktop``, ``ktop demo``): ``--retain`` or ``--max-disk`` without a ``--record-dir``,
    or a ``--record-dir`` that cannot be a directory of recordings.
    """
    explicit: frozenset[str] = getattr(args, "explicit", frozenset())
    if args.command not in (None, "demo"):
        return None
    if not args.record_dir:
        for dest in ("retain", "max_disk"):
            if dest in explicit:
                return f"{flag(dest)} goes with --record-dir (it bounds what is kept there)"
        return None
    name = "--record-dir" if "record_dir" in explicit else "record-dir (config.toml)"
    problem = directory_problem(Path(args.record_dir))
    return f"{name} {args.record_dir!r}: {problem}" if problem else None


def directory_problem(path: Path) -> str | None:
    """Why ``path`` cannot hold ktop's files (None: it is, or can be made, a writable
    directory). Nothing is created.
    """
    if path.exists():
        if not path.is_dir():
            return "expected a directory, it is a file"
        return None if os.access(path, os.W_OK | os.X_OK) else "the directory is not writable"
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot be made: {parent} is a file"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot be made: {parent} is not writable"
    return None


def theme_problem(args: argparse.Namespace) -> str | None:
    """Why the theme asked for (``--theme``, ``KTOP_THEME`` or config.toml) cannot be used by
    a command that opens the dashboard (None: it can, or none was asked for).
    """
    if args.command not in DASHBOARDS or not args.theme:
        return None
    from ktop.config import user_themes_dir
    from ktop.ui.theming import chosen_theme_problem

    return chosen_theme_problem(args.theme, user_themes_dir())


def refusal(args: argparse.Namespace) -> str | None:
    """The first reason not to run the command as given (None: run it)."""
    for check in (ignored_option, recording_problem, theme_problem):
        problem = check(args)
        if problem is not None:
            return problem
    return None


URL_OPTIONS = (
    "prometheus",
    "apiserver",
    "etcd_metrics",
    "scheduler_metrics",
    "controller_manager_metrics",
)
"""The options whose values are URLs: the credentials in them are the session's secrets
from the start (every command's messages are scrubbed of them, whatever shape they take
there)."""


def learn_url_credentials(args: argparse.Namespace, secrets: Secrets) -> None:
    """Record the credentials in every URL option (:data:`URL_OPTIONS`) as the session's
    secrets, before any command runs or prints.
    """
    for dest in URL_OPTIONS:
        value = getattr(args, dest, None)
        for address in value if isinstance(value, list) else [value]:
            if isinstance(address, str):
                secrets.add_all(url_credentials(address))
