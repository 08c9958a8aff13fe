"""Evidence readers of the scheduler and pods (see :mod:`ktop.analysis.triage.evidence`)."""

from __future__ import annotations

from dataclasses import dataclass

from ktop.analysis import catalogue as c
from ktop.analysis.findings import Severity
from ktop.analysis.triage.evidence import (
    PLAIN_RESOURCES,
    Context,
    EvidenceReading,
    Reader,
    feed_reason,
    graded,
    unknown,
)
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.model.events import FEED_EVENTS, FEED_QUOTAS, PodWait
from ktop.model.limits import PENDING_MIN_PODS, PENDING_PER_NODE
from ktop.model.reading import key as signal_key
from ktop.model.text import counted, fmt_rate
from ktop.model.values import Val


@dataclass(frozen=True, slots=True)
class Many:
    """Whether a count of pods is 'many' for this cluster, and against what."""

    many: bool
    limit: float
    """The count it is judged against (the size limit, or its baseline's when that made
    it many): the trend of its signal is measured from it."""
    why: str
    """``many is more than 50 for 5000 nodes (...)``, and the baseline when there is one."""


def many_pods(ctx: Context, n: int, signal: str = "") -> Many:
    """Judge a count of pods against the cluster's size and its own baseline.

    Many: more than :data:`~ktop.model.limits.PENDING_PER_NODE` of the nodes and more
    than :data:`~ktop.model.limits.PENDING_MIN_PODS`; or, with a baseline of ``signal``,
    more than that minimum and past :data:`~ktop.analysis.catalogue.BASELINE_RATIO`
    times its median (or any such count when its median is 0). The baseline can make
    a count many, never excuse one: an incident longer than half the history is its own
    median.
    """
    nodes = ctx.snap.nodes
    share = PENDING_PER_NODE.warn or 0.0
    if nodes.nodes_known and nodes.total > 0:
        size_limit = max(PENDING_MIN_PODS, int(share * nodes.total))
        by_size = n > PENDING_MIN_PODS and bool(PENDING_PER_NODE.grade(n / nodes.total))
        why = (
            f"many is more than {size_limit} for {nodes.total} nodes (one per "
            f"{1 / share:.0f} nodes, and more than {PENDING_MIN_PODS})"
        )
    else:
        size_limit = PENDING_MIN_PODS
        by_size = n > PENDING_MIN_PODS
        why = f"many is more than {PENDING_MIN_PODS} (the nodes are not known)"
    bl = ctx.baseline
    base = bl.of(signal) if signal and bl is not None and bl.ready else None
    if bl is None or base is None:
        return Many(by_size, size_limit, why)
    median = base.median
    normal = f"against a median of {median:g} over {base.samples} points of {bl.name}"
    above = n > PENDING_MIN_PODS and (median <= 0 or bool(c.BASELINE_RATIO.grade(n / median)))
    if above and not by_size:
        limit = max(float(PENDING_MIN_PODS), (c.BASELINE_RATIO.warn or 0.0) * median)
        return Many(True, limit, f"well above its normal, {normal}; by size alone, {why}")
    return Many(by_size, size_limit, f"{why}; {normal}")


def _pods_reading(ctx: Context, n: int, detail: str, signal: str = "") -> EvidenceReading:
    """A count of waiting or refused pods: a warning when many, a note when some, ok at 0."""
    if n == 0:
        r = EvidenceReading(Severity.OK, 0.0, detail)
        return r.on(signal, float(PENDING_MIN_PODS)) if signal else r
    m = many_pods(ctx, n, signal)
    sev = Severity.WARNING if m.many else Severity.INFO
    r = EvidenceReading(sev, float(n), f"{detail}: {'many' if m.many else 'a note'}; {m.why}")
    return r.on(signal, m.limit) if signal else r


