"""Waiting, fresh, stale and failed are told apart, in the status line, on each panel's
border and title, and in ``ktop snapshot``'s words; a waiting area says when its first
data is due, from the cadence the source said it reads at.
"""

from __future__ import annotations

import pytest

from ktop.hub import Hub
from ktop.model.events import (
    Area,
    ClockTick,
    Component,
    Event,
    MetricsScraped,
    ScrapeFailed,
    SourceStarted,
    Target,
)
from ktop.model.snapshot import FIRST_DATA_DUE_S, ClusterSnapshot, first_data_due_s
from ktop.model.state import export_state, import_state
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.timing import BACKFILL_TIMEOUT_S, FIRST_POLL_WAIT_S
from ktop.sources.sim.simulator import Simulator
from ktop.ui.render.areas import overview_panel, render_key
from ktop.ui.render.level import SYMBOL, Level
from ktop.ui.render.status import AreaState, ages, area_state, panel_age, state_words

T0 = 1_767_225_600.0  # 00:00:00Z
ETCD = Target(Component.ETCD, "etcd-0:2379")


def snap(*events: Event, due_s: float | None = 40.0) -> ClusterSnapshot:
    hub = Hub()
    hub.ingest([SourceStarted(T0, "live", "prod", first_data_due_s=due_s), *events])
    published = hub.publish(force=True)
    assert published is not None
    return published.snapshot


def test_the_due_time_is_twice_the_slowest_cadence_and_never_less_than_the_default() -> None:
    assert first_data_due_s([]) == FIRST_DATA_DUE_S
    assert first_data_due_s([5.0, 15.0]) == FIRST_DATA_DUE_S
    assert first_data_due_s([15.0, 60.0, 10.0]) == 120.0
    assert LiveOptions().first_data_due_s == FIRST_DATA_DUE_S  # the defaults: 15 s cadences
    assert LiveOptions(apiserver_scrape_s=45.0).first_data_due_s == 90.0
    # with Prometheus the apiserver discovery waits for its first answer and the backfill
    prom = LiveOptions(prometheus="http://prometheus:9090")
    assert prom.first_data_due_s == FIRST_POLL_WAIT_S + BACKFILL_TIMEOUT_S


def test_while_every_area_waits_the_status_line_says_when_the_data_is_due() -> None:
    s = snap(ClockTick(T0 + 36))
    assert s.first_data_due_s == 40.0
    assert all(area_state(s, a) is AreaState.WAITING for a in Area)
    assert ages(s).plain == "waiting for first data, due in 4s"
    assert ages(s).style == "dim"
    assert s.area_due_in_s(Area.ETCD) == pytest.approx(4.0)
    # a fraction of a second is rounded up: never said to be due sooner than it is
    assert ages(snap(ClockTick(T0 + 35.5))).plain == "waiting for first data, due in 5s"
    # low bandwidth: in 15 s steps, rounded up
    assert ages(snap(ClockTick(T0 + 12)), coarse=True).plain == (
        "waiting for first data, due in 30s"
    )


def test_a_waiting_panel_counts_down_on_its_border_and_is_neither_healthy_nor_failed() -> None:
    s = snap(ClockTick(T0 + 36))
    for area in Area:
        assert panel_age(s, area) == ("due in 5s", False)  # 5 s steps, rounded up
        assert state_words(s, area) == "due in 4s"
        view = overview_panel(s, area, rows=4, width=200)
        assert view.level is Level.NEUTRAL
        assert "waiting for first data" in view.title.plain
        assert not {SYMBOL[Level.OK], SYMBOL[Level.UNKNOWN], SYMBOL[Level.CRIT]} & set(
            view.title.plain
        )
        said = " ".join(line.plain for line in view.lines)
        assert said == (
            "first data due within 40 s of the start (by 00:00:40Z); no input has answered "
            "yet, and it is shown as failed if none has by then"
        )
        # a short panel: the first lines, the last one cut where it does not fit
        short = overview_panel(s, area, rows=2, width=30).lines
        assert [line.plain for line in short] == [
            "first data due within 40 s of",
            "the start (by 00:00:40Z); no …",
        ]
    # the panel's lines do not change while only the countdown moves
    later = snap(ClockTick(T0 + 38))
    assert render_key(later, Area.ETCD) == render_key(s, Area.ETCD)


