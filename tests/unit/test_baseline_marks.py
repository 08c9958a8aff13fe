"""Baseline marks: a reading under its limit but far above its own normal is a finding,
with the ratio; noise near zero, small rises and readings already past their limit are
not. The normal is computed here from the points written into the history."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from ktop.analysis.baseline_marks import baseline_marks, normal
from ktop.analysis.catalogue import BASELINE_CODES
from ktop.analysis.rules import evaluate
from ktop.model.events import Area
from ktop.model.history import CHUNK_FRAMES, History
from ktop.model.limits import BASELINE_MARK, BASELINE_MARK_FLOOR, ETCD_FSYNC_P99
from ktop.model.reading import key
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_etcd import EtcdSnapshot
from tests.functional.factories import AT, busy_snapshot, member

FSYNC = key("etcd.fsync_p99_s", "etcd-0")
MINUTES = 6


def history(values: list[float]) -> History:
    h = History()
    start = AT - len(values)
    for i, x in enumerate(values):
        h.record(start + i, {FSYNC: x})
    return h


def snapshot_with(fsync_now: float, past: list[float]) -> ClusterSnapshot:
    view = history(past).view()
    etcd = EtcdSnapshot((member("etcd-0", leader=True, fsync=fsync_now),), "etcd-0", True)
    return replace(busy_snapshot(), etcd=etcd, history=view)


def normal_of(past: list[float]) -> float:
    """The per-chunk medians' median, leaving out the last chunk, computed by hand."""
    chunks = [past[i : i + CHUNK_FRAMES] for i in range(0, len(past), CHUNK_FRAMES)]
    return statistics.median(statistics.median(c) for c in chunks[:-1])


def quiet(n: int = MINUTES * CHUNK_FRAMES) -> list[float]:
    return [0.002 + 0.0002 * (i % 5) for i in range(n)]


def test_a_disk_a_hundred_times_slower_under_the_limit_is_a_finding_with_its_ratio() -> None:
    past = quiet()
    snap = snapshot_with(0.219, past)
    want = normal_of(past)
    assert normal(snap.history, FSYNC) == pytest.approx(want)
    (mark,) = [m for m in baseline_marks(snap) if m.reading.metric == "etcd.fsync_p99_s"]
    assert mark.ratio == pytest.approx(0.219 / want)
    found = [f for f in evaluate(snap) if f.code == BASELINE_CODES[Area.ETCD]]
    assert len(found) == 1
    assert f"{0.219 / want:.0f}x its normal on etcd-0" in found[0].title
    assert "limit 500ms" in found[0].title


@pytest.mark.parametrize(
    ("now", "why"),
    [
        (0.002 * (BASELINE_MARK - 2), "a rise smaller than the mark"),
        (ETCD_FSYNC_P99.warn * BASELINE_MARK_FLOOR * 0.9, "under the floor (noise near zero)"),  # type: ignore[operator]
        (0.9, "past the limit: the threshold's own finding says it"),
    ],
)
def test_no_mark(now: float, why: str) -> None:
    snap = snapshot_with(now, quiet())
    assert not [m for m in baseline_marks(snap) if m.reading.metric == "etcd.fsync_p99_s"], why


def test_no_normal_without_enough_history() -> None:
    snap = snapshot_with(0.219, quiet(2 * CHUNK_FRAMES))  # one sealed chunk besides the last
    assert normal(snap.history, FSYNC) is None
    assert not baseline_marks(snap)


def test_each_area_s_readings_get_that_area_s_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """One mark per comparable reading: its finding carries its own area's code, and every
    area with such a reading has a code (none without)."""
    from ktop.analysis import rules
    from ktop.analysis.baseline_marks import MARKABLE, BaselineMark

    assert set(BASELINE_CODES) == {r.area for r in MARKABLE}
    assert {"etcd.fsync_p99_s", "apf.wait_p99_s", "nodes.lease_lag_p99_s"} <= {
        r.metric for r in MARKABLE
    }
    marks = tuple(BaselineMark(r, "s1", 10.0, 0.5) for r in MARKABLE)
    monkeypatch.setattr(rules, "baseline_marks", lambda _s: marks)
    found = list(rules.baselines(busy_snapshot()))
    assert [f.code for f in found] == [BASELINE_CODES[r.area] for r in MARKABLE if r.area]
    assert all("20x its normal on s1" in f.title for f in found)
