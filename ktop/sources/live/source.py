"""The live source: one cluster, read at a cost it can afford.

What it reads (and nothing else; never an unpaginated LIST, one watch per
resource):

* watches: nodes (as Tables with metadata), node Leases in
  ``kube-node-lease``, Pending pods (``status.phase=Pending``), Warning
  Events (``type=Warning``), ResourceQuotas, apiserver identity Leases;
* GETs of single nodes that are not Ready (rate-limited, capped);
* polls: the ``default/kubernetes`` EndpointSlices (to find apiserver
  instances), FlowSchemas and PriorityLevelConfigurations (names for the
  APF headers), each instance's ``/metrics`` and APF dump;
* optionally Prometheus, and etcd / scheduler / controller-manager metrics
  endpoints given on the command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import aiohttp
from kubernetes_asyncio.client import ApiClient

from ktop.model.events import (
    FEED_EVENTS,
    FEED_IDENTITIES,
    FEED_LEASES,
    FEED_NODES,
    FEED_PENDING_PODS,
    FEED_QUOTAS,
    ClockTick,
    Component,
    SourceStarted,
    Target,
)
from ktop.sources.base import Emit
from ktop.sources.convert import node_record
from ktop.sources.live.backfill import PrometheusBackfill
from ktop.sources.live.client import Connection, connect
from ktop.sources.live.components import TlsFiles, http_fetcher
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.discovery import apf_object_names, apiserver_endpoints
from ktop.sources.live.errors import ApiError
from ktop.sources.live.handlers import (
    IdentitiesHandler,
    LeasesHandler,
    NodesHandler,
    PendingPodsHandler,
    QuotasHandler,
    WarningEventsHandler,
)
from ktop.sources.live.listwatch import Handler, ListWatch, Resource
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.scrape import apf_dump_loop, scrape_metrics_loop
from ktop.sources.live.transport import TEXT, KubeTransport

LOAD_BALANCED = "(load-balanced)"


def host_port(url: str) -> str:
    """``host:port`` of a URL, for display: never the user-info (it can hold a password)."""
    netloc = url.split("//", 1)[-1].split("/", 1)[0]
    return netloc.rpartition("@")[2]


IDENTITY_SELECTOR = "apiserver.kubernetes.io/identity=kube-apiserver"
APF_DUMP_PATH = "/debug/api_priority_and_fairness/dump_priority_levels"


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
    prometheus_s: float = 15.0
    etcd_metrics: tuple[str, ...] = ()
    etcd_tls: TlsFiles = field(default_factory=TlsFiles)
    scheduler_metrics: tuple[str, ...] = ()
    controller_manager_metrics: tuple[str, ...] = ()
    component_tls: TlsFiles = field(default_factory=TlsFiles)
    component_scrape_s: float = 15.0
    apiservers: tuple[str, ...] = ()
    """Instance base URLs to use instead of discovering them."""
    watch_timeout_s: int = 300


class NodeDetails:
    """Fetches whole Nodes for not-Ready nodes: rate-limited, deduplicated, capped."""

    def __init__(self, per_s: float, cap: int) -> None:
        self.per_s = per_s
        self.cap = cap
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.pending: set[str] = set()
        self.fetched = 0

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
        """Fetch queued nodes until cancelled."""
        while True:
            name = await self.queue.get()
            self.pending.discard(name)
            try:
                obj = (await t.get(f"/api/v1/nodes/{quote(name, safe='')}")).json()
                emit(handler.detail(clock(), node_record(obj, handler.rack_label)))
                self.fetched += 1
            except ApiError as e:
                if e.status not in (404,):
                    await asyncio.sleep(5.0)
            except Exception:
                await asyncio.sleep(5.0)
            await asyncio.sleep(1.0 / self.per_s)


class LiveSource:
    """Reads one live cluster (see the module docstring for exactly what)."""

    def __init__(
        self,
        options: LiveOptions,
        clock: Callable[[], float] = time.time,
        conn: Connection | None = None,
    ) -> None:
        self.o = options
        self.clock = clock
        self.meter = CostMeter()
        self.apf_names: dict[str, str] = {}
        self.conn = conn
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._session: aiohttp.ClientSession | None = None
        self.prometheus: PrometheusMetrics | None = None
        self.backfill: PrometheusBackfill | None = None
        self.rng = random.Random()
        self._clients: list[ApiClient] = []
        self.instance_successes: dict[str, int] = {}
        self.instance_failures: dict[str, int] = {}

    @property
    def name(self) -> str:
        """Short name for status lines."""
        return "live"

    def _start(self, key: str, coro: Coroutine[Any, Any, None]) -> None:
        if key in self._tasks and not self._tasks[key].done():
            coro.close()
            return
        self._tasks[key] = asyncio.create_task(coro, name=f"ktop-live-{key}")

    async def run(self, emit: Emit) -> None:
        """Connect, then read until cancelled."""
        if self.conn is None:
            self.conn = await connect(self.o.kubeconfig, self.o.context)
        self._session = aiohttp.ClientSession()
        try:
            emit([SourceStarted(self.clock(), "live", self.conn.context, self.conn.server)])
            t = KubeTransport(self.conn.api, self.meter)
            self._watches(t, emit)
            if self.o.prometheus:
                self.prometheus = PrometheusMetrics(
                    self.o.prometheus, self.clock, self.o.prometheus_s
                )
                self.backfill = PrometheusBackfill(self.o.prometheus, self.clock)
                poll = self.prometheus.run(emit)
                self._start("prometheus", _after(self.backfill.run(emit), poll))
            self._components(emit)
            self._start("discovery", self._discovery(t, emit))
            self._start("clock", self._ticks(emit))
            await asyncio.gather(*self._tasks.values())
        finally:
            for task in self._tasks.values():
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*self._tasks.values(), return_exceptions=True)
            for api in self._clients:
                await api.close()
            await self._session.close()
            await self.conn.close()

    def _watches(self, t: KubeTransport, emit: Emit) -> None:
        details = NodeDetails(self.o.node_detail_per_s, self.o.node_detail_max)
        nodes = NodesHandler(self.o.rack_label, details.want)
        wt = self.o.watch_timeout_s
        leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
        resources: list[tuple[Resource, Handler]] = [
            (Resource(FEED_NODES, "/api/v1/nodes", "nodes", table=True), nodes),
            (
                Resource(FEED_LEASES, leases, "leases in kube-node-lease"),
                LeasesHandler(),
            ),
            (
                Resource(FEED_PENDING_PODS, "/api/v1/pods", "pods (status.phase=Pending)",
                         (("fieldSelector", "status.phase=Pending"),)),
                PendingPodsHandler(),
            ),
            (
                Resource(FEED_EVENTS, "/api/v1/events", "events (type=Warning)",
                         (("fieldSelector", "type=Warning"),)),
                WarningEventsHandler(),
            ),
            (
                Resource(FEED_QUOTAS, "/api/v1/resourcequotas", "resourcequotas"),
                QuotasHandler(),
            ),
            (
                Resource(FEED_IDENTITIES,
                         "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
                         "apiserver identity leases in kube-system",
                         (("labelSelector", IDENTITY_SELECTOR),)),
                IdentitiesHandler(),
            ),
        ]  # fmt: skip
        for res, handler in resources:
            lw = ListWatch(t, res, handler, self.clock, watch_timeout_s=wt, rng=self.rng)
            self._start(f"watch-{res.feed}", lw.run(emit))
        self._start("node-details", details.run(t, nodes, emit, self.clock))

    def _components(self, emit: Emit) -> None:
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
                fetch = http_fetcher(self._session, url, token=tok, tls=tls)
                target = Target(component, host_port(url))
                self._start(
                    f"scrape-{component}-{url}",
                    scrape_metrics_loop(
                        target, fetch, emit, self.clock, self.o.component_scrape_s, self.rng
                    ),
                )

    def _instance_loops(self, base: str, emit: Emit, instance: str) -> None:
        assert self.conn is not None
        running = self._tasks.get(f"metrics-{instance}")
        if running is not None and not running.done():
            return
        host = None if instance == LOAD_BALANCED else base
        api = self.conn.api if host is None else self.conn.instance_client(base)
        if host is not None:
            self._clients.append(api)
        t = KubeTransport(api, self.meter, host=host)

        async def metrics() -> bytes | None:
            if self.prometheus is not None and self.prometheus.healthy:
                return None  # Prometheus serves this target; fall back only when it fails
            try:
                body = (await t.get("/metrics", accept=TEXT)).body
            except Exception:
                self.instance_failures[instance] = self.instance_failures.get(instance, 0) + 1
                raise
            self.instance_successes[instance] = self.instance_successes.get(instance, 0) + 1
            return body

        async def dump() -> bytes | None:
            return (await t.get(APF_DUMP_PATH, accept=TEXT)).body

        target = Target(Component.APISERVER, instance)
        self._start(
            f"metrics-{instance}",
            scrape_metrics_loop(
                target, metrics, emit, self.clock, self.o.apiserver_scrape_s, self.rng
            ),
        )
        self._start(
            f"apf-{instance}", apf_dump_loop(instance, dump, emit, self.clock, self.o.apf_dump_s)
        )

    async def _discovery(self, t: KubeTransport, emit: Emit) -> None:
        """Find apiserver instances (and APF object names) now and then."""
        while True:
            # Names only decorate the cost meter; without them it shows UIDs.
            with contextlib.suppress(Exception):
                self.apf_names = await apf_object_names(t)
            bases = list(self.o.apiservers)
            if not bases:
                try:
                    bases = await apiserver_endpoints(t)
                except Exception:
                    bases = []
            for base in bases:
                self._instance_loops(base, emit, host_port(base))
            if not bases or self._instances_unreachable(bases):
                # Instance addresses unknown or unreachable from here (private
                # endpoints): read the load-balanced endpoint, labelled as such.
                self._instance_loops("", emit, LOAD_BALANCED)
            await asyncio.sleep(self.o.discovery_s)

    def _instances_unreachable(self, bases: list[str]) -> bool:
        names = [host_port(b) for b in bases]
        return all(
            self.instance_successes.get(n, 0) == 0 and self.instance_failures.get(n, 0) >= 2
            for n in names
        )

    async def _ticks(self, emit: Emit) -> None:
        while True:
            await asyncio.sleep(1.0)
            now = self.clock()
            emit([ClockTick(now), self.meter.sample(now, self.apf_names)])


async def _after(first: Coroutine[Any, Any, None], then: Coroutine[Any, Any, None]) -> None:
    """Run ``first`` to the end, then ``then`` (the backfill before the live poll)."""
    try:
        await first
    except BaseException:
        then.close()
        raise
    await then
