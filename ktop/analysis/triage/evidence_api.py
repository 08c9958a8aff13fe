"""Evidence readers of APF and the apiservers (see :mod:`ktop.analysis.triage.evidence`)."""

from __future__ import annotations

from collections.abc import Callable

from ktop.analysis.findings import Severity
from ktop.analysis.triage.baseline import NO_BASELINE
from ktop.analysis.triage.evidence import (
    NOT_COLLECTED,
    Context,
    EvidenceReading,
    Reader,
    api_rows,
    fmt_s,
    graded,
    unknown,
    worst_reading,
    worst_row,
)
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.analysis.triage.restarts import recent_restart
from ktop.model.area_apiservers import REQUEST_LOAD, WATCH_LOAD, Load, peers
from ktop.model.reading import key as signal_key
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_apf import TalkerRow
from ktop.model.snapshot_apiservers import ApiserverRow, SloRow
from ktop.model.values import Val


def _busiest_level(snap: ClusterSnapshot) -> tuple[str, Val] | EvidenceReading:
    """The priority level with the most queued requests and its queue, or the reading to
    give when there is none (APF or queue lengths unknown, nothing queued).
    """
    a = snap.apf
    if a.unknown_reason:
        return unknown(a.unknown_reason)
    busiest = worst_row([(r.priority_level, r.in_queue) for r in a.levels])
    if busiest is None:
        return unknown("queue lengths unknown")
    if busiest[1].or_(0.0) <= 0:  # a share of nothing is not a number
        return EvidenceReading(Severity.OK, None, "no request is queued")
    return busiest


