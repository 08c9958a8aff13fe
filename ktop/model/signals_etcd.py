"""The readings of the etcd area: per member.

Part of the registry of readings, :data:`ktop.model.signals.SIGNALS`, in display order.
"""

from __future__ import annotations

from ktop.model import limits
from ktop.model.extractors import per_member, reclaimable
from ktop.model.promql import DB_QUOTA, FRAGMENTATION, INST, p99_by, rate_by, select
from ktop.model.reading import Chart, Column, JsonField, Reading
from ktop.model.scrape_targets import Component
from ktop.model.signal_areas import Area
from ktop.model.text import fmt_bytes, fmt_duration, fmt_pct, fmt_rate

_ETCD = Component.ETCD


ETCD_FSYNC_P99_S = Reading(
    "etcd.fsync_p99_s",
    "WAL fsync p99",
    "s",
    _ETCD,
    INST,
    p99_by("etcd_disk_wal_fsync_duration_seconds", INST),
    area=Area.ETCD,
    extract=per_member("wal_fsync_p99_s"),
    threshold=limits.ETCD_FSYNC_P99,
    chart=Chart("max", "WAL fsync p99, worst member", 1),
    column=Column("fsync_p99", "fsync p99", 9, 50, fmt_duration),
    json=JsonField("wal_fsync_p99_s", 40),
)

ETCD_COMMIT_P99_S = Reading(
    "etcd.commit_p99_s",
    "commit p99",
    "s",
    _ETCD,
    INST,
    p99_by("etcd_disk_backend_commit_duration_seconds", INST),
    area=Area.ETCD,
    extract=per_member("backend_commit_p99_s"),
    threshold=limits.ETCD_COMMIT_P99,
    chart=Chart("max", "backend commit p99, worst member", 2),
    column=Column("commit_p99", "commit p99", 10, 60, fmt_duration),
    json=JsonField("backend_commit_p99_s", 50),
)

ETCD_PROPOSALS_PENDING = Reading(
    "etcd.proposals_pending",
    "proposals pending",
    "",
    _ETCD,
    INST,
    f"sum by ({INST}) ({select('etcd_server_proposals_pending')})",
    area=Area.ETCD,
    extract=per_member("proposals_pending"),
    chart=Chart("sum", "proposals pending, all members", 3),
    column=Column("pending", "proposals", 9, 140),
)

ETCD_DB_SIZE_BYTES = Reading(
    "etcd.db_size_bytes",
    "db size",
    "B",
    _ETCD,
    INST,
    f"sum by ({INST}) ({select('etcd_mvcc_db_total_size_in_bytes')})",
    area=Area.ETCD,
    extract=per_member("db_size_bytes"),
    chart=Chart("max", "db size, largest member", 4),
    column=Column("db", "db size", 9, 70, fmt_bytes),
    json=JsonField("db_size_bytes", 60, "whole"),
)

ETCD_IS_LEADER = Reading(
    "etcd.is_leader",
    "leader",
    "",
    _ETCD,
    INST,
    f"sum by ({INST}) ({select('etcd_server_is_leader')})",
    higher_is_worse=False,
    area=Area.ETCD,
    extract=per_member("is_leader"),
    json=JsonField("is_leader", 10, "flag"),
)

ETCD_PROPOSALS_FAILED_PER_S = Reading(
    "etcd.proposals_failed_per_s",
    "failed proposals/s",
    "/s",
    _ETCD,
    INST,
    rate_by(select("etcd_server_proposals_failed_total"), INST),
    area=Area.ETCD,
    extract=per_member("proposals_failed_per_s"),
    threshold=limits.ETCD_FAILED_PROPOSALS,
    column=Column("failed", "failed/s", 8, 150, fmt_rate),
)

ETCD_DB_QUOTA_RATIO = Reading(
    "etcd.db_quota_ratio",
    "db / quota",
    "ratio",
    _ETCD,
    INST,
    DB_QUOTA,
    area=Area.ETCD,
    extract=per_member("db_quota_ratio"),
    threshold=limits.ETCD_QUOTA,
    column=Column("db_quota", "db/quota", 8, 110, fmt_pct),
)

