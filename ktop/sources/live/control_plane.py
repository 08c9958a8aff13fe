"""etcd, scheduler and controller-manager metrics: the endpoints given by URL, or else
where the cluster's provider keeps them (``ktop/model/providers.py``, detected once or
given with ``--provider``): static pods found now and then, read through the apiserver's
pod proxy (only the leader's, when the component elects one), paths the apiservers serve
(EKS), or the provider's reason they cannot be read. A component that Prometheus
already serves is not read at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from typing import Protocol

import aiohttp

from ktop.model.events import (
    FEED_COMPONENTS,
    Component,
    FeedFailed,
    FeedSynced,
    ProviderDetected,
    ScrapeFailed,
    Target,
    TargetGone,
)
from ktop.model.providers import (
    PROFILES,
    ApiPath,
    Detected,
    Location,
    NotExposed,
    Provider,
    ProviderProfile,
    detect,
)
from ktop.sources.base import Emit
from ktop.sources.live.client import Connection
from ktop.sources.live.components import http_fetcher
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.provider_facts import cluster_facts
from ktop.sources.live.scrape import scrape_metrics_loop
from ktop.sources.live.static_pods import (
    STATIC_COMPONENTS,
    Found,
    ProxyTarget,
    discover_component,
    proxy_placeholder,
)
from ktop.sources.live.supervisor import Supervisor, scrape_failed
from ktop.sources.live.timing import BACKFILL_TIMEOUT_S, FIRST_POLL_WAIT_S
from ktop.sources.live.transport import TEXT, KubeTransport, instance_name


class PrometheusState(Protocol):
    """What the component reader asks of the source about Prometheus."""

    prometheus: PrometheusMetrics | None
    prometheus_missing: bool
    """--prometheus was given but names none (not found, or a wrong address)."""

    async def prometheus_polled(self) -> None:
        """Return once Prometheus answered its first poll (bounded), or is missing."""


class ComponentReader:
    """Reads the control-plane components' metrics (see the module docstring)."""

    def __init__(
        self,
        options: LiveOptions,
        loops: Supervisor,
        meter: CostMeter,
        clock: Callable[[], float],
        rng: random.Random,
        state: PrometheusState,
    ) -> None:
        self.o = options
        self.loops = loops
        self.meter = meter
        self.clock = clock
        self.rng = rng
        self.state = state
        self.proxied: dict[Component, tuple[ProxyTarget, ...]] = {}
        """The static pods read through the proxy, per component."""
        self._placeholders: set[Component] = set()
        self._groups: frozenset[str] | None = None
        """The API groups discovery listed (None: not read, as with ``--provider``)."""
        self._git_version = ""

    def start(
        self, t: KubeTransport, conn: Connection, session: aiohttp.ClientSession, emit: Emit
    ) -> None:
        """Start a scrape loop per endpoint given by URL, and the search for static pods
        of the components not given (unless metrics-only, or the search is off).
        """
        self._session = session
        self._git_version = conn.git_version

        groups = (
            (Component.ETCD, self.o.etcd_metrics, self.o.etcd_tls, None),
            (Component.SCHEDULER, self.o.scheduler_metrics, self.o.component_tls, conn.bearer),
            (
                Component.CONTROLLER_MANAGER,
                self.o.controller_manager_metrics,
                self.o.component_tls,
                conn.bearer,
            ),
        )
        for component, urls, tls, tok in groups:
            for url in urls:
                instance = instance_name(url)
                fetch = http_fetcher(
                    session, url, token=tok, tls=tls, meter=self.meter,
                    destination=f"{component} {instance}",
                )  # fmt: skip
                target = Target(component, instance)
                self.loops.start(
                    f"scrape-{component}-{url}",
                    lambda target=target, fetch=fetch: scrape_metrics_loop(  # type: ignore[misc]
                        target,
                        fetch,
                        emit,
                        self.clock,
                        self.o.component_scrape_s,
                        self.rng,
                        secrets=self.loops.secrets,
                    ),
                    scrape_failed(target),
                )
        given = {c for c, urls, _, _ in groups if urls}
        if self.o.metrics_only:
            return  # finding static pods lists pods: components come from Prometheus or URLs
        if self.o.find_components and any(s.component not in given for s in STATIC_COMPONENTS):
            self.loops.start("find-components", lambda: self._find(t, emit, given), FEED_COMPONENTS)

    def _from_prometheus(self, component: Component) -> bool:
        p = self.state.prometheus
        return p is not None and p.healthy and bool(p.instances.get(component))

    async def _find(self, t: KubeTransport, emit: Emit, given: set[Component]) -> None:
        """Find static control-plane pods and their leaders now and then."""
        if self.o.prometheus:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FIRST_POLL_WAIT_S + BACKFILL_TIMEOUT_S):
                    await self.state.prometheus_polled()
        profile = await self._profile(t, emit)
        while True:
            failures: list[str] = []
            p = self.state.prometheus
            for component, where in profile.components.items():
                if (
                    self.o.prometheus
                    and not self.state.prometheus_missing
                    and (p is None or not p.healthy)
                ):
                    continue  # Prometheus' own failure is the reason; look when it answers
                if component in given or self._from_prometheus(component):
                    self._set_proxied(component, (), emit, "read from Prometheus")
                    continue
                found = await self._locate(t, where)
                if found.reason:
                    if not isinstance(where, NotExposed):  # the provider's fact: no failure
                        failures.append(f"{component}: {found.reason}")
                    self._set_proxied(component, (), emit, found.reason)
                    target = Target(component, proxy_placeholder(component))
                    emit([ScrapeFailed(self.clock(), target, found.reason)])
                    self._placeholders.add(component)
                    continue
                self._set_proxied(component, found.targets, emit, "no longer the leader")
                self._stop_unreachable(found.targets, emit)
                for pt in found.targets:
                    if pt.path:
                        self.start_proxied(t, pt, emit)
            now = self.clock()
            if failures:
                emit([FeedFailed(now, FEED_COMPONENTS, "; ".join(failures))])
            else:
                emit([FeedSynced(now, FEED_COMPONENTS)])
            await asyncio.sleep(self.o.discovery_s)

    async def _profile(self, t: KubeTransport, emit: Emit) -> ProviderProfile:
        """The provider's profile: ``--provider``'s, or detected from the cluster (and
        said in a :class:`ProviderDetected` event either way).
        """
        if self.o.provider:
            detected = Detected(Provider(self.o.provider), "--provider")
        else:
            facts, unread = await cluster_facts(t, self._git_version)
            self._groups = facts.api_groups if facts.api_groups else None
            detected = detect(facts)
            if unread:
                detected = Detected(detected.provider, f"{detected.because} ({'; '.join(unread)})")
        emit([ProviderDetected(self.clock(), detected.provider.value, detected.because)])
        return PROFILES[detected.provider]

    async def _locate(self, t: KubeTransport, where: Location) -> Found:
        """Where one component is read now: its pods, the apiservers' path, or why not."""
        if isinstance(where, NotExposed):
            return Found(where.component, (), where.reason)
        if isinstance(where, ApiPath):
            if self._groups is not None and where.group not in self._groups:
                why = f"API group {where.group} not served here (EKS serves it from 1.28 on)"
                return Found(where.component, (), why)
            pt = ProxyTarget(where.component, where.instance, where.instance, where.path)
            return Found(where.component, (pt,))
        return await discover_component(t, where)

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
            self.loops.stop(f"proxy-{component}-{instance}")
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

    def start_proxied(self, lb: KubeTransport, pt: ProxyTarget, emit: Emit) -> None:
        """Scrape ``pt`` through the apiserver's pod proxy (``lb``'s client)."""
        t = KubeTransport(lb.api, self.meter, destination=f"{pt.component} via apiserver")

        async def fetch() -> bytes | None:
            return (await t.get(pt.path, accept=TEXT)).body

        target = Target(pt.component, pt.instance)
        self.loops.start(
            f"proxy-{pt.component}-{pt.instance}",
            lambda: scrape_metrics_loop(
                target,
                fetch,
                emit,
                self.clock,
                self.o.component_scrape_s,
                self.rng,
                secrets=self.loops.secrets,
            ),
            scrape_failed(target),
        )
