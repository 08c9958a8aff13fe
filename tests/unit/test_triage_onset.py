"""Onset and its hysteresis: a cause in progress keeps its onset, and does not flip to
"No incident" while its evidence dips under its limit for less than CLEAR_HOLD_S.

Regression: in apiserver-skew the headline turned to "No incident" at 02:35-02:50, between
two instances' restarts, and the onset then jumped from 00:01:35 to 00:02:55.
"""

from __future__ import annotations

import pytest

from ktop.analysis.trends import CLEAR_HOLD_S, trend
from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.hub import Hub
from ktop.sources.sim.scenarios import BY_NAME, SCENARIOS
from ktop.sources.sim.simulator import Simulator

STEP_S = 5.0


def _causes(
    scenario: str, nodes: int, zones: int, seed: int
) -> list[tuple[float, str | None, float | None]]:
    """(time, probable cause, its onset) at every published frame of the scenario."""
    sim = Simulator(scenario, nodes=nodes, zones=zones, seed=seed)
    hub = Hub()
    hub.ingest(sim.start())
    out = []
    t = 0.0
    while t < SCENARIOS[scenario].duration_s:
        hub.ingest(sim.advance(STEP_S))
        hub.publish()
        t += STEP_S
        snap = hub.latest.snapshot
        cause = triage(snap, baseline_source(snap, HistoryKind.RECORDING)).cause
        out.append((t, None if cause is None else cause.id, None if cause is None else cause.onset))
    return out


@pytest.mark.parametrize(("nodes", "zones", "seed"), [(2000, 8, 1), (240, 3, 2)])
def test_a_rolling_restart_stays_the_cause_with_one_onset(
    nodes: int, zones: int, seed: int
) -> None:
    want = BY_NAME["apiserver-skew"].cause
    seen = _causes("apiserver-skew", nodes, zones, seed)
    first = next(i for i, (_, c, _) in enumerate(seen) if c == want)
    after = seen[first:]
    assert [(t, c) for t, c, _ in after if c != want] == []
    assert {onset for _, _, onset in after} == {seen[first][2]}


def test_a_dip_shorter_than_the_hold_keeps_the_onset_and_holds_the_breach() -> None:
    bad, ok = 3.0, 1.0
    dip = int(CLEAR_HOLD_S // STEP_S) - 2  # frames clear: shorter than the hold
    values = [ok] * 6 + [bad] * 6 + [ok] * dip
    points = [(i * STEP_S, v) for i, v in enumerate(values)]
    t = trend(points, threshold=2.0)
    assert t.since == 6 * STEP_S and t.held and t.clear_since == 12 * STEP_S
    again = trend([*points, (len(values) * STEP_S, bad)], threshold=2.0)
    assert again.since == 6 * STEP_S and not again.held


def test_a_breach_clear_for_the_hold_is_over() -> None:
    frames = int(CLEAR_HOLD_S // STEP_S)
    points = [(i * STEP_S, v) for i, v in enumerate([1.0] * 3 + [3.0] * 3 + [1.0] * frames)]
    t = trend(points, threshold=2.0)
    assert t.since is None and not t.held
    restarted = [*points, (len(points) * STEP_S, 3.0)]
    assert trend(restarted, threshold=2.0).since == (len(points)) * STEP_S
