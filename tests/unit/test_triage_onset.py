"""Onset and its hysteresis: a cause in progress keeps its onset, and does not flip to
"No incident" while its evidence dips under its limit for less than CLEAR_HOLD_S.

Regression: in apiserver-skew the headline turned to "No incident" at 02:35-02:50, between
two instances' restarts, and the onset then jumped from 00:01:35 to 00:02:55.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ktop.analysis.trends import CLEAR_HOLD_S, trend
from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.cli import main
from ktop.compose import open_recording
from ktop.hub import Hub, HubPolicy
from ktop.model.text import fmt_clock
from ktop.scrub import Secrets
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


SEEK_AT = 240.0
"""Well after the zone outage began (its nodes go NotReady from 75 s)."""


def test_the_onset_is_the_same_after_a_seek_in_snapshot_at_and_in_triage_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a replay's seek to 00:04:00 and ``snapshot --demo --at 240`` said the
    outage began "before the history starts (00:04:00)" (no history frame was taken on the
    way), while ``triage --recording`` on the same file said 00:01:20.
    """
    monkeypatch.setenv("KTOP_CONFIG_DIR", str(tmp_path))
    size = ["--nodes", "600", "--zones", "3"]
    rec = str(tmp_path / "zone-outage.ktrec")
    assert main(["record", "-o", rec, "--demo", "zone-outage", *size, "--duration", "300"]) == 0
    capsys.readouterr()
    main(["triage", "--recording", rec, "--at", f"{SEEK_AT:g}", "--output", "json"])
    cause = json.loads(capsys.readouterr().out)["cause"]
    assert cause["id"] == "P4" and not cause["onset_before_history"]
    with open_recording(rec, Secrets()) as opened:
        start = opened.start
        hub = Hub(
            opened.cursor(start + SEEK_AT, frames=True).model,
            HubPolicy(Secrets(), HistoryKind.RECORDING),
        )
    published = hub.publish(force=True)
    assert published is not None
    sought = published.triage.cause
    assert sought is not None and sought.trend is not None
    assert (sought.id, sought.onset) == ("P4", cause["onset"])
    assert not sought.trend.since_before_history
    assert main(["snapshot", "--demo", "zone-outage", "--at", f"{SEEK_AT:g}", *size]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Probable cause: P4 ")
    assert f"since {fmt_clock(cause['onset'])} " in first
    assert "before the history" not in first
