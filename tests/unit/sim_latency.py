"""How soon triage names each simulator scenario's injected cause: seconds from the first
visible symptom (the first frame after the injection with a finding past its warning that
the frames before the injection did not have, or a reading far above its own normal) to
the first frame whose probable cause is the path the scenario declares
(``Scenario.cause``), the simulator played through a hub one frame every ``step_s`` as
the app plays it. Measured by ``tests/unit/test_triage_latency_sim.py``, which writes the
figures of docs/triage.md when asked.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.analysis.baseline_marks import baseline_marks
from ktop.analysis.findings import Severity
from ktop.analysis.rules import evaluate
from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.hub import Hub
from ktop.sources.sim.scenarios import BY_NAME, SCENARIOS
from ktop.sources.sim.simulator import Simulator

STEP_S = 5.0


@dataclass(frozen=True, slots=True)
class Latency:
    """One scenario at one size and seed: when its symptom showed and its cause was named
    (seconds after the simulator's start; None: never within the scenario)."""

    scenario: str
    nodes: int
    zones: int
    seed: int
    injected: float
    symptom: float | None
    named: float | None

    @property
    def delay(self) -> float | None:
        """Seconds from the first symptom to the cause named (None: one of them never)."""
        if self.symptom is None or self.named is None:
            return None
        return max(0.0, self.named - self.symptom)


def _warnings(hub: Hub) -> set[str]:
    """The codes of the latest frame's findings past their warning."""
    return {f.code for f in evaluate(hub.latest.snapshot) if f.severity >= Severity.WARNING}


def _symptom(hub: Hub, before: set[str]) -> bool:
    """A finding past its warning the frames before the injection did not have, or a
    reading far above its own normal."""
    return bool(_warnings(hub) - before) or bool(baseline_marks(hub.latest.snapshot))


def measure(scenario: str, nodes: int, zones: int, seed: int, step_s: float = STEP_S) -> Latency:
    """Play ``scenario`` and time its first symptom and its cause named."""
    spec = SCENARIOS[scenario]
    injected = spec.phases[1].starts_at_s
    want = BY_NAME[scenario].cause
    sim = Simulator(scenario, nodes=nodes, zones=zones, seed=seed)
    hub = Hub()
    hub.ingest(sim.start())
    t, symptom, named = 0.0, None, None
    before: set[str] = set()
    while t < spec.duration_s and named is None:
        hub.ingest(sim.advance(step_s))
        hub.publish()
        t += step_s
        if t < injected:
            before |= _warnings(hub)
            continue
        if symptom is None and _symptom(hub, before):
            symptom = t
        snap = hub.latest.snapshot
        cause = triage(snap, baseline_source(snap, HistoryKind.RECORDING)).cause
        if cause is not None and cause.id == want:
            named = t
            symptom = t if symptom is None else symptom
    return Latency(scenario, nodes, zones, seed, injected, symptom, named)
