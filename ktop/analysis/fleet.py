"""The fleet view's analysis: one summary per cell, worst first, and causes cells share.

Pure functions of each cell's snapshot, findings and triage report. A cell
whose input is unknown says so with the reason: unknown is never healthy.
The fleet catalogue (``KT-FLEET-*``) is in :mod:`ktop.analysis.catalogue`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ktop.analysis.catalogue import (
    FLEET_MIN_CELLS,
    FLEET_ONSET_SPREAD,
    limit,
)
from ktop.analysis.findings import Finding, Severity
from ktop.analysis.triage.paths import BY_ID
from ktop.analysis.triage.types import Status, TriageReport, Verdict
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.text import as_shown, fmt_rate, fmt_si
from ktop.model.values import Val, max_val

ZONE_STATE_RANK: Mapping[ZoneState | None, int] = {
    ZoneState.FULL_DISRUPTION: 0,
    ZoneState.PARTIAL_DISRUPTION: 1,
    None: 2,
    ZoneState.INITIAL: 3,
    ZoneState.NORMAL: 4,
}
"""Zone states worst first; a zone whose state is not known ranks above Initial and Normal."""

RESTART_CODE = "KT-API-003"
"""The finding that marks an apiserver restart (a rollout hint for correlation)."""
UNREACHABLE_CODE = "KT-FLEET-010"
NEVER_READ = Val.unknown("never read")


@dataclass(frozen=True, slots=True)
class CellSummary:
    """One cell's row in the fleet view. Every value is known or says why not."""

    name: str
    severity: Severity
    """The cell's grade (:func:`grade`): its triage's, critical and unknown findings."""
    reason: str = ""
    """Why the cell is unknown (could not connect, source failed); empty when read."""
    at: float | None = None
    """The cell's snapshot time (its own clock), None when never read."""
    data_age_s: Val = NEVER_READ
    """The age of the oldest data on the row: the stalest input plus the snapshot's age."""
    nodes_total: Val = NEVER_READ
    not_ready: Val = NEVER_READ
    """Nodes whose Ready condition is not True (False or Unknown)."""
    zones: tuple[tuple[str, ZoneState | None], ...] = ()
    """Every zone and its state (None: not known), worst first."""
    zones_reason: str = "never read"
    """Why there are no zone states (empty when there are)."""
    apf_level: str = ""
    """The worst priority level (most rejections, then longest wait)."""
    apf_rejected_per_s: Val = NEVER_READ
    api_skew: Val = NEVER_READ
    """The worse of the request and the watch skew (the busiest apiserver against the
    mean of the others, ``ktop/model/area_apiservers.py``)."""
    etcd_leader: Status = Status.UNKNOWN
    etcd_leader_detail: str = "never read"
    etcd_fsync_p99_s: Val = NEVER_READ
    """The slowest member's WAL fsync p99."""
    pending: Val = NEVER_READ
    pending_top_reason: str = ""
    verdict: Verdict = Verdict.UNKNOWN
    """The most severe triage verdict."""
    path: str = ""
    """The path with that verdict (empty when every path is clear)."""
    path_title: str = ""
    suspects: tuple[str, ...] = ()
    """Every suspect triage path, most severe first."""
    causes: tuple[str, ...] = ()
    """The probable cause and the independent suspects (paths no other suspect explains)
    whose evidence is bad, not merely warn: only these correlate across cells. A
    consequence (slow API calls under a slow disk or under a relist storm) is not a cause."""
    regions: tuple[str, ...] = ()
    """The regions the cell's nodes are in (for correlation)."""
    codes: tuple[str, ...] = ()
    """The finding codes raised in the cell (``KT-FLEET-010`` when unread)."""

    @property
    def worst_zone(self) -> ZoneState | None:
        """The worst zone state (None when no zone is known)."""
        if not self.zones:
            return None
        return min((s for _, s in self.zones), key=ZONE_STATE_RANK.__getitem__)

    @property
    def read(self) -> bool:
        """True when the cell has been read and its source has not failed."""
        return not self.reason and self.at is not None


def unreachable(name: str, reason: str) -> CellSummary:
    """A cell that could not be read: every value unknown with ``reason``."""
    u = Val.unknown(reason)
    return CellSummary(
        name,
        Severity.UNKNOWN,
        reason=reason,
        data_age_s=u,
        nodes_total=u,
        not_ready=u,
        zones_reason=reason,
        apf_rejected_per_s=u,
        api_skew=u,
        etcd_leader_detail=reason,
        etcd_fsync_p99_s=u,
        pending=u,
        codes=(UNREACHABLE_CODE,),
    )


