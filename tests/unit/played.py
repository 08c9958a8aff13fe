"""A simulator scenario played to the end of its story through a hub, as the app plays
it (one published snapshot, so one history frame, every ``step_s``)."""

from __future__ import annotations

from ktop.hub import Hub
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
