"""A running defragmentation as the cause of an etcd stall.

While a member defragments (``etcd_disk_defrag_inflight`` is 1, etcd 3.4.18+) it blocks
reads and writes until the defragmentation ends: its WAL fsyncs and backend commits
wait, and a leader that defragments can miss its heartbeats and lose leadership. When a
defragmenting member shows such a stall, the defragmentation, not the disk, is the
probable cause. Everything here is pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.model.grading import Severity, Threshold
from ktop.model.limits import ETCD_COMMIT_P99, ETCD_FSYNC_P99, ETCD_LEADER_CHANGES
from ktop.model.snapshot_etcd import EtcdMemberRow, EtcdSnapshot
from ktop.model.text import counted, fmt_duration, short_instance
from ktop.model.values import Val

STALL_AT = Severity.WARNING
"""A latency or leader-change reading this bad on a defragmenting member is a stall."""


@dataclass(frozen=True, slots=True)
class DefragStall:
    """A defragmenting member and the signs that it stalls."""

    instance: str
    signs: tuple[str, ...]
    """``WAL fsync p99 1.20 s``, ``2 leader changes``: what shows the stall."""

    def sentence(self) -> str:
        """``etcd-1 is defragmenting: reads and writes on it block until it ends``."""
        return (
            f"{short_instance(self.instance)} is defragmenting: "
            "reads and writes on it block until it ends"
        )

    def detail(self) -> str:
        """The sentence with the signs of the stall."""
        return f"{self.sentence()} ({', '.join(self.signs)})"


def defragmenting(etcd: EtcdSnapshot) -> tuple[EtcdMemberRow, ...]:
    """The readable members that report a defragmentation in progress."""
    return tuple(m for m in etcd.answering if m.defragmenting)


def _past(threshold: Threshold, v: Val) -> bool:
    """A windowed reading at or past :data:`STALL_AT` (a lifetime value is not graded)."""
    return v.value is not None and not v.lifetime and threshold.grade(v.value) >= STALL_AT


def leader_changes(etcd: EtcdSnapshot) -> float:
    """The most leader changes a readable member saw in the window (0 when none known)."""
    seen = [
        m.leader_changes.or_(0.0)
        for m in etcd.answering
        if _past(ETCD_LEADER_CHANGES, m.leader_changes)
    ]
    return max(seen, default=0.0)


def stall_signs(m: EtcdMemberRow, etcd: EtcdSnapshot) -> tuple[str, ...]:
    """What shows that ``m`` stalls: its fsync or commit p99 past their warning, or a
    leader change in the window (on any member: a defragmenting leader loses its
    leadership, and a change is seen by every member).
    """
    signs = []
    if _past(ETCD_FSYNC_P99, m.wal_fsync_p99_s):
        signs.append(f"WAL fsync p99 {fmt_duration(m.wal_fsync_p99_s.or_(0.0))}")
    if _past(ETCD_COMMIT_P99, m.backend_commit_p99_s):
        signs.append(f"backend commit p99 {fmt_duration(m.backend_commit_p99_s.or_(0.0))}")
    if changes := leader_changes(etcd):
        signs.append(counted(changes, "leader change"))
    return tuple(signs)


def defrag_stall(etcd: EtcdSnapshot) -> DefragStall | None:
    """The defragmenting member that shows a stall (the most signs first, then by name);
    None when no member defragments or none that does stalls.
    """
    stalls = [DefragStall(m.instance, stall_signs(m, etcd)) for m in defragmenting(etcd)]
    stalls = [s for s in stalls if s.signs]
    return min(stalls, key=lambda s: (-len(s.signs), s.instance), default=None)
