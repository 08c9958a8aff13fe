"""The evidence of the ETCD path (and of the paths that read etcd), kept as data as
:mod:`.evidence_specs` keeps the rest: what is read, how it is computed, the threshold
and its source. Evidence IDs never change meaning.
"""

from __future__ import annotations

from ktop.analysis import catalogue as c
from ktop.analysis.findings import Severity
from ktop.analysis.triage.evidence_specs import LIFETIME_NOT_GRADED, EvidenceSpec, of_reading
from ktop.model.events import Area
from ktop.model.limits import ETCD_DEFRAG_INFLIGHT

ETCD_LEADER = EvidenceSpec(
    "etcd.has_leader",
    "etcd members without a leader",
    "etcd_server_has_leader per member",
    "members reporting 0",
    "count",
    Area.ETCD,
)
ETCD_LOST = EvidenceSpec(
    "etcd.members_lost",
    "etcd members lost",
    "scrape of every etcd member, etcd_server_has_leader",
    "members not answering while another does, or answering without a leader; critical "
    "when fewer than a quorum (members // 2 + 1) answer with a leader",
    "count",
    Area.ETCD,
    c.ETCD_MEMBERS_LOST,
    suspect_at=Severity.WARNING,
)
ETCD_CHANGES = EvidenceSpec(
    "etcd.leader_changes",
    "etcd leader changes",
    "etcd_server_leader_changes_seen_total",
    "increase over the window (lifetime count from a single scrape); the worst member",
    "count",
    Area.ETCD,
    c.ETCD_LEADER_CHANGES,
    suspect_at=Severity.WARNING,
)
ETCD_FSYNC = of_reading(
    "etcd.wal_fsync_p99",
    "WAL fsync p99",
    "etcd.fsync_p99_s",
    "etcd_disk_wal_fsync_duration_seconds",
    "histogram_quantile(0.99) over the window; the worst member; " + LIFETIME_NOT_GRADED,
)
ETCD_COMMIT = of_reading(
    "etcd.backend_commit_p99",
    "Backend commit p99",
    "etcd.commit_p99_s",
    "etcd_disk_backend_commit_duration_seconds",
    "histogram_quantile(0.99) over the window; the worst member; " + LIFETIME_NOT_GRADED,
)
ETCD_QUOTA = of_reading(
    "etcd.db_quota",
    "Database size against quota",
    "etcd.db_quota_ratio",
    "etcd_mvcc_db_total_size_in_bytes, etcd_server_quota_backend_bytes",
    "size / quota; the fullest member",
)
ETCD_ALARMS = of_reading(
    "etcd.alarms",
    "etcd alarms",
    "etcd.alarms",
    "etcd_debugging_server_alarms (etcd 3.6+; a must-gather's etcdctl alarm list)",
    "alarms standing as each member applied them since it started (etcd sets the gauge "
    "when it applies an alarm: one raised before a member's restart is only in etcdctl "
    "alarm list); the member that sees the most; critical makes the path suspect",
    first_line=False,
)
ETCD_FRAG = of_reading(
    "etcd.fragmentation",
    "Database fragmentation",
    "etcd.fragmentation",
    "etcd_mvcc_db_total_size_in_use_in_bytes, etcd_mvcc_db_total_size_in_bytes",
    "1 - in use / size; the worst member",
    first_line=False,
)
ETCD_DEFRAG = EvidenceSpec(
    "etcd.defrag_inflight",
    "Defragmentation in progress",
    "etcd_disk_defrag_inflight (etcd 3.4.18+), with the member's WAL fsync and backend "
    "commit p99 and the members' leader changes",
    "the members defragmenting; critical when one of them has a WAL fsync or backend "
    "commit p99 past its warning, or the leader changed in the window: the "
    "defragmentation, which blocks the member's reads and writes until it ends, is the "
    "stall's probable cause",
    "count",
    Area.ETCD,
    ETCD_DEFRAG_INFLIGHT,
    first_line=False,
)
ETCD_PROPOSALS = of_reading(
    "etcd.failed_proposals",
    "Failed proposals",
    "etcd.proposals_failed_per_s",
    "etcd_server_proposals_failed_total",
    "rate over the window; the worst member",
    first_line=False,
)
ETCD_RESTART = EvidenceSpec(
    "etcd.recent_restart",
    "Most recent etcd member restart",
    "process_start_time_seconds per member",
    "snapshot time - the latest start time among the members that answer; a warning when "
    "that start is within the look-back, the first start in it its onset",
    "s",
    Area.ETCD,
    first_line=False,
    suspect_at=Severity.WARNING,
)