def control_plane_gone(snap: ClusterSnapshot) -> str:
    """Why the cell cannot be read when every apiserver it has seen fails to answer (its
    scrape fails, or Prometheus reports the target down); empty otherwise. Its last data
    may still be on the row: it is not current.
    """
    rows = snap.apiservers.instances
    down = [r for r in rows if r.error]
    if not rows or len(down) < len(rows):
        return ""
    return f"no apiserver answers ({len(down)} of {len(rows)} down): {down[0].error}"


def _data_age(snap: ClusterSnapshot, now: float) -> Val:
    ages = [a for f in snap.freshness if (a := f.age_s(snap.at)) is not None]
    if not ages:
        return Val.unknown("no input has delivered data yet")
    return Val.of(max(ages) + max(0.0, now - snap.at))


def _nodes(snap: ClusterSnapshot) -> tuple[Val, Val]:
    n = snap.nodes
    if n.nodes_known:
        return Val.of(n.total), Val.of(n.not_ready + n.unknown)
    if n.interim is not None:  # ktop's node list under way: the controller's gauges
        zh = n.interim.zones
        return Val.of(sum(z.size for z in zh)), Val.of(sum(z.unhealthy for z in zh))
    if n.zones:  # zone roll-ups from another view still count
        return Val.of(sum(z.total for z in n.zones)), Val.of(sum(z.unhealthy for z in n.zones))
    m = n.metrics_only
    if m is not None and m.zones:  # metrics-only: the node lifecycle controller's gauges
        return Val.of(sum(z.size for z in m.zones)), Val.of(sum(z.unhealthy for z in m.zones))
    reason = (m.zones_reason if m is not None else "") or n.nodes_reason or "nodes not listed"
    return Val.unknown(reason), Val.unknown(reason)


def _zones_reason(snap: ClusterSnapshot) -> str:
    m = snap.nodes.metrics_only
    return (m.zones_reason if m is not None else "") or snap.nodes.nodes_reason


def _zones(snap: ClusterSnapshot) -> tuple[tuple[str, str, ZoneState | None], ...]:
    """(region, zone, state) of every zone: from the nodes, else (metrics-only, or while
    ktop's node list is under way) from the node lifecycle controller's own gauges.
    """
    n = snap.nodes
    if n.interim is not None and not n.nodes_known:
        return tuple((z.region, z.zone, z.state) for z in n.interim.zones)
    if n.zones or n.metrics_only is None:
        return tuple((z.region, z.zone, z.state) for z in n.zones)
    return tuple((z.region, z.zone, z.state) for z in n.metrics_only.zones)


def _apf(snap: ClusterSnapshot) -> tuple[str, Val]:
    levels = snap.apf.levels
    if not levels:
        return "", Val.unknown(snap.apf.unknown_reason or "no APF data")
    worst = max(
        levels,
        key=lambda r: (r.rejected_total_per_s.or_(-1.0), r.wait_p99_s.or_(-1.0), r.priority_level),
    )
    return worst.priority_level, worst.rejected_total_per_s


def _etcd(snap: ClusterSnapshot) -> tuple[Status, str, Val]:
    e = snap.etcd
    members = [m for m in e.members if not m.error or m.last_ok is not None]
    if not members:
        reason = e.unknown_reason or "no etcd member read"
        return Status.UNKNOWN, reason, Val.unknown(reason)
    fsync = max_val([m.wal_fsync_p99_s for m in members])
    if any(m.has_leader.value == 0 for m in members):
        return Status.BAD, "no leader", fsync
    if not e.leader_known or not e.leader:
        return Status.UNKNOWN, e.unknown_reason or "no member reports being the leader", fsync
    changes = max_val([m.leader_changes for m in members])
    changes_limit = limit("KT-ETCD-002")
    if changes.value is not None and changes_limit.grade(changes.value) > Severity.OK:
        return Status.WARN, f"{changes.value:.0f} leader changes", fsync
    return Status.OK, f"leader {e.leader}", fsync


