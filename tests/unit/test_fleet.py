"""The fleet analysis: per-cell summaries from the simulator's scenarios, ranking, and
cross-cell correlation.

Expected values are computed here from the events the simulator emitted (node and pod
records) or from the snapshot's raw rows, never through the function under test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache

import pytest

from ktop.analysis.catalogue import FLEET_BY_CODE, FLEET_ONSET_SPREAD
from ktop.analysis.findings import Finding, Severity
from ktop.analysis.fleet import (
    CellSummary,
    correlate,
    grade,
    rank,
    summarize,
    track_onsets,
    unreachable,
)
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Status, Verdict
from ktop.hub import Hub
from ktop.model.events import (
    Area,
    Event,
    NodeDeleted,
    NodeRecord,
    NodeUpserted,
    PendingPodDeleted,
    PendingPodUpserted,
    Readiness,
)
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.values import Val
from ktop.sources.sim.scenarios import SCENARIOS
from ktop.sources.sim.simulator import Simulator
from tests.functional.scenarios import NODES, SCENARIO_TIMES, SEED, scenario_events


def _summary(scenario: str) -> tuple[CellSummary, Hub, Sequence[Event]]:
    start, later = scenario_events(scenario, SCENARIO_TIMES[scenario])
    hub = Hub()
    hub.ingest(start)
    hub.ingest(later)
    p = hub.latest
    return summarize(scenario, p.snapshot, p.findings, triage(p.snapshot)), hub, (*start, *later)


def _nodes(events: Sequence[Event]) -> dict[str, NodeRecord]:
    nodes: dict[str, NodeRecord] = {}
    for e in events:
        if isinstance(e, NodeUpserted):
            nodes[e.node.name] = e.node
        elif isinstance(e, NodeDeleted):
            nodes.pop(e.name, None)
    return nodes


def _zone_states(nodes: dict[str, NodeRecord]) -> dict[str, ZoneState]:
    """The node lifecycle controller's rule (ComputeZoneState), written out again."""
    zones: dict[str, list[NodeRecord]] = {}
    for n in nodes.values():
        zones.setdefault(n.zone, []).append(n)
    out = {}
    for zone, members in zones.items():
        ready = sum(1 for n in members if n.ready is Readiness.TRUE)
        bad = len(members) - ready
        if ready == 0 and bad > 0:
            out[zone] = ZoneState.FULL_DISRUPTION
        elif bad > 2 and bad / len(members) >= 0.55:
            out[zone] = ZoneState.PARTIAL_DISRUPTION
        else:
            out[zone] = ZoneState.NORMAL
    return out


def _pending(events: Sequence[Event]) -> int:
    pods: set[tuple[str, str]] = set()
    for e in events:
        if isinstance(e, PendingPodUpserted):
            pods.add((e.pod.namespace, e.pod.name))
        elif isinstance(e, PendingPodDeleted):
            pods.discard((e.namespace, e.name))
    return len(pods)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_summary_equals_what_the_events_say(scenario: str) -> None:
    summary, hub, events = _summary(scenario)
    snap = hub.latest.snapshot
    nodes = _nodes(events)
    assert summary.nodes_total.value == len(nodes)
    assert summary.not_ready.value == sum(1 for n in nodes.values() if n.ready != Readiness.TRUE)
    assert dict(summary.zones) == _zone_states(nodes)
    assert summary.regions == tuple(sorted({n.region for n in nodes.values()}))
    assert summary.pending.value == _pending(events)
    # the worst APF level: the most rejections summed over the instances
    per_level: dict[str, float] = {}
    for row in snap.apf.per_instance:
        rejected = sum(v.value or 0.0 for v in row.rejected_per_s.values())
        per_level[row.priority_level] = per_level.get(row.priority_level, 0.0) + rejected
    most = max(per_level.values())
    assert summary.apf_rejected_per_s.value == pytest.approx(most)
    if most > 0:
        assert summary.apf_level == max(per_level, key=lambda k: per_level[k])
    fsyncs = [m.wal_fsync_p99_s.value for m in snap.etcd.members]
    assert summary.etcd_fsync_p99_s.value == max(f for f in fsyncs if f is not None)
    # the grade: critical and unknown findings as they are, a suspect path a warning
    counted = [f.severity for f in hub.latest.findings if f.severity >= Severity.UNKNOWN]
    counted = [s for s in counted if s is not Severity.WARNING]
    report = triage(snap)
    expected = max(
        [*counted, *([Severity.WARNING] if report.suspects else [])], default=Severity.OK
    )
    assert summary.severity == expected
    assert summary.suspects == tuple(p.id for p in report.suspects)
    assert summary.reason == ""
    assert summary.data_age_s.known