def sched_unschedulable(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``sched.unschedulable``: many for the cluster's size or its baseline."""
    sc = ctx.snap.scheduler
    if not sc.pods_known:
        return unknown(sc.pods_reason or "pods not listed")
    n = sc.unschedulable()
    top = "; ".join(f"{r.reason}: {counted(r.pods, 'pod')}" for r in sc.reasons[:3])
    sig = signal_key("sched.waiting_pods", PodWait.UNSCHEDULABLE.value)
    what = counted(n, "pod")
    if sc.unschedulable_estimated:
        read = sc.pending_by_wait.get(PodWait.UNSCHEDULABLE, 0)
        rows = sc.pending_by_wait.get(PodWait.NOT_BOUND, 0)
        what = f"about {what} ({read} of the pods read whole, {rows} more not bound listed as rows)"
    return _pods_reading(ctx, n, what + (f" ({top})" if top else ""), sig)


def sched_quota(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``sched.quota_rejections``: many for the cluster's size."""
    sc = ctx.snap.scheduler
    if not sc.events_known and not sc.quota_rejections:
        return unknown(feed_reason(ctx.snap, FEED_EVENTS, "Warning events not read by this source"))
    n = sc.quota_rejections
    return _pods_reading(ctx, n, f"{n} creations refused")


def sched_queue(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``sched.active_queue``."""
    sc = ctx.snap.scheduler
    active, backoff = sc.queue.get("active"), sc.queue.get("backoff")
    if active is None or backoff is None or active.value is None or backoff.value is None:
        return unknown(sc.metrics_reason or "scheduler_pending_pods not exposed")
    scheduled = sc.attempts_per_s.get("scheduled", Val.unknown("not exposed"))
    rate = f"{scheduled.value:.1f} pods/s scheduled" if scheduled.known else "rate unknown"
    n = active.value + backoff.value
    return EvidenceReading(
        Severity.OK, n, f"active {active.value:.0f}, backoff {backoff.value:.0f}; {rate}"
    )


def sched_bindings(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``sched.bindings``: pods bound per second, beside the pods waiting."""
    sc = ctx.snap.scheduler
    rate = sc.bindings_per_s
    if rate.value is None:
        return unknown(rate.reason or "no apiserver metrics")
    waiting = sum(sc.pending_by_wait.values()) if sc.pods_known else None
    beside = "" if waiting is None else f" while {counted(waiting, 'pod')} wait"
    return EvidenceReading(Severity.OK, rate.value, f"{fmt_rate(rate.value)} bound{beside}")


def _is_constraint(reason: str) -> bool:
    return not any(reason.startswith(p) for p in PLAIN_RESOURCES)


def sched_constraints(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``sched.constraint_share``."""
    sc = ctx.snap.scheduler
    if not sc.pods_known:
        return unknown(sc.pods_reason or "pods not listed")
    n = sc.pending_by_wait.get(PodWait.UNSCHEDULABLE, 0)
    if n == 0:  # a share of nothing is not a number
        return EvidenceReading(Severity.OK, None, "no unschedulable pod")
    cons = [r for r in sc.reasons if _is_constraint(r.reason)]
    if not cons:
        return graded(spec, Val.of(0.0), "every refusal is plain cpu, memory or pod count")
    top = max(cons, key=lambda r: r.pods)
    share = min(1.0, top.pods / n)
    detail = f"{top.reason}: {top.pods} of {n} unschedulable pods"
    r = graded(spec, Val.of(share), detail)
    m = many_pods(ctx, n, signal_key("sched.waiting_pods", PodWait.UNSCHEDULABLE.value))
    if r.severity > Severity.INFO and not m.many:
        # a share of a few pods is no pattern: 1 of 1 refused by affinity is 100 %
        note = f"{detail}: a note, too few pods to be a pattern; {m.why}"
        return EvidenceReading(Severity.INFO, share, note)
    return r


def sched_quota_full(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``sched.quota_full``."""
    sc = ctx.snap.scheduler
    if not sc.quotas_known and not sc.quotas_near_limit:
        return unknown(feed_reason(ctx.snap, FEED_QUOTAS, "ResourceQuotas not read by this source"))
    if not sc.quotas_near_limit:
        return EvidenceReading(Severity.OK, 0.0, "no quota resource at 90 % or more")
    q = sc.quotas_near_limit[0]
    detail = f"{q.namespace}/{q.name} {q.resource}: {q.used:g} of {q.hard:g}"
    return graded(spec, Val.of(q.ratio), detail)


def pods_not_started(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``pods.bound_not_started``."""
    sc = ctx.snap.scheduler
    if not sc.pods_known:
        return unknown(sc.pods_reason or "pods not listed")
    n = sc.pending_by_wait.get(PodWait.BOUND_NOT_STARTED, 0)
    return EvidenceReading(Severity.OK, float(n), f"{counted(n, 'pod')} bound, not started")


def pod_start_failures(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``pods.start_failures``."""
    sc = ctx.snap.scheduler
    if not sc.pods_known:
        return unknown(sc.pods_reason or "pods not listed")
    if not sc.events_known and not sc.start_failures:
        return unknown(feed_reason(ctx.snap, FEED_EVENTS, "Warning events not read by this source"))
    n = sum(f.pods for f in sc.start_failures)
    parts = [
        f"{f.category} ({f.reason}) {f.pods} pods on {f.node_count} nodes, zones "
        + ", ".join(f"{z or '(none)'} {k}" for z, k in f.zones)
        for f in sc.start_failures[:4]
    ]
    sig = signal_key("sched.waiting_pods", PodWait.BOUND_NOT_STARTED.value)
    return _pods_reading(ctx, n, "; ".join(parts) or "no start Warning", sig)


POD_READERS: dict[str, Reader] = {
    "sched.unschedulable": sched_unschedulable,
    "sched.quota_rejections": sched_quota,
    "sched.active_queue": sched_queue,
    "sched.bindings": sched_bindings,
    "sched.constraint_share": sched_constraints,
    "sched.quota_full": sched_quota_full,
    "pods.bound_not_started": pods_not_started,
    "pods.start_failures": pod_start_failures,
}
"""Evidence ID -> reader, for the scheduler and pods."""
