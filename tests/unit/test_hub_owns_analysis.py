"""The hub publishes the snapshot, its findings and its triage report: views and the
fleet run no analysis of their own, and a sink that stopped is removed."""

from __future__ import annotations

from collections.abc import Sequence

from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.hub import Hub, HubPolicy
from ktop.model.events import Event
from ktop.sources.sim.simulator import Simulator


def played(history: HistoryKind, seconds: int = 200) -> Hub:
    sim = Simulator("etcd-slow-disk", nodes=120, seed=3)
    hub = Hub(policy=HubPolicy(history=history))
    hub.ingest(sim.start())
    for _ in range(seconds):
        hub.ingest(sim.advance(1.0))
        hub.publish()  # one history frame a second, as the app takes them
    return hub


def test_the_published_report_is_triage_of_that_snapshot_drawn_once() -> None:
    hub = played(HistoryKind.THIS_RUN)
    published = hub.publish(force=True)
    assert published is not None
    expected = triage(published.snapshot, baseline_source(published.snapshot, HistoryKind.THIS_RUN))
    report = published.triage
    assert [(p.id, p.verdict, p.role) for p in report.paths] == [
        (p.id, p.verdict, p.role) for p in expected.paths
    ]
    assert report.baseline == expected.baseline
    assert published.triage is report  # drawn once per snapshot


def test_a_replay_hub_names_the_recording_as_its_baseline() -> None:
    live, replay = played(HistoryKind.THIS_RUN), played(HistoryKind.RECORDING)
    assert HistoryKind.THIS_RUN.value in live.latest.triage.baseline
    assert HistoryKind.RECORDING.value in replay.latest.triage.baseline
    assert HistoryKind.THIS_RUN.value not in replay.latest.triage.baseline


def test_a_removed_sink_gets_no_more_batches() -> None:
    got: list[int] = []

    def sink(events: Sequence[Event]) -> None:
        got.append(len(events))

    sim = Simulator("steady", nodes=30)
    hub = Hub()
    hub.add_sink(sink)
    hub.ingest(sim.start())
    assert len(got) == 1
    hub.remove_sink(sink)
    hub.ingest(sim.advance(5.0))
    assert len(got) == 1
    hub.remove_sink(sink)  # removing twice is harmless
