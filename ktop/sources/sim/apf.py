"""API Priority and Fairness inside one simulated kube-apiserver.

A fluid model: each flow schema brings requests at some rate, each costing
``seats x service time`` seat-seconds. A priority level can spend
``current_limit_seats`` seat-seconds per second. When demand exceeds that,
the level's budget is shared max-min fairly between flows, the rest waits
in FIFO cohorts; cohorts that wait longer than 15 s are rejected as
``time-out``, arrivals that find the flow's queues full as ``queue-full``
(``concurrency-limit`` for the queueless catch-all). Current limits are
re-divided every 10 s the way the apiserver's borrowing does: each level
gets ``max(lower bound, f x demand)`` with ``f`` chosen so the limits add up
to the server's 600 seats (for an idle server this gives the real fixture's
numbers).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from ktop.model.events import ApfLevelDump, Labels, Sample
from ktop.sources.sim.catalog import (
    APF_QUEUE_TIMEOUT_S,
    FLOWS,
    LEVELS,
    NOMINAL_SEATS,
    SERVER_SEATS,
    WAIT_BUCKETS,
    LevelSpec,
)
from ktop.sources.sim.metrics import Counters, Histogram, gauge, labels

IMMEDIATE_WAIT_S = 0.0003
DEFAULT_QUEUE_CAP = 300.0
"""One flow distinguisher's hand: 6 queues x 50."""


@dataclass(slots=True)
class FlowState:
    """One flow schema inside one priority level on one apiserver."""

    name: str
    level: str
    key: Labels
    queue_cap: float = DEFAULT_QUEUE_CAP
    cohorts: list[list[float]] = field(default_factory=list)
    """FIFO of ``[age_s, requests]``."""
    executing: float = 0.0
    seats: float = 0.0
    dispatched: float = 0.0
    waits: dict[str, Histogram] = field(default_factory=dict)

    @property
    def inqueue(self) -> float:
        """Requests waiting in this flow's queues."""
        return sum(c[1] for c in self.cohorts)


@dataclass(frozen=True, slots=True)
class StepResult:
    """What happened to one flow's requests during one step."""

    dispatched: float
    queued_wait_s: float
    """Mean queueing time of the requests dispatched from a queue."""
    from_queue: float
    rejected: float


