"""Pending pods and the kube-scheduler's view of them.

Ordinary pods are created, wait about a second unattempted, get bound and
start a few seconds later. ``scheduler-backlog`` adds GPU pods that no node
fits (retried now and then, each attempt a FailedScheduling event with the
scheduler's real message format), gated pods, and FailedCreate events for
an exceeded quota. One pod with an impossible node selector is always
pending, so the scheduler pane is never empty.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from ktop.model.events import (
    Event,
    PendingPodDeleted,
    PendingPodRecord,
    PendingPodUpserted,
    PodWait,
    QuotaRecord,
    QuotaUpserted,
    Readiness,
    Sample,
    WarningEvent,
)
from ktop.sources.sim.catalog import SCHEDULING_BUCKETS
from ktop.sources.sim.metrics import Counters, Histogram, gauge, labels
from ktop.sources.sim.nodes import SimNodes
from ktop.sources.sim.plan import Plan

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""What Kubernetes uses for generated name suffixes."""
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
GPU_PODS = 256
GPU_RATE = 4.0
GATED_PODS = 120
GATED_RATE = 2.0
APPS = ("web", "payments", "search", "ingest", "batch-etl", "metrics-agent")
PROFILE = "default-scheduler"


@dataclass(slots=True)
class _Pod:
    """A pending pod and what happens to it next."""

    record: PendingPodRecord
    kind: str
    """``steady``, ``gpu``, ``gated`` or ``selector``."""
    next_el: float
    attempts: int = 0


