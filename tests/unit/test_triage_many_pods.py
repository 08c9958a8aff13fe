"""'Many pods' is judged against the cluster's size and its own baseline: one pod that
fits no node in a large cluster is a note, never a suspect (the ``steady`` recording was
suspect on P2 and P6 from one pod unschedulable for an hour).

Expected limits are worked out here from the inputs (5,000 nodes at one pod per 100
nodes is 50 pods; never fewer than 11), never read back from ktop's formatters.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Evidence, PathResult, Status, TriageReport, Verdict
from ktop.cli import main
from ktop.model.events import PodWait
from ktop.model.history import History
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_scheduler import ReasonCount, StartFailure
from tests.functional.factories import AT
from tests.unit.snapshots import with_sched

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
UNSCHEDULABLE = "sched.waiting_pods|unschedulable"


def path(report: TriageReport, pid: str) -> PathResult:
    return next(p for p in report.paths if p.id == pid)


def evidence(report: TriageReport, pid: str, eid: str) -> Evidence:
    return next(e for e in path(report, pid).evidence if e.id == eid)


def big_cluster(nodes: int, unschedulable: int, reason: str) -> ClusterSnapshot:
    """The healthy snapshot with ``nodes`` nodes and ``unschedulable`` pods refused for
    ``reason``."""
    s = with_sched(
        pending_by_wait={PodWait.UNSCHEDULABLE: unschedulable},
        reasons=(ReasonCount(reason, unschedulable, 1, ("shop/p-0",)),) if unschedulable else (),
    )
    half = nodes // 2
    zones = tuple(replace(z, total=half, ready=half) for z in s.nodes.zones)
    return replace(s, nodes=replace(s.nodes, total=nodes, ready=nodes, zones=zones))


AFFINITY = "node(s) didn't match Pod's node affinity/selector"


def test_one_long_pending_pod_in_a_large_cluster_is_a_note_not_a_suspect() -> None:
    r = triage(big_cluster(5000, 1, AFFINITY))
    e = evidence(r, "P2", "sched.unschedulable")
    assert (e.status, e.value, e.note, e.suspect) == (Status.OK, 1.0, True, False)
    # 5,000 nodes at one pod per 100 nodes: many is more than 50
    assert "more than 50" in e.detail
    assert path(r, "P2").verdict is Verdict.CLEAR
    # one pod refused by affinity is 100 % of the unschedulable pods, but says nothing
    share = evidence(r, "P6", "sched.constraint_share")
    assert (share.status, share.note, share.suspect) == (Status.OK, True, False)
    assert path(r, "P6").verdict is not Verdict.SUSPECT
    assert r.suspects == ()


@pytest.mark.parametrize(
    ("nodes", "pods", "suspect"),
    [
        (5000, 50, False),  # 50 is not more than 5,000 / 100
        (5000, 51, True),
        (20, 10, False),  # a small cluster: never fewer than 11 pods
        (20, 11, True),
    ],
)
def test_many_is_more_than_one_per_hundred_nodes_and_more_than_ten(
    nodes: int, pods: int, suspect: bool
) -> None:
    r = triage(big_cluster(nodes, pods, "Insufficient cpu"))
    e = evidence(r, "P2", "sched.unschedulable")
    assert e.value == pods and e.suspect is suspect
    assert (path(r, "P2").verdict is Verdict.SUSPECT) is suspect


def _with_unschedulable_history(s: ClusterSnapshot, normal: float) -> ClusterSnapshot:
    h = History()
    for i in range(300):  # five minutes, one frame a second, all at ``normal``
        h.record(AT - 300 + i, {UNSCHEDULABLE: normal})
    return replace(s, history=h.view())


def test_a_count_well_above_its_own_normal_is_many_even_in_a_large_cluster() -> None:
    # 5,000 nodes: 30 pods are fewer than 50, but the cluster's normal is 2
    s = _with_unschedulable_history(big_cluster(5000, 30, "Insufficient cpu"), 2.0)
    r = triage(s, baseline_source(s, HistoryKind.THIS_RUN))
    e = evidence(r, "P2", "sched.unschedulable")
    assert e.status is Status.WARN and e.suspect
    assert "median of 2" in e.detail
    # at its normal, the same count stays a note: the baseline never excuses a count
    # above the size limit, and never makes one at its normal many
    s = _with_unschedulable_history(big_cluster(5000, 30, "Insufficient cpu"), 30.0)
    e = evidence(triage(s, baseline_source(s, HistoryKind.THIS_RUN)), "P2", "sched.unschedulable")
    assert e.status is Status.OK and e.note and not e.suspect
    s = _with_unschedulable_history(big_cluster(500, 257, "Insufficient cpu"), 257.0)
    e = evidence(triage(s, baseline_source(s, HistoryKind.THIS_RUN)), "P2", "sched.unschedulable")
    assert e.suspect


def test_few_pods_that_do_not_start_are_a_note() -> None:
    fail = StartFailure("image pull", "ErrImagePull", 2, (("n1", 2),), 1, (("zone-a", 2),), ())
    s = with_sched(pending_by_wait={PodWait.BOUND_NOT_STARTED: 2}, start_failures=(fail,))
    r = triage(s)
    e = evidence(r, "P3", "pods.start_failures")
    assert (e.status, e.value, e.note, e.suspect) == (Status.OK, 2.0, True, False)
    assert path(r, "P3").verdict is Verdict.CLEAR


def _report(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, dict[str, Any]]:
    code = main(["triage", "--recording", str(RECORDINGS / name), "--output", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_the_steady_recording_has_no_suspect(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = _report(capsys, "steady.ktrec")
    assert [p["id"] for p in doc["paths"] if p["verdict"] == "suspect"] == []
    assert code == 0


def test_the_scheduler_backlog_recording_is_still_suspect_on_its_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, doc = _report(capsys, "scheduler-backlog.ktrec")
    verdicts = {p["id"]: p["verdict"] for p in doc["paths"]}
    assert verdicts["P2"] == "suspect" and verdicts["P6"] == "suspect"
    assert code == 1
