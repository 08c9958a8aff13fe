"""The simulated cluster behind ``ktop demo``: pure, deterministic, in-process.

``Simulator.advance`` moves a virtual clock forward in 1 s steps and returns
every event of those steps in time order. Nothing here reads the wall clock
or the global random generator: the same arguments and seed give the same
events.
"""

from __future__ import annotations

import random

from ktop.model.apf_requests import REQUESTS_PATH
from ktop.model.events import (
    FEED_EVENTS,
    FEED_IDENTITIES,
    FEED_LEASES,
    FEED_NODES,
    FEED_PENDING_PODS,
    FEED_QUOTAS,
    ApfDumpFailed,
    ApfDumpRead,
    ApfRequestsFailed,
    ApiserverIdentities,
    ClockTick,
    Component,
    Event,
    FeedSynced,
    MetricsScraped,
    QuotaRecord,
    QuotaUpserted,
    ScrapeFailed,
    SourceStarted,
    Target,
)
from ktop.sources.sim.apiserver import Apiserver
from ktop.sources.sim.catalog import K8S_VERSION, STORM_RATE
from ktop.sources.sim.etcd import Etcd
from ktop.sources.sim.lifecycle import MONITOR_PERIOD_S, LifecycleController
from ktop.sources.sim.nodes import SimNodes
from ktop.sources.sim.plan import make_plan, storm_level
from ktop.sources.sim.pods import Scheduler
from ktop.sources.sim.scenarios import SCENARIOS, Phase, ScenarioSpec

SCRAPE_INTERVAL_S = 5.0
BASELINE_QUOTAS = (
    QuotaRecord("batch", "compute", (("requests.cpu", 410.0, 1000.0),)),
    QuotaRecord(
        "web", "compute", (("limits.memory", 0.55 * 2**40, 2**40), ("pods", 912.0, 1000.0))
    ),
)
"""ResourceQuotas every scenario starts with (web's pod count is near its limit)."""
FIRST_RESCRAPE_S = 2.0
"""Warm-up: every target is scraped again ~2 s after the start, so rates exist early."""
STEP_S = 1
DUMP_DELAY_S = 0.02
RESTART_BOOT_S = 8.0
"""A restarted apiserver's process starts this long before it serves again."""
DAY_S = 86_400.0


def apiserver_instance(i: int) -> str:
    """The instance name of apiserver ``i`` (as a Prometheus target would show it)."""
    return f"apiserver-{i}:6443"


SCHEDULER_INSTANCE = "kube-scheduler-0:10259"
CONTROLLER_MANAGER_INSTANCE = "kube-controller-manager-0:10257"


