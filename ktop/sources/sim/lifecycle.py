"""The node lifecycle controller (kube-controller-manager), as upstream runs it.

Every ``--node-monitor-period`` (5 s) it marks nodes whose Lease is older
than the grace period (50 s) Ready=Unknown, queues not-ready nodes for the
NoExecute taint, and recomputes zone states (``ComputeZoneState``: the model's
own rule and threshold, :func:`ktop.model.zones.zone_state`, in float32 as
upstream) and per-zone taint rates (``setLimiterInZone``). The taint queues are
drained through per-zone token buckets with burst 1. When every zone is in
FullDisruption it stops tainting and removes the taints ("master disruption
mode"); when it leaves that mode it resets probe times.
"""

from __future__ import annotations

from ktop.model.events import Event, Readiness, Sample
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.zones import zone_state
from ktop.sources.sim.metrics import gauge, labels
from ktop.sources.sim.nodes import SimNodes

GRACE_S = 50.0
"""``--node-monitor-grace-period`` (50 s from v1.32)."""
MONITOR_PERIOD_S = 5
EVICTION_QPS = 0.1
SECONDARY_QPS = 0.01
LARGE_CLUSTER_THRESHOLD = 50


class _Limiter:
    """``flowcontrol.NewTokenBucketRateLimiter(qps, 1)`` with ``SwapLimiter``."""

    __slots__ = ("qps", "tokens")

    def __init__(self, qps: float) -> None:
        self.qps = qps
        self.tokens = 1.0 if qps > 0 else 0.0

    def refill(self, dt: float) -> None:
        self.tokens = min(1.0, self.tokens + self.qps * dt)

    def swap(self, qps: float) -> None:
        if qps == self.qps:
            return
        drained = self.tokens < 1.0
        self.qps = qps
        self.tokens = 0.0 if qps <= 0 or drained else 1.0


class LifecycleController:
    """Zone states, taint queues and the ``node_collector_*`` numbers."""

    def __init__(self, fleet: SimNodes) -> None:
        self.fleet = fleet
        zones = len(fleet.zone_names)
        self.states = [ZoneState.NORMAL] * zones
        self.limiters = [_Limiter(EVICTION_QPS) for _ in range(zones)]
        self.queues: list[dict[int, None]] = [{} for _ in range(zones)]
        self.evictions = [0.0] * zones
        self.tainted: dict[int, None] = {}
        self.all_full = False
        self._probe_reset: dict[int, float] = {}
        self.reported_unhealthy = [0] * zones
        """``unhealthy_nodes_in_zone`` as of the last monitor pass."""

    def monitor(self, el: float, out: list[Event]) -> None:
        """One monitor pass (``monitorNodeHealth`` + ``handleDisruption``)."""
        fleet = self.fleet
        records = fleet.records
        for i in fleet.silent:
            probe = max(fleet.last_renew[i], self._probe_reset.get(i, -1e18))
            if el - probe > GRACE_S and records[i].ready is not Readiness.UNKNOWN:
                fleet.update(
                    i,
                    el,
                    out,
                    ready=Readiness.UNKNOWN,
                    ready_since=float(round(fleet.start_at + el)),
                )
        for i in list(self.tainted):
            rec = records[i]
            if rec.ready is Readiness.TRUE:
                fleet.update(i, el, out, unreachable_taint=False, not_ready_taint=False)
                del self.tainted[i]
        for queue in self.queues:
            for i in [i for i in queue if records[i].ready is Readiness.TRUE]:
                del queue[i]
        for i in fleet.unhealthy:
            rec = records[i]
            want_unreach = rec.ready is Readiness.UNKNOWN
            if (want_unreach and rec.unreachable_taint) or (
                not want_unreach and rec.not_ready_taint
            ):
                continue
            self.queues[fleet.zone_of[i]][i] = None
        self._handle_disruption(el, out)

    def _handle_disruption(self, el: float, out: list[Event]) -> None:
        fleet = self.fleet
        new_states = [
            zone_state(size - bad, bad)
            for size, bad in zip(fleet.zone_size, fleet.zone_unhealthy, strict=True)
        ]
        all_full = all(s is ZoneState.FULL_DISRUPTION for s in new_states)
        if all_full and not self.all_full:
            for i in list(self.tainted):
                fleet.update(i, el, out, unreachable_taint=False, not_ready_taint=False)
            self.tainted.clear()
            for lim in self.limiters:
                lim.swap(0.0)
        elif not all_full and self.all_full:
            self._probe_reset = dict.fromkeys(fleet.silent, el)
            for z, state in enumerate(new_states):
                self.limiters[z].swap(self._qps(z, state))
        elif not all_full:
            for z, state in enumerate(new_states):
                if state is not self.states[z]:
                    self.limiters[z].swap(self._qps(z, state))
        self.states = new_states
        self.all_full = all_full
        self.reported_unhealthy = list(fleet.zone_unhealthy)

    def _qps(self, zone: int, state: ZoneState) -> float:
        if state is ZoneState.PARTIAL_DISRUPTION:
            return SECONDARY_QPS if self.fleet.zone_size[zone] > LARGE_CLUSTER_THRESHOLD else 0.0
        return EVICTION_QPS

    def taint_pass(self, el: float, dt: float, out: list[Event]) -> None:
        """Drain the per-zone NoExecute taint queues through their limiters."""
        fleet = self.fleet
        for z, queue in enumerate(self.queues):
            lim = self.limiters[z]
            lim.refill(dt)
            while queue and lim.tokens >= 1.0:
                lim.tokens -= 1.0
                i = next(iter(queue))
                del queue[i]
                rec = fleet.records[i]
                if rec.ready is Readiness.TRUE:
                    continue
                unknown = rec.ready is Readiness.UNKNOWN
                fleet.update(i, el, out, unreachable_taint=unknown, not_ready_taint=not unknown)
                self.tainted[i] = None
                self.evictions[z] += 1.0

    def zone_health(self, zone: int) -> float:
        """``node_collector_zone_health``: percent of the zone that is healthy."""
        size = self.fleet.zone_size[zone]
        return 100.0 if size == 0 else 100.0 * (size - self.reported_unhealthy[zone]) / size

    def samples(self, start_time: float) -> list[Sample]:
        """kube-controller-manager's ``/metrics`` (node_collector families)."""
        out: list[Sample] = []
        fleet = self.fleet
        for z, key in enumerate(fleet.zone_keys):
            lab = labels(zone=key)
            gauge(out, "node_collector_zone_health", lab, self.zone_health(z))
            gauge(out, "node_collector_zone_size", lab, fleet.zone_size[z])
            gauge(out, "node_collector_unhealthy_nodes_in_zone", lab, self.reported_unhealthy[z])
            gauge(out, "node_collector_evictions_total", lab, self.evictions[z])
        # the simulated controller-manager is the one instance, and it leads
        gauge(out, "leader_election_master_status", labels(name="kube-controller-manager"), 1.0)
        gauge(out, "process_start_time_seconds", (), round(start_time, 2))
        return out
