"""What only the clock changes is rebuilt in steps (an idle screen redraws once a step)."""

from __future__ import annotations

import msgpack

from ktop.model.clock import CLOCK_STEP_S
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_PENDING_PODS,
    ClockTick,
    FeedSynced,
    PendingPodRecord,
    PendingPodUpserted,
    PodWait,
)
from ktop.model.state import export_state, import_state

CREATED = 1_000.0
STEP = float(CLOCK_STEP_S)


def _model_with_a_pending_pod() -> ClusterModel:
    m = ClusterModel()
    pod = PendingPodRecord("default", "web-0", CREATED, PodWait.UNSCHEDULABLE, message="0/3 nodes")
    m.apply_all([PendingPodUpserted(CREATED, pod), FeedSynced(CREATED, FEED_PENDING_PODS)])
    return m


def test_ticks_within_a_step_leave_the_scheduler_area_alone() -> None:
    m = _model_with_a_pending_pod()
    start = 10 * STEP + 10_000  # the start of a step
    m.apply(ClockTick(start))
    first = m.observe().scheduler
    assert first.oldest_pending_s.value == start - CREATED
    for dt in range(1, int(STEP)):
        m.apply(ClockTick(start + dt))
        assert m.observe().scheduler is first  # not rebuilt: nothing to redraw
    m.apply(ClockTick(start + STEP))
    later = m.observe().scheduler
    assert later is not first
    assert later.oldest_pending_s.value == start + STEP - CREATED


def test_a_rebuild_mid_step_shows_the_steps_start() -> None:
    """A pod event rebuilds the area at once, with ages as of the step's start, so the
    snapshot does not depend on when in the step it was built."""
    m = _model_with_a_pending_pod()
    start = 10 * STEP + 10_000
    m.apply(ClockTick(start + 3))
    other = PendingPodRecord("default", "web-1", start + 2, PodWait.UNSCHEDULABLE)
    m.apply(PendingPodUpserted(start + 3, other))
    assert m.observe().scheduler.oldest_pending_s.value == start - CREATED


def test_a_model_rebuilt_from_a_keyframe_mid_step_shows_what_the_live_one_shows() -> None:
    live = _model_with_a_pending_pod()
    start = 10 * STEP + 10_000
    for dt in range(int(STEP) - 1):
        live.apply(ClockTick(start + dt))
        live.observe()
    state = msgpack.unpackb(msgpack.packb(export_state(live)), strict_map_key=False)
    copy = import_state(state)
    assert copy.observe().scheduler == live.observe().scheduler
