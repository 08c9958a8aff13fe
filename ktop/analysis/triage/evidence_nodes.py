"""Evidence readers of nodes and failure domains (see :mod:`ktop.analysis.triage.evidence`)."""

from __future__ import annotations

from dataclasses import replace

from ktop.analysis import catalogue as c
from ktop.analysis.findings import Severity
from ktop.analysis.trends import first_reading, recent_normal
from ktop.analysis.triage.evidence import (
    Context,
    EvidenceReading,
    Reader,
    api_rows,
    feed_reason,
    graded,
    unknown,
)
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.model.events import FEED_LEASES
from ktop.model.reading import key as signal_key
from ktop.model.snapshot_nodes import DomainRollup, NodesSnapshot, ZoneHealth, ZoneState
from ktop.model.text import fmt_clock
from ktop.model.zones import zone_state

DISRUPTED = (ZoneState.PARTIAL_DISRUPTION, ZoneState.FULL_DISRUPTION)


def controller_zones(n: NodesSnapshot) -> tuple[tuple[ZoneHealth, ...], str] | None:
    """The node lifecycle controller's zones and where they come from, when ktop's own
    node list is not there: metrics-only mode (a span rebuilt from metrics too), or a
    node list still loading while they show a disruption; None otherwise.
    """
    if n.metrics_only is not None and n.metrics_only.zones and not n.metrics_only.zones_reason:
        return n.metrics_only.zones, "the node lifecycle controller's metrics"
    if n.interim is not None and any(z.state in DISRUPTED for z in n.interim.zones):
        # while ktop's list loads, the controller's count names a disruption, never "ok"
        return n.interim.zones, f"the {n.interim.source}'s metrics, ktop's node list loading"
    return None


def controller_conclusion(n: NodesSnapshot, plane: str) -> str:
    """P4's conclusion from the controller's zones (ktop's own node list not there): the
    worst disrupted zone's shared parts, or the control path while it is unhealthy; ""
    when those zones are not known or none is disrupted.
    """
    told = controller_zones(n)
    bad = [z for z in told[0] if z.state in DISRUPTED] if told is not None else []
    if told is None or not bad:
        return ""
    worst = max(bad, key=lambda z: z.unhealthy)
    said = f"{worst.unhealthy} of {worst.size} nodes NotReady in zone {worst.zone or '(none)'}"
    said += f" ({worst.state}, from {told[1]}), control plane {plane}"
    if plane == "unhealthy" and len(bad) > 1:
        return f"{said}: suspect the control path (apiservers, etcd, network to them) first"
    return f"{said}: suspect that zone's shared parts (network, power, top-of-rack)"


def _controller_disruption(zones: tuple[ZoneHealth, ...], where: str) -> EvidenceReading:
    bad = [z for z in zones if z.state in DISRUPTED]
    unhealthy, total = sum(z.unhealthy for z in zones), sum(z.size for z in zones)
    detail = f"{unhealthy} of {total} nodes not Ready, from {where}" + "".join(
        f"; {z.zone or '(no zone)'} {z.state}" for z in bad
    )
    sev = Severity.CRITICAL if bad else (Severity.WARNING if unhealthy else Severity.OK)
    return EvidenceReading(sev, float(len(bad)), detail)