def apf_flow(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``apf.dominant_flow``."""
    busiest = _busiest_level(ctx.snap)
    if isinstance(busiest, EvidenceReading):
        return busiest
    level, queued = busiest
    a = ctx.snap.apf
    flows = [(f.flow_schema, f.in_queue) for f in a.flows if f.priority_level == level]
    top = worst_row(flows)
    if top is None:
        return unknown(f"per-flow-schema queues of {level} unknown")
    share = top[1].or_(0.0) / queued.or_(1.0)
    detail = f"{top[0]} holds {top[1].or_(0):.0f} of {queued.or_(0):.0f} queued in {level}"
    return graded(spec, Val.of(share), detail)


def busiest_talker(snap: ClusterSnapshot) -> TalkerRow | None:
    """The heaviest client of the priority level with the most queued requests (None when
    nothing is queued or its clients are unknown).
    """
    busiest = _busiest_level(snap)
    if isinstance(busiest, EvidenceReading):
        return None
    clients = snap.apf.talkers.of_level(busiest[0])
    return clients[0] if clients else None


def apf_talker(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``apf.top_talker``: who holds the level that queues most."""
    busiest = _busiest_level(ctx.snap)
    if isinstance(busiest, EvidenceReading):
        return busiest
    level, _ = busiest
    a = ctx.snap.apf
    if a.talkers.unknown_reason:
        return unknown(f"request dumps: {a.talkers.unknown_reason}")
    clients = a.talkers.of_level(level)
    if not clients:
        return unknown(f"no request of {level} in the request dumps")
    top = clients[0]
    where = ", ".join(top.instances)
    detail = f"{top.sentence()} on {where}"
    return graded(spec, Val.of(top.load_share), detail)


# ------------------------------------------------------------------ apiservers


def _api_unknown(ctx: Context) -> EvidenceReading | None:
    a = ctx.snap.apiservers
    if not a.instances:
        return unknown(a.unknown_reason or "no apiserver seen")
    if not api_rows(ctx):
        return unknown("; ".join(f"{r.instance}: {r.error}" for r in a.instances))
    return None


def _worst_slo(
    ctx: Context, value: Callable[[SloRow], Val], pick: Callable[[ApiserverRow], SloRow | None]
) -> tuple[str, SloRow] | EvidenceReading:
    """The instance and SLO row with the highest ``value`` (each instance's own pick), or
    the unknown reading that says why no instance has one.
    """
    if (u := _api_unknown(ctx)) is not None:
        return u
    worst: tuple[str, SloRow] | None = None
    reasons: list[str] = []
    for r in api_rows(ctx):
        s = pick(r)
        if s is None:
            why = next((value(x).reason for x in r.slos if value(x).reason), "")
            reasons.append(f"{r.instance}: {why or 'no SLI histogram'}")
        elif worst is None or value(s).or_(0.0) > value(worst[1]).or_(0.0):
            worst = (r.instance, s)
    return worst or unknown("; ".join(reasons) or "no apiserver answers")


def api_slo(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.slo``: the worst instance's worst SLO, p99 / limit."""
    found = _worst_slo(ctx, lambda s: s.ratio, lambda r: r.worst_slo)
    if isinstance(found, EvidenceReading):
        return found
    instance, s = found
    slow = "" if s.slow_share.value is None else f", {s.slow_share.value * 100:.0f}% slower"
    total = " (total duration: includes APF waits)" if s.total else ""
    detail = (
        f"{instance}: {s.kind} p99 {fmt_s(s.p99_s.or_(0.0))} against {fmt_s(s.limit_s)}"
        f"{slow}{total}"
    )
    return graded(spec, Val.of(s.ratio.or_(0.0)), detail).on(
        signal_key("api.slo_ratio", instance), spec.threshold.fires_at if spec.threshold else 1.0
    )


def api_slo_budget(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.slo_budget``: the instance and SLO that burned the largest share of
    its error budget, over the span it was counted.
    """
    found = _worst_slo(ctx, lambda s: s.budget_burned, lambda r: r.worst_budget)
    if isinstance(found, EvidenceReading):
        return found
    instance, s = found
    detail = (
        f"{instance}: {s.kind} calls burned {s.budget_burned.or_(0.0) * 100:.0f}% of their "
        f"error budget {s.budget_span}"
    )
    return graded(spec, s.budget_burned, detail).on(
        signal_key("api.slo_budget", instance),
        spec.threshold.fires_at if spec.threshold else 1.0,
    )


def api_write(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.write_p99``."""
    if (u := _api_unknown(ctx)) is not None:
        return u
    return worst_reading(
        spec, [(r.instance, r.write_p99_s) for r in api_rows(ctx)], "instance", fmt_s
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
    for r in api_rows(ctx):
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
    for r in api_rows(ctx):
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


def _skew(ctx: Context, spec: EvidenceSpec, v: Val, load: Load) -> EvidenceReading:
    p = peers(ctx.snap.apiservers.instances, load.of)
    detail = f"{v.or_(0):.2f}x" + ("" if p is None else f": {p.words(load.unit)}")
    return graded(spec, v, detail).on(signal_key(spec.id))


def api_skew(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.request_skew``."""
    return _skew(ctx, spec, ctx.snap.apiservers.request_skew, REQUEST_LOAD)


def api_watch_skew(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.watch_skew``."""
    return _skew(ctx, spec, ctx.snap.apiservers.watch_skew, WATCH_LOAD)


def api_restart(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``api.recent_restart``."""
    if (u := _api_unknown(ctx)) is not None:
        return u
    return recent_restart(
        ctx, [(r.instance, r.start_time.value) for r in api_rows(ctx)], "instances"
    )


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


API_READERS: dict[str, Reader] = {
    "apf.dominant_flow": apf_flow,
    "apf.top_talker": apf_talker,
    "api.slo": api_slo,
    "api.slo_budget": api_slo_budget,
    "api.write_p99": api_write,
    "api.cpu_vs_baseline": api_cpu,
    "api.memory_vs_baseline": api_memory,
    "api.requests_vs_baseline": api_requests,
    "api.webhooks": api_webhooks,
    "api.request_skew": api_skew,
    "api.watch_skew": api_watch_skew,
    "api.recent_restart": api_restart,
    "cp.apiservers": api_reachable,
}
"""Evidence ID -> reader, for APF and the apiservers."""