def test_story_of_each_scenario_shows_in_its_row() -> None:
    outage, _, _ = _summary("zone-outage")
    assert outage.worst_zone is ZoneState.FULL_DISRUPTION
    assert outage.severity is Severity.CRITICAL
    assert "P4" in outage.causes
    apf, _, _ = _summary("apf-saturation")
    assert apf.apf_level == "workload-low"
    assert (apf.apf_rejected_per_s.value or 0) > 0
    assert apf.severity is Severity.CRITICAL
    steady, _, _ = _summary("steady")
    assert steady.worst_zone is ZoneState.NORMAL
    assert steady.apf_rejected_per_s.value == 0
    assert steady.etcd_leader is Status.OK
    assert steady.causes == ()  # one unschedulable pod is a warning, never bad


def test_a_healthy_cell_ranks_ok_though_a_finding_warns() -> None:
    """One unschedulable pod in the steady cell is a warning finding (KT-SCHED-001), a
    note for its triage: the cell is ok, and the finding stays among its codes."""
    steady, hub, _ = _summary("steady")
    warnings = {f.code for f in hub.latest.findings if f.severity is Severity.WARNING}
    assert "KT-SCHED-001" in warnings and set(steady.codes) >= warnings
    assert steady.suspects == ()
    assert steady.severity is Severity.OK


def _finding(code: str, severity: Severity) -> Finding:
    return Finding(code, severity, Area.SCHEDULER, code)


@pytest.mark.parametrize(
    ("severities", "suspect", "error", "expected"),
    [
        ((Severity.WARNING, Severity.INFO), False, "", Severity.OK),
        ((Severity.WARNING,), True, "", Severity.WARNING),
        ((Severity.CRITICAL, Severity.WARNING), False, "", Severity.CRITICAL),
        ((Severity.UNKNOWN,), False, "", Severity.UNKNOWN),
        ((Severity.WARNING,), False, "source failed", Severity.UNKNOWN),
        ((), True, "source failed", Severity.WARNING),
    ],
)
def test_a_cell_is_graded_by_its_triage_and_its_critical_or_unknown_findings(
    severities: tuple[Severity, ...], suspect: bool, error: str, expected: Severity
) -> None:
    _, hub, _ = _summary("zone-outage" if suspect else "steady")
    report = triage(hub.latest.snapshot)
    assert bool(report.suspects) is suspect
    found = [_finding(f"KT-X-{i:03}", sev) for i, sev in enumerate(severities)]
    assert grade(found, report, error) is expected


def test_an_empty_cell_is_unknown_with_reasons_never_healthy() -> None:
    snap = Hub().latest.snapshot
    summary = summarize("empty", snap, (), triage(snap))
    for v in (summary.not_ready, summary.apf_rejected_per_s, summary.etcd_fsync_p99_s):
        assert not v.known and v.reason
    assert summary.pending.reason
    assert summary.etcd_leader is Status.UNKNOWN and summary.etcd_leader_detail
    assert summary.zones == () and summary.zones_reason
    assert summary.verdict is not Verdict.CLEAR
    assert not summary.data_age_s.known


def test_unreachable_cell_carries_its_reason_everywhere() -> None:
    cell = unreachable("prod-cell-c", "connection refused")
    assert cell.severity is Severity.UNKNOWN
    assert cell.codes == ("KT-FLEET-010",)
    assert FLEET_BY_CODE["KT-FLEET-010"].severity is Severity.UNKNOWN
    for v in (cell.not_ready, cell.apf_rejected_per_s, cell.api_skew, cell.pending):
        assert v.reason == "connection refused"
    assert not cell.read


def test_a_source_that_failed_keeps_its_data_and_is_at_least_unknown() -> None:
    _, hub, _ = _summary("steady")
    p = hub.latest
    cell = summarize("c", p.snapshot, (), triage(p.snapshot), error="source failed: boom")
    assert cell.severity >= Severity.UNKNOWN
    assert cell.reason == "source failed: boom" and "KT-FLEET-010" in cell.codes
    assert cell.nodes_total.known


