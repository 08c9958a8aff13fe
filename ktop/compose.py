"""The composition root: a command's options in, a running source and what folds it out.

Every command reads the world through :func:`open_source` (:func:`with_source` runs it
under ``asyncio.run`` and turns a refusal into a message and an exit status). What to
read is data, one small class per variant:

======================  ==========================================================
:class:`Live`           a live cluster (or, without a kubeconfig, one Prometheus)
:class:`Demo`           the built-in simulator playing a scenario
:class:`KindCluster`           a kind cluster created for the demo, then read live
:class:`Replay`         a recording, played with the replay controls
:class:`Bundle`         an offline bundle, read once
======================  ==========================================================

Each is opened by one small function. A cluster is connected, probed, its errors
scrubbed and its connection closed in :func:`open_connection` only; the simulator is
built in :func:`demo_source` only, with the same arguments for every command.

Each takes the session's :class:`~ktop.scrub.Secrets` (one per run, from ``ktop.cli.main``):
what is read is recorded into it; the hub and every refusal are scrubbed with it.
"""

# ruff: noqa: PLC0415
# Imports are lazy, as in the commands: ``--help`` and ``--version`` stay instant.

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ktop.analysis.triage.baseline import HistoryKind
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.model_inputs import ModelConfig
from ktop.model.series import WINDOW_S
from ktop.scrub import Secrets
from ktop.sources.base import Source
from ktop.sources.live import DEFAULT_CLUSTER_LABEL

if TYPE_CHECKING:
    from ktop.record.reader import Recording
    from ktop.record.recording_set import RecordingSet
    from ktop.sources.bundle.reader import BundleRead
    from ktop.sources.live.client import Connection
    from ktop.sources.live.cost import CostMeter
    from ktop.sources.live.options import LiveOptions
    from ktop.sources.replay import ReplaySource
    from ktop.sources.sim.simulator import Simulator

SourceInfo = dict[str, str]
"""What a source is, as a recording's header names it: ``kind``, ``context``, ``detail``."""


