"""History: bounded per-aggregate rings, immutable views, plain-data state, backfill."""

from __future__ import annotations

import gc
import math
import tracemalloc
from functools import cache

from hypothesis import given
from hypothesis import strategies as st

from ktop.hub import Hub
from ktop.model.history import CHUNK_FRAMES, History
from ktop.model.reading import split_key
from ktop.model.signals import SIGNALS, read_signals
from ktop.sources.sim.simulator import Simulator

T0 = 1_767_225_600.0
HISTORY_BUDGET_BYTES = 4_000_000
"""The bound docs/benchmarks.md states for an hour of history (any cluster size)."""


def fill(h: History, frames: int, keys: list[str], start: float = T0) -> None:
    for i in range(frames):
        h.record(start + i, {k: float(i + j) for j, k in enumerate(keys)})


def test_one_frame_per_step_at_most() -> None:
    h = History(retention_s=60, step_s=1.0)
    assert h.record(T0, {"a|": 1.0})
    assert not h.record(T0 + 0.5, {"a|": 2.0})
    assert h.record(T0 + 1.0, {"a|": 3.0})
    assert h.view().points("a|") == ((T0, 1.0), (T0 + 1.0, 3.0))


def test_retention_bounds_frames_and_memory() -> None:
    keys = [f"m|{i}" for i in range(50)]
    h = History(retention_s=3600, step_s=1.0)
    fill(h, 3 * 3600, keys)
    view = h.view()
    first, last = view.first_at, view.last_at
    assert first is not None and last is not None
    now = T0 + 3 * 3600 - 1
    assert last == now
    # At least an hour is kept, and at most an hour plus one sealed chunk.
    assert first <= now - 3600 + 1
    assert first >= now - 3600 - CHUNK_FRAMES
    frames = sum(len(c.times) for c in view.chunks)
    assert frames <= 3600 + 2 * CHUNK_FRAMES
    # 4-byte values per signal and an 8-byte time per frame, nothing else in the arrays.
    assert view.nbytes() == frames * (8 + 4 * len(keys))
    pts = view.points("m|7")
    assert pts[-1] == (now, float(3 * 3600 - 1 + 7))


def test_view_does_not_change_after_it_was_taken() -> None:
    h = History(retention_s=120, step_s=1.0)
    fill(h, 30, ["a|"])
    view = h.view()
    before = view.points("a|")
    fill(h, 500, ["a|"], start=T0 + 30)
    assert view.points("a|") == before


def test_signals_missing_in_a_frame_are_gaps() -> None:
    h = History()
    h.record(T0, {"a|": 1.0})
    h.record(T0 + 1, {"b|": 2.0})
    h.record(T0 + 2, {"a|": 3.0, "b|": 4.0})
    v = h.view()
    assert v.points("a|") == ((T0, 1.0), (T0 + 2, 3.0))
    assert v.points("b|") == ((T0 + 1, 2.0), (T0 + 2, 4.0))


def test_backfill_adds_per_signal_only_what_is_older_than_its_own_values() -> None:
    h = History(retention_s=3600)
    assert not h.record(T0 - 100, {}), "a frame without values is not kept"
    h.record(T0, {"a|": 10.0})
    h.record(T0 + 1, {"a|": 11.0, "c|": 7.0})
    added = h.backfill(
        {
            "a|": [(T0 - 30, 1.0), (T0 - 15, 2.0), (T0, 99.0)],
            "b|": [(T0 - 15, 5.0), (T0 + 0.5, 6.0)],
            "c|": [(T0 - 15, 3.0), (T0 + 0.5, 4.0), (T0 + 1, 99.0)],
        }
    )
    assert added == 6
    v = h.view()
    assert v.points("a|") == ((T0 - 30, 1.0), (T0 - 15, 2.0), (T0, 10.0), (T0 + 1, 11.0))
    assert v.points("b|") == ((T0 - 15, 5.0), (T0 + 0.5, 6.0))
    assert v.points("c|") == ((T0 - 15, 3.0), (T0 + 0.5, 4.0), (T0 + 1, 7.0))
    assert [t for t, _ in h.frames()] == [T0 - 30, T0 - 15, T0, T0 + 0.5, T0 + 1]


def test_backfill_is_not_blocked_by_a_snapshot_taken_before_any_data() -> None:
    from ktop.model.cluster import ClusterModel
    from ktop.model.events import HistoryBackfilled

    model = ClusterModel()
    model.observe()  # what the hub does before the sources start: the clock is still 0
    model.apply(HistoryBackfilled(T0, (("a|", ((T0 - 60, 1.0), (T0 - 45, 2.0))),)))
    assert model.observe().history.points("a|") == ((T0 - 60, 1.0), (T0 - 45, 2.0))


values = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False, width=32))


@given(st.lists(st.tuples(values, values, values), min_size=1, max_size=200))
def test_state_round_trips_through_plain_data(rows: list[tuple[float | None, ...]]) -> None:
    h = History(retention_s=3600)
    for i, row in enumerate(rows):
        h.record(T0 + i, {f"k|{j}": v for j, v in enumerate(row) if v is not None})
    state = h.to_state()
    # Plain data only: what msgpack or JSON can hold as it is.
    assert all(isinstance(t, float) for t in state["times"])
    assert all(v is None or isinstance(v, float) for col in state["series"].values() for v in col)
    restored = History.from_state(state)
    assert restored.frames() == h.frames()
    for k in h.view().signal_keys():
        assert restored.view().points(k) == h.view().points(k)