def test_a_cell_whose_every_apiserver_is_down_is_unknown_with_the_reason() -> None:
    _, hub, _ = _summary("steady")
    snap = hub.latest.snapshot
    rows = snap.apiservers.instances
    assert len(rows) >= 2
    one_down = (replace(rows[0], error="connection refused"), *rows[1:])
    snap_one = replace(snap, apiservers=replace(snap.apiservers, instances=one_down))
    cell = summarize("c", snap_one, (), triage(snap_one))
    assert cell.read and not cell.reason  # one of several: the cell still answers
    all_down = tuple(replace(r, error="Prometheus reports up == 0") for r in rows)
    snap_all = replace(snap, apiservers=replace(snap.apiservers, instances=all_down))
    cell = summarize("c", snap_all, (), triage(snap_all))
    assert not cell.read and cell.severity >= Severity.UNKNOWN
    assert cell.reason == (
        f"no apiserver answers ({len(rows)} of {len(rows)} down): Prometheus reports up == 0"
    )
    assert "KT-FLEET-010" in cell.codes
    assert cell.nodes_total.known  # the last data stays on the row


def test_ranking_worst_first() -> None:
    cells = [_summary(s)[0] for s in SCENARIOS]
    cells.append(unreachable("gone", "dial tcp: connection refused"))
    ranked = rank(cells)
    severities = [c.severity for c in ranked]
    assert severities == sorted(severities, reverse=True)
    # unknown ranks above healthy and below warnings: the order Severity defines
    gone = [c.name for c in ranked].index("gone")
    assert all(c.severity > Severity.UNKNOWN for c in ranked[:gone])
    assert all(c.severity < Severity.UNKNOWN for c in ranked[gone + 1 :])


def test_ranking_ties_break_on_suspects_then_not_ready_then_rejections_then_name() -> None:
    def cell(name: str, suspects: int, not_ready: float, rejected: float) -> CellSummary:
        return CellSummary(
            name,
            Severity.CRITICAL,
            suspects=tuple(f"P{i}" for i in range(suspects)),
            not_ready=Val.of(not_ready),
            apf_rejected_per_s=Val.of(rejected),
        )

    cells = [
        cell("e", 1, 0, 0),
        cell("d", 1, 0, 0),
        cell("c", 1, 0, 5),
        cell("b", 1, 10, 0),
        cell("a", 2, 0, 0),
    ]
    assert [c.name for c in rank(cells)] == ["a", "b", "c", "d", "e"]


# ---------------------------------------------------------------- correlation


@cache
def _story(scenario: str, seed: int, step_s: float, steps: int) -> tuple[CellSummary, ...]:
    """The cell's summary after each of ``steps`` advances of ``step_s`` seconds."""
    sim = Simulator(scenario, nodes=NODES, seed=seed)
    hub = Hub()
    hub.ingest(sim.start())
    out = []
    for _ in range(steps):
        hub.ingest(sim.advance(step_s))
        hub.publish()
        p = hub.latest
        out.append(summarize(f"{scenario}/{seed}", p.snapshot, p.findings, triage(p.snapshot)))
    return tuple(out)


def _play(
    *stories: Sequence[CellSummary],
) -> tuple[dict[tuple[str, str], float], list[CellSummary]]:
    onsets: dict[tuple[str, str], float] = {}
    last: list[CellSummary] = []
    for step in zip(*stories, strict=True):
        last = list(step)
        onsets = track_onsets(onsets, last)
    return onsets, last


def test_the_same_zone_outage_in_two_cells_is_one_shared_cause() -> None:
    a = _story("zone-outage", SEED, 15.0, 12)
    b = _story("zone-outage", SEED + 1, 15.0, 12)
    onsets, cells = _play(a, b)
    shared = correlate(cells, onsets)
    p4 = [s for s in shared if "P4" in s.paths]
    assert len(p4) == 1
    cause = p4[0]
    assert cause.cells == tuple(sorted(c.name for c in cells))
    assert cause.code == "KT-FLEET-001"  # both simulated cells are in us-east-1
    assert cause.dependency == "region us-east-1"
    # the onset is when each cell's P4 first turned suspect, found here step by step
    first: dict[str, float] = {}
    for story in (a, b):
        first[story[0].name] = next(c.at for c in story if "P4" in c.suspects and c.at)
    assert (cause.first_onset, cause.last_onset) == (min(first.values()), max(first.values()))


