"""Labels never contradict their values: "✓ apiserver instances answering 0" beside
"3 of 3 answer", and a 100 % share of NotReady nodes in one zone marked ok.
"""

from __future__ import annotations

from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.report import to_json
from ktop.analysis.triage.types import Evidence, PathResult, Status, TriageReport
from ktop.model.snapshot_nodes import ZoneState
from ktop.ui.render.triage_text import to_text
from tests.unit.snapshots import with_nodes


def path(report: TriageReport, pid: str) -> PathResult:
    return next(p for p in report.paths if p.id == pid)


def evidence(report: TriageReport, pid: str, eid: str) -> Evidence:
    return next(e for e in path(report, pid).evidence if e.id == eid)


def test_the_answering_count_and_the_zone_share_agree_with_their_marks() -> None:
    s = with_nodes(zone_a=(0, 10, ZoneState.FULL_DISRUPTION))
    r = triage(s)
    cp = evidence(r, "P4", "cp.apiservers")
    assert cp.value == 0 and cp.status is Status.OK and "2 of 2 answer" in cp.detail
    assert "not answering" in cp.title
    share = evidence(r, "P4", "nodes.domain_share")
    assert share.value == 1.0 and share.status is Status.WARN  # 10 of 10 in zone-a
    text = to_text(r)
    assert "✓ apiserver instances not answering: 0 (2 of 2 answer)" in text
    assert "▲ Share of NotReady nodes in the worst zone: 1" in text
    doc = to_json(r, s, source={"kind": "test"})
    p4 = next(p for p in doc["paths"] if p["id"] == "P4")
    (ev,) = [e for e in p4["evidence"] if e["id"] == "nodes.domain_share"]
    assert ev["status"] == "warn" and ev["value"] == 1.0


def test_a_single_not_ready_node_is_a_note_of_its_zone() -> None:
    e = evidence(triage(with_nodes(unhealthy_split=(1, 0))), "P4", "nodes.domain_share")
    assert (e.status, e.value, e.note) == (Status.OK, 1.0, True)
    assert "too few" in e.detail
