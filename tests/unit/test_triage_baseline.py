"""Baseline-relative triage evidence read from a signal history.

Every history here is built point by point and its median is worked out by
hand in the test (e.g. the median of 1.0, 1.2, 0.8 repeated is 1.0), never
read back from ktop's baseline code.
"""

from __future__ import annotations

from dataclasses import replace

from ktop.analysis.triage.baseline import BaselineSource, HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import PathResult, Status, TriageReport, Verdict
from ktop.model.history import History
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.values import Val
from tests.unit.snapshots import AT, with_api

CPU0 = "api.cpu_cores|apiserver-0"
CPU1 = "api.cpu_cores|apiserver-1"
RSS0 = "api.rss_bytes|apiserver-0"
REQ0, REQ1 = "api.requests_per_s|apiserver-0", "api.requests_per_s|apiserver-1"


def path(report: TriageReport, pid: str) -> PathResult:
    return next(p for p in report.paths if p.id == pid)


def evidence(report: TriageReport, pid: str, eid: str) -> tuple[Status, float | None, str]:
    e = next(e for e in path(report, pid).evidence if e.id == eid)
    return e.status, e.value, e.detail


def snap_with(history: History, cpu0: float) -> ClusterSnapshot:
    s = with_api(cpu_cores=Val.of(cpu0))
    return replace(s, history=history.view())


def run_history(seconds: int, cpu: tuple[float, ...] = (1.0, 1.2, 0.8)) -> History:
    """One frame a second over the ``seconds`` before AT, apiserver-0's CPU cycling
    through ``cpu`` (median 1.0), apiserver-1's steady at 3.2 cores."""
    h = History()
    for i in range(seconds):
        h.record(AT - seconds + i, {CPU0: cpu[i % len(cpu)], CPU1: 3.2})
    return h


def test_this_run_so_far_is_the_median_of_the_points_older_than_a_minute() -> None:
    h = run_history(120)
    report = triage(snap_with(h, 2.5), baseline_source(snap_with(h, 2.5), HistoryKind.THIS_RUN))
    # apiserver-0: 2.5 cores against a median of 1.0 is 2.5x, past the 2x critical
    status, value, detail = evidence(report, "API-CPU", "api.cpu_vs_baseline")
    assert status is Status.BAD
    assert value == 2.5
    assert "apiserver-0" in detail and "this run so far" in detail
    # 120 s before AT to 60 s before AT (inclusive): 61 points, 21 of 1.0, 20 of 1.2 and
    # 20 of 0.8, so their median is 1.0
    assert "against a median of 1.00 cores over 61 points" in detail
    assert path(report, "API-CPU").verdict is Verdict.SUSPECT
    assert report.baseline.startswith("this run so far")


def test_a_reading_near_its_median_is_ok() -> None:
    h = run_history(120)
    s = snap_with(h, 1.4)
    report = triage(s, baseline_source(s, HistoryKind.THIS_RUN))
    status, value, _ = evidence(report, "API-CPU", "api.cpu_vs_baseline")
    assert value == 1.4 and status is Status.OK  # 1.4x is below the 1.5x warning
    assert path(report, "API-CPU").verdict is Verdict.CLEAR
    s = snap_with(h, 1.6)
    status, value, _ = evidence(
        triage(s, baseline_source(s, HistoryKind.THIS_RUN)), "API-CPU", "api.cpu_vs_baseline"
    )
    assert value == 1.6 and status is Status.WARN


def test_a_run_younger_than_a_minute_has_no_baseline_yet() -> None:
    h = run_history(59)
    s = snap_with(h, 2.5)
    report = triage(s, baseline_source(s, HistoryKind.THIS_RUN))
    assert report.baseline == "no baseline yet: this run so far covers 59 s"
    status, value, detail = evidence(report, "API-CPU", "api.cpu_vs_baseline")
    assert status is Status.UNKNOWN and value is None
    assert detail == report.baseline
    assert path(report, "API-CPU").verdict is Verdict.UNKNOWN


