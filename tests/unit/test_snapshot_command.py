"""``ktop snapshot``: the overview once as plain text; names what did not deliver."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from ktop.analysis.rules import evaluate
from ktop.cli import main
from ktop.commands.snapshot import collect, missing_inputs, render
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.model.events import FEED_NODES, Area, Event, FeedFailed, SourceStarted
from ktop.sources.base import Emit
from ktop.sources.sim.simulator import Simulator
from ktop.ui.display import Display
from tests.unit.played import critical_without_cause

AT = 1_767_225_600.0


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KTOP_CONFIG_DIR", str(tmp_path))


def truth(scenario: str, at: float, nodes: int) -> Hub:
    """The same scenario folded here, independently of the command."""
    sim = Simulator(scenario, nodes=nodes, seed=1)
    hub = Hub()
    hub.ingest(sim.start())
    hub.ingest(sim.advance(at))
    return hub


def test_demo_snapshot_prints_every_area_and_finding(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--demo", "zone-outage", "--at", "240", "--nodes", "600"]) == 0
    out = capsys.readouterr().out
    published = truth("zone-outage", 240, 600).latest
    findings = [f for f in evaluate(published.snapshot) if f.severity.name != "OK"]
    assert findings
    for f in findings:
        assert f.code in out
    for zone in published.snapshot.nodes.zones:
        assert zone.zone in out
    for title in ("APF", "apiservers", "etcd", "scheduler", "nodes"):
        assert f"\n{title} " in out
    assert "every source delivered" in out
    assert "\x1b" not in out


@pytest.mark.parametrize("scenario", ["zone-outage", "steady"])
def test_the_snapshot_starts_with_the_probable_cause(
    scenario: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from ktop.sources.sim.scenarios import BY_NAME

    assert main(["snapshot", "--demo", scenario, "--at", "240", "--nodes", "600"]) == 0
    first, second = capsys.readouterr().out.splitlines()[:2]
    cause = BY_NAME[scenario].cause  # the cause the scenario injects
    if cause is None:
        assert first.startswith("No incident")
    else:
        assert first.startswith(f"Probable cause: {cause} ") and "first direction: " in first
    assert not second.startswith(("Probable", "No incident"))  # the status line follows


def test_a_critical_finding_is_never_printed_beside_no_incident(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A critical Lease lag that no triage path explains: "No probable cause yet"."""
    args = argparse.Namespace(width=120)
    out = render(critical_without_cause(), args, Display(), [])
    critical = [line for line in out.splitlines() if line.startswith("✖ KT-")]
    assert critical  # the findings printed below
    first = out.splitlines()[0]
    assert first.startswith(f"No probable cause yet: {len(critical)} critical finding")
    assert "No incident" not in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--ascii", "snapshot", "--demo", "zone-outage", "--at", "240", "--nodes", "300"],
        ["snapshot", "--demo", "zone-outage", "--at", "240", "--nodes", "300", "--ascii"],
    ],
)
def test_ascii_snapshot(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.isascii()
    assert "X KT-NODE-001" in out


def test_unknown_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--demo", "meteor"]) == 2
    assert "unknown scenario 'meteor'" in capsys.readouterr().err


class Partial:
    """Describes itself and reports the node feed failing; nothing else ever arrives."""

    name = "partial"

    async def run(self, emit: Emit) -> None:
        events: list[Event] = [
            SourceStarted(AT, "live", "cell-a"),
            FeedFailed(AT, FEED_NODES, "403"),
        ]
        emit(events)
        await asyncio.Event().wait()


class Broken:
    name = "broken"

    async def run(self, emit: Emit) -> None:
        raise RuntimeError("boom")


async def test_collect_times_out_and_names_what_did_not_deliver() -> None:
    hub = Hub(ClusterModel())
    published, errors = await collect(hub, [Partial(), Broken()], timeout_s=0.6)
    assert errors == ["source broken failed: RuntimeError: boom"]
    missing = missing_inputs(published.snapshot)
    named = {m.split(":")[0] for m in missing}
    assert named == {a.value for a in Area}
    assert any("403" in m for m in missing if m.startswith("nodes"))


def test_a_time_past_the_bound_is_refused_with_the_range(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ktop import bounds

    beyond = bounds.SNAPSHOT_AT.high + 1
    with pytest.raises(SystemExit) as exc:
        main(["snapshot", "--demo", "zone-outage", "--at", f"{beyond:g}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert bounds.SNAPSHOT_AT.text() in err and "Traceback" not in err


def test_far_into_a_scenario_is_the_same_model_as_one_batch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command folds a second at a time; the truth folds one batch of the same events."""
    at = 900.5
    assert main(["snapshot", "--demo", "zone-outage", "--at", f"{at}", "--nodes", "120"]) == 0
    out = capsys.readouterr().out
    snapshot = truth("zone-outage", at, 120).publish(force=True)
    assert snapshot is not None
    for zone in snapshot.snapshot.nodes.zones:
        assert f"{zone.zone}" in out
    for f in evaluate(snapshot.snapshot):
        if f.severity.name != "OK":
            assert f.code in out


def test_a_first_list_under_way_is_not_settled_and_is_named() -> None:
    """The nodes delivered in part (their list's first batches folded, the list not yet
    complete): the snapshot waits for the rest, and names it if the wait ends first.
    """
    from ktop.commands.snapshot import settled
    from ktop.model.events import FeedSynced, NodeUpserted

    sim = Simulator("steady", nodes=60, seed=1)
    events = [*sim.start(), *sim.advance(30)]
    nodes_synced = [e for e in events if isinstance(e, FeedSynced) and e.feed == FEED_NODES]
    assert nodes_synced
    upserts = [i for i, e in enumerate(events) if isinstance(e, NodeUpserted)]
    half = upserts[len(upserts) // 2]
    partial = [e for i, e in enumerate(events) if e not in nodes_synced and (
        not isinstance(e, NodeUpserted) or i < half)]  # fmt: skip
    hub = Hub()
    hub.ingest(partial)
    published = hub.publish(force=True)
    assert published is not None
    assert not settled(published.snapshot)
    assert "nodes: nodes: its first list did not complete" in missing_inputs(published.snapshot)
    hub = Hub()
    hub.ingest(events)
    whole = hub.publish(force=True)
    assert whole is not None
    assert settled(whole.snapshot), missing_inputs(whole.snapshot)
