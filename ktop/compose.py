"""The composition root: a command's options in, a running source and what folds it out.

Every command reads the world through :func:`open_source` (:func:`with_source` runs it
on :func:`~ktop.runner.run_loop` and turns a refusal into a message and an exit
status). What to read is data, one small class per variant:

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

Each takes the :class:`~ktop.hub.HubPolicy` of the hub it builds, with the session's
:class:`~ktop.scrub.Secrets` (one per run, from ``ktop.cli.main``): what is read is recorded
into them; the hub and every refusal are scrubbed with them.
"""

# ruff: noqa: PLC0415
# Imports are lazy, as in the commands: ``--help`` and ``--version`` stay instant.

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ktop.analysis.triage.baseline import HistoryKind
from ktop.hub import Hub, HubPolicy
from ktop.model.cluster import ClusterModel
from ktop.model.model_inputs import ModelConfig
from ktop.model.series import WINDOW_S
from ktop.runner import run_loop
from ktop.scrub import Secrets
from ktop.sources.base import Source
from ktop.sources.live import DEFAULT_CLUSTER_LABEL

if TYPE_CHECKING:
    from ktop.record.reader import Recording
    from ktop.record.recording_set import RecordingSet
    from ktop.sources.bundle.parts import BundleRead
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
    """The simulator playing ``scenario``; ``speed`` and ``tick_s`` pace its source (speed
    0: as fast as it can, one simulated second per batch, to ``until`` seconds if given).
    """

    scenario: str
    nodes: int
    zones: int
    seed: int
    rack_label: str
    speed: float = 1.0
    tick_s: float = 1.0
    until: float | None = None

    @classmethod
    def from_args(
        cls, args: argparse.Namespace, scenario: str, *, speed: float = 1.0, tick_s: float = 1.0
    ) -> Demo:
        """The simulator options every command shares (``--nodes``, ``--zones``,
        ``--seed``, ``--rack-label``) with this scenario and pace.
        """
        shared = (args.nodes, args.zones, args.seed, args.rack_label)
        return cls(scenario, *shared, speed=speed, tick_s=tick_s)


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
    """The offline bundle in ``directory`` (docs/bundle-format.md), judged ``look_back_s`` back."""

    directory: str
    rack_label: str
    look_back_s: float = WINDOW_S


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
    the fleet folds each cell in its own), built with its policy (:class:`~ktop.hub.HubPolicy`)."""
    info: SourceInfo
    simulator: Simulator | None = None
    """:class:`Demo`: the simulator itself (its clock is a fleet cell's)."""
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

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _hub(config: ModelConfig, policy: HubPolicy) -> Hub:
    return Hub(ClusterModel(config), policy)


def live_options(args: argparse.Namespace) -> LiveOptions:
    """The live source's options from the resolved command-line options."""
    from ktop.sources.live.components import TlsFiles
    from ktop.sources.live.options import LiveOptions
    from ktop.sources.live.prometheus_flags import prometheus_auth

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
        prometheus_auth=prometheus_auth(args),
        prometheus_s=every,
        find_components=not opt("no_find_components", False),
        provider=opt("provider"),
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


async def open_live(plan: Live, policy: HubPolicy) -> OpenedSource:
    """A live source, connected and probed (or, without a kubeconfig, Prometheus only)."""
    from ktop.sources.live.source import LiveSource

    opts, secrets = plan.options, policy.secrets
    refused = _cluster_problem(opts)
    if refused:
        raise SourceError(refused)
    hub = _hub(ModelConfig(window_s=opts.window_s, rack_label=opts.rack_label), policy)
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


def demo_source(plan: Demo, policy: HubPolicy) -> OpenedSource:
    """The simulator and its source (nothing to connect, so this needs no event loop)."""
    from ktop.sources.sim.simulator import Simulator
    from ktop.sources.sim.source import SimulatorSource, SteppedSimulatorSource

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
    source: Source = SteppedSimulatorSource(sim, plan.until)
    if plan.speed:
        source = SimulatorSource(sim, speed=plan.speed, tick_s=plan.tick_s)
    return OpenedSource(source, _hub(ModelConfig(rack_label=plan.rack_label), policy), info, sim)


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


def replay_source(plan: Replay, policy: HubPolicy) -> OpenedSource:
    """The recording's player (or a record directory's, as one timeline), started at
    ``plan.at``, folding into the recording's model (its history the recording's).
    """
    from ktop.sources.replay import ReplayPlayer, ReplaySource, parse_time

    secrets = policy.secrets
    rec: Recording | RecordingSet
    notes: tuple[str, ...] = ()
    if Path(plan.path).is_dir():
        rec = open_record_dir(plan.path, secrets, plan.session)
        notes = tuple(secrets.scrub(n) for n in rec.notes)
    else:
        rec = open_recording(plan.path, secrets)
    try:
        _check_terminal(plan.needs_terminal)
        hub = _hub(rec.model_config, replace(policy, history=HistoryKind.RECORDING))
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


def bundle_source(plan: Bundle, policy: HubPolicy) -> OpenedSource:
    """A bundle read from disk: the window holds its scrapes and look-back; no baseline."""
    from ktop.sources.bundle.reader import BundleNotFoundError, BundleSource, read_bundle

    try:
        read = read_bundle(plan.directory, plan.rack_label)
    except (BundleNotFoundError, OSError) as exc:
        raise SourceError(policy.secrets.scrub(exc)) from None
    window_s = max(plan.look_back_s, read.window_s + 60)
    config = ModelConfig(window_s=window_s, rack_label=plan.rack_label)
    info = {"kind": "bundle", "context": plan.directory, "detail": ""}
    hub = _hub(config, replace(policy, history=None))
    return OpenedSource(BundleSource(read.events), hub, info, bundle=read)


async def open_source(
    plan: SourcePlan, secrets: Secrets, *, triage_on_publish: bool = False
) -> OpenedSource:
    """Open what ``plan`` names, with the session's ``secrets`` (the hub's, then:
    ``OpenedSource.hub.secrets``; ``triage_on_publish`` as :class:`~ktop.hub.HubPolicy`
    says); :class:`SourceError` says why it cannot be opened.
    """
    policy = HubPolicy(secrets, triage_on_publish=triage_on_publish)
    if isinstance(plan, Live):
        return await open_live(plan, policy)
    if isinstance(plan, Demo):
        return demo_source(plan, policy)
    if isinstance(plan, Replay):
        return replay_source(plan, policy)
    return bundle_source(plan, policy)


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
    triage_on_publish: bool = False,
) -> int:
    """Open ``plan`` with the session's ``secrets``, run ``body`` on it under
    :func:`~ktop.runner.run_loop`, release the source (also when ``body`` raises); a
    source that cannot be opened is printed as ``COMMAND: why`` on standard error and
    its exit status returned.
    """

    async def run(opened_plan: SourcePlan) -> int:
        opening = open_source(opened_plan, secrets, triage_on_publish=triage_on_publish)
        async with await opening as opened:
            return await body(opened)

    try:
        opened_plan = _kind_cluster(plan, secrets) if isinstance(plan, KindCluster) else plan
        return run_loop(run(opened_plan))
    except SourceError as exc:
        print(str(exc) if exc.bare else f"{command}: {exc}", file=sys.stderr)
        return exc.status