def test_too_few_old_points_is_unknown_with_the_reason() -> None:
    # 65 s: only 5 points are older than a minute, 10 are needed
    h = run_history(65)
    s = snap_with(h, 2.5)
    status, _, detail = evidence(
        triage(s, baseline_source(s, HistoryKind.THIS_RUN)), "API-CPU", "api.cpu_vs_baseline"
    )
    assert status is Status.UNKNOWN
    assert "fewer than 10 points older than 60 s" in detail


def test_prometheus_history_is_the_baseline_from_the_first_frame() -> None:
    # What --prometheus backfills at start: an hour at a 15 s step, then ktop's own
    # first frame. apiserver-0 ran at 0.5 cores (median 0.5), now 1.5: 3x.
    h = History()
    h.record(AT, {CPU0: 1.5, CPU1: 3.2})
    hour = [(AT - 3600 + 15 * i, 0.5 if i % 2 else 0.4 if i % 4 else 0.6) for i in range(240)]
    assert sorted(v for _, v in hour)[119:121] == [0.5, 0.5]  # the median, by hand
    h.backfill({CPU0: hour, CPU1: [(t, 3.2) for t, _ in hour]})
    s = snap_with(h, 1.5)
    source = baseline_source(s, HistoryKind.THIS_RUN)
    assert source.name == "Prometheus history, last 60 min"
    report = triage(s, source)
    status, value, detail = evidence(report, "API-CPU", "api.cpu_vs_baseline")
    assert status is Status.BAD and value == 3.0
    # every backfilled point up to AT-60 (inclusive) is old enough: i = 0 ... 236
    assert "over 237 points of Prometheus history, last 60 min" in detail
    assert report.baseline.startswith("Prometheus history, last 60 min")


def test_without_prometheus_points_in_reach_the_history_is_this_run() -> None:
    h = run_history(120)
    assert baseline_source(snap_with(h, 1.0), HistoryKind.THIS_RUN).name == "this run so far"
    assert baseline_source(snap_with(h, 1.0), HistoryKind.RECORDING).name == "recording"


def test_request_rate_against_the_sum_of_medians() -> None:
    h = History()
    for i in range(120):
        h.record(AT - 120 + i, {REQ0: 100.0, REQ1: 50.0 if i % 2 else 70.0})
    # 61 old points (AT-120 ... AT-60): apiserver-1 has 31 of 70 and 30 of 50, median 70
    s = replace(with_api(requests_per_s=Val.of(400.0)), history=h.view())
    # now: 400 + 100 (healthy's apiserver-1) = 500 against 100 + 70
    report = triage(s, baseline_source(s, HistoryKind.THIS_RUN))
    status, value, detail = evidence(report, "API-LIST", "api.requests_vs_baseline")
    assert value == 500 / 170 and status is Status.BAD
    assert "2 instances" in detail


def test_memory_against_its_median() -> None:
    h = History()
    for i in range(120):
        h.record(AT - 120 + i, {RSS0: 2.0 * 2**30})
    s = replace(with_api(rss_bytes=Val.of(5.0 * 2**30)), history=h.view())
    report = triage(s, baseline_source(s, HistoryKind.RECORDING))
    status, value, detail = evidence(report, "API-LIST", "api.memory_vs_baseline")
    assert value == 2.5 and status is Status.BAD
    assert "5120 MiB against a median of 2048 MiB" in detail and "recording" in detail
    assert path(report, "API-LIST").verdict is Verdict.SUSPECT


def test_no_source_says_there_is_none() -> None:
    s = snap_with(run_history(120), 2.5)
    report = triage(s, None)
    assert report.baseline.startswith("no baseline yet")
    assert path(report, "API-CPU").verdict is Verdict.UNKNOWN


def test_source_is_plain_data() -> None:
    h = run_history(120)
    src = BaselineSource(h.view(), AT, HistoryKind.THIS_RUN)
    assert src.quiet_end == AT - 60
    assert src.covered_s == 120
    assert src.ready
