"""Evidence readers: one pure function per evidence ID, snapshot (and baseline) in.

Each returns a :class:`EvidenceReading`: a severity graded by the evidence's catalogue
threshold (or by the rule its spec states), the value and a detail line. An
unreadable input gives ``Severity.UNKNOWN`` with the reason as the detail: an input
that was not read never becomes a number (``0 of N``, a share of nothing), and a
value from a single scrape of a lifetime counter or histogram is not graded (it is
context in the detail until a second scrape gives a window).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ktop.analysis import catalogue as c
from ktop.analysis.findings import Severity
from ktop.analysis.triage.baseline import NO_BASELINE, BaselineSource
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.model.events import FEED_EVENTS, FEED_LEASES, FEED_QUOTAS, PodWait
from ktop.model.limits import PENDING_MIN_PODS, PENDING_PER_NODE
from ktop.model.signals import key as signal_key
from ktop.model.snapshot import ApiserverRow, ClusterSnapshot, EtcdMemberRow, ZoneState
from ktop.model.values import Val

NOT_COLLECTED = "not collected by ktop"
LIFETIME = "(lifetime, single scrape): not graded until a second scrape gives a window"
"""Said of a value read from one scrape of a lifetime counter or histogram."""
PLAIN_RESOURCES = ("Insufficient cpu", "Insufficient memory", "Too many pods")


@dataclass(frozen=True, slots=True)
class EvidenceReading:
    """One evidence reading before it is attached to its spec."""

    severity: Severity
    value: float | None
    detail: str
    signal: str = ""
    """The history key of the signal the reading rests on (its worst subject's), if any."""
    threshold: float | None = None
    """The value of ``signal`` beyond which the reading is not ok, when it is not the
    spec's own threshold (e.g. a baseline-relative one)."""

    def on(self, signal: str, threshold: float | None = None) -> EvidenceReading:
        """The same reading, resting on ``signal`` (kept only when the reading is known)."""
        if self.severity is Severity.UNKNOWN:
            return self
        return replace(self, signal=signal, threshold=threshold)


@dataclass(frozen=True, slots=True)
class Context:
    """What the readers read: the snapshot and, when there is one, its baseline."""

    snap: ClusterSnapshot
    baseline: BaselineSource | None = None


Reader = Callable[[Context, EvidenceSpec], EvidenceReading]


def feed_reason(snap: ClusterSnapshot, feed: str, default: str) -> str:
    """Why a feed is unknown, as its source said (e.g. which bundle file is missing)."""
    for f in snap.freshness:
        if f.name == feed and f.error:
            return f.error
    return default


def unknown(reason: str) -> EvidenceReading:
    """Evidence that could not be read, with why."""
    return EvidenceReading(Severity.UNKNOWN, None, reason or "unknown")


def graded(spec: EvidenceSpec, v: Val, detail: str) -> EvidenceReading:
    """A reading graded by the spec's threshold; unknown stays unknown with its reason,
    and a lifetime value (one scrape) is unknown with the value in the detail.
    """
    if v.value is None:
        if v.empty:
            return EvidenceReading(Severity.OK, 0.0, v.reason)
        return unknown(v.reason)
    if v.lifetime:
        return unknown(f"{detail} {LIFETIME}")
    assert spec.threshold is not None, spec.id
    return EvidenceReading(spec.threshold.grade(v.value), v.value, detail)


def _worst(rows: Sequence[tuple[str, Val]]) -> tuple[str, Val] | None:
    """The row with the highest known value; None when none is known."""
    known = [(n, v) for n, v in rows if v.value is not None]
    return max(known, key=lambda r: r[1].or_(0.0)) if known else None


def _lifetime_note(rows: Sequence[tuple[str, Val]], fmt: Callable[[float], str]) -> str:
    """``(load-balanced) 1.25 s`` for each lifetime row, worst first."""
    life = sorted((r for r in rows if r[1].lifetime), key=lambda r: -r[1].or_(0.0))
    return ", ".join(f"{n}: {fmt(v.or_(0.0))}" for n, v in life)


def _worst_reading(
    spec: EvidenceSpec,
    rows: Sequence[tuple[str, Val]],
    what: str,
    fmt: Callable[[float], str],
    metric: str = "",
) -> EvidenceReading:
    """Grade the worst known row; all empty is OK; all unknown is unknown.

    With ``metric``, the reading rests on that signal of the worst row's subject.
    """
    if not rows:
        return unknown(f"no {what} seen")
    if _worst(rows) is None:
        if all(v.empty for _, v in rows):
            return EvidenceReading(Severity.OK, 0.0, rows[0][1].reason)
        return unknown("; ".join(dict.fromkeys(v.reason for _, v in rows if v.reason)))
    # a lifetime value (one scrape) is context, never graded: the windowed rows decide
    life = _lifetime_note(rows, fmt)
    w = _worst([(n, v) for n, v in rows if not v.lifetime])
    if w is None:
        return unknown(f"{life} {LIFETIME}")
    name, v = w
    also = f"; {life} {LIFETIME}" if life else ""
    r = graded(spec, v, f"{name}: {fmt(v.or_(0.0))}{also}")
    return r.on(signal_key(metric, name)) if metric else r


def _s(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def _rate(x: float) -> str:
    return f"{x:.2f}/s"


def _ratio(x: float) -> str:
    return f"{x * 100:.0f} %"


def _times(x: float) -> str:
    return f"{x:.2f}x"


def _count(x: float) -> str:
    return f"{x:.0f}"


# ------------------------------------------------------------------ APF


def apf_rejected(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``apf.rejected``."""
    a = ctx.snap.apf
    if a.unknown_reason:
        return unknown(a.unknown_reason)
    rows = [(r.priority_level, r.rejected_total_per_s) for r in a.levels]
    return _worst_reading(spec, rows, "priority level", _rate, "apf.rejected_per_s")


def apf_wait(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``apf.wait_p99``."""
    a = ctx.snap.apf
    if a.unknown_reason:
        return unknown(a.unknown_reason)
    rows = [(r.priority_level, r.wait_p99_s) for r in a.levels]
    return _worst_reading(spec, rows, "priority level", _s, "apf.wait_p99_s")


def apf_flow(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``apf.dominant_flow``."""
    a = ctx.snap.apf
    if a.unknown_reason:
        return unknown(a.unknown_reason)
    busiest = _worst([(r.priority_level, r.in_queue) for r in a.levels])
    if busiest is None:
        return unknown("queue lengths unknown")
    level, queued = busiest
    if queued.or_(0.0) <= 0:  # a share of nothing is not a number
        return EvidenceReading(Severity.OK, None, "no request is queued")
    flows = [(f.flow_schema, f.in_queue) for f in a.flows if f.priority_level == level]
    top = _worst(flows)
    if top is None:
        return unknown(f"per-flow-schema queues of {level} unknown")
    share = top[1].or_(0.0) / queued.or_(1.0)
    detail = f"{top[0]} holds {top[1].or_(0):.0f} of {queued.or_(0):.0f} queued in {level}"
    return graded(spec, Val.of(share), detail)


# ------------------------------------------------------------------ apiservers


def _api_rows(ctx: Context) -> list[ApiserverRow]:
    return [r for r in ctx.snap.apiservers.instances if not r.error]


def _api_unknown(ctx: Context) -> EvidenceReading | None:
    a = ctx.snap.apiservers
    if not a.instances:
        return unknown(a.unknown_reason or "no apiserver seen")
    if not _api_rows(ctx):
        return unknown("; ".join(f"{r.instance}: {r.error}" for r in a.instances))
    return None


def api_throttled(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.throttled``."""
    if (u := _api_unknown(ctx)) is not None:
        return u
    rows = [(r.instance, r.throttled_per_s) for r in _api_rows(ctx)]
    return _worst_reading(spec, rows, "instance", _rate, "api.throttled_per_s")


def api_write(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.write_p99``."""
    if (u := _api_unknown(ctx)) is not None:
        return u
    return _worst_reading(
        spec, [(r.instance, r.write_p99_s) for r in _api_rows(ctx)], "instance", _s
    )


def _baseline_unknown(ctx: Context) -> EvidenceReading | None:
    if ctx.baseline is None:
        return unknown(NO_BASELINE)
    if not ctx.baseline.ready:
        return unknown(ctx.baseline.describe())
    return None


def _vs_baseline(
    ctx: Context,
    spec: EvidenceSpec,
    field: Callable[[ApiserverRow], Val],
    metric: str,
    what: str,
    fmt: Callable[[float], str],
) -> EvidenceReading:
    """The worst instance's reading / its signal's baseline median."""
    if (u := _api_unknown(ctx)) is not None:
        return u
    if (u := _baseline_unknown(ctx)) is not None:
        return u
    assert ctx.baseline is not None and spec.threshold is not None
    rows: list[tuple[float, str, str, float]] = []
    for r in _api_rows(ctx):
        sig = signal_key(metric, r.instance)
        now, base = field(r), ctx.baseline.of(sig)
        if base is not None and base.median > 0 and now.value is not None:
            ratio = now.value / base.median
            detail = (
                f"{r.instance}: {ratio:.2f}x ({fmt(now.value)} against a median of "
                f"{fmt(base.median)} over {base.samples} points of {ctx.baseline.name})"
            )
            rows.append((ratio, detail, sig, base.median))
    if not rows:
        return unknown(ctx.baseline.lacks(what) + " for any instance answering now")
    ratio, detail, sig, median = max(rows)
    # the signal itself crosses the relative threshold at that multiple of its median
    return graded(spec, Val.of(ratio), detail).on(sig, spec.threshold.fires_at * median)


def _cores(x: float) -> str:
    return f"{x:.2f} cores"


def _mib(x: float) -> str:
    return f"{x / 2**20:.0f} MiB"


def api_cpu(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.cpu_vs_baseline``."""
    return _vs_baseline(ctx, spec, lambda r: r.cpu_cores, "api.cpu_cores", "CPU", _cores)


def api_memory(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.memory_vs_baseline``."""
    return _vs_baseline(ctx, spec, lambda r: r.rss_bytes, "api.rss_bytes", "memory", _mib)


def api_requests(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.requests_vs_baseline``: the summed rate / the sum of the medians,
    over the instances that have both.
    """
    if (u := _api_unknown(ctx)) is not None:
        return u
    if (u := _baseline_unknown(ctx)) is not None:
        return u
    assert ctx.baseline is not None
    now_sum = base_sum = 0.0
    used = 0
    for r in _api_rows(ctx):
        base = ctx.baseline.of(signal_key("api.requests_per_s", r.instance))
        if base is not None and r.requests_per_s.value is not None:
            now_sum += r.requests_per_s.value
            base_sum += base.median
            used += 1
    if not used:
        return unknown(ctx.baseline.lacks("request rates") + " for any instance answering now")
    if base_sum <= 0:
        return unknown(f"the request rate's median in {ctx.baseline.name} is 0")
    ratio = now_sum / base_sum
    detail = (
        f"{ratio:.2f}x: {now_sum:.1f}/s against medians summing to {base_sum:.1f}/s "
        f"({used} instances, {ctx.baseline.name})"
    )
    return graded(spec, Val.of(ratio), detail)


def api_skew(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.request_skew``."""
    a = ctx.snap.apiservers
    r = graded(spec, a.request_skew, f"max / mean requests/s {a.request_skew.or_(0):.2f}x")
    return r.on(signal_key("api.request_skew"))


def api_watch_skew(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.watch_skew``."""
    a = ctx.snap.apiservers
    r = graded(spec, a.watch_skew, f"max / mean watches {a.watch_skew.or_(0):.2f}x")
    return r.on(signal_key("api.watch_skew"))


def api_restart(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.recent_restart``."""
    if (u := _api_unknown(ctx)) is not None:
        return u
    starts = [(r.instance, r.start_time.value) for r in _api_rows(ctx)]
    known = [(n, t) for n, t in starts if t is not None]
    if not known:
        return unknown("process_start_time_seconds not exposed")
    name, t = max(known, key=lambda x: x[1])
    up = max(0.0, ctx.snap.at - t)
    return graded(spec, Val.of(up), f"{name} started {up:.0f} s before the snapshot")


def api_reachable(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``cp.apiservers``."""
    a = ctx.snap.apiservers
    if not a.instances:
        return unknown(a.unknown_reason or "no apiserver seen")
    down = [r for r in a.instances if r.error]
    detail = f"{len(a.instances) - len(down)} of {len(a.instances)} answer" + (
        "; " + "; ".join(f"{r.instance}: {r.error}" for r in down) if down else ""
    )
    if len(down) == len(a.instances):
        return EvidenceReading(Severity.CRITICAL, float(len(down)), detail)
    return EvidenceReading(Severity.WARNING if down else Severity.OK, float(len(down)), detail)


def api_webhooks(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.webhooks``."""
    return unknown(NOT_COLLECTED)


# ------------------------------------------------------------------ etcd


def _etcd_rows(ctx: Context) -> list[EtcdMemberRow]:
    return [m for m in ctx.snap.etcd.members if not m.error]


def _etcd_reading(
    ctx: Context,
    spec: EvidenceSpec,
    field: Callable[[EtcdMemberRow], Val],
    fmt: Callable[[float], str],
    metric: str = "",
) -> EvidenceReading:
    e = ctx.snap.etcd
    if e.unknown_reason:
        return unknown(e.unknown_reason)
    rows = _etcd_rows(ctx)
    if not rows:
        return unknown("; ".join(f"{m.instance}: {m.error}" for m in e.members) or "no member")
    return _worst_reading(spec, [(m.instance, field(m)) for m in rows], "member", fmt, metric)


def etcd_leader(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.has_leader``."""
    e = ctx.snap.etcd
    if e.unknown_reason:
        return unknown(e.unknown_reason)
    rows = _etcd_rows(ctx)
    if not rows:
        return unknown("; ".join(f"{m.instance}: {m.error}" for m in e.members) or "no member")
    if all(m.has_leader.value is None for m in rows):
        return unknown("etcd_server_has_leader not exposed")
    without = [m.instance for m in rows if m.has_leader.value == 0]
    if not without:
        return EvidenceReading(Severity.OK, 0.0, f"leader {e.leader or '?'}")
    detail = f"without a leader: {', '.join(without)}"
    reading = EvidenceReading(Severity.CRITICAL, float(len(without)), detail)
    return reading.on(signal_key("etcd.has_leader", without[0]), c.ETCD_NO_LEADER_BELOW)


def etcd_changes(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.leader_changes``; a lifetime count (one scrape) cannot be graded."""
    r = _etcd_reading(ctx, spec, lambda m: m.leader_changes, _count)
    rows = _etcd_rows(ctx)
    lifetime = [m for m in rows if m.leader_changes.lifetime]
    if lifetime and not any(m.leader_changes.known and not m.leader_changes.lifetime for m in rows):
        counts = ", ".join(f"{m.instance} {m.leader_changes.or_(0):.0f}" for m in lifetime)
        return unknown(
            f"lifetime counts only ({counts}; they include the first election): "
            "changes within a window need two scrapes"
        )
    return r


def etcd_fsync(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.wal_fsync_p99``."""
    return _etcd_reading(ctx, spec, lambda m: m.wal_fsync_p99_s, _s, "etcd.fsync_p99_s")


def etcd_commit(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.backend_commit_p99``."""
    return _etcd_reading(ctx, spec, lambda m: m.backend_commit_p99_s, _s, "etcd.commit_p99_s")


def etcd_quota(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.db_quota``."""
    return _etcd_reading(ctx, spec, lambda m: m.db_quota_ratio, _ratio, "etcd.db_quota_ratio")


def etcd_frag(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.fragmentation``."""
    return _etcd_reading(ctx, spec, lambda m: m.fragmentation, _ratio, "etcd.fragmentation")


def etcd_proposals(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``etcd.failed_proposals``."""
    return _etcd_reading(
        ctx, spec, lambda m: m.proposals_failed_per_s, _rate, "etcd.proposals_failed_per_s"
    )


# ------------------------------------------------------------------ scheduler, pods


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
    n = sc.pending_by_wait.get(PodWait.UNSCHEDULABLE, 0)
    top = "; ".join(f"{r.reason}: {r.pods} pods" for r in sc.reasons[:3])
    sig = signal_key("sched.waiting_pods", PodWait.UNSCHEDULABLE.value)
    return _pods_reading(ctx, n, f"{n} pods" + (f" ({top})" if top else ""), sig)


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
    return EvidenceReading(Severity.OK, float(n), f"{n} pods bound, not started")


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


# ------------------------------------------------------------------ nodes


def nodes_disruption(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``nodes.zone_disruption``."""
    n = ctx.snap.nodes
    if not n.nodes_known:
        return unknown(n.nodes_reason or "nodes not listed")
    if n.total == 0:  # "0 of 0 nodes not Ready" would read as healthy
        return unknown("the node list holds no node")
    bad = [
        z for z in n.zones if z.state in (ZoneState.PARTIAL_DISRUPTION, ZoneState.FULL_DISRUPTION)
    ]
    unhealthy = n.not_ready + n.unknown
    detail = f"{unhealthy} of {n.total} nodes not Ready" + (
        "; " + ", ".join(f"{z.zone or '(no zone)'} {z.state}" for z in bad) if bad else ""
    )
    sev = Severity.CRITICAL if bad else (Severity.WARNING if unhealthy else Severity.OK)
    reading = EvidenceReading(sev, float(len(bad)), detail)
    if not unhealthy:
        return reading
    # since when the worst zone has had nodes not Ready (as KT-NODE-001/002 measure it)
    worst = max(bad or n.zones, key=lambda z: z.unhealthy)
    return reading.on(signal_key("nodes.unhealthy", worst.zone), c.NODE_UNHEALTHY_ABOVE)


def nodes_domain(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``nodes.domain_share``."""
    n = ctx.snap.nodes
    if not n.nodes_known:
        return unknown(n.nodes_reason or "nodes not listed")
    unhealthy = n.not_ready + n.unknown
    if unhealthy == 0 or not n.zones:
        return EvidenceReading(Severity.OK, None, "no node is not Ready")
    worst = max(n.zones, key=lambda z: z.unhealthy)
    share = worst.unhealthy / unhealthy
    detail = f"{worst.unhealthy} of {unhealthy} not-Ready nodes in {worst.zone or '(no zone)'}"
    assert spec.threshold is not None
    if not spec.threshold.grade(share):
        return EvidenceReading(Severity.OK, share, f"{detail}: spread over zones")
    # confined to one zone: a pointer at that zone's shared parts, never an ok mark (and
    # never a suspect alone); too few nodes or a single zone say nothing of a domain
    if len(n.zones) < 2:
        return EvidenceReading(Severity.INFO, share, f"{detail}: a note, the only zone known")
    if unhealthy < c.NODE_DOMAIN_MIN_UNHEALTHY:
        return EvidenceReading(
            Severity.INFO,
            share,
            f"{detail}: a note, too few to point at a zone "
            f"(fewer than {c.NODE_DOMAIN_MIN_UNHEALTHY} not Ready)",
        )
    return EvidenceReading(Severity.WARNING, share, f"{detail}: confined to one zone")


def nodes_lease(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``nodes.lease_lag_p99``."""
    n = ctx.snap.nodes
    if not n.nodes_known:
        return unknown(n.nodes_reason or "nodes not listed")
    lag = n.lease_lag_p99_s
    if lag.value is None and not lag.empty:
        return unknown(feed_reason(ctx.snap, FEED_LEASES, lag.reason))
    return graded(spec, lag, f"p99 {lag.or_(0):.0f} s").on(signal_key("nodes.lease_lag_p99_s"))


def heartbeat_share(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``axis.heartbeat_share``."""
    hb = ctx.snap.nodes.heartbeat_writes_per_s
    writes = [r.writes_per_s for r in _api_rows(ctx)]
    if hb.value is None:
        return unknown(hb.reason)
    if not writes or any(w.value is None for w in writes):
        return unknown("apiserver write rates unknown (two scrapes needed)")
    total = sum(w.or_(0.0) for w in writes)
    if total <= 0:
        return EvidenceReading(Severity.OK, None, "no apiserver writes")
    share = hb.value / total
    assert spec.threshold is not None
    detail = f"{hb.value:.1f} heartbeat writes/s of {total:.1f} writes/s"
    return EvidenceReading(min(Severity.INFO, spec.threshold.grade(share)), share, detail)


def not_collected(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ktop does not collect: always unknown, and says so."""
    return unknown(NOT_COLLECTED)


READERS: dict[str, Reader] = {
    "apf.rejected": apf_rejected,
    "apf.wait_p99": apf_wait,
    "apf.dominant_flow": apf_flow,
    "api.throttled": api_throttled,
    "api.write_p99": api_write,
    "api.cpu_vs_baseline": api_cpu,
    "api.memory_vs_baseline": api_memory,
    "api.requests_vs_baseline": api_requests,
    "api.webhooks": api_webhooks,
    "api.request_skew": api_skew,
    "api.watch_skew": api_watch_skew,
    "api.recent_restart": api_restart,
    "cp.apiservers": api_reachable,
    "etcd.has_leader": etcd_leader,
    "etcd.leader_changes": etcd_changes,
    "etcd.wal_fsync_p99": etcd_fsync,
    "etcd.backend_commit_p99": etcd_commit,
    "etcd.db_quota": etcd_quota,
    "etcd.fragmentation": etcd_frag,
    "etcd.failed_proposals": etcd_proposals,
    "sched.unschedulable": sched_unschedulable,
    "sched.quota_rejections": sched_quota,
    "sched.active_queue": sched_queue,
    "sched.constraint_share": sched_constraints,
    "sched.quota_full": sched_quota_full,
    "pods.bound_not_started": pods_not_started,
    "pods.start_failures": pod_start_failures,
    "nodes.zone_disruption": nodes_disruption,
    "nodes.domain_share": nodes_domain,
    "nodes.lease_lag_p99": nodes_lease,
    "nodes.utilisation": not_collected,
    "nodes.registration_rate": not_collected,
    "dns.errors": not_collected,
    "ha.standby_sync": not_collected,
    "axis.heartbeat_share": heartbeat_share,
}
"""Evidence ID -> reader."""
