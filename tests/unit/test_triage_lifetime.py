"""A value from one scrape of a lifetime histogram never decides a verdict: it is
context in the detail, and the evidence is unknown until a window exists (a zone outage
made API-WRITE and P1 suspect from "(load-balanced): 1.25 s (lifetime, single scrape)").
"""

from __future__ import annotations

from dataclasses import replace

from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Evidence, PathResult, Status, TriageReport, Verdict
from ktop.model.events import LOAD_BALANCED
from ktop.model.values import Val
from tests.unit.snapshots import healthy


def path(report: TriageReport, pid: str) -> PathResult:
    return next(p for p in report.paths if p.id == pid)


def evidence(report: TriageReport, pid: str, eid: str) -> Evidence:
    return next(e for e in path(report, pid).evidence if e.id == eid)


def test_a_lifetime_quantile_from_one_scrape_never_makes_a_path_suspect() -> None:
    s = healthy()
    lb = replace(
        s.apiservers.instances[0], instance=LOAD_BALANCED, write_p99_s=Val.of(1.25, lifetime=True)
    )
    s = replace(s, apiservers=replace(s.apiservers, instances=(lb,)))
    r = triage(s)
    e = evidence(r, "API-WRITE", "api.write_p99")
    assert e.status is Status.UNKNOWN and e.value is None and not e.suspect
    assert "1.25 s" in e.detail and "lifetime" in e.detail
    assert path(r, "API-WRITE").verdict is Verdict.UNKNOWN
    assert path(r, "P1").verdict is not Verdict.SUSPECT
    # lifetime etcd quantiles alike
    s = replace(healthy(), etcd=replace(healthy().etcd, members=(
        replace(healthy().etcd.members[0], backend_commit_p99_s=Val.of(0.9, lifetime=True)),
    )))  # fmt: skip
    r = triage(s)
    assert evidence(r, "ETCD", "etcd.backend_commit_p99").status is Status.UNKNOWN
    assert path(r, "ETCD").verdict is not Verdict.SUSPECT


def test_a_windowed_reading_is_graded_beside_a_lifetime_one() -> None:
    s = healthy()
    rows = (
        replace(s.apiservers.instances[0], write_p99_s=Val.of(3.0, lifetime=True)),
        replace(s.apiservers.instances[1], write_p99_s=Val.of(1.5)),
    )
    s = replace(s, apiservers=replace(s.apiservers, instances=rows))
    e = evidence(triage(s), "API-WRITE", "api.write_p99")
    assert (e.status, e.value, e.suspect) == (Status.BAD, 1.5, True)
    assert "apiserver-1" in e.detail