def _pending(snap: ClusterSnapshot) -> tuple[Val, str]:
    sc = snap.scheduler
    top = (sc.reasons[0].wording or sc.reasons[0].reason) if sc.reasons else ""
    if sc.pods_known:
        return Val.of(sum(sc.pending_by_wait.values())), top
    queues = [v for v in sc.queue.values() if v.value is not None]
    if queues:
        return Val.of(sum(v.value or 0.0 for v in queues)), top
    return Val.unknown(sc.pods_reason or sc.metrics_reason or "pending pods not read"), top


def grade(findings: Sequence[Finding], report: TriageReport, error: str = "") -> Severity:
    """A cell's grade: WARNING with a suspect triage path, UNKNOWN when it cannot be read
    (``error``), critical and unknown findings as they are, else OK. A warning or note
    no triage path makes suspect (one unschedulable pod, a quota at its limit) does not
    grade the cell: the triage judges what is background in a cell of its size, and the
    finding stays in :attr:`CellSummary.codes`.
    """
    counted = (Severity.CRITICAL, Severity.UNKNOWN)
    severity = max((f.severity for f in findings if f.severity in counted), default=Severity.OK)
    if report.suspects:
        severity = max(severity, Severity.WARNING)
    if error:
        severity = max(severity, Severity.UNKNOWN)
    return severity


def summarize(
    name: str,
    snap: ClusterSnapshot,
    findings: Sequence[Finding],
    report: TriageReport,
    *,
    now: float | None = None,
    error: str = "",
) -> CellSummary:
    """One cell's row from its snapshot, findings and triage report.

    ``now`` is the fleet's clock for the data age (default: the snapshot's own time);
    ``error`` marks a cell whose source failed after it was read (its last data stays,
    the cell is at least UNKNOWN); so does a control plane none of whose apiservers
    answers any more (:func:`control_plane_gone`), whose sources keep retrying.
    """
    error = error or control_plane_gone(snap)
    total, not_ready = _nodes(snap)
    every_zone = _zones(snap)
    zones = tuple(
        sorted(
            ((zone, state) for _, zone, state in every_zone),
            key=lambda zs: (ZONE_STATE_RANK[zs[1]], zs[0]),
        )
    )
    level, rejected = _apf(snap)
    leader, leader_detail, fsync = _etcd(snap)
    pending, top_reason = _pending(snap)
    worst = report.paths[0] if report.paths else None
    causes = (report.cause, *report.independent) if report.cause is not None else ()
    return CellSummary(
        name,
        grade(findings, report, error),
        reason=error,
        at=snap.at,
        data_age_s=_data_age(snap, snap.at if now is None else now),
        nodes_total=total,
        not_ready=not_ready,
        zones=zones,
        zones_reason="" if zones else (_zones_reason(snap) or "no zone known"),
        apf_level=level,
        apf_rejected_per_s=rejected,
        api_skew=max_val([snap.apiservers.request_skew, snap.apiservers.watch_skew]),
        etcd_leader=leader,
        etcd_leader_detail=leader_detail,
        etcd_fsync_p99_s=fsync,
        pending=pending,
        pending_top_reason=top_reason,
        verdict=worst.verdict if worst is not None else Verdict.UNKNOWN,
        path=worst.id if worst is not None and worst.verdict is not Verdict.CLEAR else "",
        path_title=worst.title if worst is not None else "",
        suspects=tuple(p.id for p in report.suspects),
        causes=tuple(p.id for p in causes if p.worst_status is Status.BAD),
        regions=tuple(sorted({region for region, _, _ in every_zone if region})),
        codes=tuple(dict.fromkeys(f.code for f in findings if f.severity > Severity.OK))
        + ((UNREACHABLE_CODE,) if error else ()),
    )


def rank_key(c: CellSummary) -> tuple[int, int, float, float, str]:
    """Worst first: severity (CRITICAL > WARNING > UNKNOWN > INFO > OK), then more suspect
    triage paths, then more NotReady nodes, then more APF rejections/s (both as the fleet
    table prints them: numbers that print the same tie), then the name.
    """
    return (
        -int(c.severity),
        -len(c.suspects),
        -(as_shown(c.not_ready, fmt_si) or 0.0),
        -(as_shown(c.apf_rejected_per_s, fmt_rate) or 0.0),
        c.name,
    )


def rank(cells: Sequence[CellSummary]) -> tuple[CellSummary, ...]:
    """The cells worst first (see :func:`rank_key`)."""
    return tuple(sorted(cells, key=rank_key))