class Scheduler:
    """Pending pods, scheduling attempts and the scheduler's metrics."""

    def __init__(self, rng: random.Random, fleet: SimNodes, plan: Plan) -> None:
        self._rng = rng
        self.fleet = fleet
        self.plan = plan
        self.start_at = fleet.start_at
        self.pending: dict[tuple[str, str], _Pod] = {}
        self._due: dict[int, list[_Pod]] = {}
        self._acc = {"steady": 0.0, "gpu": 0.0, "gated": 0.0}
        self._made = {"gpu": 0, "gated": 0}
        self._quota_count = 0
        self._next_quota = plan.quota_start
        self._hashes = {app: self._suffix(10) for app in APPS}
        self.steady_rate = 0.5 + len(fleet) / 2000.0
        self.attempts = Counters()
        self.bound = 0.0
        """Pods bound so far (each a ``POST pods/binding`` to an apiserver)."""
        self.durations = {r: Histogram(SCHEDULING_BUCKETS) for r in ("scheduled", "unschedulable")}
        n = len(fleet)
        self._median = {"scheduled": 0.002 + n * 2e-6, "unschedulable": 3 * (0.002 + n * 2e-6)}
        self.start_time = self.start_at - rng.uniform(5, 20) * 86_400.0
        uptime = self.start_at - self.start_time
        for result, count in (
            ("scheduled", self.steady_rate * uptime),
            ("unschedulable", uptime / 60),
        ):
            self.attempts.add(labels(profile=PROFILE, result=result), count)
            self.durations[result].observe_lognormal(count, self._median[result], 0.5)
        selector = PendingPodRecord(
            "batch", f"nightly-report-{self._suffix(10)}-{self._suffix(5)}", self.start_at - 3600.0,
            PodWait.UNSCHEDULABLE,
        )  # fmt: skip
        pod = _Pod(selector, "selector", rng.uniform(10, 290), attempts=12)
        self._track(pod)
        pod.record = replace(selector, message=self._message(pod))

    def _suffix(self, n: int) -> str:
        return "".join(self._rng.choice(_ALPHABET) for _ in range(n))

    def _unique(self, namespace: str, prefix: str) -> str:
        """A generated name no pending pod of the namespace has (as the apiserver retries a
        ``generateName`` that is taken): over a long run the 5-character suffixes repeat.
        """
        while True:
            name = prefix + self._suffix(5)
            if (namespace, name) not in self.pending:
                return name

    def _track(self, pod: _Pod) -> None:
        self.pending[(pod.record.namespace, pod.record.name)] = pod
        self._due.setdefault(math.ceil(pod.next_el), []).append(pod)

    def initial_events(self, at: float) -> list[Event]:
        """The initial list of pending pods."""
        return [PendingPodUpserted(at, p.record) for p in self.pending.values()]

    def step(self, k: int, out: list[Event]) -> None:
        """Create, attempt, bind and start pods in ``(k - 1, k]``."""
        el = float(k)
        self._create(k, "steady", self.steady_rate, out)
        plan = self.plan
        if plan.gpu_start is not None:
            if el > plan.gpu_start and self._made["gpu"] < GPU_PODS:
                self._create(k, "gpu", GPU_RATE, out)
            if el > plan.gated_start and self._made["gated"] < GATED_PODS:
                self._create(k, "gated", GATED_RATE, out)
            if el >= self._next_quota > plan.gpu_start:
                self._quota_event(el, out)
        due = self._due.pop(k, None)
        if due:
            due.sort(key=lambda p: p.next_el)
            for pod in due:
                self._advance_pod(pod, out)

    def _create(self, k: int, kind: str, rate: float, out: list[Event]) -> None:
        self._acc[kind] += rate
        count = int(self._acc[kind])
        self._acc[kind] -= count
        rnd = self._rng.random
        for at_el in sorted(k - rnd() for _ in range(count)):
            if kind == "steady":
                app = APPS[int(rnd() * len(APPS))]
                ns, name = app, self._unique(app, f"{app}-{self._hashes[app]}-")
                wait, nxt = PodWait.NOT_ATTEMPTED, at_el + 1.0 + 0.2 * rnd()
            elif kind == "gpu":
                ns, name = "ml-train", self._unique("ml-train", "trainer-")
                wait, nxt = PodWait.NOT_ATTEMPTED, at_el + 0.5 + 0.5 * rnd()
            else:
                ns, name = "ml-queue", self._unique("ml-queue", "eval-")
                wait, nxt = PodWait.GATED, math.inf
            if kind != "steady":
                self._made[kind] += 1
            rec = PendingPodRecord(ns, name, self.start_at + at_el, wait)
            if kind == "gated":
                rec = replace(rec, message=GATED_MESSAGE)
                self.pending[(ns, name)] = _Pod(rec, kind, nxt)
            else:
                self._track(_Pod(rec, kind, nxt))
            out.append(PendingPodUpserted(self.start_at + at_el, rec))

    def _advance_pod(self, pod: _Pod, out: list[Event]) -> None:
        rec = pod.record
        at = self.start_at + pod.next_el
        rnd = self._rng.random
        n = len(self.fleet)
        if pod.kind == "steady" and rec.wait is PodWait.NOT_ATTEMPTED:
            self._attempt("scheduled")
            self.bound += 1.0
            node = self.fleet.names[int(rnd() * n)]
            pod.record = replace(rec, wait=PodWait.BOUND_NOT_STARTED, node=node)
            out.append(PendingPodUpserted(at, pod.record))
            pod.next_el += 2.0 + 3.0 * rnd()
            self._due.setdefault(math.ceil(pod.next_el), []).append(pod)
        elif pod.kind == "steady":
            del self.pending[(rec.namespace, rec.name)]
            out.append(PendingPodDeleted(at, rec.namespace, rec.name))
        else:
            self._attempt("unschedulable")
            pod.attempts += 1
            message = self._message(pod)
            if rec.wait is not PodWait.UNSCHEDULABLE or rec.message != message:
                pod.record = replace(rec, wait=PodWait.UNSCHEDULABLE, message=message)
                out.append(PendingPodUpserted(at, pod.record))
            out.append(
                WarningEvent(
                    at, "FailedScheduling", rec.namespace, "Pod", rec.name, message, pod.attempts
                )
            )
            pod.next_el += 240 + 60 * rnd() if pod.kind == "selector" else 20 + 40 * rnd()
            self._due.setdefault(math.ceil(pod.next_el), []).append(pod)

    def _attempt(self, result: str) -> None:
        self.attempts.add(labels(profile=PROFILE, result=result), 1.0)
        self.durations[result].observe_lognormal(1.0, self._median[result], 0.5)

    def _message(self, pod: _Pod) -> str:
        """``FitError.Error()``: per-reason node counts, sorted as strings."""
        n = len(self.fleet)
        records = self.fleet.records
        unknown = sum(1 for i in self.fleet.unhealthy if records[i].ready is Readiness.UNKNOWN)
        not_ready = len(self.fleet.unhealthy) - unknown
        counts: list[tuple[int, str]] = [
            (unknown, "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"),
            (not_ready, "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"),
        ]
        rest = n - unknown - not_ready
        if pod.kind == "selector":
            counts.append((rest, "node(s) didn't match Pod's node affinity/selector"))
        else:
            infra = min(rest, max(1, round(n * 0.04)))
            counts.append((infra, "node(s) had untolerated taint {dedicated: infra}"))
            counts.append((rest - infra, "Insufficient nvidia.com/gpu"))
        parts = sorted(f"{c} {r}" for c, r in counts if c > 0)
        return (
            f"0/{n} nodes are available: {', '.join(parts)}. preemption: 0/{n} nodes are "
            f"available: {n} Preemption is not helpful for scheduling."
        )

    def _quota_event(self, el: float, out: list[Event]) -> None:
        self._quota_count += 1
        if self._quota_count == 1:
            gpu = ("requests.nvidia.com/gpu", 2048.0, 2048.0)
            quota = QuotaRecord("ml-train", "ml-train-gpu", (gpu,))
            out.append(QuotaUpserted(self.start_at + el, quota))
        message = (
            f'Error creating: pods "trainer-{self._suffix(5)}" is forbidden: exceeded quota: '
            "ml-train-gpu, requested: requests.nvidia.com/gpu=8, "
            "used: requests.nvidia.com/gpu=2048, limited: requests.nvidia.com/gpu=2048"
        )
        out.append(
            WarningEvent(
                self.start_at + el,
                "FailedCreate",
                "ml-train",
                "Job",
                "trainer",
                message,
                self._quota_count,
            )
        )
        self._next_quota = el + 10.0 + 10.0 * self._rng.random()

    def samples(self, el: float) -> list[Sample]:
        """The scheduler's ``/metrics`` (the families ktop reads)."""
        queues = {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
        plugins = {"NodeAffinity": 0, "NodeResourcesFit": 0, "TaintToleration": 0}
        for pod in self.pending.values():
            rec = pod.record
            if rec.wait is PodWait.GATED:
                queues["gated"] += 1
            elif rec.wait is PodWait.NOT_ATTEMPTED:
                queues["active"] += 1
            elif rec.wait is PodWait.UNSCHEDULABLE:
                queues["backoff" if pod.next_el - el < 10 else "unschedulable"] += 1
                if pod.kind == "selector":
                    plugins["NodeAffinity"] += 1
                else:
                    plugins["NodeResourcesFit"] += 1
                    plugins["TaintToleration"] += 1
        out: list[Sample] = []
        for q, v in queues.items():
            gauge(out, "scheduler_pending_pods", labels(queue=q), v)
        self.attempts.export("scheduler_schedule_attempts_total", out)
        for plugin, v in plugins.items():
            gauge(out, "scheduler_unschedulable_pods", labels(plugin=plugin, profile=PROFILE), v)
        for result, hist in self.durations.items():
            hist.export(
                "scheduler_scheduling_attempt_duration_seconds",
                labels(profile=PROFILE, result=result),
                out,
            )
        # the simulated scheduler is the one instance, and it leads
        gauge(out, "leader_election_master_status", labels(name="kube-scheduler"), 1.0)
        gauge(out, "process_start_time_seconds", (), self.start_time)
        return out