def nodes_disruption(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``nodes.zone_disruption``."""
    n = ctx.snap.nodes
    if not n.nodes_known:
        told = controller_zones(n)
        if told is None:
            return unknown(n.nodes_reason or "nodes not listed")
        return _controller_disruption(*told)
    if n.total == 0:  # "0 of 0 nodes not Ready" would read as healthy
        return unknown("the node list holds no node")
    bad = [z for z in n.zones if z.state in DISRUPTED]
    unhealthy = n.not_ready + n.unknown
    onsets = {z.zone: disruption_onset(n, z) for z in bad}
    detail = f"{unhealthy} of {n.total} nodes not Ready" + (
        "; " + ", ".join(f"{z.zone or '(no zone)'} {z.state}{_since(onsets[z.zone])}" for z in bad)
        if bad
        else ""
    )
    sev = Severity.CRITICAL if bad else (Severity.WARNING if unhealthy else Severity.OK)
    known = [t for t in onsets.values() if t is not None]
    reading = EvidenceReading(sev, float(len(bad)), detail, onset=min(known, default=None))
    if not unhealthy:
        return reading
    # since when the worst zone has had nodes not Ready (as KT-NODE-001/002 measure it)
    worst = max(bad or n.zones, key=lambda z: z.unhealthy)
    return reading.on(signal_key("nodes.unhealthy", worst.zone), c.NODE_UNHEALTHY_ABOVE)


def _since(onset: float | None) -> str:
    return "" if onset is None else f" since {fmt_clock(onset)} UTC"


def disruption_onset(n: NodesSnapshot, zone: DomainRollup) -> float | None:
    """When ``zone`` entered disruption, as its NotReady nodes' Ready transitions date it
    (``lastTransitionTime``: the node lifecycle controller's clock), whether or not ktop
    watched it: the earliest transition by which enough of its nodes that are still not
    Ready were so that the controller's rule (:func:`~ktop.model.zones.zone_state`, on the
    zone's size now) says disruption. Certain: each of those nodes has not been Ready since
    its transition. None when the transitions are not known or never reach disruption.
    """
    times = sorted(
        r.ready_since
        for r in n.not_ready_nodes.records
        if r.region == zone.region and r.zone == zone.zone and r.ready_since is not None
    )
    for count, at in enumerate(times, start=1):
        if zone_state(max(0, zone.total - count), count) is not ZoneState.NORMAL:
            return at
    return None


def nodes_domain(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``nodes.domain_share``."""
    n = ctx.snap.nodes
    zones = [(z.zone, z.unhealthy) for z in n.zones]
    unhealthy = n.not_ready + n.unknown
    if not n.nodes_known:
        told = controller_zones(n)
        if told is None:
            return unknown(n.nodes_reason or "nodes not listed")
        zones = [(z.zone, z.unhealthy) for z in told[0]]
        unhealthy = sum(count for _, count in zones)
    if unhealthy == 0 or not zones:
        return EvidenceReading(Severity.OK, None, "no node is not Ready")
    zone, most = max(zones, key=lambda z: z[1])
    share = most / unhealthy
    detail = f"{most} of {unhealthy} not-Ready nodes in {zone or '(no zone)'}"
    assert spec.threshold is not None
    if not spec.threshold.grade(share):
        return EvidenceReading(Severity.OK, share, f"{detail}: spread over zones")
    # confined to one zone: a pointer at that zone's shared parts, never an ok mark (and
    # never a suspect alone); too few nodes or a single zone say nothing of a domain
    if len(zones) < 2:
        return EvidenceReading(Severity.INFO, share, f"{detail}: a note, the only zone known")
    if unhealthy < c.NODE_DOMAIN_MIN_UNHEALTHY:
        return EvidenceReading(
            Severity.INFO,
            share,
            f"{detail}: a note, too few to point at a zone "
            f"(fewer than {c.NODE_DOMAIN_MIN_UNHEALTHY} not Ready)",
        )
    return EvidenceReading(Severity.WARNING, share, f"{detail}: confined to one zone")


LAG_QUANTILE_SHARE = 0.01
"""The share of nodes a p99 over nodes lets past it: a Lease lag p99 past the lease
duration while this share of the nodes is already not Ready is theirs, not news."""


def nodes_lease(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``nodes.lease_lag_p99``: past the lease duration it is critical (suspect:
    the nodes about to turn NotReady) when that is new, its recent normal under the lease
    duration (or, with too short a history, its first reading; with no history: fewer
    than 1 % of the nodes not Ready); a chronic lag, the
    Leases of nodes long NotReady, is a warning.
    """
    n = ctx.snap.nodes
    if not n.nodes_known:
        return unknown(n.nodes_reason or "nodes not listed")
    lag = n.lease_lag_p99_s
    if lag.value is None and not lag.empty:
        return unknown(feed_reason(ctx.snap, FEED_LEASES, lag.reason))
    key = signal_key("nodes.lease_lag_p99_s")
    r = graded(spec, lag, f"p99 {lag.or_(0):.0f} s").on(key)
    if r.severity is not Severity.CRITICAL or spec.threshold is None:
        return r
    history = ctx.snap.history
    # a history too short for a normal still says what the lag read before it rose
    normal = recent_normal(history, key, ctx.snap.at)
    if normal is None:
        normal = first_reading(history, key, ctx.snap.at)
    unhealthy = n.not_ready + n.unknown
    if normal is not None:
        chronic = spec.threshold.grade(normal) is Severity.CRITICAL
        why = f"its recent normal {normal:.0f} s is past the lease duration too"
    else:  # one capture: the NotReady nodes' own Leases
        chronic = bool(n.total) and unhealthy / n.total >= LAG_QUANTILE_SHARE
        why = f"{unhealthy} nodes are not Ready"
    if chronic:  # not news: the expired Leases are those of nodes P4 reads as NotReady
        return replace(r, severity=Severity.WARNING, detail=f"{r.detail} ({why})")
    return r


def heartbeat_share(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``axis.heartbeat_share``."""
    hb = ctx.snap.nodes.heartbeat_writes_per_s
    writes = [r.writes_per_s for r in api_rows(ctx)]
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


NODE_READERS: dict[str, Reader] = {
    "nodes.zone_disruption": nodes_disruption,
    "nodes.domain_share": nodes_domain,
    "nodes.lease_lag_p99": nodes_lease,
    "axis.heartbeat_share": heartbeat_share,
}
"""Evidence ID -> reader, for nodes and failure domains."""
