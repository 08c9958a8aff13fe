"""The incident timeline: each kind of change at the time an independent reading of the
published snapshots (not the history the timeline reads) says it happened; one chunked
scan equals one pass over every point; folding, markers, and no event on a healthy run."""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktop.analysis.triage.timeline import (
    KIND_AREA,
    EventKind,
    TimelineEvent,
    fold,
    incident_timeline,
)
from ktop.analysis.triage.timeline_scan import _scan_points, scan
from ktop.hub import Hub
from ktop.model.events import Area
from ktop.model.grading import Severity
from ktop.model.history import CHUNK_FRAMES, Chunk, History, HistoryView
from ktop.model.signals import BY_METRIC
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.text import fmt_clock
from ktop.sources.sim.plan import make_plan
from ktop.sources.sim.scenarios import SCENARIOS
from ktop.sources.sim.simulator import Simulator
from ktop.ui.render.timeline import axis_marks
from ktop.ui.render.trend import time_axis

NODES, ZONES, SEED = 300, 3, 11
STEP_S = 2.0


def run(scenario: str) -> tuple[Hub, list[ClusterSnapshot], float]:
    """A scenario played to its end, publishing every ``STEP_S``; every snapshot; the
    simulator's start time."""
    sim = Simulator(scenario, nodes=NODES, zones=ZONES, seed=SEED)
    hub = Hub()
    hub.ingest(sim.start())
    start = hub.now
    snaps: list[ClusterSnapshot] = []
    t = 0.0
    while t < SCENARIOS[scenario].duration_s:
        hub.ingest(sim.advance(STEP_S))
        published = hub.publish()
        assert published is not None
        snaps.append(published.snapshot)
        t += STEP_S
    return hub, snaps, start


def changes(
    snaps: list[ClusterSnapshot], read: Callable[[ClusterSnapshot], Any]
) -> list[tuple[float, Any, Any]]:
    """``(time, before, after)`` wherever ``read`` of consecutive snapshots differs."""
    out: list[tuple[float, Any, Any]] = []
    for a, b in itertools.pairwise(snaps):
        if read(a) != read(b):
            out.append((b.at, read(a), read(b)))
    return out


def of(events: tuple[TimelineEvent, ...], kind: EventKind) -> list[TimelineEvent]:
    return [e for e in events if e.kind is kind]


def test_zone_transitions_are_when_the_model_s_zone_states_change() -> None:
    hub, snaps, _ = run("zone-outage")
    events = of(hub.latest.timeline, EventKind.ZONE)

    def states(s: ClusterSnapshot) -> dict[str, ZoneState | None]:
        return {z.zone: z.state for z in s.nodes.zones}

    truth = [
        (at, zone, before[zone], after[zone])
        for at, before, after in changes(snaps, states)
        for zone in after
        if before.get(zone) != after[zone]
    ]
    assert truth, "the outage changes a zone's state"
    seen = [(e.at, zone, e.text) for e in events for zone in e.subjects]
    assert seen == [
        (at, zone, f"zone {a.value if a else ''} → {b.value}") for at, zone, a, b in truth
    ]
    assert events[-1].severity is Severity.CRITICAL  # the zone ends fully disrupted


def test_etcd_leader_moves_are_when_the_snapshots_name_a_new_leader() -> None:
    hub, snaps, _ = run("etcd-slow-disk")
    events = [e for e in of(hub.latest.timeline, EventKind.LEADER) if "became" in e.text]
    truth = [(at, new) for at, old, new in changes(snaps, lambda s: s.etcd.leader) if old and new]
    assert truth, "the slow disk moves the leadership"
    assert [(e.at, e.subjects) for e in events] == [(at, (m,)) for at, m in truth]


def test_apiserver_restarts_are_at_the_restart_the_scenario_plans() -> None:
    hub, _, start = run("apf-saturation")
    events = of(hub.latest.timeline, EventKind.RESTART)
    spec = SCENARIOS["apf-saturation"]
    plan = make_plan(spec, nodes=NODES, zones=ZONES, apiservers=3)
    assert plan.restarts
    for r in plan.restarts:
        # the process start time the restarted apiserver reports (independent of history)
        row = next(
            x
            for x in hub.latest.snapshot.apiservers.instances
            if x.instance.startswith(f"apiserver-{r.apiserver}")
        )
        assert row.start_time.value is not None
        hit = [e for e in events if e.subjects == (row.instance,)]
        assert len(hit) == 1, events
        assert hit[0].at == pytest.approx(row.start_time.value, abs=0.5)
        assert r.down_at <= hit[0].at - start <= r.up_at
        assert not hit[0].before_history