@cache
def signal_count(nodes: int) -> int:
    sim = Simulator("zone-outage", nodes=nodes, seed=3)
    hub = Hub()
    hub.ingest(sim.start())
    for _ in range(3):
        hub.ingest(sim.advance(5.0))
        hub.publish()
    return len(read_signals(hub.latest.snapshot))


def test_history_is_per_aggregate_and_an_hour_fits_the_budget_at_100k_nodes() -> None:
    small, large = signal_count(300), signal_count(100_000)
    assert small == large, "signals are per aggregate, never per node"
    h = History(retention_s=3600, step_s=1.0)
    fill(h, 3600 + 5 * CHUNK_FRAMES, [f"s|{i}" for i in range(large)])
    assert h.nbytes() <= HISTORY_BUDGET_BYTES
    assert h.nbytes() >= 3600 * large * 4  # an hour of every signal is really held


def test_an_hour_at_100k_nodes_fits_the_budget_measured_by_tracemalloc() -> None:
    """What Python really holds (arrays, chunk objects, dicts, the open chunk a view
    copies), not only the arrays' sizes: an hour and a bit of every signal a
    100,000-node cluster has, then a snapshot's view of it.
    """
    keys = [f"s|{i}" for i in range(signal_count(100_000))]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        h = History(retention_s=3600, step_s=1.0)
        fill(h, 3600 + CHUNK_FRAMES // 2, keys)  # ends mid-chunk: the view copies it
        view = h.view()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(view.points(keys[-1])) >= 3600  # the hour is really there
    assert held <= HISTORY_BUDGET_BYTES, f"{held / 1e6:.2f} MB"


def test_every_signal_read_from_a_snapshot_is_declared() -> None:
    sim = Simulator("apf-saturation", nodes=300, seed=3)
    hub = Hub()
    hub.ingest(sim.start())
    hub.ingest(sim.advance(30.0))
    got = read_signals(hub.latest.snapshot)
    declared = {s.metric for s in SIGNALS}
    assert {split_key(k)[0] for k in got} <= declared
    assert all(math.isfinite(v) for v in got.values())


def test_backfill_records_the_span_it_added_and_the_state_keeps_it() -> None:
    h = History(retention_s=3600, step_s=1)
    h.record(1000.0, {"a|": 1.0})
    assert h.view().backfilled is None
    # 980 and 990 are older than the first own point: added; 1000 and 1010 are not
    h.backfill({"a|": [(980.0, 5.0), (990.0, 6.0), (1000.0, 7.0), (1010.0, 8.0)]})
    assert h.view().backfilled == (980.0, 990.0)
    assert History.from_state(h.to_state()).view().backfilled == (980.0, 990.0)


def test_a_snapshot_reads_the_history_and_only_observing_adds_a_frame() -> None:
    from ktop.model.cluster import ClusterModel

    sim = Simulator("steady", nodes=30, seed=3)
    model = ClusterModel()
    model.apply_all(sim.start())
    for _ in range(3):
        model.apply_all(sim.advance(5.0))
        model.observe()
    frames = list(model.history.frames())
    assert len(frames) == 3
    model.apply_all(sim.advance(5.0))
    for _ in range(3):  # a snapshot is a read: the history is as the last observe left it
        assert model.snapshot().history == model.history.view()
    assert list(model.history.frames()) == frames
    observed = model.observe()
    after = list(model.history.frames())
    assert after[:3] == frames and len(after) == 4 and after[-1][0] == model.now
    assert observed.history == model.history.view()


def naive_points(h: History, key: str, since: float = -math.inf) -> list[tuple[float, float]]:
    """Every frame's value of ``key`` at or after ``since``, from the frames themselves."""
    return [(t, row[key]) for t, row in h.frames() if key in row and t >= since]


frames_with_gaps = st.lists(
    st.tuples(st.integers(1, 3), st.one_of(st.none(), st.floats(-1e6, 1e6, width=32))),
    min_size=0,
    max_size=3 * CHUNK_FRAMES,
)


@given(frames_with_gaps, st.floats(-10, 4 * CHUNK_FRAMES), st.floats(-10, 4 * CHUNK_FRAMES))
def test_points_and_sorted_values_read_what_the_frames_hold(
    rows: list[tuple[int, float | None]], since: float, end: float
) -> None:
    """Points kept per chunk and read again give what a pass over every frame gives, at
    any cut, with gaps (a frame without the key) and with frames of other keys only."""
    h = History(retention_s=3600)
    t = T0
    for step, v in rows:
        t += step
        h.record(t, {"other|": 1.0} if v is None else {"k|": v, "other|": 1.0})
    view = h.view()
    for _ in range(2):  # the second read comes from what the chunks kept
        assert list(view.points("k|", T0 + since)) == naive_points(h, "k|", T0 + since)
        values, first, last = view.sorted_until("k|", T0 + end)
        quiet = [(t, v) for t, v in naive_points(h, "k|") if t <= T0 + end]
        assert values == sorted(v for _, v in quiet)
        if quiet:
            assert (first, last) == (quiet[0][0], quiet[-1][0])
        else:
            assert math.isnan(first) and math.isnan(last)


def test_sorted_values_follow_a_growing_history() -> None:
    """The sorted whole chunks are remembered from one view to the next: each view still
    gives its own values, as chunks are sealed and the oldest dropped."""
    h = History(retention_s=3 * CHUNK_FRAMES)
    for i in range(6 * CHUNK_FRAMES):
        h.record(T0 + i, {"k|": float((i * 7919) % 101)})
        if i % 11:
            continue
        view = h.view()
        end = T0 + i - 30
        quiet = [v for t, v in naive_points(h, "k|") if t <= end]
        assert view.sorted_until("k|", end)[0] == sorted(quiet)
