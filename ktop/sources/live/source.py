"""The live source: one cluster, read at a cost it can afford.

What it reads is listed, as data, in :mod:`ktop.sources.live.reads` (and
nothing else; never an unpaginated LIST, one watch per resource):

* watches: nodes (listed as Tables with metadata, watched as Tables without),
  Pending pods (``status.phase=Pending``), Warning Events (``type=Warning``),
  ResourceQuotas, apiserver identity Leases;
* node Leases in ``kube-node-lease``: listed once, then sampled (``leases.py``);
* GETs of single nodes that are not Ready (rate-limited, capped);
* polls: the ``default/kubernetes`` EndpointSlices (to find apiserver
  instances), FlowSchemas and PriorityLevelConfigurations (names for the
  APF headers), each instance's ``/metrics`` and APF dump;
* optionally Prometheus (by URL or through the service proxy), and etcd /
  scheduler / controller-manager metrics: endpoints given on the command
  line, or else static pods in ``kube-system`` through the pod proxy.

In metrics-only mode (:attr:`LiveOptions.metrics_only`) it opens no watch and
lists no node, Lease or pod (nor looks for static pods): nodes and pending pods
come from the control plane's metrics (see ``ktop/model/area_metrics_only.py``).
Given a Prometheus URL and a cluster of it but no kubeconfig, it reads that
Prometheus only (:attr:`LiveOptions.without_kubeconfig`).

apiserver instances are named one way whatever the transport
(:func:`~ktop.sources.live.transport.instance_name`); the set comes from
``--apiserver``, EndpointSlices and Prometheus' targets. While any instance is
known nothing is read through the load-balanced address; loops of instances
that leave are cancelled and their rows dropped (``TargetGone``).

Every loop runs supervised: a failure that escapes it becomes an event for
the pane that needed it (``FeedFailed`` of its feed; ``ScrapeFailed`` of its
target for a scrape loop, ``ApfDumpFailed`` of its instance for an APF dump
loop), and the loop restarts after a back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import aiohttp
from kubernetes_asyncio.client import ApiClient

from ktop.model.events import (
    FEED_APF_NAMES,
    FEED_CLOCK,
    FEED_COMPONENTS,
    FEED_DISCOVERY,
    FEED_NODE_DETAILS,
    FEED_PROMETHEUS,
    LOAD_BALANCED,
    ApfDumpFailed,
    ClockTick,
    Component,
    Event,
    FeedFailed,
    FeedSynced,
    MetricsOnlyMode,
    ScrapeFailed,
    SourceStarted,
    Target,
    TargetGone,
)
from ktop.model.series import WINDOW_S
from ktop.sources.base import Emit
from ktop.sources.convert import ZONE_LABELS, node_record
from ktop.sources.live import DEFAULT_CLUSTER_LABEL
from ktop.sources.live.backfill import PrometheusBackfill
from ktop.sources.live.client import Connection, connect
from ktop.sources.live.components import TlsFiles, http_fetcher
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.discovery import (
    PROMETHEUS_HINT,
    apf_object_names,
    apiserver_endpoints,
    find_prometheus,
)
from ktop.sources.live.errors import ApiError
from ktop.sources.live.handlers import (
    IdentitiesHandler,
    NodesHandler,
    PendingPodsHandler,
    QuotasHandler,
    WarningEventsHandler,
)
from ktop.sources.live.leases import LeaseSampler
from ktop.sources.live.listwatch import Backoff, Handler, ListWatch
from ktop.sources.live.prometheus import (
    KubeAccess,
    PrometheusAuth,
    PrometheusCalls,
    PrometheusConfigError,
    PrometheusMetrics,
    cluster_matcher,
    prometheus_client,
)
from ktop.sources.live.reads import APF_DUMP, METRICS, NODE_DETAIL, NODE_LEASES, WATCHES
from ktop.sources.live.scrape import apf_dump_loop, failure_reason, scrape_metrics_loop
from ktop.sources.live.static_pods import (
    STATIC_COMPONENTS,
    ProxyTarget,
    discover_component,
    proxy_placeholder,
)
from ktop.sources.live.transport import TEXT, KubeTransport, instance_name

FIRST_POLL_WAIT_S = 15.0
"""How long discovery waits for Prometheus' first answer before reading instances itself."""
BACKFILL_TIMEOUT_S = 60.0
"""The time limit of the history backfill at start (the apiserver discovery waits for it)."""
PROMETHEUS_AUTO = "auto"
"""``--prometheus auto``: find an in-cluster Prometheus and read it through the proxy."""
ZONE_LABEL = ZONE_LABELS[-1]
"""The node label whose readiness per value metrics-only mode reads from kube-state-metrics."""


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """What to read and how often (defaults are what docs/cost.md assumes)."""

    kubeconfig: str | None = None
    context: str | None = None
    rack_label: str = "topology.ktop.dev/rack"
    apiserver_scrape_s: float = 15.0
    apf_dump_s: float = 15.0
    discovery_s: float = 60.0
    node_detail_per_s: float = 5.0
    node_detail_max: int = 500
    prometheus: str | None = None
    """A URL, ``k8s://NAMESPACE/SERVICE:PORT``, or ``auto``."""
    window_s: float = WINDOW_S
    """The model's observation window: the Prometheus backfill reads this much raw data."""
    prometheus_auth: PrometheusAuth = field(default_factory=PrometheusAuth)
    prometheus_s: float = 15.0
    etcd_metrics: tuple[str, ...] = ()
    etcd_tls: TlsFiles = field(default_factory=TlsFiles)
    scheduler_metrics: tuple[str, ...] = ()
    controller_manager_metrics: tuple[str, ...] = ()
    component_tls: TlsFiles = field(default_factory=TlsFiles)
    component_scrape_s: float = 15.0
    find_components: bool = True
    """Find components not given by URL as static pods, through the pod proxy."""
    apiservers: tuple[str, ...] = ()
    """Instance base URLs to use instead of discovering them."""
    watch_timeout_s: int = 300
    metrics_only: bool = False
    """No node, Lease or pod reads (and no other watch): nodes, zones and pending pods
    from the control plane's metrics."""
    cluster_label: str = DEFAULT_CLUSTER_LABEL
    """The label that names a cluster in a Prometheus that holds many."""
    cluster: str | None = None
    """Read only this cluster's series from Prometheus (matcher ``CLUSTER_LABEL="CLUSTER"``)."""
    lease_round_s: float = 10.0
    leases_per_round: int = 200
    """Node Leases are sampled, not watched: this many in rotation every ``lease_round_s``,
    plus those of not-Ready and lagging nodes (``leases.py``)."""

    @property
    def without_kubeconfig(self) -> bool:
        """Prometheus by URL, one of its clusters or metrics-only, and no kubeconfig or
        context given: read Prometheus only (metrics-only implied).
        """
        given = self.kubeconfig or self.context
        by_url = (self.prometheus or "").startswith(("http://", "https://"))
        return by_url and not given and (self.metrics_only or self.cluster is not None)

    @property
    def metrics_only_why(self) -> str:
        """Why the source reads no objects (empty when it reads them)."""
        if self.without_kubeconfig:
            return "no kubeconfig: Prometheus only"
        return "--metrics-only" if self.metrics_only else ""