@pytest.mark.parametrize("scenario", ["etcd-slow-disk", "apf-saturation"])
def test_first_crossings_are_the_first_snapshot_past_each_limit(scenario: str) -> None:
    hub, snaps, _ = run(scenario)
    events = of(hub.latest.timeline, EventKind.THRESHOLD)
    truth: dict[tuple[str, str, Severity], float] = {}
    for s in snaps:
        for reading in BY_METRIC.values():
            if reading.threshold is None or reading.extract is None:
                continue
            for subject, v in reading.extract(s):
                if v.value is None:
                    continue
                sev = reading.threshold.grade(v.value)
                for level in (Severity.WARNING, Severity.CRITICAL):
                    if sev >= level:
                        truth.setdefault((reading.metric, subject, level), s.at)
    # a warning crossed in the same frame as the critical one is the critical event only
    expected = {
        (m, subj, lvl): at
        for (m, subj, lvl), at in truth.items()
        if lvl is Severity.CRITICAL or truth.get((m, subj, Severity.CRITICAL)) != at
    }
    got = {(e.metric, subj, e.severity): e.at for e in events for subj in (e.subjects or ("",))}
    assert expected and got == pytest.approx(expected)


def test_the_probable_cause_s_onset_is_on_the_timeline() -> None:
    hub, _, _ = run("zone-outage")
    published = hub.latest
    cause = published.triage.cause
    assert cause is not None and cause.onset is not None
    onsets = of(published.timeline, EventKind.DIAGNOSIS)
    assert [(e.at, e.text.split()[0]) for e in onsets] == [(cause.onset, cause.id)]


def test_a_healthy_run_has_no_warning_on_its_timeline() -> None:
    hub, _, _ = run("steady")
    assert [e for e in hub.latest.timeline if e.severity >= Severity.WARNING] == []


def test_markers_up_to_the_snapshot_are_on_the_timeline_in_time_order() -> None:
    hub, _, start = run("zone-outage")
    now = hub.now
    hub.add_markers([(start + 10, "paged"), (now + 100, "later than the snapshot")])
    published = hub.publish()
    assert published is not None
    marks = of(published.timeline, EventKind.MARKER)
    assert [(e.at, e.text) for e in marks] == [(start + 10, "marker: paged")]
    times = [e.at for e in published.timeline]
    assert times == sorted(times)


def test_one_change_on_several_subjects_in_one_frame_is_one_line() -> None:
    def lost(member: str, at: float) -> TimelineEvent:
        return TimelineEvent(at, EventKind.LEADER, "no etcd leader", (member,), Severity.CRITICAL,
                             None)  # fmt: skip

    folded = fold([lost("etcd-1", 100.0), lost("etcd-0", 100.5), lost("etcd-2", 130.0)], 1.0)
    assert [(e.at, e.subjects) for e in folded] == [
        (100.0, ("etcd-1", "etcd-0")),
        (130.0, ("etcd-2",)),
    ]
    assert folded[0].line == "etcd-1, etcd-0: no etcd leader"


def _view(metric: str, points: list[float], sizes: list[int]) -> HistoryView:
    chunks, i = [], 0
    for n in sizes:
        part = points[i : i + n]
        i += n
        chunks.append(
            Chunk(array("d", [float(t) for t in range(i - len(part), i)]),
                  {f"{metric}|x": array("f", part)})
        )  # fmt: skip
    return HistoryView(tuple(chunks))


