"""One finding per fact: the same finding of several etcd members (a leader change every
member saw) is one line naming them, with its code unchanged.
"""

from __future__ import annotations

from dataclasses import replace

from ktop.analysis.rules import evaluate
from ktop.model.values import Val
from tests.functional.factories import member
from tests.unit.snapshots import healthy


def test_a_leader_change_seen_by_every_member_is_one_finding() -> None:
    members = (member("etcd-0", leader=True), member("etcd-1"), member("etcd-2"))
    s = replace(healthy(), etcd=replace(healthy().etcd, members=members))
    found = [f for f in evaluate(s) if f.code == "KT-ETCD-002"]
    assert len(found) == 1
    assert found[0].title == "etcd-0, etcd-1, etcd-2 saw 1 leader change(s)"
    # different facts stay apart
    two = (member("etcd-0", leader=True), replace(member("etcd-1"), leader_changes=Val.of(2)))
    s = replace(healthy(), etcd=replace(healthy().etcd, members=two))
    titles = sorted(f.title for f in evaluate(s) if f.code == "KT-ETCD-002")
    assert titles == ["etcd-0 saw 1 leader change(s)", "etcd-1 saw 2 leader change(s)"]


def test_instances_that_fail_alike_are_one_finding_and_others_keep_theirs() -> None:
    s = healthy()
    rows = tuple(replace(r, error="connection refused") for r in s.apiservers.instances)
    s = replace(s, apiservers=replace(s.apiservers, instances=rows))
    found = [f.title for f in evaluate(s) if f.code == "KT-API-010"]
    assert found == ["apiserver-0, apiserver-1: connection refused"]
    # a member's own failure is its own finding (the reason names it)
    m = replace(member("etcd-1"), error="etcd-1 serves metrics on loopback only")
    s = replace(healthy(), etcd=replace(healthy().etcd, members=(member("etcd-0"), m)))
    assert [f.title for f in evaluate(s) if f.code == "KT-ETCD-010"] == [
        "etcd-1: etcd-1 serves metrics on loopback only"
    ]