class Apf:
    """The APF state of one apiserver."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self.specs: dict[str, LevelSpec] = {lv.name: lv for lv in LEVELS}
        self.limits: dict[str, float] = {lv.name: float(NOMINAL_SEATS[lv.name]) for lv in LEVELS}
        self._demand: dict[str, float] = dict.fromkeys(self.specs, 0.0)
        self.flows: dict[str, FlowState] = {}
        for fs in FLOWS:
            st = FlowState(fs.name, fs.level, labels(flow_schema=fs.name, priority_level=fs.level))
            st.waits["true"] = Histogram(WAIT_BUCKETS)
            self.flows[fs.name] = st
        self.by_level: dict[str, list[FlowState]] = {name: [] for name in self.specs}
        for st in self.flows.values():
            self.by_level[st.level].append(st)
        self.rejected = Counters()
        self._since_rebalance = math.inf
        self.rebalance(0.0)

    def step(
        self, dt: float, demand: dict[str, tuple[float, float, float]]
    ) -> dict[str, StepResult]:
        """Advance ``dt`` seconds; ``demand[flow] = (requests/s, seats, service_s)``."""
        results: dict[str, StepResult] = {}
        for level, flows in self.by_level.items():
            self._step_level(self.specs[level], flows, dt, demand, results)
        self._since_rebalance += dt
        if self._since_rebalance >= 10.0:
            self.rebalance(dt)
        return results

    def _step_level(
        self,
        spec: LevelSpec,
        flows: list[FlowState],
        dt: float,
        demand: dict[str, tuple[float, float, float]],
        results: dict[str, StepResult],
    ) -> None:
        need: dict[str, float] = {}
        for st in flows:
            rate, seats, service = demand.get(st.name, (0.0, 1.0, 0.01))
            need[st.name] = (st.inqueue + rate * dt) * seats * service
        budget = math.inf if spec.exempt else self.limits[spec.name] * dt
        alloc = _water_fill(need, budget)
        seat_demand = 0.0
        for st in flows:
            rate, seats, service = demand.get(st.name, (0.0, 1.0, 0.01))
            cost = max(seats * service, 1e-9)
            can = alloc[st.name] / cost
            arrivals = rate * dt
            from_queue, wait_sum = 0.0, 0.0
            while st.cohorts and can > 1e-12:
                age, n = st.cohorts[0]
                take = min(n, can)
                can -= take
                from_queue += take
                waited = min(age + dt / 2, APF_QUEUE_TIMEOUT_S)
                wait_sum += take * waited
                st.waits["true"].observe(take, waited)
                if take >= n:
                    st.cohorts.pop(0)
                else:
                    st.cohorts[0][1] = n - take
            now = min(arrivals, can)
            st.waits["true"].observe(now, IMMEDIATE_WAIT_S)
            left = arrivals - now
            rejected = 0.0
            if left > 1e-12:
                if spec.reject:
                    rejected += self._reject(st, "concurrency-limit", left)
                else:
                    room = max(0.0, st.queue_cap - st.inqueue)
                    admitted = min(left, room)
                    if admitted > 0:
                        st.cohorts.append([0.0, admitted])
                    rejected += self._reject(st, "queue-full", left - admitted)
            for c in st.cohorts:
                c[0] += dt
            while st.cohorts and st.cohorts[0][0] > APF_QUEUE_TIMEOUT_S:
                _, n = st.cohorts.pop(0)
                rejected += self._reject(st, "time-out", n)
                st.waits.setdefault("false", Histogram(WAIT_BUCKETS)).observe(
                    n, APF_QUEUE_TIMEOUT_S
                )
            done = from_queue + now
            st.dispatched += done
            st.executing = done / dt * service
            st.seats = st.executing * seats
            seat_demand += st.seats + st.inqueue * seats
            results[st.name] = StepResult(
                done, wait_sum / from_queue if from_queue else 0.0, from_queue, rejected
            )
        prev = self._demand[spec.name]
        self._demand[spec.name] = max(seat_demand, prev + (seat_demand - prev) * min(1.0, 0.1 * dt))

    def _reject(self, st: FlowState, reason: str, n: float) -> float:
        if n > 0:
            self.rejected.add(
                labels(flow_schema=st.name, priority_level=st.level, reason=reason), n
            )
        return max(n, 0.0)

    def rebalance(self, dt: float) -> None:
        """Recompute current limits from the smoothed seat demand (borrowing)."""
        self._since_rebalance = 0.0
        lower: dict[str, float] = {}
        target: dict[str, float] = {}
        for name, spec in self.specs.items():
            if spec.exempt:
                continue
            nominal = NOMINAL_SEATS[name]
            lower[name] = nominal * (100 - spec.lendable_pct) / 100.0
            target[name] = max(lower[name], self._demand[name])
        lo, hi = 0.0, SERVER_SEATS / max(1e-9, min(target.values()))
        for _ in range(50):
            mid = (lo + hi) / 2
            if sum(max(lower[n], mid * t) for n, t in target.items()) > SERVER_SEATS:
                hi = mid
            else:
                lo = mid
        for name, t in target.items():
            self.limits[name] = float(round(max(lower[name], lo * t)))
        self.limits["exempt"] = float(max(1, math.ceil(self._demand["exempt"])))

    def _round(self, x: float) -> int:
        """Stochastic rounding: small fractional gauges show up now and then."""
        base = math.floor(x)
        return int(base + (1 if self._rng.random() < x - base else 0))

    def export(self, out: list[Sample]) -> tuple[ApfLevelDump, ...]:
        """Append APF samples and return the matching ``dump_priority_levels`` rows."""
        rows: list[ApfLevelDump] = []
        rejected_by: dict[tuple[str, str], float] = {}
        for key, v in self.rejected.values.items():
            d = dict(key)
            pair = (d["priority_level"], "time-out" if d["reason"] == "time-out" else "rejected")
            rejected_by[pair] = rejected_by.get(pair, 0.0) + v
        for level in sorted(self.by_level):
            spec = self.specs[level]
            lab = labels(priority_level=level)
            gauge(out, "apiserver_flowcontrol_nominal_limit_seats", lab, NOMINAL_SEATS[level])
            gauge(out, "apiserver_flowcontrol_current_limit_seats", lab, self.limits[level])
            waiting = executing = 0
            dispatched = 0.0
            for st in self.by_level[level]:
                q, ex = self._round(st.inqueue), self._round(st.executing)
                seats = max(ex, self._round(st.seats)) if ex else 0
                waiting, executing, dispatched = (
                    waiting + q,
                    executing + ex,
                    dispatched + st.dispatched,
                )
                gauge(out, "apiserver_flowcontrol_current_inqueue_requests", st.key, q)
                gauge(out, "apiserver_flowcontrol_current_executing_requests", st.key, ex)
                gauge(out, "apiserver_flowcontrol_current_executing_seats", st.key, seats)
                gauge(
                    out,
                    "apiserver_flowcontrol_dispatched_requests_total",
                    st.key,
                    math.floor(st.dispatched),
                )
                for execute, hist in st.waits.items():
                    wl = labels(execute=execute, flow_schema=st.name, priority_level=level)
                    hist.export("apiserver_flowcontrol_request_wait_duration_seconds", wl, out)
            active = (
                0
                if waiting == 0
                else min(max(spec.queues, 1), max(spec.hand_size, math.ceil(waiting / 50)))
            )
            rows.append(
                ApfLevelDump(
                    priority_level=level,
                    active_queues=active,
                    is_idle=waiting == 0 and executing == 0,
                    is_quiescing=False,
                    waiting_requests=waiting,
                    executing_requests=executing,
                    dispatched_requests=math.floor(dispatched),
                    rejected_requests=math.floor(rejected_by.get((level, "rejected"), 0.0)),
                    timedout_requests=0,
                    cancelled_requests=math.floor(rejected_by.get((level, "time-out"), 0.0)),
                )
            )
        self.rejected.export("apiserver_flowcontrol_rejected_requests_total", out)
        return tuple(rows)


def _water_fill(need: dict[str, float], budget: float) -> dict[str, float]:
    """Max-min fair shares of ``budget`` for the given needs."""
    if sum(need.values()) <= budget:
        return dict(need)
    alloc = dict.fromkeys(need, 0.0)
    left = budget
    open_ = sorted((v, k) for k, v in need.items() if v > 0)
    while open_:
        share = left / len(open_)
        v, k = open_[0]
        if v <= share:
            alloc[k] = v
            left -= v
            open_.pop(0)
        else:
            for _, k2 in open_:
                alloc[k2] = share
            break
    return alloc
