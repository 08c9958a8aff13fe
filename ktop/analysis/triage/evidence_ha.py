"""Evidence readers of the HA readiness path: what of fail-over can be seen from outside.

Observable: how many apiservers run, whether etcd keeps quorum with a spare
member, and whether the scheduler and the controller-manager each have a
leader (``leader_election_master_status``). Not observable: whether a
standby's informers have synced; that evidence stays unknown and says so.
"""

from __future__ import annotations

from ktop.analysis.findings import Severity
from ktop.analysis.triage.evidence import Context, EvidenceReading, Reader, graded, unknown
from ktop.analysis.triage.evidence_etcd import lost_members, quorum_state
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.analysis.triage.restarts import recent_restart
from ktop.model.events import LOAD_BALANCED, Component
from ktop.model.leaders import LeaderStatus
from ktop.model.values import Val


def ha_apiservers(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``ha.apiservers``: identity Leases when read, else the instances scraped."""
    a = ctx.snap.apiservers
    # Identity Leases exist from Kubernetes 1.26 (APIServerIdentity); none at all means
    # an older cluster or the feature off, not zero apiservers.
    if a.identities:
        return graded(spec, Val.of(a.identities), f"{a.identities} apiserver identity Leases")
    why_not = "identity Leases not read" if a.identities is None else "no identity Lease"
    real = [r for r in a.instances if r.instance != LOAD_BALANCED]
    if not real:
        why = a.unknown_reason or "only the load-balanced address is read"
        return unknown(f"instance count unknown: {why}; {why_not}")
    up = [r for r in real if not r.error]
    detail = f"{len(up)} of {len(real)} instances scraped answer ({why_not})"
    return graded(spec, Val.of(len(up)), detail)


def ha_etcd(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``ha.etcd_quorum``: members answering with a leader - quorum.

    A member that fails while another answers is lost, not unknown
    (:meth:`~ktop.model.snapshot_etcd.EtcdSnapshot.quorum`). A member ktop cannot read by
    the way it reads is neither up nor down: the margin is then a range, graded only when
    both ends grade alike. No member read is unknown.
    """
    q = ctx.snap.etcd.quorum()
    if isinstance(q, str):
        return unknown(q)
    lost = f"; lost: {lost_members(ctx, q)}" if q.lost else ""
    single = " (a single member: no fault tolerance)" if q.members == 1 else ""
    detail = quorum_state(q) + lost + single
    assert spec.threshold is not None, spec.id
    low, high = q.margin, q.margin_if_unread_up
    if spec.threshold.grade(low) is not spec.threshold.grade(high):
        return unknown(
            f"{detail}: {max(low, 0)} to {max(high, 0)} more may fail, as the members not "
            "read are down or up"
        )
    return graded(spec, Val.of(low), detail)


def _status(ctx: Context, component: Component) -> LeaderStatus:
    """The component's leader status; one that says why nothing is known when absent."""
    found = next((s for s in ctx.snap.leaders if s.component is component), None)
    return found or LeaderStatus(component, (), f"no {component.value} metrics read")


def leader_reading(spec: EvidenceSpec, status: LeaderStatus) -> EvidenceReading:
    """Grade a leader status: one leader ok; none critical, unless the only instance
    read is a standby (the leader is then elsewhere, not read: a warning).
    """
    if status.reason:
        return unknown(status.reason)
    known = status.known
    if not known:
        return unknown("; ".join(dict.fromkeys(v.reason for _, v in status.instances)))
    leaders = status.leaders
    name = status.component.value
    if leaders:
        detail = f"{', '.join(leaders)} leads ({len(known)} {name} instance(s) read)"
        return graded(spec, Val.of(len(leaders)), detail)
    if len(known) == 1:
        return EvidenceReading(
            Severity.WARNING,
            0.0,
            f"{known[0][0]} is a standby and no other {name} instance is read",
        )
    return graded(spec, Val.of(0), f"none of {len(known)} {name} instances leads")


def _restart(ctx: Context, component: Component) -> EvidenceReading:
    status = _status(ctx, component)
    if status.reason:
        return unknown(status.reason)
    return recent_restart(ctx, list(status.starts), f"{component.value} instances")


def ha_scheduler_restart(ctx: Context, _: EvidenceSpec) -> EvidenceReading:
    """Evidence ``ha.scheduler_restart``."""
    return _restart(ctx, Component.SCHEDULER)


def ha_controller_manager_restart(ctx: Context, _: EvidenceSpec) -> EvidenceReading:
    """Evidence ``ha.controller_manager_restart``."""
    return _restart(ctx, Component.CONTROLLER_MANAGER)


def ha_scheduler(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``ha.scheduler_leader``."""
    return leader_reading(spec, _status(ctx, Component.SCHEDULER))


def ha_controller_manager(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``ha.controller_manager_leader``."""
    return leader_reading(spec, _status(ctx, Component.CONTROLLER_MANAGER))


HA_READERS: dict[str, Reader] = {
    "ha.apiservers": ha_apiservers,
    "ha.etcd_quorum": ha_etcd,
    "ha.scheduler_leader": ha_scheduler,
    "ha.controller_manager_leader": ha_controller_manager,
    "ha.scheduler_restart": ha_scheduler_restart,
    "ha.controller_manager_restart": ha_controller_manager_restart,
}
"""Evidence ID -> reader, for the HA path (``ha.standby_sync`` is in the main table)."""