@settings(max_examples=150, deadline=None)
@given(
    metric=st.sampled_from(["api.uptime_s", "etcd.is_leader", "etcd.commit_p99_s", "apf.in_queue"]),
    values=st.lists(
        st.one_of(
            st.sampled_from([0.0, 1.0, 0.3, 0.6, 40.0]),
            st.just(math.nan),
            st.floats(0, 1000, width=32),
        ),
        min_size=1,
        max_size=120,
    ),
    cuts=st.lists(st.integers(1, 30), min_size=1, max_size=10),
)
def test_a_chunked_scan_is_one_pass_over_every_point(
    metric: str, values: list[float], cuts: list[int]
) -> None:
    sizes: list[int] = []
    left = len(values)
    for c in cuts:
        if left <= 0:
            break
        sizes.append(min(c, left))
        left -= sizes[-1]
    if left > 0:
        sizes.append(left)
    view = _view(metric, values, sizes)
    pts = view.points(f"{metric}|x")
    joined = scan(view).get(f"{metric}|x")
    if not pts:
        assert joined is None
        return
    assert joined is not None
    whole = _scan_points(metric, pts)
    assert (joined.first, joined.last, joined.changes, joined.drops, joined.warn, joined.crit) == (
        whole.first, whole.last, whole.changes, whole.drops, whole.warn, whole.crit
    )  # fmt: skip


def test_a_timeline_of_the_same_history_is_the_same_after_its_chunks_were_scanned() -> None:
    hub, _, _ = run("etcd-slow-disk")
    snap = hub.latest.snapshot
    first = incident_timeline(snap, hub.latest.triage)
    again = incident_timeline(snap, hub.latest.triage)  # sealed chunks come from the memo
    assert first == again and first


@pytest.mark.parametrize("width", [12, 40, 100])
@pytest.mark.parametrize("cols", [[], [0], [5, 39], [11, 20, 99]])
def test_the_time_axis_keeps_every_mark_in_its_column_and_no_label_covers_one(
    width: int, cols: list[int]
) -> None:
    start, end = 1_000.0, 1_300.0
    marks = {c: "RLZ!DM"[i % 6] for i, c in enumerate(cols) if c < width}
    axis = time_axis(start, end, width, marks)
    assert len(axis) == width
    assert all(axis[c] == m for c, m in marks.items())
    # the rest is the plain axis' characters, or its dots where a label was left out
    plain = time_axis(start, end, width)
    for i, ch in enumerate(axis):
        if i not in marks:
            short_now = {"now"[i - (width - 3)]} if i >= width - 3 else set()
            assert ch in {plain[i], "·"} | short_now, (axis, plain)
    for label in (fmt_clock(start), "now"):
        at = axis.find(label)
        if at >= 0:
            assert not any(at <= c < at + len(label) for c in marks)


def test_a_chart_marks_its_own_area_its_reading_s_crossings_and_the_markers() -> None:
    def ev(kind: EventKind, at: float, metric: str = "") -> TimelineEvent:
        return TimelineEvent(at, kind, kind.value, (), Severity.WARNING, KIND_AREA[kind], metric)

    events = [
        ev(EventKind.LEADER, 1_030.0),
        ev(EventKind.ZONE, 1_060.0),
        ev(EventKind.THRESHOLD, 1_090.0, "etcd.commit_p99_s"),
        ev(EventKind.THRESHOLD, 1_120.0, "etcd.fsync_p99_s"),
        ev(EventKind.MARKER, 1_150.0),
        ev(EventKind.RESTART, 2_000.0),  # after the window
    ]
    marks = axis_marks(events, Area.ETCD, "etcd.commit_p99_s", 1_000.0, 1_300.0, 30)
    # one column per 10 s: the leader at 3, the commit crossing at 9, the marker at 15
    assert marks == {3: "L", 9: "!", 15: "M"}


def test_scans_of_a_growing_history_follow_its_sealed_chunks() -> None:
    """The joined sealed chunks are remembered from one view to the next: each view's scan
    is still one pass over its own points, as chunks are sealed and the oldest dropped."""
    metric = "nodes.unhealthy"
    h = History(retention_s=4 * CHUNK_FRAMES, step_s=1.0)
    for i in range(7 * CHUNK_FRAMES + 13):
        h.record(1_000.0 + i, {f"{metric}|x": float((i // 7) % 3)})
        if i % 17:
            continue
        view = h.view()
        joined = scan(view)[f"{metric}|x"]
        whole = _scan_points(metric, view.points(f"{metric}|x"))
        assert (joined.first, joined.last, joined.changes) == (
            whole.first, whole.last, whole.changes
        )  # fmt: skip
