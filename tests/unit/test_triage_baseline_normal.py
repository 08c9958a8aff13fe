"""Readings judged against the cluster's own recent normal: a path suspect before an
absolute limit is crossed, with the value, the multiple of its normal and the limit.

Regression: in etcd-slow-disk the leader's WAL fsync p99 rose from 2 ms to tens of ms,
ten times its own normal, long before the mixin's 500 ms; nothing used that, and the
probable cause was API-429, then P1 ("APF queues"), for 50-60 s before ETCD.
"""

from __future__ import annotations

import pytest

from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import TriageReport
from ktop.hub import Hub
from ktop.model.limits import BASELINE_SUSPECT, ETCD_COMMIT_P99, ETCD_FSYNC_P99
from ktop.sources.sim.scenarios import SCENARIOS
from ktop.sources.sim.simulator import Simulator

STEP_S = 5.0
SIZES = ((240, 3, 2), (600, 4, 5))


def _reports(scenario: str, nodes: int, zones: int, seed: int, until: float) -> list[TriageReport]:
    """The triage report of every frame up to ``until`` seconds into the scenario."""
    sim = Simulator(scenario, nodes=nodes, zones=zones, seed=seed)
    hub = Hub()
    hub.ingest(sim.start())
    out, t = [], 0.0
    while t < until:
        hub.ingest(sim.advance(STEP_S))
        hub.publish()
        t += STEP_S
        snap = hub.latest.snapshot
        out.append(triage(snap, baseline_source(snap, HistoryKind.RECORDING)))
    return out


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}n{s[1]}z-seed{s[2]}")
def test_a_slow_etcd_disk_is_the_first_cause_named_far_above_its_normal(
    size: tuple[int, int, int],
) -> None:
    reports = _reports("etcd-slow-disk", *size, until=100.0)
    named = [r.cause.id for r in reports if r.cause is not None]
    assert named and named[0] == "ETCD", named
    first = next(r for r in reports if r.cause is not None)
    assert first.cause is not None
    # the disk's own readings (WAL fsync, backend commit): one of them is suspect far
    # above its normal while under its absolute limit
    limits = {
        "etcd.wal_fsync_p99": ETCD_FSYNC_P99.warn,
        "etcd.backend_commit_p99": ETCD_COMMIT_P99.warn,
    }
    disk = [e for e in first.cause.evidence if e.id in limits and e.suspect]
    assert disk, first.cause.evidence
    e = disk[0]
    limit = limits[e.id]
    assert e.value is not None and limit is not None and e.value < limit  # under the limit
    assert "x its recent normal" in e.detail
    assert f"(limit {limit * 1000:.0f} ms)" in e.detail
    multiple = float(e.detail.split("x its recent normal")[0].rsplit(" ", 1)[1])
    assert multiple >= BASELINE_SUSPECT


def test_a_steady_cluster_is_no_incident_at_every_frame() -> None:
    reports = _reports("steady", 240, 3, 2, until=SCENARIOS["steady"].duration_s)
    assert [(i, r.cause.id) for i, r in enumerate(reports) if r.cause is not None] == []