def test_onsets_further_apart_than_the_spread_are_separate_incidents() -> None:
    limit = FLEET_ONSET_SPREAD.warn
    assert limit is not None
    base = CellSummary("a", Severity.CRITICAL, at=0.0, suspects=("P4",), causes=("P4",))
    other = CellSummary("b", Severity.CRITICAL, at=0.0, suspects=("P4",), causes=("P4",))
    at_limit = {("a", "P4"): 1000.0, ("b", "P4"): 1000.0 + limit}
    assert [s.paths for s in correlate([base, other], at_limit)] == [("P4",)]
    past = {("a", "P4"): 1000.0, ("b", "P4"): 1000.0 + limit + 1}
    assert correlate([base, other], past) == ()


def test_different_paths_at_the_same_time_are_not_a_shared_cause() -> None:
    onsets, cells = _play(
        _story("zone-outage", SEED, 15.0, 12), _story("scheduler-backlog", SEED, 15.0, 12)
    )
    assert correlate(cells, onsets) == ()


def test_two_causes_with_the_same_consequences_are_not_a_shared_cause() -> None:
    """A relist storm (APF saturation) and a slow etcd disk both make every API call slow
    (P1, API-WRITE, AXIS suspect with bad evidence in both): two incidents, not one."""
    onsets, cells = _play(
        _story("apf-saturation", SEED, 15.0, 12), _story("etcd-slow-disk", SEED, 15.0, 12)
    )
    apf, etcd = (triage_of(c) for c in ("apf-saturation", "etcd-slow-disk"))
    shared = set(apf) & set(etcd)
    assert {"P1", "API-WRITE"} <= shared  # the consequences overlap...
    assert set(cells[0].causes).isdisjoint(cells[1].causes)  # ...the causes do not
    assert correlate(cells, onsets) == ()


def triage_of(scenario: str) -> dict[str, str]:
    """The suspect paths of the scenario's cell after 180 s, with their worst status."""
    sim = Simulator(scenario, nodes=NODES, seed=SEED)
    hub = Hub()
    hub.ingest(sim.start())
    hub.ingest(sim.advance(180.0))
    report = triage(hub.latest.snapshot)
    return {p.id: p.worst_status.value for p in report.suspects if p.worst_status is Status.BAD}


def test_background_warnings_every_cell_carries_do_not_correlate() -> None:
    onsets, cells = _play(_story("steady", SEED, 15.0, 4), _story("steady", SEED + 1, 15.0, 4))
    # one unschedulable pod each in 500 nodes: a note, not a suspect
    assert [c.suspects for c in cells] == [(), ()]
    assert correlate(cells, onsets) == ()
    # a path suspect everywhere from warnings alone (no bad evidence) is background too
    warn = [
        CellSummary(name, Severity.WARNING, at=0.0, suspects=("P2",), causes=())
        for name in ("a", "b")
    ]
    assert correlate(warn, {("a", "P2"): 1000.0, ("b", "P2"): 1000.0}) == ()


def test_a_rollout_and_a_dependency_outside_the_cells() -> None:
    def cell(name: str, region: str, codes: tuple[str, ...]) -> CellSummary:
        return CellSummary(
            name,
            Severity.CRITICAL,
            at=0.0,
            suspects=("P1", "API-429"),
            causes=("P1", "API-429"),
            regions=(region,),
            codes=codes,
        )

    onsets = {(n, p): 0.0 for n in ("a", "b") for p in ("P1", "API-429")}
    rollout = correlate(
        [cell("a", "eu", ("KT-API-003",)), cell("b", "us", ("KT-API-003",))], onsets
    )
    assert [(s.code, s.paths) for s in rollout] == [("KT-FLEET-002", ("P1", "API-429"))]
    apart = correlate([cell("a", "eu", ()), cell("b", "us", ("KT-API-003",))], onsets)
    assert [s.code for s in apart] == ["KT-FLEET-003"]


def test_an_onset_is_kept_while_suspect_and_dropped_after() -> None:
    c1 = CellSummary("a", Severity.CRITICAL, at=10.0, suspects=("P4",))
    c2 = CellSummary("a", Severity.CRITICAL, at=20.0, suspects=("P4",))
    c3 = CellSummary("a", Severity.OK, at=30.0)
    onsets = track_onsets({}, [c1])
    assert track_onsets(onsets, [c2]) == {("a", "P4"): 10.0}
    assert track_onsets(track_onsets(onsets, [c2]), [c3]) == {}