class Simulator:
    """A simulated control plane that unfolds one scenario on a virtual clock."""

    def __init__(
        self,
        scenario: str = "steady",
        *,
        nodes: int = 5000,
        zones: int = 3,
        racks_per_zone: int | None = None,
        apiservers: int = 3,
        etcd_members: int = 3,
        seed: int = 1,
        start_at: float = 1_767_225_600.0,
        rack_label: str = "topology.ktop.dev/rack",
    ) -> None:
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
        self._apiservers = apiservers
        if nodes < 1 or zones < 1 or apiservers < 1 or etcd_members < 1:
            raise ValueError("nodes, zones, apiservers and etcd_members must be at least 1")
        self._spec = SCENARIOS[scenario]
        self._start_at = float(start_at)
        self.rack_label = rack_label
        self._rng = random.Random(seed)
        rng = self._rng
        racks = racks_per_zone if racks_per_zone is not None else max(2, round(nodes / zones / 40))
        self._detail = (
            f"{nodes} nodes in {zones} zones x {racks} racks, {apiservers} apiservers, "
            f"{etcd_members} etcd members (racks from label {rack_label}), seed {seed} - "
            f"{self._spec.summary}"
        )
        self.fleet = SimNodes(
            rng, nodes=nodes, zones=zones, racks_per_zone=racks, start_at=start_at
        )
        self.plan = make_plan(self._spec, nodes=nodes, zones=zones, apiservers=apiservers)
        self.lifecycle = LifecycleController(self.fleet)
        self.scheduler = Scheduler(rng, self.fleet, self.plan)
        self.etcd = Etcd(rng, members=etcd_members, nodes=nodes, plan=self.plan, start_at=start_at)
        self.apiservers: list[Apiserver] = []
        self.weights = [1.0 / apiservers] * apiservers
        self.up = [True] * apiservers
        for i in range(apiservers):
            started = start_at - rng.uniform(2, 9) * DAY_S
            api = Apiserver(
                rng, apiserver_instance(i), nodes=nodes, start_time=started, version=K8S_VERSION
            )
            api.step(start_at - started, weight=self.weights[i], storm=0.0, write_extra_s=0.0)
            self.apiservers.append(api)
        self._kcm_start = start_at - rng.uniform(2, 9) * DAY_S
        self.targets: list[Target] = [
            *(Target(Component.APISERVER, apiserver_instance(i)) for i in range(apiservers)),
            *(Target(Component.ETCD, m.instance) for m in self.etcd.members),
            Target(Component.SCHEDULER, SCHEDULER_INSTANCE),
            Target(Component.CONTROLLER_MANAGER, CONTROLLER_MANAGER_INSTANCE),
        ]
        spread = 0.8 / len(self.targets)
        self._next_scrape = [FIRST_RESCRAPE_S + 0.05 + j * spread for j in range(len(self.targets))]
        self._el = 0.0
        self._k = 0
        self._schedule_outage()

    def _schedule_outage(self) -> None:
        zone = self.plan.outage_zone
        if zone is None:
            return
        fleet = self.fleet
        zone_name = fleet.zone_names[zone]
        racks = sorted({r.rack for r in fleet.records if r.zone == zone_name})
        rack_at: dict[str, float] = {}
        width = self.plan.outage_spread / max(1, len(racks))
        for n, rack in enumerate(racks):
            rack_at[rack] = self.plan.outage_start + n * width
        for i, rec in enumerate(fleet.records):
            if rec.zone == zone_name:
                fleet.halt(i, rack_at[rec.rack] + self._rng.uniform(0, width))

    @property
    def now(self) -> float:
        """The virtual clock (Unix seconds).

        It moves in whole 1 s steps: a fraction passed to :meth:`advance` is
        carried over to the next call, so no event is ever later than ``now``.
        """
        return self._start_at + self._k

    @property
    def scenario(self) -> ScenarioSpec:
        """The scenario being played."""
        return self._spec

    def phase(self) -> Phase:
        """The scenario phase in force now."""
        return self._spec.phase_at(float(self._k))

    def start(self) -> list[Event]:
        """The initial state: source description, full lists, first scrapes and dumps."""
        at = self.now
        out: list[Event] = [SourceStarted(at, "demo", f"sim/{self._spec.name}", self._detail)]
        out.extend(self.fleet.initial_events(at))
        out.append(FeedSynced(at, FEED_NODES))
        out.append(FeedSynced(at, FEED_LEASES))
        out.extend(self.scheduler.initial_events(at))
        out.append(FeedSynced(at, FEED_PENDING_PODS))
        out.append(FeedSynced(at, FEED_EVENTS))
        out.extend(QuotaUpserted(at, q) for q in BASELINE_QUOTAS)
        out.append(FeedSynced(at, FEED_QUOTAS))
        identities = tuple(f"apiserver-{i:08x}" for i in range(self._apiservers))
        out.append(ApiserverIdentities(at, identities))
        out.append(FeedSynced(at, FEED_IDENTITIES))
        for j in range(len(self.targets)):
            self._scrape(j, 0.0, out)
        return out

    def advance(self, seconds: float) -> list[Event]:
        """Move the clock ``seconds`` forward (in 1 s steps); return the events in time order."""
        if seconds < 0:
            raise ValueError("cannot move the clock backwards")
        self._el += seconds
        out: list[Event] = []
        while self._k + STEP_S <= self._el + 1e-9:
            self._k += STEP_S
            step_out: list[Event] = []
            self._step(self._k, step_out)
            step_out.sort(key=_at)
            out.extend(step_out)
        out.append(ClockTick(self.now))
        return out

    def _step(self, k: int, out: list[Event]) -> None:
        el = float(k)
        dt = float(STEP_S)
        self._scenario_actions(el - dt, el, out)
        self.fleet.renew(k, out)
        if k % MONITOR_PERIOD_S == 0:
            self.lifecycle.monitor(el, out)
        self.lifecycle.taint_pass(el, dt, out)
        bound = self.scheduler.bound
        self.scheduler.step(k, out)
        self._bindings(self.scheduler.bound - bound)
        writes = sum(a.writes_per_s for a, up in zip(self.apiservers, self.up, strict=True) if up)
        self.etcd.step(el, dt, writes)
        self._rebalance(dt)
        storm = storm_level(self.plan, el) * STORM_RATE
        extra = self.etcd.write_latency_s()
        for i, api in enumerate(self.apiservers):
            if self.up[i]:
                api.step(dt, weight=self.weights[i], storm=storm, write_extra_s=extra)
        for j, due in enumerate(self._next_scrape):
            if due <= el:
                self._scrape(j, due, out)
                self._next_scrape[j] = due + SCRAPE_INTERVAL_S

    def _scenario_actions(self, lo: float, hi: float, out: list[Event]) -> None:
        plan = self.plan
        if plan.flap_node is not None:
            if lo < plan.flap_start <= hi:
                self.fleet.set_kubelet_ready(plan.flap_node, False, plan.flap_start, out)
            if lo < plan.flap_end <= hi:
                self.fleet.set_kubelet_ready(plan.flap_node, True, plan.flap_end, out)
        for r in plan.restarts:
            if lo < r.down_at <= hi:
                self.up[r.apiserver] = False
                self._move_weight(r.apiserver)
            if lo < r.up_at <= hi:
                self.up[r.apiserver] = True
                old = self.apiservers[r.apiserver]
                self.apiservers[r.apiserver] = Apiserver(
                    self._rng,
                    old.instance,
                    nodes=old.nodes,
                    start_time=self._start_at + r.up_at - RESTART_BOOT_S,
                    version=r.version,
                )

    def _bindings(self, pods: float) -> None:
        """The scheduler's bindings reach the apiservers that are up, by their weights."""
        live = [i for i, up in enumerate(self.up) if up]
        total = sum(self.weights[i] for i in live)
        for i in live:
            share = self.weights[i] / total if total > 0 else 1.0 / len(live)
            self.apiservers[i].bind(pods * share)

    def _move_weight(self, down: int) -> None:
        """Clients of a stopped apiserver reconnect evenly to the others."""
        others = [i for i, up in enumerate(self.up) if up and i != down]
        if not others:
            return
        share = self.weights[down] / len(others)
        for i in others:
            self.weights[i] += share
        self.weights[down] = 0.0

    def _rebalance(self, dt: float) -> None:
        rate = self.plan.rebalance_per_s * dt
        live = [i for i, up in enumerate(self.up) if up]
        if rate <= 0 or not live:
            return
        total = sum(self.weights[i] for i in live)
        even = total / len(live)
        for i in live:
            self.weights[i] += (even - self.weights[i]) * min(1.0, rate)

    def _scrape(self, j: int, el: float, out: list[Event]) -> None:
        target = self.targets[j]
        at = self._start_at + el
        comp = target.component
        if comp is Component.APISERVER:
            i = j
            if not self.up[i]:
                reason = (
                    f'Get "https://{target.instance}/metrics": '
                    f"dial tcp {target.instance}: connect: connection refused"
                )
                out.append(ScrapeFailed(at, target, reason))
                out.append(
                    ApfDumpFailed(
                        at + DUMP_DELAY_S,
                        target.instance,
                        reason.replace(
                            "/metrics", "/debug/api_priority_and_fairness/dump_priority_levels"
                        ),
                    )
                )
                out.append(
                    ApfRequestsFailed(
                        at + DUMP_DELAY_S,
                        target.instance,
                        reason.replace("/metrics", REQUESTS_PATH),
                    )
                )
                return
            samples, dump = self.apiservers[i].samples()
            out.append(MetricsScraped(at, target, tuple(samples)))
            out.append(ApfDumpRead(at + DUMP_DELAY_S, target.instance, dump))
            out.append(self.apiservers[i].request_dump(at + DUMP_DELAY_S))
        elif comp is Component.ETCD:
            index = j - len(self.apiservers)
            out.append(MetricsScraped(at, target, tuple(self.etcd.samples(index, el))))
        elif comp is Component.SCHEDULER:
            out.append(MetricsScraped(at, target, tuple(self.scheduler.samples(el))))
        else:
            out.append(MetricsScraped(at, target, tuple(self.lifecycle.samples(self._kcm_start))))


def _at(event: Event) -> float:
    return event.at
