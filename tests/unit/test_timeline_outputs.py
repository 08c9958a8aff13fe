"""The incident timeline in ``ktop triage`` (JSON, text, Markdown) from a recording with
a marker, and on a bundle (one capture: only what one frame shows, before the history)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ktop.cli import main
from ktop.hub import Hub
from ktop.model.snapshot_nodes import ZoneState
from ktop.record.frames import RECORDING_STEP_S
from ktop.record.session import Recorder
from ktop.sources.sim.scenarios import SCENARIOS
from ktop.sources.sim.simulator import Simulator
from tests.unit.test_bundle_triage import healthy_control_plane, nodes_bundle

NOTE = "paged: zone down?"


def recorded(tmp_path: Path) -> tuple[str, float, list[tuple[float, str, ZoneState | None]]]:
    """A zone-outage recording with one marker; the marker's time; every zone state the
    live model showed (time, zone, state), the truth the timeline is checked against."""
    sim = Simulator("zone-outage", nodes=300, zones=3, seed=5)
    hub = Hub()
    path = str(tmp_path / "z.ktrec")
    hub.ingest(sim.start())
    rec = Recorder(path, hub.model, source={"kind": "demo", "context": "", "detail": ""})
    hub.add_sink(rec)
    states: list[tuple[float, str, ZoneState | None]] = []
    t, marked_at = 0.0, 0.0
    while t < SCENARIOS["zone-outage"].duration_s:
        hub.ingest(sim.advance(1.0))
        snap = hub.model.snapshot()
        states += [(snap.at, z.zone, z.state) for z in snap.nodes.zones]
        t += 1.0
        if t == 100.0:
            marker = rec.mark(NOTE)
            assert marker is not None
            marked_at = marker.at
    rec.stop("done")
    return path, marked_at, states


def _triage(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["triage", *argv])
    return code, capsys.readouterr().out


def test_a_recording_s_timeline_has_its_marker_and_the_zone_s_fall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, marked_at, states = recorded(tmp_path)
    _, out = _triage(capsys, "--recording", path, "--output", "json")
    doc: dict[str, Any] = json.loads(out)
    assert doc["minor_version"] >= 3
    timeline = doc["timeline"]
    assert [e["at"] for e in timeline] == sorted(e["at"] for e in timeline)
    marks = [e for e in timeline if e["kind"] == "marker"]
    assert [(m["at"], m["text"]) for m in marks] == [(marked_at, f"marker: {NOTE}")]
    # the zone's first FullDisruption, as the live model saw it (one frame per second)
    down = [(at, z) for at, z, s in states if s is ZoneState.FULL_DISRUPTION]
    first_at, zone = down[0]
    falls = [e for e in timeline if e["kind"] == "zone" and e["text"].endswith("FullDisruption")]
    assert [(e["subjects"], e["severity"]) for e in falls] == [([zone], "critical")]
    # triage walks a recording one history frame per RECORDING_STEP_S
    assert first_at <= falls[0]["at"] <= first_at + RECORDING_STEP_S
    cause = [e for e in timeline if e["kind"] == "diagnosis"]
    assert cause and cause[0]["text"].startswith(f"{doc['cause']['id']} begins (probable cause)")

    _, text = _triage(capsys, "--recording", path)
    section = text.split("timeline (oldest first):\n", 1)[1]
    assert f"M i marker: {NOTE}" in section
    assert f"{zone}: zone PartialDisruption → FullDisruption" in section
    _, md = _triage(capsys, "--recording", path, "--output", "markdown")
    assert "## Timeline" in md and f"marker: {NOTE}" in md


def test_a_bundle_s_timeline_is_what_one_capture_shows_before_its_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    healthy_control_plane(tmp_path)
    nodes_bundle(tmp_path, {"zone-a": (0, 10), "zone-b": (10, 0)})
    _, out = _triage(capsys, "--bundle", str(tmp_path), "--output", "json")
    timeline = json.loads(out)["timeline"]
    zones = [e for e in timeline if e["kind"] == "zone"]
    assert [(e["subjects"], e["text"], e["before_history"]) for e in zones] == [
        (["zone-a"], "zone FullDisruption (before the history)", True)
    ]
    assert all(e["before_history"] for e in timeline if e["kind"] != "diagnosis")