ETCD_FRAGMENTATION = Reading(
    "etcd.fragmentation",
    "fragmentation",
    "ratio",
    _ETCD,
    INST,
    FRAGMENTATION,
    area=Area.ETCD,
    extract=per_member("fragmentation"),
    threshold=limits.ETCD_FRAGMENTATION,
    column=Column("frag", "frag", 6, 120, fmt_pct),
)

ETCD_RECLAIMABLE_BYTES = Reading(
    "etcd.reclaimable_bytes",
    "reclaimable",
    "B",
    _ETCD,
    INST,
    "sum by (instance) ("
    + select("etcd_mvcc_db_total_size_in_bytes")
    + " - "
    + select("etcd_mvcc_db_total_size_in_use_in_bytes")
    + ")",
    area=Area.ETCD,
    extract=reclaimable,
    column=Column("reclaimable", "reclaimable", 11, 90, fmt_bytes),
)

ETCD_PEER_RTT_P99_S = Reading(
    "etcd.peer_rtt_p99_s",
    "peer round-trip p99",
    "s",
    _ETCD,
    INST,
    p99_by("etcd_network_peer_round_trip_time_seconds", INST),
    area=Area.ETCD,
    extract=per_member("peer_rtt_p99_s"),
    threshold=limits.ETCD_PEER_RTT_P99,
    column=Column("rtt", "peer rtt p99", 12, 160, fmt_duration),
)

ETCD_DEFRAG_INFLIGHT = Reading(
    "etcd.defrag_inflight",
    "defragmenting",
    "",
    _ETCD,
    INST,
    f"sum by ({INST}) ({select('etcd_disk_defrag_inflight')})",
    area=Area.ETCD,
    extract=per_member("defrag_inflight"),
    threshold=limits.ETCD_DEFRAG_INFLIGHT,
)

ETCD_ALARMS = Reading(
    "etcd.alarms",
    "alarms",
    "",
    _ETCD,
    INST,
    f"sum by ({INST}) ({select('etcd_debugging_server_alarms')})",
    area=Area.ETCD,
    extract=per_member("alarms"),
    threshold=limits.ETCD_ALARMS,
)

ETCD_HAS_LEADER = Reading(
    "etcd.has_leader",
    "has leader",
    "",
    _ETCD,
    INST,
    f"sum by ({INST}) ({select('etcd_server_has_leader')})",
    higher_is_worse=False,
    area=Area.ETCD,
    extract=per_member("has_leader"),
    json=JsonField("has_leader", 20, "flag"),
)

ETCD_SLOW_APPLIES_PER_S = Reading(
    "etcd.slow_applies_per_s",
    "slow applies/s",
    "/s",
    _ETCD,
    INST,
    rate_by(select("etcd_server_slow_apply_total"), INST),
    area=Area.ETCD,
    extract=per_member("slow_applies_per_s"),
    column=Column("slow_apply", "slow apply/s", 12, 155, fmt_rate),
)

ETCD_SIGNALS: tuple[Reading, ...] = (
    ETCD_FSYNC_P99_S,
    ETCD_COMMIT_P99_S,
    ETCD_PROPOSALS_PENDING,
    ETCD_DB_SIZE_BYTES,
    ETCD_IS_LEADER,
    ETCD_PROPOSALS_FAILED_PER_S,
    ETCD_DB_QUOTA_RATIO,
    ETCD_FRAGMENTATION,
    ETCD_RECLAIMABLE_BYTES,
    ETCD_PEER_RTT_P99_S,
    ETCD_DEFRAG_INFLIGHT,
    ETCD_ALARMS,
    ETCD_HAS_LEADER,
    ETCD_SLOW_APPLIES_PER_S,
)
"""The etcd area's signals, in display order."""