class NodeDetails:
    """Fetches whole Nodes for not-Ready nodes: rate-limited, deduplicated, capped."""

    def __init__(self, per_s: float, cap: int) -> None:
        self.per_s = per_s
        self.cap = cap
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.pending: set[str] = set()
        self.fetched = 0
        self.failing = False

    def want(self, name: str) -> None:
        """Ask for a node's detail (ignored when already queued or over the cap).

        A node without a name is never fetched: ``/api/v1/nodes/`` would be an
        unpaginated LIST of every node.
        """
        if not name or name in self.pending or len(self.pending) >= self.cap:
            return
        self.pending.add(name)
        self.queue.put_nowait(name)

    async def run(
        self, t: KubeTransport, handler: NodesHandler, emit: Emit, clock: Callable[[], float]
    ) -> None:
        """Fetch queued nodes until cancelled; failures are reported, not swallowed."""
        while True:
            name = await self.queue.get()
            self.pending.discard(name)
            try:
                obj = (await t.get(NODE_DETAIL.format(name=quote(name, safe="")))).json()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                if isinstance(e, ApiError) and e.status == 404:
                    pass  # deleted meanwhile: its watch says so
                else:
                    self.failing = True
                    what = str(e) if isinstance(e, ApiError) else failure_reason(e)
                    emit([FeedFailed(clock(), FEED_NODE_DETAILS, f"node {name}: {what}")])
                    await asyncio.sleep(5.0)
            else:
                emit(handler.detail(clock(), node_record(obj, handler.rack_label)))
                self.fetched += 1
                if self.failing or self.fetched == 1:
                    self.failing = False
                    emit([FeedSynced(clock(), FEED_NODE_DETAILS)])
            await asyncio.sleep(1.0 / self.per_s)