# --------------------------------------------------------------------------
# cross-cell correlation

Onsets = Mapping[tuple[str, str], float]
"""``(cell, path)`` -> when the path turned suspect in the cell (the cell's clock)."""


def track_onsets(previous: Onsets, cells: Sequence[CellSummary]) -> dict[tuple[str, str], float]:
    """The onsets after one refresh: a path still suspect keeps its onset, a new one starts
    now (the cell's snapshot time), one no longer suspect (or in an unread cell) drops.
    """
    out: dict[tuple[str, str], float] = {}
    for c in cells:
        if c.at is None:
            continue
        for path in c.suspects:
            out[(c.name, path)] = previous.get((c.name, path), c.at)
    return out


@dataclass(frozen=True, slots=True)
class SharedCause:
    """The same triage path suspect in several cells within the same minutes.

    Paths suspect in exactly the same cells are one cause: ``paths`` lists them all.
    """

    code: str
    """``KT-FLEET-001`` region, ``-002`` rollout, ``-003`` a dependency outside the cells."""
    paths: tuple[str, ...]
    """The triage paths, most severe first (the order the first cell's triage gives)."""
    path_title: str
    """The first path's title."""
    cells: tuple[str, ...]
    first_onset: float
    last_onset: float
    dependency: str
    """The likely shared dependency, in words."""


def _largest_group(onsets: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """The most onsets within the allowed spread (earliest such group on a tie)."""
    best: list[tuple[float, str]] = []
    spread = FLEET_ONSET_SPREAD
    for i, (first, _) in enumerate(onsets):
        # the threshold fires (is passed) while the spread is at most its limit
        group = [o for o in onsets[i:] if spread.grade(o[0] - first) > Severity.OK]
        if len(group) > len(best):
            best = group
    return best


def _dependency(
    cells: Sequence[CellSummary], codes: Mapping[str, tuple[str, ...]]
) -> tuple[str, str]:
    if all(RESTART_CODE in codes.get(c.name, ()) for c in cells):
        return "KT-FLEET-002", "a rollout: an apiserver restarted recently in every one of them"
    shared = set.intersection(*(set(c.regions) for c in cells)) if cells else set()
    if shared:
        return "KT-FLEET-001", "region " + ", ".join(sorted(shared))
    return "KT-FLEET-003", "a dependency the cells share (no common region, no rollout)"


def correlate(cells: Sequence[CellSummary], onsets: Onsets) -> tuple[SharedCause, ...]:
    """The same probable cause (:attr:`CellSummary.causes`) in at least
    ``FLEET_MIN_CELLS`` cells whose onsets lie within ``FLEET_ONSET_SPREAD``: one shared
    cause each, most cells first.

    Only causes count: consequences two cells share (slow API calls under a slow etcd disk
    in one, under an APF saturation in the other) are two incidents, not one. Only bad
    evidence counts: a warning every cell carries is background.
    """
    by_name = {c.name: c for c in cells}
    by_path: dict[str, list[tuple[float, str]]] = {}
    for (cell, path), at in onsets.items():
        if cell in by_name and path in by_name[cell].causes:
            by_path.setdefault(path, []).append((at, cell))
    codes = {c.name: c.codes for c in cells}
    order: dict[str, int] = {}
    for c in cells:  # most severe first, as the cells' triage ranks its paths
        for i, p in enumerate(c.causes):
            order[p] = min(order.get(p, i), i)
    merged: dict[tuple[str, ...], SharedCause] = {}
    for path, found in sorted(by_path.items(), key=lambda pf: (order.get(pf[0], 0), pf[0])):
        group = _largest_group(sorted(found))
        if len(group) < FLEET_MIN_CELLS:
            continue
        members = [by_name[name] for _, name in group]
        code, dependency = _dependency(members, codes)
        names = tuple(sorted(name for _, name in group))
        same = merged.get(names)
        if same is not None:  # the same cells: one cause with one more path
            merged[names] = replace(
                same,
                paths=(*same.paths, path),
                first_onset=min(same.first_onset, group[0][0]),
                last_onset=max(same.last_onset, group[-1][0]),
            )
            continue
        merged[names] = SharedCause(
            code,
            (path,),
            BY_ID[path].title if path in BY_ID else path,
            names,
            group[0][0],
            group[-1][0],
            dependency,
        )
    return tuple(sorted(merged.values(), key=lambda s: (-len(s.cells), s.paths)))
