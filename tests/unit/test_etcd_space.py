"""etcd space: reclaimable bytes per member and the defragmentation order (followers
first, the leader last), given only when a member passes the fragmentation or quota
rule. Expected numbers are computed here from the sizes given."""

from __future__ import annotations

from ktop.analysis.etcd_space import defrag_advice
from ktop.model.limits import ETCD_FRAG_MIN_IN_USE
from ktop.model.snapshot_etcd import EtcdMemberRow, EtcdSnapshot
from ktop.model.text import fmt_bytes
from ktop.model.values import Val
from ktop.ui.render.etcd import tables

GIB = float(1 << 30)


def member(
    name: str, size: float, in_use: float, *, leader: bool, quota: float = 8 * GIB
) -> EtcdMemberRow:
    return EtcdMemberRow(
        instance=name,
        is_leader=Val.of(1.0 if leader else 0.0),
        has_leader=Val.of(1.0),
        leader_changes=Val.of(0.0),
        wal_fsync_p50_s=Val.of(0.001),
        wal_fsync_p99_s=Val.of(0.002),
        backend_commit_p99_s=Val.of(0.004),
        proposals_pending=Val.of(0.0),
        proposals_failed_per_s=Val.of(0.0),
        db_size_bytes=Val.of(size),
        db_in_use_bytes=Val.of(in_use),
        quota_bytes=Val.of(quota),
        fragmentation=Val.of(1 - in_use / size),
        peer_rtt_p99_s=Val.of(0.001),
        defrag_inflight=Val.of(0.0),
        last_ok=100.0,
    )


def test_a_fragmented_member_gets_an_order_with_the_leader_last() -> None:
    members = (
        member("etcd-0", 3 * GIB, 1 * GIB, leader=True),
        member("etcd-1", 3 * GIB, 1.2 * GIB, leader=False),
        member("etcd-2", 3.5 * GIB, 1 * GIB, leader=False),
    )
    advice = defrag_advice(EtcdSnapshot(members, "etcd-0", True))
    assert advice is not None
    assert [s.instance for s in advice.steps] == ["etcd-2", "etcd-1", "etcd-0"]
    assert [s.leader for s in advice.steps] == [False, False, True]
    assert advice.reclaimable_bytes == (3 - 1) * GIB + (3 - 1.2) * GIB + (3.5 - 1) * GIB
    text = advice.text()
    assert text.index("etcd-2") < text.index("etcd-1") < text.index("etcd-0 (")
    assert "the leader" in text and fmt_bytes(2.5 * GIB) in text
    assert "67% fragmented" in text  # etcd-0: 1 - 1/3


def test_no_advice_for_a_compact_database_or_one_below_the_in_use_floor() -> None:
    compact = (member("a", 2 * GIB, 1.8 * GIB, leader=True),)
    assert defrag_advice(EtcdSnapshot(compact, "a", True)) is None
    floor = ETCD_FRAG_MIN_IN_USE.warn or 0.0
    tiny = (member("a", floor, floor / 10, leader=True),)  # 90% free but tiny in use
    assert defrag_advice(EtcdSnapshot(tiny, "a", True)) is None


def test_a_database_near_its_quota_calls_for_it_too() -> None:
    full = (
        member("a", 7.8 * GIB, 7.0 * GIB, leader=True),
        member("b", 7.8 * GIB, 7.0 * GIB, leader=False),
    )
    advice = defrag_advice(EtcdSnapshot(full, "a", True))
    assert advice is not None and "of its quota" in advice.why
    assert [s.instance for s in advice.steps] == ["b", "a"]


def test_the_members_table_shows_what_each_member_would_give_back() -> None:
    members = (member("etcd-0", 3 * GIB, 1 * GIB, leader=True),)
    spec = tables(EtcdSnapshot(members, "etcd-0", True), 100.0)[0]
    col = [c.key for c in spec.columns].index("reclaimable")
    assert spec.rows[0].cells[col].plain == fmt_bytes(2 * GIB)
