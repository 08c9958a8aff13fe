"""A member that cannot be read while the others answer is evidence, never "clear".

On the kubeadm-like lab, after ``inject etcd-leader-loss`` the killed member answered
"connection refused" while the others answered with a new leader, and ETCD read "every
first-line reading is within its threshold": the member that could not be read did not
count against etcd. It is lost: the ETCD path is suspect, a warning while the others keep
a quorum (3 members need 2) and critical once they do not, naming the member, its error
and when it last answered.
"""

from __future__ import annotations

from dataclasses import replace

from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Evidence, Status, TriageReport, Verdict
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_etcd import EtcdMemberRow
from ktop.model.text import fmt_clock
from ktop.model.values import Val
from tests.functional.factories import AT, member
from tests.unit.snapshots import healthy

REFUSED = "HTTP 503: dial tcp 10.200.1.2:2381: connect: connection refused"


def _etcd(*members: EtcdMemberRow) -> ClusterSnapshot:
    s = healthy()
    return replace(s, etcd=replace(s.etcd, members=members))


def _lost(report: TriageReport) -> Evidence:
    etcd = next(p for p in report.paths if p.id == "ETCD")
    return next(e for e in etcd.evidence if e.id == "etcd.members_lost")


def _three(**down: str) -> ClusterSnapshot:
    """Three members answering with a leader (etcd-0 leads), but those in ``down``, which
    fail with the given error after answering last at ``AT - 30``."""
    rows = [member("etcd-0", leader=True), member("etcd-1"), member("etcd-2")]
    rows = [
        replace(m, error=down[m.instance], last_ok=AT - 30) if m.instance in down else m
        for m in rows
    ]
    return _etcd(*rows)


def test_all_members_with_a_leader_is_ok() -> None:
    e = _lost(triage(_three()))
    assert (e.status, e.value) == (Status.OK, 0.0)


def test_a_member_refusing_while_the_others_answer_makes_etcd_suspect() -> None:
    report = triage(_three(**{"etcd-2": REFUSED}))
    e = _lost(report)
    # 2 of 3 answer with a leader: quorum (2) held, one member lost
    assert (e.status, e.value) == (Status.WARN, 1.0)
    assert f"etcd-2: {REFUSED} (last answered {fmt_clock(AT - 30)})" in e.detail
    assert "quorum 2, 0 more may fail" in e.detail
    etcd = next(p for p in report.paths if p.id == "ETCD")
    assert etcd.verdict is Verdict.SUSPECT
    assert report.cause is not None and report.cause.id == "ETCD"


def test_a_member_that_never_answered_this_run_says_since_when() -> None:
    s = _three(**{"etcd-1": "timed out"})
    rows = tuple(replace(m, last_ok=None) if m.error else m for m in s.etcd.members)
    e = _lost(triage(_etcd(*rows)))
    assert e.status is Status.WARN and "etcd-1: timed out (never answered this run)" in e.detail
    # a one-shot triage knows when it started: the member has not answered since
    started = replace(_etcd(*rows), started_at=AT - 20)
    e = _lost(triage(started))
    assert f"etcd-1: timed out (not answered since ktop started at {fmt_clock(AT - 20)})" in (
        e.detail
    )


def test_quorum_lost_is_bad() -> None:
    e = _lost(triage(_three(**{"etcd-1": REFUSED, "etcd-2": REFUSED})))
    # 1 of 3 counts, quorum 2: lost, whatever leader etcd-0 still reports
    assert (e.status, e.value) == (Status.BAD, 2.0)
    assert "quorum lost" in e.detail


def test_a_member_answering_without_a_leader_is_lost() -> None:
    rows = (member("etcd-0", leader=True), member("etcd-1"), member("etcd-2"))
    rows = (*rows[:2], replace(rows[2], has_leader=Val.of(0)))
    e = _lost(triage(_etcd(*rows)))
    assert (e.status, e.value) == (Status.WARN, 1.0)
    assert "etcd-2: answers without a leader" in e.detail


def test_a_member_ktop_cannot_read_by_design_is_unknown_not_lost_nor_clear() -> None:
    loopback = (
        "etcd-2 serves metrics on loopback only (--listen-metrics-urls=http://127.0.0.1:2381)"
    )
    e = _lost(triage(_three(**{"etcd-2": loopback})))
    assert e.status is Status.UNKNOWN and "loopback only" in e.detail


def test_no_member_answering_is_unknown() -> None:
    e = _lost(triage(_three(**{f"etcd-{i}": REFUSED for i in range(3)})))
    assert e.status is Status.UNKNOWN and "no member read" in e.detail