class SourceError(Exception):
    """A source could not be opened. The message is safe to print (foreign text in it is
    scrubbed) and says why; ``status`` is the command's exit status.
    """

    def __init__(self, message: str, status: int = 2, *, bare: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.bare = bare
        """Printed as it is, without the command's name in front (kind's own report)."""


# ---------------------------------------------------------------------------- plans


@dataclass(frozen=True, slots=True)
class Live:
    """A live cluster, read with ``options``."""

    options: LiveOptions
    needs_terminal: bool = False
    """The dashboard: refuse a non-terminal once connected (a broken kubeconfig is still
    reported as such, whatever the terminal)."""
    metrics_only_above: int = 0
    """Read the cluster metrics-only when it has more nodes than this (0: never by size)."""
    meter: CostMeter | None = None
    """The cost meter of the source and its connection (default: a new one)."""


@dataclass(frozen=True, slots=True)
class Demo:
    """The simulator playing ``scenario``; ``speed`` and ``tick_s`` pace its source.

    Commands that step :attr:`OpenedSource.simulator` themselves (``snapshot --at``, a
    recording made as fast as possible) leave the pace at its default.
    """

    scenario: str
    nodes: int
    zones: int
    seed: int
    rack_label: str
    speed: float = 1.0
    tick_s: float = 1.0

    @classmethod
    def from_args(
        cls, args: argparse.Namespace, scenario: str, *, speed: float = 1.0, tick_s: float = 1.0
    ) -> Demo:
        """The simulator options every command shares (``--nodes``, ``--zones``,
        ``--seed``, ``--rack-label``) with this scenario and pace.
        """
        return cls(
            scenario,
            nodes=args.nodes,
            zones=args.zones,
            seed=args.seed,
            rack_label=args.rack_label,
            speed=speed,
            tick_s=tick_s,
        )


@dataclass(frozen=True, slots=True)
class KindCluster:
    """A kind cluster with KWOK nodes playing ``scenario``, then read as ``live`` says
    (its kubeconfig replaces any given). Only :func:`with_source` opens it: the cluster
    is created before the event loop starts.
    """

    scenario: str
    live: Live


@dataclass(frozen=True, slots=True)
class Replay:
    """The recording at ``path``, from ``at`` (default its start) at ``speed``."""

    path: str
    speed: float = 1.0
    at: str | None = None
    paused: bool = False
    needs_terminal: bool = False
    """The dashboard: refuse a non-terminal once the file is open."""
    session: int | None = None
    """A record directory: the session to play (None: the newest)."""


@dataclass(frozen=True, slots=True)
class Bundle:
    """The offline bundle in ``directory`` (docs/bundle-format.md)."""

    directory: str
    rack_label: str


SourcePlan = Live | Demo | Replay | Bundle
"""What :func:`open_source` opens."""


# ---------------------------------------------------------------------------- opened


async def _nothing_to_close() -> None:
    return None


@dataclass(eq=False, slots=True)
class OpenedSource:
    """A source ready to run, the hub that folds it, and what to release afterwards.

    Use it as an async context manager, or call :meth:`close`. The handles beside
    ``source`` are set for the variant that has them.
    """

    source: Source
    hub: Hub
    """A hub whose model is configured for this source (the recording's own for a replay;
    the fleet folds each cell in its own)."""
    info: SourceInfo
    simulator: Simulator | None = None
    """:class:`Demo`: the simulator itself, for commands that step it."""
    connection: Connection | None = None
    """:class:`Live`: the probed connection (None when only Prometheus is read)."""
    replay: ReplaySource | None = None
    """:class:`Replay`: the source with the replay controls."""
    bundle: BundleRead | None = None
    """:class:`Bundle`: what the bundle held beside its events."""
    release: Callable[[], Awaitable[None]] = _nothing_to_close
    notes: tuple[str, ...] = ()
    """What the user is told as the source opens (a record directory's skipped files)."""

    async def close(self) -> None:
        """Release what the source holds (a connection, an open recording)."""
        await self.release()

    async def __aenter__(self) -> OpenedSource:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def _hub(config: ModelConfig, secrets: Secrets) -> Hub:
    return Hub(ClusterModel(config), secrets=secrets)


# ---------------------------------------------------------------------------- options


def live_options(args: argparse.Namespace) -> LiveOptions:
    """The live source's options from the resolved command-line options."""
    from ktop.sources.live.components import TlsFiles
    from ktop.sources.live.options import LiveOptions
    from ktop.sources.live.prometheus_connect import PrometheusAuth

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


def terminal_problem() -> str | None:
    """Why the dashboard cannot take this terminal (None when it can)."""
    from ktop.crash import terminal_problem as problem

    return problem(sys.stdin, sys.stdout)


# ---------------------------------------------------------------------------- live


async def open_connection(
    kubeconfig: str | None,
    context: str | None,
    meter: CostMeter | None = None,
    *,
    secrets: Secrets,
) -> Connection:
    """Connect to a context and probe it, before anything takes the terminal (credentials
    and exec plugins that prompt need it), recording the credentials into ``secrets``. Raises
    :class:`SourceError` with the reason scrubbed; the connection is closed on every failure.
    """
    from ktop.sources.kubeconfig import KubeconfigError
    from ktop.sources.live import client

    try:
        conn = await client.connect(kubeconfig, context, meter, secrets=secrets)
    except KubeconfigError as exc:
        raise SourceError(secrets.scrub(exc)) from None
    try:
        await client.probe(conn)
    except client.ConnectError as exc:
        await conn.close()
        raise SourceError(secrets.scrub(exc)) from None
    except BaseException:
        await conn.close()
        raise
    return conn


def _cluster_problem(opts: LiveOptions) -> str:
    """Why ``--cluster`` / ``--cluster-label`` cannot work as given (empty when they can)."""
    from ktop.sources.live.prometheus_connect import PrometheusConfigError
    from ktop.sources.live.prometheus_queries import cluster_matcher

    if opts.cluster is not None and not opts.prometheus:
        return "--cluster selects one cluster of a Prometheus: give --prometheus too"
    try:
        cluster_matcher(opts.cluster_label, opts.cluster)
    except PrometheusConfigError as exc:
        return f"--cluster-label: {exc}"
    return ""


def _check_terminal(needed: bool) -> None:
    problem = terminal_problem() if needed else None
    if problem is not None:
        raise SourceError(problem)


async def too_big(conn: Connection, threshold: int) -> bool:
    """True when the cluster has more nodes than ``threshold`` (0: never). A cluster whose
    size cannot be told is read in full.
    """
    from ktop.sources.live.client import node_count

    if threshold <= 0:
        return False
    n = await node_count(conn)
    return n is not None and n > threshold


async def open_live(plan: Live, secrets: Secrets) -> OpenedSource:
    """A live source, connected and probed (or, without a kubeconfig, Prometheus only)."""
    from ktop.sources.live.source import LiveSource

    opts = plan.options
    refused = _cluster_problem(opts)
    if refused:
        raise SourceError(refused)
    hub = _hub(ModelConfig(window_s=opts.window_s, rack_label=opts.rack_label), secrets)
    if opts.without_kubeconfig:
        _check_terminal(plan.needs_terminal)
        where = opts.cluster if opts.cluster is not None else (opts.prometheus or "")
        info = {"kind": "live", "context": where, "detail": ""}
        return OpenedSource(LiveSource(opts, meter=plan.meter, secrets=secrets), hub, info)
    conn = await open_connection(opts.kubeconfig, opts.context, plan.meter, secrets=secrets)
    try:
        _check_terminal(plan.needs_terminal)
        if not opts.metrics_only and await too_big(conn, plan.metrics_only_above):
            opts = replace(opts, metrics_only=True)
    except BaseException:
        await conn.close()
        raise
    info = {"kind": "live", "context": conn.context, "detail": ""}  # the resolved name
    source = LiveSource(opts, conn=conn, meter=plan.meter, secrets=secrets)
    return OpenedSource(source, hub, info, connection=conn, release=conn.close)


# ---------------------------------------------------------------------------- the others


def demo_source(plan: Demo, secrets: Secrets) -> OpenedSource:
    """The simulator and its source (nothing to connect, so this needs no event loop)."""
    from ktop.sources.sim.simulator import Simulator
    from ktop.sources.sim.source import SimulatorSource

    sim = Simulator(
        plan.scenario,
        nodes=plan.nodes,
        zones=plan.zones,
        seed=plan.seed,
        rack_label=plan.rack_label,
    )
    info = {
        "kind": "demo",
        "context": f"sim/{plan.scenario}",
        "detail": f"{plan.nodes} nodes, {plan.zones} zones, seed {plan.seed}",
    }
    source = SimulatorSource(sim, speed=plan.speed, tick_s=plan.tick_s)
    return OpenedSource(source, _hub(ModelConfig(rack_label=plan.rack_label), secrets), info, sim)


def open_recording(path: str, secrets: Secrets) -> Recording:
    """Open a recording; :class:`SourceError` says why it cannot be read."""
    from ktop.record.format import FormatError
    from ktop.record.reader import Recording

    try:
        return Recording(path)
    except FormatError as exc:
        raise SourceError(secrets.scrub(f"{path}: {exc}")) from None
    except OSError as exc:
        raise SourceError(secrets.scrub(f"cannot read {path}: {exc.strerror or exc}")) from None


def open_record_dir(path: str, secrets: Secrets, session: int | None = None) -> RecordingSet:
    """A record directory's session (the newest, or ``session``) as one timeline, its files
    that cannot be played skipped (:attr:`RecordingSet.notes`); :class:`SourceError` says
    why none can be.
    """
    from ktop.record.recording_set import RecordingSet

    try:
        return RecordingSet(path, session=session)
    except ValueError as exc:
        raise SourceError(secrets.scrub(exc)) from None
    except OSError as exc:
        raise SourceError(secrets.scrub(f"cannot read {path}: {exc.strerror or exc}")) from None


def replay_source(plan: Replay, secrets: Secrets) -> OpenedSource:
    """The recording's player (or a record directory's, as one timeline), started at
    ``plan.at``, folding into the recording's model.
    """
    from ktop.sources.replay import ReplayPlayer, ReplaySource, parse_time

    rec: Recording | RecordingSet
    notes: tuple[str, ...] = ()
    if Path(plan.path).is_dir():
        rec = open_record_dir(plan.path, secrets, plan.session)
        notes = tuple(secrets.scrub(n) for n in rec.notes)
    else:
        rec = open_recording(plan.path, secrets)
    try:
        _check_terminal(plan.needs_terminal)
        hub = Hub(ClusterModel(rec.model_config), history=HistoryKind.RECORDING, secrets=secrets)
        start_at = None
        if plan.at:  # checked now; the seek runs in the app, which shows its progress
            try:
                start_at = parse_time(plan.at, rec.start, rec.end)
            except ValueError as exc:
                raise SourceError(f"--at: {exc}") from None
        player = ReplayPlayer(rec, hub.reset, speed=plan.speed)
        player.paused = plan.paused
    except BaseException:
        rec.close()
        raise
    source = ReplaySource(player, start_at=start_at)
    info = {str(k): str(v) for k, v in rec.header.get("source", {}).items()}

    async def release() -> None:
        rec.close()

    return OpenedSource(source, hub, info, replay=source, release=release, notes=notes)


def bundle_source(plan: Bundle, secrets: Secrets) -> OpenedSource:
    """A bundle read from disk; the model's window covers every scrape in it."""
    from ktop.sources.bundle.reader import BundleNotFoundError, BundleSource, read_bundle

    try:
        read = read_bundle(plan.directory, plan.rack_label)
    except (BundleNotFoundError, OSError) as exc:
        raise SourceError(secrets.scrub(exc)) from None
    config = ModelConfig(window_s=max(WINDOW_S, read.window_s + 60), rack_label=plan.rack_label)
    info = {"kind": "bundle", "context": plan.directory, "detail": ""}
    return OpenedSource(BundleSource(read.events), _hub(config, secrets), info, bundle=read)


async def open_source(plan: SourcePlan, secrets: Secrets) -> OpenedSource:
    """Open what ``plan`` names, with the session's ``secrets`` (the hub's, then:
    ``OpenedSource.hub.secrets``); :class:`SourceError` says why it cannot be opened.
    """
    if isinstance(plan, Live):
        return await open_live(plan, secrets)
    if isinstance(plan, Demo):
        return demo_source(plan, secrets)
    if isinstance(plan, Replay):
        return replay_source(plan, secrets)
    return bundle_source(plan, secrets)


# ---------------------------------------------------------------------------- commands


def _kind_cluster(plan: KindCluster, secrets: Secrets) -> Live:
    """Create the kind cluster (outside any event loop: it runs its own) and say so."""
    from ktop.lab.kind import kind_demo

    result = kind_demo(scenarios=(plan.scenario,))
    message = secrets.scrub(result.message)
    if not result.ok or result.kubeconfig is None:
        raise SourceError(message, 1, bare=True)
    print(message, file=sys.stderr)
    options = replace(plan.live.options, kubeconfig=str(result.kubeconfig), context=None)
    return replace(plan.live, options=options)


def with_source(
    plan: SourcePlan | KindCluster,
    body: Callable[[OpenedSource], Awaitable[int]],
    *,
    command: str,
    secrets: Secrets,
) -> int:
    """Open ``plan`` (with the session's ``secrets``), run ``body`` on it under ``asyncio.run``
    and release the source, also when ``body`` raises. A source that cannot be opened is
    printed as ``COMMAND: why`` on standard error; its exit status is returned.
    """

    async def run(opened_plan: SourcePlan) -> int:
        async with await open_source(opened_plan, secrets) as opened:
            return await body(opened)

    try:
        opened_plan = _kind_cluster(plan, secrets) if isinstance(plan, KindCluster) else plan
        return asyncio.run(run(opened_plan))
    except SourceError as exc:
        print(str(exc) if exc.bare else f"{command}: {exc}", file=sys.stderr)
        return exc.status
