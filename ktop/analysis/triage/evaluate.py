"""Verdicts: evidence in the path's order, the correlation rules, capacity arithmetic."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ktop.analysis.etcd_defrag import defrag_stall
from ktop.analysis.findings import Severity
from ktop.analysis.trends import Direction, Trend, held_words, signal_trend
from ktop.analysis.triage.baseline import NO_BASELINE, BaselineSource
from ktop.analysis.triage.capacity import capacity, given_sizes
from ktop.analysis.triage.diagnosis import diagnose
from ktop.analysis.triage.evidence import Context, EvidenceReading
from ktop.analysis.triage.evidence_api import busiest_talker
from ktop.analysis.triage.evidence_audit import AUDIT_EVIDENCE, named_client
from ktop.analysis.triage.evidence_nodes import DISRUPTED, controller_conclusion
from ktop.analysis.triage.onset import with_episode
from ktop.analysis.triage.paths import PATHS, EvidenceSpec, PathSpec
from ktop.analysis.triage.readers import READERS
from ktop.analysis.triage.types import (
    Capacity,
    Evidence,
    PathResult,
    Role,
    Status,
    TriageReport,
    Verdict,
)
from ktop.model.audit_digest import AuditDigest
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.text import counted

STATUS_OF = {
    Severity.CRITICAL: Status.BAD,
    Severity.WARNING: Status.WARN,
    Severity.UNKNOWN: Status.UNKNOWN,
    Severity.INFO: Status.OK,
    Severity.OK: Status.OK,
}
CONFINED = 0.9
"""A cause shared by this share of the affected pods or nodes is 'confined' to it."""


def _trend_limit(e: EvidenceSpec, r: EvidenceReading) -> float | None:
    """The value of the reading's signal past which it is not ok: the reading's own limit
    (a baseline-relative one), else the spec's first limit.
    """
    if r.threshold is not None:
        return r.threshold
    return None if e.threshold is None else e.threshold.fires_at


def _trend(ctx: Context, e: EvidenceSpec, r: EvidenceReading) -> Trend | None:
    """Since when the reading's signal has been beyond the evidence's threshold (the
    reading's own when it gives one), and which way it goes; None without a signal. A
    reading that dates its own onset (:attr:`EvidenceReading.onset`) gives the start
    when the history did not see the breach begin (no history, or breaching from its
    first point on): a one-shot's history is its own few seconds.
    """
    if r.severity is Severity.UNKNOWN:
        return None
    threshold = _trend_limit(e, r)
    seen = None
    if r.signal and threshold is not None:
        seen = signal_trend(ctx.snap.history, r.signal, threshold)
    if r.onset is None or (
        seen is not None and seen.since is not None and not seen.since_before_history
    ):
        return seen
    if seen is None:
        return Trend(r.onset, False, Direction.UNKNOWN, None)
    return replace(seen, since=r.onset, since_before_history=False)


def _suspect_limit(e: EvidenceSpec, r: EvidenceReading) -> float | None:
    """The value of the reading's signal past which it makes its path suspect: the
    reading's own limit (a baseline-relative one), else the spec's limit of ``suspect_at``.
    """
    if r.threshold is not None:
        return r.threshold
    th = e.threshold
    if th is None or e.suspect_at is None:
        return None
    return th.critical if e.suspect_at >= Severity.CRITICAL else th.warn


def _held(ctx: Context, e: EvidenceSpec, r: EvidenceReading, trend: Trend | None) -> Trend | None:
    """The breach of a reading no longer suspect whose signal passed its suspect limit
    less than :data:`~ktop.analysis.trends.CLEAR_HOLD_S` ago: held, still suspect. Read
    only when the reading's ``trend`` (at its first limit) shows a breach not yet over.
    """
    limit = _suspect_limit(e, r)
    if trend is None or trend.since is None or limit is None or not r.signal:
        return None
    t = trend if limit == _trend_limit(e, r) else signal_trend(ctx.snap.history, r.signal, limit)
    return t if t.held else None


def read_evidence(spec: PathSpec, ctx: Context) -> tuple[Evidence, ...]:
    """Every evidence of a path, in order, each with its signal's trend when it has one;
    a reading that made its path suspect less than a hold ago stays suspect, held.
    """
    out = []
    for e in spec.evidence:
        if ctx.audit is None and e.id in AUDIT_EVIDENCE:
            continue  # shown only when audit logs were given
        r = READERS[e.id](ctx, e)
        status = STATUS_OF[r.severity]
        suspect = (
            e.suspect_at is not None and status is not Status.UNKNOWN and r.severity >= e.suspect_at
        )
        trend = _trend(ctx, e, r)
        held = None if suspect else _held(ctx, e, r, trend)
        detail = r.detail
        if held is not None and held.clear_since is not None:
            detail += held_words(held, ctx.snap.at)
            trend = held if trend is None or trend.since is None else trend
        out.append(
            Evidence(
                id=e.id,
                title=e.title,
                status=status,
                value=r.value,
                unit=e.unit,
                detail=detail,
                first_line=e.first_line,
                pane=e.pane,
                suspect=suspect or held is not None,
                note=r.severity is Severity.INFO,
                signal=r.signal,
                trend=trend,
                suspect_limit=_suspect_limit(e, r) if r.signal else None,
                held=held is not None,
            )
        )
    return tuple(out)


def _by_id(ev: tuple[Evidence, ...]) -> dict[str, Evidence]:
    return {e.id: e for e in ev}


def default_verdict(ev: tuple[Evidence, ...]) -> Verdict:
    """Suspect when a first-line reading says so; never clear while one is unknown."""
    first = [e for e in ev if e.first_line]
    if any(e.suspect for e in first):
        return Verdict.SUSPECT
    if any(e.status is Status.UNKNOWN for e in first):
        return Verdict.UNKNOWN
    return Verdict.CLEAR


def _not_suspect(ev: tuple[Evidence, ...]) -> Verdict:
    v = default_verdict(ev)
    return Verdict.UNKNOWN if v is Verdict.SUSPECT else v


def _suspects(ev: tuple[Evidence, ...]) -> str:
    return "; ".join(f"{e.title}: {e.detail}" for e in ev if e.suspect)


def _unknowns(ev: tuple[Evidence, ...]) -> str:
    return "; ".join(
        f"{e.title}: {e.detail}" for e in ev if e.first_line and e.status is Status.UNKNOWN
    )


def _noted(ev: tuple[Evidence, ...]) -> str:
    """The first-line readings that are neither plain passes nor suspect: warnings, notes."""
    return "; ".join(
        f"{e.title}: {e.detail}"
        for e in ev
        if e.first_line and not e.suspect and (e.status is Status.WARN or e.note)
    )


def _plain(verdict: Verdict, ev: tuple[Evidence, ...]) -> str:
    if verdict is Verdict.SUSPECT:
        return _suspects(ev)
    if verdict is Verdict.UNKNOWN:
        return "first-line evidence unknown: " + _unknowns(ev)
    if noted := _noted(ev):
        return f"no first-line reading makes the path suspect; to note: {noted}"
    return "every first-line reading is within its threshold"


Correlate = Callable[[ClusterSnapshot, tuple[Evidence, ...]], tuple[Verdict, str]]


def p1(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """Name the one shared bottleneck."""
    v = default_verdict(ev)
    if v is not Verdict.SUSPECT:
        return v, _plain(v, ev)
    e = _by_id(ev)
    if e["etcd.backend_commit_p99"].suspect:
        return v, "etcd is the shared bottleneck: " + e["etcd.backend_commit_p99"].detail
    if e["apf.rejected"].suspect or e["apf.wait_p99"].suspect:
        return v, "APF queues: " + _suspects(ev)
    return v, _suspects(ev)


def p2(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """'No resources fit' vs 'cannot decide fast enough' vs quota."""
    v = default_verdict(ev)
    e = _by_id(ev)
    sc = s.scheduler
    parts = []
    if e["sched.unschedulable"].suspect and sc.reasons:
        top = sc.reasons[0]
        parts.append(f"no resources fit: {top.reason} ({counted(top.pods, 'pod')})")
    if e["sched.quota_rejections"].suspect:
        parts.append(
            f"quota refuses creations ({sc.quota_rejections}): a different layer from placement"
        )
    q = e["sched.active_queue"]
    if q.value and not e["sched.unschedulable"].suspect:
        parts.append(f"scheduler queue: {q.detail} (cannot decide fast enough?)")
    if v is Verdict.SUSPECT:
        return v, "; ".join(parts) or _suspects(ev)
    return v, _plain(v, ev)


def p3(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """Group start failures by cause, node and zone."""
    v = default_verdict(ev)
    fails = s.scheduler.start_failures
    if v is not Verdict.SUSPECT or not fails:
        return v, _plain(v, ev)
    total = sum(f.pods for f in fails)
    by_node: dict[str, int] = {}
    by_zone: dict[str, int] = {}
    by_cause: dict[str, int] = {}
    for f in fails:
        by_cause[f.category] = by_cause.get(f.category, 0) + f.pods
        for n, k in f.nodes:
            by_node[n] = by_node.get(n, 0) + k
        for z, k in f.zones:
            by_zone[z] = by_zone.get(z, 0) + k
    node, nk = max(by_node.items(), key=lambda kv: kv[1])
    zone, zk = max(by_zone.items(), key=lambda kv: kv[1])
    cause, ck = max(by_cause.items(), key=lambda kv: kv[1])
    where = {
        "image pull": "the image registry or pull path",
        "sandbox / CNI": "IP allocation (IPAM / CNI)",
        "volume attach / mount": "the CSI driver and storage backend",
    }.get(cause, "the kubelet on those nodes")
    if nk >= CONFINED * total and len(by_node) >= 1 and total > 1:
        return v, f"{nk} of {total} pods on node {node}: that node's kubelet and runtime"
    if zk >= CONFINED * total and zone and len(s.nodes.zones) > 1:
        return v, f"{zk} of {total} pods in zone {zone}: that zone's shared dependencies ({cause})"
    return v, f"{cause}: {ck} of {total} pods across {len(by_node)} nodes: look at {where}"


def p4(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """One domain's shared parts, or the control path, not the nodes one by one."""
    v = default_verdict(ev)
    if v is not Verdict.SUSPECT:
        return v, _plain(v, ev)
    e = _by_id(ev)
    cp_bad = e["cp.apiservers"].status is Status.BAD or e["etcd.has_leader"].status is Status.BAD
    cp_unknown = Status.UNKNOWN in (e["cp.apiservers"].status, e["etcd.has_leader"].status)
    n = s.nodes
    plane = "unhealthy" if cp_bad else ("unknown" if cp_unknown else "healthy")
    if not n.zones and (told := controller_conclusion(n, plane)):  # the controller's zones
        return v, told
    if not n.zones:  # suspect from the control plane alone: no node zone is known
        return v, (
            f"node zones not known ({n.nodes_reason or 'nodes not listed'}) while the "
            f"control plane is {plane}: look at the control path (apiservers, etcd, "
            "network to them) first"
        )
    unhealthy = n.not_ready + n.unknown
    if unhealthy == 0:  # suspect from the Lease lag alone: the nodes about to turn NotReady
        lagging = max(n.zones, key=lambda z: z.lease_lag_max_s.or_(0.0))
        where = "the control path" if cp_bad else f"zone {lagging.zone or '(none)'}'s shared parts"
        return v, (
            f"node Leases not renewed ({e['nodes.lease_lag_p99'].detail}; longest in zone "
            f"{lagging.zone or '(none)'}), no node NotReady yet: suspect {where}"
        )
    worst = max(n.zones, key=lambda z: z.unhealthy)
    share = e["nodes.domain_share"].value or 0.0
    disrupted = [z for z in n.zones if z.state in DISRUPTED]
    if len(n.zones) > 1 and share >= CONFINED and not cp_bad:
        others = [z for z in n.zones if z is not worst]
        lag_elsewhere = max((z.lease_lag_max_s.or_(0.0) for z in others), default=0.0)
        lease = "Lease lag only there" if lag_elsewhere <= 20 else "Lease lag elsewhere too"
        health = "control plane unknown" if cp_unknown else "control plane healthy"
        return v, (
            f"{worst.unhealthy} of {unhealthy} NotReady nodes in zone {worst.zone or '(none)'}, "
            f"{lease}, {health}: suspect that zone's shared parts (network, power, top-of-rack), "
            "not the nodes one by one"
        )
    if cp_bad and (len(disrupted) == len(n.zones) or share < CONFINED):
        return v, (
            f"NotReady in {len(disrupted)} of {len(n.zones)} zones while the control plane is "
            "unhealthy: suspect the control path (apiservers, etcd, network to them), "
            "not the nodes"
        )
    return v, (
        f"NotReady across {len(disrupted)} zones with the control plane "
        f"{'unknown' if cp_unknown else 'healthy'}: look for what the nodes share "
        "(probe, network, image, kernel)"
    )


def api429(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """That client, and whether it retries without back-off; the 429s audit logs record
    make the path suspect as the live rejections do.
    """
    e = _by_id(ev)
    audit = e.get("audit.rejected")
    v = Verdict.SUSPECT if audit is not None and audit.suspect else default_verdict(ev)
    if v is not Verdict.SUSPECT:
        return v, _plain(v, ev)
    flow = e["apf.dominant_flow"]
    if flow.status in (Status.WARN, Status.BAD):
        return v, (
            f"{flow.detail}: that client; check whether it retries 429s without back-off "
            f"({e['apf.rejected'].detail})"
        )
    if audit is not None and audit.suspect:
        return v, (
            f"audit logs: {e['audit.top_client'].detail}: that client; check whether it "
            f"retries 429s without back-off ({audit.detail})"
        )
    return v, _suspects(ev)


def relist(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """A restart or leader change (trigger) with queueing (effect)."""
    e = _by_id(ev)
    trigger = [x for x in (e["etcd.leader_changes"], e["api.recent_restart"]) if x.suspect]
    effect = e["apf.wait_p99"]
    if trigger and effect.status in (Status.WARN, Status.BAD):
        return Verdict.SUSPECT, (
            "; ".join(f"{x.title}: {x.detail}" for x in trigger)
            + f", then APF waits {effect.detail}: clients relist without jitter"
        )
    if any(
        x.status is Status.UNKNOWN
        for x in (e["etcd.leader_changes"], e["api.recent_restart"], effect)
    ):
        return Verdict.UNKNOWN, "first-line evidence unknown: " + _unknowns(ev)
    return Verdict.CLEAR, "no restart or leader change coincides with queueing"


def api_cpu(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """CPU above its baseline while etcd is fine."""
    e = _by_id(ev)
    cpu, commit = e["api.cpu_vs_baseline"], e["etcd.backend_commit_p99"]
    if cpu.suspect and commit.status is Status.OK:
        return Verdict.SUSPECT, f"{cpu.detail} with etcd commit {commit.detail}"
    v = _not_suspect(ev) if not cpu.suspect else Verdict.CLEAR
    if cpu.suspect:
        return Verdict.CLEAR, "CPU is high but so is etcd commit latency: see ETCD and P1"
    return v, _plain(v, ev)


def axis(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """Which axis the pressure comes from."""
    e = _by_id(ev)
    pressure = [
        x
        for x in (e["apf.wait_p99"], e["etcd.backend_commit_p99"])
        if x.status in (Status.WARN, Status.BAD)
    ]
    hb = e["axis.heartbeat_share"]
    if not pressure:
        if Status.UNKNOWN in (e["apf.wait_p99"].status, e["etcd.backend_commit_p99"].status):
            return Verdict.UNKNOWN, "pressure unknown: " + _unknowns(ev)
        return Verdict.CLEAR, "no axis is under pressure"
    what = "; ".join(f"{x.title}: {x.detail}" for x in pressure)
    if hb.status is Status.UNKNOWN or hb.value is None:
        return Verdict.SUSPECT, f"{what}; axis unknown ({hb.detail})"
    if hb.value >= 0.5:
        return Verdict.SUSPECT, f"{what}; node-bound: {hb.detail}"
    mem = e["api.memory_vs_baseline"]
    if mem.suspect:
        return Verdict.SUSPECT, f"{what}; state-bound: {mem.detail} (more apiservers will not help)"
    return Verdict.SUSPECT, f"{what}; churn-bound: {hb.detail} (other writes dominate)"


def etcd(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """An alarm (NOSPACE: no write), then a stalling defragmentation, before the disk."""
    by = _by_id(ev)
    lead = next((by[i] for i in ("etcd.alarms", "etcd.defrag_inflight") if by[i].suspect), None)
    if lead is None:
        v = default_verdict(ev)
        return v, _plain(v, ev)
    others = "; ".join(f"{e.title}: {e.detail}" for e in ev if e.suspect and e is not lead)
    return Verdict.SUSPECT, lead.detail + (f"; {others}" if others else "")


def ha(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    """What of fail-over is observable; the standbys' readiness never is."""
    v = default_verdict(ev)
    hidden = "a standby's informer sync cannot be seen from outside"
    if v is Verdict.SUSPECT:
        return v, _suspects(ev)
    if v is Verdict.UNKNOWN:
        return v, _plain(v, ev) + f"; and {hidden}"
    warns = "; ".join(f"{e.title}: {e.detail}" for e in ev if e.status is Status.WARN)
    seen = warns or "a leader for each elected component, spare apiservers and etcd members"
    return v, f"{seen}; {hidden}"


CORRELATE: dict[str, Correlate] = {
    "P1": p1,
    "P2": p2,
    "P3": p3,
    "P4": p4,
    "API-429": api429,
    "API-RELIST": relist,
    "API-CPU": api_cpu,
    "AXIS": axis,
    "HA": ha,
    "ETCD": etcd,
}


def _default(s: ClusterSnapshot, ev: tuple[Evidence, ...]) -> tuple[Verdict, str]:
    v = default_verdict(ev)
    return v, _plain(v, ev)


def evaluate_path(spec: PathSpec, ctx: Context) -> PathResult:
    """One path's verdict."""
    ev = read_evidence(spec, ctx)
    verdict, conclusion = CORRELATE.get(spec.id, _default)(ctx.snap, ev)
    result = PathResult(spec.id, spec.title, verdict, ev, conclusion, spec.direction)
    return with_episode(result, ctx.snap.history, ctx.snap.at)


def triage(
    snap: ClusterSnapshot,
    baseline: BaselineSource | None = None,
    extra_capacity: tuple[Capacity, ...] = (),
    audit: AuditDigest | None = None,
) -> TriageReport:
    """Every path's verdict in the diagnosis' order (the probable cause, the consequences
    it explains, independent suspects, unknown and clear paths); capacity arithmetic; the
    baseline used. ``audit``: what the apiservers' audit logs say about the same time.
    """
    used = NO_BASELINE if baseline is None else baseline.describe()
    ctx = Context(snap, baseline, audit)
    results = diagnose(evaluate_path(p, ctx) for p in PATHS)
    # figures measured by the caller (a bundle's List files) win over the estimates
    given = {c.id for c in extra_capacity}
    estimated = tuple(
        c
        for c in capacity(snap)
        if c.id not in given and not (c.id == "full_list_bytes" and given_sizes(given))
    )
    return TriageReport(
        tuple(results),
        estimated + extra_capacity,
        used,
        snap.at,
        _talker(snap, results) or _audit_talker(audit, results),
        _named(snap, results),
    )


def _named(snap: ClusterSnapshot, results: Sequence[PathResult]) -> str:
    """What the probable cause's evidence names as the culprit: a defragmenting etcd
    member that stalls (``etcd-1 is defragmenting: ...``); empty otherwise.
    """
    cause = next((p for p in results if p.role is Role.CAUSE), None)
    if cause is None or not any(
        e.id == "etcd.defrag_inflight" and e.suspect for e in cause.evidence
    ):
        return ""
    stall = defrag_stall(snap.etcd)
    return stall.sentence() if stall is not None else ""


def _talker(snap: ClusterSnapshot, results: Sequence[PathResult]) -> str:
    """The sentence naming the client that dominates the busiest priority level, when
    the ``apf.top_talker`` evidence says it dominates (empty otherwise).
    """
    dominant = any(
        e.id == "apf.top_talker" and e.status in (Status.WARN, Status.BAD)
        for p in results
        for e in p.evidence
    )
    top = busiest_talker(snap) if dominant else None
    return top.sentence() if top is not None else ""


def _audit_talker(audit: AuditDigest | None, results: Sequence[PathResult]) -> str:
    """The client the audit logs name, when their evidence says it dominates."""
    dominant = any(
        e.id == "audit.top_client" and e.status in (Status.WARN, Status.BAD)
        for p in results
        for e in p.evidence
    )
    named = named_client(audit) if dominant and audit is not None else None
    return f"{named.sentence()} (audit logs)" if named is not None else ""
