"""The live source: one cluster, read at a cost it can afford.

What it reads is listed, as data, in :mod:`ktop.sources.live.reads` (and
nothing else; never an unpaginated LIST, one watch per resource):

* watches: nodes (listed as Tables with metadata, or split by zone as Tables without
  objects when the first page allows it: ``node_split.py``; watched as Tables without),
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
from collections.abc import Callable
from typing import Any

import aiohttp
from kubernetes_asyncio.client import ApiClient

from ktop.model.apf_requests import REQUESTS_QUERY
from ktop.model.events import (
    FEED_APF_NAMES,
    FEED_CLOCK,
    FEED_DISCOVERY,
    FEED_NODE_DETAILS,
    FEED_NODES,
    FEED_PROMETHEUS,
    LOAD_BALANCED,
    ApfDumpFailed,
    ApfRequestsFailed,
    ClockTick,
    Component,
    FeedFailed,
    FeedSynced,
    MetricsOnlyMode,
    SourceStarted,
    Target,
    TargetGone,
)
from ktop.scrub import Secrets
from ktop.sources.base import Emit
from ktop.sources.live.addresses import PROMETHEUS_AUTO
from ktop.sources.live.backfill import PrometheusBackfill
from ktop.sources.live.client import Connection, connect
from ktop.sources.live.control_plane import ComponentReader
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.discovery import (
    PROMETHEUS_HINT,
    apf_object_names,
    apiserver_endpoints,
    find_openshift_querier,
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
from ktop.sources.live.listwatch import Handler, ListWatch
from ktop.sources.live.node_details import NodeDetails
from ktop.sources.live.node_split import SubList
from ktop.sources.live.node_split import plan as split_by_zone
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.prometheus_calls import PrometheusCalls
from ktop.sources.live.prometheus_connect import (
    KubeAccess,
    PrometheusConfigError,
    prometheus_client,
)
from ktop.sources.live.prometheus_queries import cluster_matcher, readiness_labels
from ktop.sources.live.reads import (
    APF_DUMP,
    APF_REQUESTS,
    APF_REQUESTS_MAX_BYTES,
    METRICS,
    NODE_LEASES,
    WATCHES,
)
from ktop.sources.live.scrape import (
    apf_dump_loop,
    apf_requests_loop,
    failure_reason,
    scrape_metrics_loop,
)
from ktop.sources.live.supervisor import Supervisor, scrape_failed
from ktop.sources.live.timing import BACKFILL_TIMEOUT_S, FIRST_POLL_WAIT_S
from ktop.sources.live.transport import TEXT, KubeTransport, instance_name

NOT_SERVED_REQUESTS = (
    "request dump not served (it needs Kubernetes 1.19+ with API Priority and Fairness "
    "enabled): top talkers unknown"
)


class LiveSource:
    """Reads one live cluster (see the module docstring for exactly what)."""

    def __init__(
        self,
        options: LiveOptions,
        clock: Callable[[], float] = time.time,
        conn: Connection | None = None,
        meter: CostMeter | None = None,
        secrets: Secrets | None = None,
    ) -> None:
        self.o = options
        self.clock = clock
        self.meter = meter or (conn.meter if conn is not None else CostMeter())
        """The one meter of this source (``meter``, else the connection's, which counted
        its probe, else a new one): every request the source makes is counted here."""
        self.secrets = secrets or (conn.secrets if conn is not None else Secrets())
        """The session's credentials (else the connection's): reasons are scrubbed with them."""
        self.apf_names: dict[str, str] = {}
        self.conn = conn
        self._session: aiohttp.ClientSession | None = None
        self.prometheus: PrometheusMetrics | None = None
        self.backfill: PrometheusBackfill | None = None
        self.rng = random.Random()
        self.loops = Supervisor(clock, self.rng, self.secrets)
        """Every loop of this source, supervised."""
        self.components = ComponentReader(options, self.loops, self.meter, clock, self.rng, self)
        """etcd, scheduler and controller-manager metrics."""
        self._clients: dict[str, ApiClient] = {}
        self.instance_successes: dict[str, int] = {}
        self.instance_failures: dict[str, int] = {}
        self.instances: frozenset[str] = frozenset()
        """apiserver instances read right now (may be just ``LOAD_BALANCED``)."""
        self.prometheus_missing = False
        """--prometheus was given but names none (not found, or a wrong address)."""
        self._rediscover = asyncio.Event()

    @property
    def name(self) -> str:
        """Short name for status lines."""
        return "live"

    async def run(self, emit: Emit) -> None:
        """Connect, then read until cancelled."""
        self.loops.emit = emit
        if self.o.without_kubeconfig:
            await self._run_prometheus_only(emit)
            return
        if self.conn is None:
            self.conn = await connect(
                self.o.kubeconfig, self.o.context, self.meter, secrets=self.secrets
            )
        self._session = aiohttp.ClientSession(auto_decompress=False)
        try:
            due = self.o.first_data_due_s
            emit([SourceStarted(self.clock(), "live", self.conn.context, self.conn.server, due)])
            t = KubeTransport(self.conn.api, self.meter)
            if self.o.metrics_only:
                emit([MetricsOnlyMode(self.clock(), self.o.metrics_only_why)])
            else:
                self._watches(t, emit)
            if self.o.prometheus:
                self.loops.start("prometheus", lambda: self._prometheus(t, emit), FEED_PROMETHEUS)
            self.components.start(t, self.conn, self._session, emit)
            self.loops.start("discovery", lambda: self._discovery(t, emit), FEED_DISCOVERY)
            self.loops.start("clock", lambda: self._ticks(emit), FEED_CLOCK)
            # Supervised loops never end by themselves; tasks come and go (instances,
            # leaders), so wait for cancellation rather than for a fixed set of tasks.
            await asyncio.get_running_loop().create_future()
        finally:
            await self.loops.cancel_all()
            for api in self._clients.values():
                await api.close()
            await self._session.close()
            await self.conn.close()

    # -------------------------------------------------------- metrics-only

    async def _run_prometheus_only(self, emit: Emit) -> None:
        """No kubeconfig: one cluster's series from a (global) Prometheus, nothing else."""
        where = self.o.cluster if self.o.cluster is not None else (self.o.prometheus or "")
        detail = f"{self.o.cluster_label}={where} at {self.o.prometheus}"
        emit([SourceStarted(self.clock(), "live", where, detail, self.o.first_data_due_s)])
        emit([MetricsOnlyMode(self.clock(), self.o.metrics_only_why)])
        try:
            self.loops.start("prometheus", lambda: self._prometheus(None, emit), FEED_PROMETHEUS)
            self.loops.start("clock", lambda: self._ticks(emit), FEED_CLOCK)
            await asyncio.get_running_loop().create_future()
        finally:
            await self.loops.cancel_all()

    # ------------------------------------------------------------ watches

    def _watches(self, t: KubeTransport, emit: Emit) -> None:
        details = NodeDetails(self.o.node_detail_per_s, self.o.node_detail_max, self.secrets)
        nodes = NodesHandler(self.o.rack_label, details.want)
        handlers: dict[str, Handler] = {
            "nodes": nodes,
            "pending-pods": PendingPodsHandler(),
            "events": WarningEventsHandler(),
            "resourcequotas": QuotasHandler(),
            "apiserver-identities": IdentitiesHandler(),
        }
        rack = self.o.rack_label

        def by_zone(items: list[dict[str, Any]]) -> tuple[SubList, ...] | None:
            return split_by_zone(items, rack)

        for res in WATCHES:
            lw = ListWatch(
                t, res, handlers[res.feed], self.clock,
                watch_timeout_s=self.o.watch_timeout_s, rng=self.rng,
                split=by_zone if res.feed == FEED_NODES else None,
            )  # fmt: skip
            self.loops.start(f"watch-{res.feed}", lambda lw=lw: lw.run(emit), res.feed)  # type: ignore[misc]
        self.loops.start(
            "node-details", lambda: details.run(t, nodes, emit, self.clock), FEED_NODE_DETAILS
        )
        leases = LeaseSampler(
            t, NODE_LEASES, self.clock, lambda: nodes.not_ready,
            period_s=self.o.lease_round_s, per_round=self.o.leases_per_round,
            secrets=self.secrets,
        )  # fmt: skip
        self.loops.start("leases", lambda: leases.run(emit), NODE_LEASES.feed)

    # --------------------------------------------------------- prometheus

    def kube_access(self) -> KubeAccess:
        """The kubeconfig's server and credentials, for the service proxy."""
        assert self.conn is not None
        cfg = self.conn.cfg

        verify: bool | str = bool(cfg.verify_ssl)
        if verify and cfg.ssl_ca_cert:
            verify = str(cfg.ssl_ca_cert)
        cert = (str(cfg.cert_file), str(cfg.key_file)) if cfg.cert_file else None
        return KubeAccess(str(cfg.host), verify, cert, self.conn.bearer)

    async def _prometheus(self, t: KubeTransport | None, emit: Emit) -> None:
        address = self.o.prometheus or ""
        openshift = False  # OpenShift's Thanos Querier found: sent the kubeconfig's token
        if address == PROMETHEUS_AUTO and t is not None:
            try:
                address = await find_openshift_querier(t)
                openshift = bool(address)
                address = address or await find_prometheus(t)
            except ApiError as e:
                raise RuntimeError(f"finding Prometheus: {e}") from e
            if not address:
                reason = "no in-cluster Prometheus found (" + PROMETHEUS_HINT + ")"
                emit([FeedFailed(self.clock(), FEED_PROMETHEUS, reason)])
                self.prometheus_missing = True
                self._rediscover.set()
                return
        try:
            kube = self.kube_access() if self.conn is not None else None
            client = prometheus_client(
                address, self.meter, auth=self.o.prometheus_auth, kube=kube,
                kube_bearer=openshift, secrets=self.secrets,
            )  # fmt: skip
            matcher = cluster_matcher(self.o.cluster_label, self.o.cluster)
        except (PrometheusConfigError, OSError) as e:
            # A wrong address or an unreadable credential file: retrying will not help.
            emit([FeedFailed(self.clock(), FEED_PROMETHEUS, f"Prometheus: {e}")])
            self.prometheus_missing = True
            self._rediscover.set()
            return
        emit([FeedSynced(self.clock(), FEED_PROMETHEUS)])
        # The last hour first, so that the window's samples precede the first poll's.
        calls = PrometheusCalls(workers=1, timeout_s=BACKFILL_TIMEOUT_S)
        given = tuple(instance_name(b) for b in self.o.apiservers)
        self.backfill = PrometheusBackfill(
            address, self.clock, window_s=self.o.window_s, matcher=matcher, apiservers=given,
            secrets=self.secrets,
        )  # fmt: skip
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
            secrets=self.secrets,
            offset_s=self.o.prometheus_auth.offset_s,
        )
        await self.prometheus.run(emit)

    def _readiness_labels(self) -> tuple[str, ...]:
        """Node labels whose readiness kube-state-metrics gives (metrics-only mode)."""
        return readiness_labels(self.o.rack_label) if self.o.metrics_only_why else ()

    # ---------------------------------------------------------- apiservers

    def _instance_loops(self, base: str, emit: Emit, instance: str) -> None:
        assert self.conn is not None
        if self.loops.running(f"metrics-{instance}"):
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

        async def requests() -> tuple[bytes, bool] | None:
            try:
                got, cut = await t.get_head(
                    APF_REQUESTS, REQUESTS_QUERY, APF_REQUESTS_MAX_BYTES, accept=TEXT
                )
            except ApiError as exc:
                if exc.status == 404:
                    raise ApiError(
                        404, "get", APF_REQUESTS, NOT_SERVED_REQUESTS, exc.from_kubernetes
                    ) from None
                raise
            return got.body, cut

        target, s = Target(Component.APISERVER, instance), self.secrets
        self.loops.start(
            f"metrics-{instance}",
            lambda: scrape_metrics_loop(
                target, metrics, emit, self.clock, self.o.apiserver_scrape_s, self.rng, secrets=s
            ),
            scrape_failed(target),
        )
        self.loops.start(
            f"apf-{instance}",
            lambda: apf_dump_loop(instance, dump, emit, self.clock, self.o.apf_dump_s, secrets=s),
            lambda at, why: [ApfDumpFailed(at, instance, why)],
        )
        self.loops.start(
            f"apf-requests-{instance}",
            lambda: apf_requests_loop(
                instance, requests, emit, self.clock, self.o.apf_dump_s, secrets=s
            ),
            lambda at, why: [ApfRequestsFailed(at, instance, why)],
        )

    async def _drop_instance(self, instance: str, emit: Emit, why: str) -> None:
        self.loops.stop(f"metrics-{instance}")
        self.loops.stop(f"apf-{instance}")
        self.loops.stop(f"apf-requests-{instance}")
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
            what = str(e) if isinstance(e, ApiError) else failure_reason(e, self.secrets)
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
                what = str(e) if isinstance(e, ApiError) else failure_reason(e, self.secrets)
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
                    await self.prometheus_polled()
        while True:
            self._rediscover.clear()
            await self.discover_once(t, emit)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.o.discovery_s):
                    await self._rediscover.wait()

    async def prometheus_polled(self) -> None:
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
            if self.loops.recovered("clock"):
                emit([FeedSynced(now, FEED_CLOCK)])  # running again after a failure
