"""Hubs fed by the real simulator, for UI tests of the demo scenarios."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from ktop.hub import Hub
from ktop.model.events import Event
from ktop.model.snapshot import ClusterSnapshot
from ktop.sources.sim.simulator import Simulator

NODES = 600
SEED = 7

SCENARIO_TIMES: dict[str, float] = {
    "steady": 100,
    "zone-outage": 240,
    "etcd-slow-disk": 200,
    "apf-saturation": 150,
    "apiserver-skew": 240,
    "scheduler-backlog": 150,
}
"""When each scenario shows its story (virtual seconds after the start)."""


@cache
def scenario_events(scenario: str, seconds: float) -> tuple[Sequence[Event], Sequence[Event]]:
    """The simulator's start events and ``seconds`` of events (cached: it is deterministic)."""
    sim = Simulator(scenario, nodes=NODES, seed=SEED)
    start = tuple(sim.start())
    return start, tuple(sim.advance(seconds))


def scenario_hub(scenario: str, seconds: float | None = None) -> Hub:
    """A fresh hub that has ingested a scenario up to ``seconds`` (its story time by default)."""
    start, later = scenario_events(
        scenario, SCENARIO_TIMES[scenario] if seconds is None else seconds
    )
    hub = Hub()
    hub.ingest(start)
    hub.ingest(later)
    return hub


Truth = list[tuple[float, float]]
"""``(snapshot time, value)`` read from each published snapshot."""


def stepped(
    scenario: str, seconds: int, read: Callable[[ClusterSnapshot], float | None]
) -> tuple[Hub, Truth, list[ClusterSnapshot]]:
    """A hub that published once per simulated second, and ``read`` of every snapshot."""
    sim = Simulator(scenario, nodes=NODES, seed=SEED)
    hub = Hub()
    hub.ingest(sim.start())
    truth: Truth = []
    snaps: list[ClusterSnapshot] = []
    for _ in range(seconds):
        hub.ingest(sim.advance(1.0))
        published = hub.publish()
        assert published is not None
        snaps.append(published.snapshot)
        v = read(published.snapshot)
        if v is not None:
            truth.append((published.snapshot.at, v))
    return hub, truth, snaps