def test_an_area_with_data_stops_waiting_while_the_others_count_down() -> None:
    s = snap(MetricsScraped(T0 + 2, ETCD, ()), ClockTick(T0 + 36))
    assert area_state(s, Area.ETCD) is AreaState.FRESH
    assert ages(s).plain == "apf due 4s api due 4s etcd 34s sched due 4s nodes due 4s"
    dims = [span.style for span in ages(s).spans]
    assert dims.count("dim") == 4


def test_the_due_time_comes_from_the_source_or_the_default() -> None:
    assert snap(due_s=None).first_data_due_s == FIRST_DATA_DUE_S
    waited = snap(ClockTick(T0 + 100), due_s=120.0)
    assert area_state(waited, Area.APF) is AreaState.WAITING  # a slow cadence: not failed
    assert ages(waited).plain == "waiting for first data, due in 20s"
    # a later SourceStarted (a reconnect) changes neither the start nor the due time
    again = snap(SourceStarted(T0 + 5, "live", "prod", first_data_due_s=10.0), due_s=120.0)
    assert (again.started_at, again.first_data_due_s) == (T0, 120.0)


def test_overdue_without_data_is_failed_never_read() -> None:
    s = snap(ClockTick(T0 + 41))
    assert all(area_state(s, a) is AreaState.FAILED for a in Area)
    assert ages(s).plain == "apf ✖never api ✖never etcd ✖never sched ✖never nodes ✖never"
    assert panel_age(s, Area.ETCD) == ("failed, never read", True)
    assert state_words(s, Area.ETCD) == "failed, never read"
    assert "waiting" not in overview_panel(s, Area.ETCD, rows=4, width=80).title.plain


def sim_snapshot(*later: Event) -> ClusterSnapshot:
    sim = Simulator("steady", nodes=50, seed=3)
    hub = Hub()
    hub.ingest(sim.start())
    hub.ingest(list(later))
    published = hub.publish(force=True)
    assert published is not None
    return published.snapshot


def test_stale_and_failed_differ_in_the_status_line_and_on_the_border() -> None:
    start = sim_snapshot().at
    s = sim_snapshot(ScrapeFailed(start + 5, ETCD, "connection refused"), ClockTick(start + 90))
    assert area_state(s, Area.NODES) is AreaState.STALE
    assert area_state(s, Area.ETCD) is AreaState.FAILED
    line = ages(s).plain
    assert "nodes 1m!" in line and "etcd ✖1m" in line and "etcd 1m!" not in line
    assert panel_age(s, Area.NODES) == ("stale 1m", True)
    assert panel_age(s, Area.ETCD) == ("failed 1m", True)
    assert state_words(s, Area.NODES) == "stale 1m" and state_words(s, Area.ETCD) == "failed 1m"


def test_stale_data_is_never_shown_as_healthy() -> None:
    fresh = sim_snapshot()
    assert overview_panel(fresh, Area.NODES, rows=6, width=80).level is Level.OK
    stale = sim_snapshot(ClockTick(fresh.at + 90))
    view = overview_panel(stale, Area.NODES, rows=6, width=80)
    # at least unknown; the Lease lag it shows (1.5 min by the clock) is critical, and the
    # title's mark is the worst of what the pane shows
    assert view.level >= Level.UNKNOWN
    assert SYMBOL[Level.OK] not in view.title.plain.split("ready")[0]
    # the panel is drawn again when the area turns stale, though its data did not change
    assert render_key(stale, Area.NODES) != render_key(fresh, Area.NODES)


def test_the_due_time_survives_a_keyframe() -> None:
    hub = Hub()
    hub.ingest([SourceStarted(T0, "live", "prod", first_data_due_s=75.0)])
    copy = import_state(export_state(hub.model))
    assert (copy.started_at, copy.first_data_due_s) == (T0, 75.0)
    old = export_state(hub.model)
    del old["first_data_due_s"]  # a keyframe from an older ktop
    assert import_state(old).first_data_due_s == FIRST_DATA_DUE_S


def test_before_the_source_starts_every_area_is_connecting_not_failed() -> None:
    """The first frame of every session: nothing read, nothing failed yet."""
    s = Hub().publish(force=True)
    assert s is not None
    snap = s.snapshot
    for area in Area:
        assert area_state(snap, area) is AreaState.CONNECTING
        assert state_words(snap, area) == "connecting"
        view = overview_panel(snap, area, rows=6, width=80)
        assert view.level is Level.UNKNOWN and "failed" not in view.title.plain
    assert SYMBOL[Level.CRIT] not in ages(snap).plain and "connecting" in ages(snap).plain