Factory = Callable[[], Coroutine[Any, Any, None]]
Report = Callable[[float, str], Sequence[Event]]
"""The events that report a loop's failure (at a time, with a reason)."""


class LiveSource:
    """Reads one live cluster (see the module docstring for exactly what)."""

    def __init__(
        self,
        options: LiveOptions,
        clock: Callable[[], float] = time.time,
        conn: Connection | None = None,
        meter: CostMeter | None = None,
    ) -> None:
        self.o = options
        self.clock = clock
        self.meter = meter or (conn.meter if conn is not None else CostMeter())
        """The one meter of this source (``meter``, else the connection's, which counted
        its probe, else a new one): every request the source makes is counted here."""
        self.apf_names: dict[str, str] = {}
        self.conn = conn
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._session: aiohttp.ClientSession | None = None
        self.prometheus: PrometheusMetrics | None = None
        self.backfill: PrometheusBackfill | None = None
        self.rng = random.Random()
        self._clients: dict[str, ApiClient] = {}
        self.instance_successes: dict[str, int] = {}
        self.instance_failures: dict[str, int] = {}
        self.instances: frozenset[str] = frozenset()
        """apiserver instances read right now (may be just ``LOAD_BALANCED``)."""
        self.proxied: dict[Component, tuple[ProxyTarget, ...]] = {}
        self._placeholders: set[Component] = set()
        self._no_prometheus = False
        """--prometheus was given but names none (not found, or a wrong address)."""
        self._rediscover = asyncio.Event()
        self._emit: Emit = lambda events: None
        self._failed: set[str] = set()
        """Keys of loops whose failure was reported (the clock says when it runs again)."""

    @property
    def name(self) -> str:
        """Short name for status lines."""
        return "live"

    # -------------------------------------------------------------- tasks

    def _start(self, key: str, factory: Factory, report: str | Report) -> None:
        """Run ``factory()`` as task ``key`` (once); supervised, see :meth:`_supervise`.

        ``report`` is what a failure is reported as, so that it shows in the pane that
        needed the loop: a feed name (``FeedFailed``; one of the model's known feeds) or
        a function of the time and reason (e.g. ``ScrapeFailed`` of the loop's target).
        """
        running = self._tasks.get(key)
        if running is not None and not running.done():
            return
        self._tasks[key] = asyncio.create_task(
            self._supervise(key, factory, report), name=f"ktop-live-{key}"
        )

    async def _supervise(self, key: str, factory: Factory, report: str | Report) -> None:
        backoff = Backoff(rng=self.rng)
        while True:
            try:
                await factory()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                now, why = self.clock(), f"{key} stopped: {failure_reason(exc)}"
                self._failed.add(key)
                if isinstance(report, str):
                    self._emit([FeedFailed(now, report, why)])
                else:
                    self._emit(report(now, why))
                await asyncio.sleep(backoff.next_delay())

    def _stop(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()

    async def run(self, emit: Emit) -> None:
        """Connect, then read until cancelled."""
        self._emit = emit
        if self.o.without_kubeconfig:
            await self._run_prometheus_only(emit)
            return
        if self.conn is None:
            self.conn = await connect(self.o.kubeconfig, self.o.context, self.meter)
        self._session = aiohttp.ClientSession()
        try:
            emit([SourceStarted(self.clock(), "live", self.conn.context, self.conn.server)])
            t = KubeTransport(self.conn.api, self.meter)
            if self.o.metrics_only:
                emit([MetricsOnlyMode(self.clock(), self.o.metrics_only_why)])
            else:
                self._watches(t, emit)
            if self.o.prometheus:
                self._start("prometheus", lambda: self._prometheus(t, emit), FEED_PROMETHEUS)
            self._components(t, emit)
            self._start("discovery", lambda: self._discovery(t, emit), FEED_DISCOVERY)
            self._start("clock", lambda: self._ticks(emit), FEED_CLOCK)
            # Supervised loops never end by themselves; tasks come and go (instances,
            # leaders), so wait for cancellation rather than for a fixed set of tasks.
            await asyncio.get_running_loop().create_future()
        finally:
            await self._cancel_loops()
            for api in self._clients.values():
                await api.close()
            await self._session.close()
            await self.conn.close()

    # -------------------------------------------------------- metrics-only

    async def _run_prometheus_only(self, emit: Emit) -> None:
        """No kubeconfig: one cluster's series from a (global) Prometheus, nothing else."""
        where = self.o.cluster if self.o.cluster is not None else (self.o.prometheus or "")
        detail = f"{self.o.cluster_label}={where} at {self.o.prometheus}"
        emit([SourceStarted(self.clock(), "live", where, detail)])
        emit([MetricsOnlyMode(self.clock(), self.o.metrics_only_why)])
        try:
            self._start("prometheus", lambda: self._prometheus(None, emit), FEED_PROMETHEUS)
            self._start("clock", lambda: self._ticks(emit), FEED_CLOCK)
            await asyncio.get_running_loop().create_future()
        finally:
            await self._cancel_loops()

    async def _cancel_loops(self) -> None:
        """Cancel every supervised loop and wait until each has ended."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------ watches

    def _watches(self, t: KubeTransport, emit: Emit) -> None:
        details = NodeDetails(self.o.node_detail_per_s, self.o.node_detail_max)
        nodes = NodesHandler(self.o.rack_label, details.want)
        handlers: dict[str, Handler] = {
            "nodes": nodes,
            "pending-pods": PendingPodsHandler(),
            "events": WarningEventsHandler(),
            "resourcequotas": QuotasHandler(),
            "apiserver-identities": IdentitiesHandler(),
        }
        for res in WATCHES:
            lw = ListWatch(
                t, res, handlers[res.feed], self.clock,
                watch_timeout_s=self.o.watch_timeout_s, rng=self.rng,
            )  # fmt: skip
            self._start(f"watch-{res.feed}", lambda lw=lw: lw.run(emit), res.feed)  # type: ignore[misc]
        self._start(
            "node-details", lambda: details.run(t, nodes, emit, self.clock), FEED_NODE_DETAILS
        )
        leases = LeaseSampler(
            t, NODE_LEASES, self.clock, lambda: nodes.not_ready,
            period_s=self.o.lease_round_s, per_round=self.o.leases_per_round,
        )  # fmt: skip
        self._start("leases", lambda: leases.run(emit), NODE_LEASES.feed)

    # --------------------------------------------------------- prometheus

    def kube_access(self) -> KubeAccess:
        """The kubeconfig's server and credentials, for the service proxy."""
        assert self.conn is not None
        cfg = self.conn.cfg

        def token() -> str:
            return str(cfg.api_key.get("BearerToken", "") or cfg.api_key.get("authorization", ""))

        verify: bool | str = bool(cfg.verify_ssl)
        if verify and cfg.ssl_ca_cert:
            verify = str(cfg.ssl_ca_cert)
        cert = (str(cfg.cert_file), str(cfg.key_file)) if cfg.cert_file else None
        return KubeAccess(str(cfg.host), verify, cert, token)

    async def _prometheus(self, t: KubeTransport | None, emit: Emit) -> None:
        address = self.o.prometheus or ""
        if address == PROMETHEUS_AUTO and t is not None:
            try:
                address = await find_prometheus(t)
            except ApiError as e:
                raise RuntimeError(f"finding Prometheus: {e}") from e
            if not address:
                reason = "no in-cluster Prometheus found (" + PROMETHEUS_HINT + ")"
                emit([FeedFailed(self.clock(), FEED_PROMETHEUS, reason)])
                self._no_prometheus = True
                self._rediscover.set()
                return
        try:
            kube = self.kube_access() if self.conn is not None else None
            client = prometheus_client(address, self.meter, auth=self.o.prometheus_auth, kube=kube)
            matcher = cluster_matcher(self.o.cluster_label, self.o.cluster)
        except (PrometheusConfigError, OSError) as e:
            # A wrong address or an unreadable credential file: retrying will not help.
            emit([FeedFailed(self.clock(), FEED_PROMETHEUS, f"Prometheus: {e}")])
            self._no_prometheus = True
            self._rediscover.set()
            return
        emit([FeedSynced(self.clock(), FEED_PROMETHEUS)])
        # The last hour first, so that the window's samples precede the first poll's.
        calls = PrometheusCalls(workers=1, timeout_s=BACKFILL_TIMEOUT_S)
        given = tuple(instance_name(b) for b in self.o.apiservers)
        self.backfill = PrometheusBackfill(
            address, self.clock, window_s=self.o.window_s, matcher=matcher, apiservers=given
        )
        try:
            await self.backfill.run(emit, client, calls, time_limit_s=BACKFILL_TIMEOUT_S)
        finally:
            calls.close()
        self.prometheus = PrometheusMetrics(
            client,
            address,
            self.clock,
            self.o.prometheus_s,
            on_instances=self._rediscover.set,
            matcher=matcher,
            readiness_labels=self._readiness_labels(),
            apiservers=given,
            seen=set(self.backfill.targets),
        )
        await self.prometheus.run(emit)

    def _readiness_labels(self) -> tuple[str, ...]:
        """Node labels whose readiness kube-state-metrics gives (metrics-only mode)."""
        if not self.o.metrics_only_why:
            return ()
        return tuple(dict.fromkeys((ZONE_LABEL, self.o.rack_label)))

    # --------------------------------------------------------- components

    def _components(self, t: KubeTransport, emit: Emit) -> None:
        assert self._session is not None and self.conn is not None
        cfg = self.conn.cfg

        def token() -> str:
            return str(cfg.api_key.get("BearerToken", "") or cfg.api_key.get("authorization", ""))

        groups = (
            (Component.ETCD, self.o.etcd_metrics, self.o.etcd_tls, None),
            (Component.SCHEDULER, self.o.scheduler_metrics, self.o.component_tls, token),
            (
                Component.CONTROLLER_MANAGER,
                self.o.controller_manager_metrics,
                self.o.component_tls,
                token,
            ),
        )
        for component, urls, tls, tok in groups:
            for url in urls:
                instance = instance_name(url)
                fetch = http_fetcher(
                    self._session, url, token=tok, tls=tls, meter=self.meter,
                    destination=f"{component} {instance}",
                )  # fmt: skip
                target = Target(component, instance)
                self._start(
                    f"scrape-{component}-{url}",
                    lambda target=target, fetch=fetch: scrape_metrics_loop(  # type: ignore[misc]
                        target, fetch, emit, self.clock, self.o.component_scrape_s, self.rng
                    ),
                    _scrape_failed(target),
                )
        given = {c for c, urls, _, _ in groups if urls}
        if self.o.metrics_only:
            return  # finding static pods lists pods: components come from Prometheus or URLs
        if self.o.find_components and any(s.component not in given for s in STATIC_COMPONENTS):
            self._start(
                "find-components", lambda: self._find_components(t, emit, given), FEED_COMPONENTS
            )

    def _from_prometheus(self, component: Component) -> bool:
        p = self.prometheus
        return p is not None and p.healthy and bool(p.instances.get(component))

    async def _find_components(self, t: KubeTransport, emit: Emit, given: set[Component]) -> None:
        """Find static control-plane pods and their leaders now and then."""
        if self.o.prometheus:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FIRST_POLL_WAIT_S + BACKFILL_TIMEOUT_S):
                    await self._prometheus_polled()
        while True:
            failures: list[str] = []
            p = self.prometheus
            for spec in STATIC_COMPONENTS:
                if self.o.prometheus and not self._no_prometheus and (p is None or not p.healthy):
                    continue  # Prometheus' own failure is the reason; look when it answers
                if spec.component in given or self._from_prometheus(spec.component):
                    self._set_proxied(spec.component, (), emit, "read from Prometheus")
                    continue
                found = await discover_component(t, spec)
                if found.reason:
                    failures.append(f"{spec.component}: {found.reason}")
                    self._set_proxied(spec.component, (), emit, found.reason)
                    target = Target(spec.component, proxy_placeholder(spec.component))
                    emit([ScrapeFailed(self.clock(), target, found.reason)])
                    self._placeholders.add(spec.component)
                    continue
                self._set_proxied(spec.component, found.targets, emit, "no longer the leader")
                self._stop_unreachable(found.targets, emit)
                for pt in found.targets:
                    if pt.path:
                        self._start_proxied(t, pt, emit)
            now = self.clock()
            if failures:
                emit([FeedFailed(now, FEED_COMPONENTS, "; ".join(failures))])
            else:
                emit([FeedSynced(now, FEED_COMPONENTS)])
            await asyncio.sleep(self.o.discovery_s)

    def _set_proxied(
        self,
        component: Component,
        targets: tuple[ProxyTarget, ...],
        emit: Emit,
        why: str,
    ) -> None:
        """Stop reading proxied targets of ``component`` that are not in ``targets``."""
        old = {pt.instance for pt in self.proxied.get(component, ())}
        new = {pt.instance for pt in targets if pt.path}
        now = self.clock()
        for instance in sorted(old - new):
            self._stop(f"proxy-{component}-{instance}")
            emit([TargetGone(now, Target(component, instance), why)])
        if component in self._placeholders:
            self._placeholders.discard(component)
            placeholder = Target(component, proxy_placeholder(component))
            emit([TargetGone(now, placeholder, why)])
        self.proxied[component] = targets

    def _stop_unreachable(self, targets: tuple[ProxyTarget, ...], emit: Emit) -> None:
        now = self.clock()
        for pt in targets:
            if not pt.path:
                emit([ScrapeFailed(now, Target(pt.component, pt.instance), pt.reason)])

    def _start_proxied(self, lb: KubeTransport, pt: ProxyTarget, emit: Emit) -> None:
        t = KubeTransport(lb.api, self.meter, destination=f"{pt.component} via apiserver")

        async def fetch() -> bytes | None:
            return (await t.get(pt.path, accept=TEXT)).body

        target = Target(pt.component, pt.instance)
        self._start(
            f"proxy-{pt.component}-{pt.instance}",
            lambda: scrape_metrics_loop(
                target, fetch, emit, self.clock, self.o.component_scrape_s, self.rng
            ),
            _scrape_failed(target),
        )

    # ---------------------------------------------------------- apiservers

    def _instance_loops(self, base: str, emit: Emit, instance: str) -> None:
        assert self.conn is not None
        running = self._tasks.get(f"metrics-{instance}")
        if running is not None and not running.done():
            return
        if instance == LOAD_BALANCED:
            t = KubeTransport(self.conn.api, self.meter)
        else:
            api = self._clients.get(instance)
            if api is None:
                api = self._clients[instance] = self.conn.instance_client(base)
            t = KubeTransport(api, self.meter, host=base)

        def prometheus_serves() -> bool:
            p = self.prometheus
            if p is None:
                return False
            if instance == LOAD_BALANCED:
                return p.healthy and bool(p.instances.get(Component.APISERVER))
            return p.serves(Component.APISERVER, instance)

        async def metrics() -> bytes | None:
            if prometheus_serves():
                return None  # Prometheus serves this target; read it only when it fails
            try:
                body = (await t.get(METRICS, accept=TEXT)).body
            except Exception:
                self.instance_failures[instance] = self.instance_failures.get(instance, 0) + 1
                raise
            self.instance_successes[instance] = self.instance_successes.get(instance, 0) + 1
            return body

        async def dump() -> bytes | None:
            if prometheus_serves():
                return None  # Prometheus has the APF series, which the dump only stands in for
            return (await t.get(APF_DUMP, accept=TEXT)).body

        target = Target(Component.APISERVER, instance)
        self._start(
            f"metrics-{instance}",
            lambda: scrape_metrics_loop(
                target, metrics, emit, self.clock, self.o.apiserver_scrape_s, self.rng
            ),
            _scrape_failed(target),
        )
        self._start(
            f"apf-{instance}",
            lambda: apf_dump_loop(instance, dump, emit, self.clock, self.o.apf_dump_s),
            lambda at, why: [ApfDumpFailed(at, instance, why)],
        )

    async def _drop_instance(self, instance: str, emit: Emit, why: str) -> None:
        self._stop(f"metrics-{instance}")
        self._stop(f"apf-{instance}")
        api = self._clients.pop(instance, None)
        if api is not None:
            await api.close()
        emit([TargetGone(self.clock(), Target(Component.APISERVER, instance), why)])

    async def discover_once(self, t: KubeTransport, emit: Emit) -> None:
        """Find apiserver instances; start loops for new ones, stop those that left."""
        try:
            self.apf_names = await apf_object_names(t)
            emit([FeedSynced(self.clock(), FEED_APF_NAMES)])
        except Exception as e:
            # Names only label ktop's own cost; without them it shows UIDs.
            what = str(e) if isinstance(e, ApiError) else failure_reason(e)
            emit([FeedFailed(self.clock(), FEED_APF_NAMES, what)])
        bases: dict[str, str] = {}
        listed = True
        if self.o.apiservers:
            bases = {instance_name(b): b for b in self.o.apiservers}
        else:
            try:
                bases = {instance_name(b): b for b in await apiserver_endpoints(t)}
            except Exception as e:
                listed = False
                what = str(e) if isinstance(e, ApiError) else failure_reason(e)
                emit([FeedFailed(self.clock(), FEED_DISCOVERY, f"apiserver endpoints: {what}")])
        p = self.prometheus
        if p is not None and p.healthy and not self.o.apiservers:
            # --apiserver is authoritative: Prometheus names its instances as those
            # (PrometheusMetrics.apiservers), so one apiserver is never two rows.
            for name in p.instances.get(Component.APISERVER, frozenset()):
                bases.setdefault(name, f"https://{name}")
        if not listed and not bases:
            return  # keep what runs: a failed discovery says nothing about the instances
        if listed:
            emit([FeedSynced(self.clock(), FEED_DISCOVERY)])
        wanted = set(bases)
        if not wanted or self._instances_unreachable(sorted(wanted)):
            # Instance addresses unknown, or unreachable from here (private endpoints):
            # read the load-balanced address, labelled as such.
            wanted.add(LOAD_BALANCED)
        for instance in sorted(self.instances - wanted):
            why = (
                "apiserver instances are known: not read through the load balancer"
                if instance == LOAD_BALANCED
                else "no longer an apiserver endpoint"
            )
            await self._drop_instance(instance, emit, why)
        for instance in sorted(wanted):
            self._instance_loops(bases.get(instance, ""), emit, instance)
        self.instances = frozenset(wanted)

    async def _discovery(self, t: KubeTransport, emit: Emit) -> None:
        """Find apiserver instances now, then every ``discovery_s`` or when Prometheus'
        set of instances changes.
        """
        if self.o.prometheus:
            # Prometheus' first answer says which instances exist: wait for it a little,
            # rather than start reading through the load balancer and stop again.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FIRST_POLL_WAIT_S + BACKFILL_TIMEOUT_S):
                    await self._prometheus_polled()
        while True:
            self._rediscover.clear()
            await self.discover_once(t, emit)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.o.discovery_s):
                    await self._rediscover.wait()

    async def _prometheus_polled(self) -> None:
        """Wait for the backfill (bounded by its own limit), then at most
        ``FIRST_POLL_WAIT_S`` for Prometheus' first answer.
        """
        while self.prometheus is None:
            if self._rediscover.is_set():
                return  # Prometheus was not found
            await asyncio.sleep(0.1)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(FIRST_POLL_WAIT_S):
                await self.prometheus.polled.wait()

    def _instances_unreachable(self, names: list[str]) -> bool:
        p = self.prometheus
        if p is not None and p.healthy and p.instances.get(Component.APISERVER):
            return False
        return all(
            self.instance_successes.get(n, 0) == 0 and self.instance_failures.get(n, 0) >= 2
            for n in names
        )

    async def _ticks(self, emit: Emit) -> None:
        while True:
            await asyncio.sleep(1.0)
            now = self.clock()
            emit([ClockTick(now), self.meter.sample(now, self.apf_names)])
            if "clock" in self._failed:
                self._failed.discard("clock")
                emit([FeedSynced(now, FEED_CLOCK)])  # running again after a failure


def _scrape_failed(target: Target) -> Report:
    """A dead scrape loop is reported as its target's failure (the target's panes)."""
    return lambda at, why: [ScrapeFailed(at, target, why)]
