"""A simulator scenario played to the end of its story through a hub, as the app plays
it (one published snapshot, so one history frame, every ``step_s``)."""

from __future__ import annotations

from dataclasses import replace

from ktop.analysis.findings import Finding, Severity
from ktop.hub import Hub, Published
from ktop.model.events import Area
from ktop.sources.sim.scenarios import SCENARIOS
from ktop.sources.sim.simulator import Simulator

STEP_S = 5.0
"""One published snapshot (one history frame) every this many simulated seconds."""


def played(scenario: str, nodes: int, zones: int, seed: int, step_s: float = STEP_S) -> Hub:
    """The hub after ``scenario`` played to its end, publishing every ``step_s``."""
    sim = Simulator(scenario, nodes=nodes, zones=zones, seed=seed)
    hub = Hub()
    hub.ingest(sim.start())
    t = 0.0
    while t < SCENARIOS[scenario].duration_s:
        hub.ingest(sim.advance(step_s))
        hub.publish()
        t += step_s
    return hub


def critical_without_cause() -> Published:
    """A steady cluster's frame with one critical finding that no triage path explains.

    Every simulator scenario now names its cause in the frame its first critical
    finding appears (scanned at every 5 s of every scenario), so the case of the bug
    report (``✓ No incident`` beside a critical Lease lag) is built: the steady
    scenario's last frame, its own findings, and a critical Lease-lag finding.
    """
    hub = played("steady", nodes=600, zones=3, seed=7)
    steady = hub.latest
    assert steady.triage.cause is None and not steady.triage.critical
    lag = Finding(
        code="KT-NODE-004",
        severity=Severity.CRITICAL,
        area=Area.NODES,
        title="lease lag p99 54s (warn 20s, crit 40s)",
    )
    return replace(steady, findings=(*steady.findings, lag))
