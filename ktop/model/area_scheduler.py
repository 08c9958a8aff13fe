"""Pending pods and why: scheduler queues, attempts, parsed FailedScheduling reasons."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from ktop.model.events import PendingPodRecord, PodWait, QuotaRecord, WarningEvent, is_row
from ktop.model.failed_scheduling import SchedulingFailure, parse_failed_scheduling, reason_key
from ktop.model.limits import SCHED_QUOTA_USED
from ktop.model.pod_starts import StartWarnings
from ktop.model.series import TargetSeries
from ktop.model.snapshot_scheduler import QUEUES, QuotaUsage, ReasonCount, SchedulerSnapshot
from ktop.model.values import Val, sum_vals

RESULTS = ("scheduled", "unschedulable", "error")
SAMPLES_PER_REASON = 3
QUOTA_LIST_CAP = 50
NEAR_LIMIT = SCHED_QUOTA_USED.info if SCHED_QUOTA_USED.info is not None else 1.0
"""A quota resource at this share of its hard limit is listed (the threshold's ``info``)."""


@lru_cache(maxsize=4096)
def _parsed(message: str) -> SchedulingFailure:
    # Thousands of pods usually share a handful of messages: parse each once.
    return parse_failed_scheduling(message)


def main_reason(pod: PendingPodRecord) -> str:
    """What a Pending pod waits for, in a few words: its first FailedScheduling reason
    (the one that rules out most nodes), or '' when the scheduler has said nothing.
    """
    return _main_reason(pod.message) if pod.message else ""


@lru_cache(maxsize=4096)
def _main_reason(message: str) -> str:
    # a row, its search text and its sort key all ask: one answer per message
    failure = _parsed(message)
    if failure.reasons:
        return max(failure.reasons, key=lambda r: r[1])[0]
    return failure.prefilter or failure.raw


class PendingPods:
    """The Pending pods seen through the API, and recent quota rejections."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.pods: dict[tuple[str, str], PendingPodRecord] = {}
        self._quota: deque[tuple[float, int]] = deque()
        self.quotas: dict[tuple[str, str], QuotaRecord] = {}
        self.starts = StartWarnings(window_s)
        self._changes = 0
        self._listed: tuple[int, tuple[PendingPodRecord, ...]] = (0, ())

    def upsert(self, pod: PendingPodRecord) -> None:
        """Add or replace a pod."""
        key = (pod.namespace, pod.name)
        if self.pods.get(key) != pod:
            self.pods[key] = pod
            self._changes += 1

    def delete(self, namespace: str, name: str) -> None:
        """Forget a pod (no longer Pending)."""
        if self.pods.pop((namespace, name), None) is not None:
            self._changes += 1

    def listed(self) -> tuple[PendingPodRecord, ...]:
        """Every Pending pod, the oldest first (sorted again only after a change)."""
        changes, pods = self._listed
        if changes != self._changes:
            pods = tuple(sorted(self.pods.values(), key=lambda p: (p.created, p.namespace, p.name)))
            self._listed = (self._changes, pods)
        return pods

    def warning(self, ev: WarningEvent) -> None:
        """Note a Warning event: quota rejections and pod start failures are kept."""
        self.starts.note(ev)
        if ev.reason == "FailedCreate" and "exceeded quota" in ev.message:
            self._quota.append((ev.at, ev.count))

    def quota(self, q: QuotaRecord) -> None:
        """Add or replace a ResourceQuota."""
        self.quotas[(q.namespace, q.name)] = q

    def quota_deleted(self, namespace: str, name: str) -> None:
        """Forget a ResourceQuota."""
        self.quotas.pop((namespace, name), None)

    def near_limit(self) -> tuple[QuotaUsage, ...]:
        """Quota resources at or above NEAR_LIMIT of their hard limit, fullest first."""
        out = [
            QuotaUsage(q.namespace, q.name, res, used, hard)
            for q in self.quotas.values()
            for res, used, hard in q.items
            if (hard > 0 and used / hard >= NEAR_LIMIT) or (hard == 0 and used > 0)
        ]
        out.sort(key=lambda u: (-u.ratio, u.namespace, u.name, u.resource))
        return tuple(out[:QUOTA_LIST_CAP])

    def quota_rejections(self, now: float) -> int:
        """FailedCreate events for exceeded quota within the window."""
        while self._quota and self._quota[0][0] < now - self.window_s:
            self._quota.popleft()
        return sum(c for _, c in self._quota)


def _reasons(pods: Sequence[PendingPodRecord]) -> tuple[ReasonCount, ...]:
    counts: dict[str, list[int]] = {}
    samples: dict[str, list[str]] = {}
    wording: dict[str, str] = {}
    for pod in pods:
        if pod.wait is not PodWait.UNSCHEDULABLE or not pod.message:
            continue
        failure = _parsed(pod.message)
        entries = failure.reasons or ((failure.prefilter or failure.raw, 0),)
        for reason, nodes in entries:
            key = reason_key(reason)
            wording.setdefault(key, reason)
            c = counts.setdefault(key, [0, 0])
            c[0] += 1
            c[1] = max(c[1], nodes)
            s = samples.setdefault(key, [])
            if len(s) < SAMPLES_PER_REASON:
                s.append(f"{pod.namespace}/{pod.name}")
    rows = [ReasonCount(k, c[0], c[1], tuple(samples[k]), wording[k]) for k, c in counts.items()]
    return tuple(sorted(rows, key=lambda r: (-r.pods, -r.nodes, r.reason)))


BINDING = {"verb": "POST", "subresource": "binding", "code": "201"}
"""``apiserver_request_total`` of a pod bound (the scheduler's ``POST pods/binding``)."""


def bindings_per_s(apiservers: Mapping[str, TargetSeries]) -> Val:
    """Pods bound per second, summed over the apiserver instances."""
    return sum_vals(
        [ts.rate("apiserver_request_total", BINDING) for ts in apiservers.values()],
        empty_reason="no apiserver metrics",
    )


def build_scheduler(
    series: Mapping[str, TargetSeries],
    pending: PendingPods,
    now: float,
    pods_known: bool,
    pods_reason: str,
    metrics_reason: str,
    quotas_known: bool = False,
    zone_of: Callable[[str], str] | None = None,
    events_known: bool = False,
) -> SchedulerSnapshot:
    """Scheduler metrics summed over scheduler instances, plus the pods' own view."""
    queue: dict[str, Val] = {}
    attempts: dict[str, Val] = {}
    for q in QUEUES:
        queue[q] = sum_vals(
            [ts.gauge("scheduler_pending_pods", {"queue": q}) for ts in series.values()],
            empty_reason=metrics_reason or "no scheduler metrics",
        )
    for r in RESULTS:
        attempts[r] = sum_vals(
            [ts.rate("scheduler_schedule_attempts_total", {"result": r}) for ts in series.values()],
            empty_reason=metrics_reason or "no scheduler metrics",
        )
    pods = list(pending.pods.values())
    by_wait = {w: 0 for w in PodWait}
    for p in pods:
        by_wait[p.wait] += 1
    oldest = min((p.created for p in pods), default=None)
    return SchedulerSnapshot(
        queue=queue,
        attempts_per_s=attempts,
        pending_by_wait=by_wait,
        reasons=_reasons(pods),
        quota_rejections=pending.quota_rejections(now),
        oldest_pending_s=(
            Val.of(max(0.0, now - oldest))
            if oldest is not None
            else (Val.of(0.0) if pods_known else Val.unknown(pods_reason or "pods not listed"))
        ),
        pods_known=pods_known,
        pods_reason=pods_reason,
        metrics_reason="" if series else (metrics_reason or "no scheduler metrics source"),
        quotas_near_limit=pending.near_limit(),
        quotas_known=quotas_known,
        start_failures=pending.starts.group(pods, now, zone_of or (lambda _node: "")),
        events_known=events_known,
        pending_pods=pending.listed(),
        pending_rows=sum(1 for p in pods if is_row(p.namespace)),
    )
