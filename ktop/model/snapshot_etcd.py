"""The etcd area's snapshot: its members, and etcd as the apiservers see it (see
:mod:`ktop.model.snapshot`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ktop.model.values import Val, ratio

# --------------------------------------------------------------------------
# etcd


NOT_READ = Val.unknown("not read")
"""A member value its row was made without."""


@dataclass(frozen=True, slots=True)
class EtcdMemberRow:
    """One etcd member."""

    instance: str
    is_leader: Val
    has_leader: Val
    leader_changes: Val
    """Increase of ``etcd_server_leader_changes_seen_total`` over the window."""
    wal_fsync_p50_s: Val
    wal_fsync_p99_s: Val
    backend_commit_p99_s: Val
    proposals_pending: Val
    proposals_failed_per_s: Val
    db_size_bytes: Val
    db_in_use_bytes: Val
    quota_bytes: Val
    fragmentation: Val
    """1 - in_use / total."""
    peer_rtt_p99_s: Val
    defrag_inflight: Val
    """``etcd_disk_defrag_inflight``: 1 while the member defragments (it then blocks
    reads and writes), 0 otherwise; unknown before etcd 3.4.18, which does not expose it."""
    last_ok: float | None
    error: str = ""
    leader_changes_since: float | None = None
    """The member's start time (Unix seconds, its own clock) when ``leader_changes`` counts
    every change since it started, within the window (``ktop/model/since_start.py``);
    None when ktop's own scrapes (or Prometheus' window) counted them."""
    slow_applies_per_s: Val = NOT_READ
    """Rate of ``etcd_server_slow_apply_total``: applies slower than etcd's 100 ms warning
    (a slow disk or an overloaded member)."""
    alarms: Val = NOT_READ
    """Alarms standing in the cluster as this member applied them since it started
    (``etcd_debugging_server_alarms``, etcd 3.6+; a must-gather's alarm list): NOSPACE
    refuses every write until an operator disarms it, CORRUPT refuses reads and
    writes."""
    alarm_types: tuple[str, ...] = ()
    start_time: Val = NOT_READ
    """``process_start_time_seconds``: when the member's process started."""
    """The standing alarms' types (``NOSPACE``, ``CORRUPT``)."""

    @property
    def defragmenting(self) -> bool:
        """True while the member reports a defragmentation in progress."""
        return (self.defrag_inflight.value or 0.0) >= 1.0

    @property
    def db_quota_ratio(self) -> Val:
        """Db size / quota."""
        return ratio(self.db_size_bytes, self.quota_bytes)


@dataclass(frozen=True, slots=True)
class EtcdClientRow:
    """etcd as one apiserver instance sees it (its etcd client metrics)."""

    instance: str
    requests_per_s: Val
    """``rate(etcd_requests_total)``."""
    errors_per_s: Val
    """``rate(etcd_request_errors_total)``."""
    p50_s: Val
    p99_s: Val
    """Quantiles of ``etcd_request_duration_seconds`` over every operation."""
    storage_bytes: Val
    """``apiserver_storage_size_bytes`` (older: ``apiserver_storage_db_total_size_in_bytes``)."""


@dataclass(frozen=True, slots=True)
class EtcdRequestRow:
    """One (resource, operation) of the apiservers' etcd requests, over all instances."""

    resource: str
    """``resource.group`` as in ``apiserver_storage_objects`` (the ``type`` label before 1.34)."""
    operation: str
    requests_per_s: Val
    errors_per_s: Val
    p99_s: Val


@dataclass(frozen=True, slots=True)
class EtcdApiserverView:
    """etcd as the apiservers see it: the only etcd view on managed clusters."""

    instances: tuple[EtcdClientRow, ...]
    requests: tuple[EtcdRequestRow, ...]
    """Slowest first (by p99), then busiest."""
    objects: tuple[tuple[str, Val], ...]
    """``apiserver_storage_objects`` per resource (the largest instance's count), largest
    first; -1 (a failed count) is unknown."""
    storage_bytes: Val
    """The largest storage size any apiserver reports."""
    unknown_reason: str = ""
    """Why there is no view (no apiserver exposes etcd client metrics)."""


MEMBER_FAILED = (
    "connection refused",
    "timed out",
    "timeout",
    "no route to host",
    "connection reset",
    "unreachable",
    "up == 0",
    "not running",
)
"""What a scrape error says when the member itself failed (its process or host), not the
way ktop reads it (forbidden, metrics on loopback only): the process is gone, does not
answer, or its host cannot be reached, while other members answer on the same path."""


def member_failed(error: str) -> bool:
    """True when a member's scrape error says the member failed (:data:`MEMBER_FAILED`)."""
    low = error.lower()
    return any(marker in low for marker in MEMBER_FAILED)


@dataclass(frozen=True, slots=True)
class EtcdQuorum:
    """Which etcd members count toward quorum, as the members that answer show it.

    A member counts when it answers with a leader. A member is *lost* when it answers
    without a leader, or fails (:func:`member_failed`: refused, timed out) while another
    answers: either way it no longer counts, and is never "unknown, so fine". A member
    ktop cannot read by the way it reads (forbidden, loopback only) is *unread*: neither
    up nor down.
    """

    members: int
    counting: tuple[str, ...]
    """The members that answer with a leader."""
    lost: tuple[EtcdMemberRow, ...]
    """The members that fail while another answers, or answer without a leader."""
    unread: tuple[EtcdMemberRow, ...] = ()
    """The members not read for a reason that is not theirs (forbidden, loopback only)."""

    @property
    def quorum(self) -> int:
        """The members etcd needs for quorum: ``members // 2 + 1``."""
        return self.members // 2 + 1

    @property
    def held(self) -> bool:
        """True while a member answers with a leader and enough members may count for a
        quorum (those with a leader, and the unread ones): a quorum elected that leader,
        and etcd's leader steps down when it loses quorum.
        """
        return bool(self.counting) and len(self.counting) + len(self.unread) >= self.quorum

    def _margin(self, counted: int) -> int:
        margin = counted - self.quorum
        return max(margin, 0) if self.held else margin

    @property
    def margin(self) -> int:
        """How many more members may fail before quorum is lost (negative: lost), the
        unread members counted as down.
        """
        return self._margin(len(self.counting))

    @property
    def margin_if_unread_up(self) -> int:
        """:attr:`margin` with the unread members counted as up."""
        return self._margin(len(self.counting) + len(self.unread))


class EtcdView(StrEnum):
    """Which etcd view the pane shows."""

    MEMBERS = "members"
    APISERVER = "apiserver"
    BOTH = "both"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class EtcdSnapshot:
    """The etcd cluster."""

    members: tuple[EtcdMemberRow, ...]
    leader: str
    """Instance that reports ``etcd_server_is_leader 1``; empty if none does."""
    leader_known: bool
    """False when no member could be read."""
    unknown_reason: str = ""
    """Why the members are unknown (empty when at least one was read)."""
    apiserver_view: EtcdApiserverView | None = None
    """etcd as the apiservers see it (None when the source reads no apiserver)."""

    @property
    def answering(self) -> tuple[EtcdMemberRow, ...]:
        """The members whose last scrape answered (the others say why in ``error``)."""
        return tuple(m for m in self.members if not m.error)

    def quorum(self) -> EtcdQuorum | str:
        """Who counts toward quorum (:class:`EtcdQuorum`), or why it cannot be told: no
        member seen, none answering, or ``etcd_server_has_leader`` unread on one that does.
        """
        if self.unknown_reason:
            return self.unknown_reason
        if not self.members:
            return "etcd unknown: no member read (no etcd member seen)"
        read = self.answering
        if not read:
            return (
                "etcd unknown: no member read ("
                + "; ".join(f"{m.instance}: {m.error}" for m in self.members)
                + ")"
            )
        blind = [m for m in read if m.has_leader.value is None]
        if blind:
            u = blind[0]
            return f"etcd_server_has_leader not read on {u.instance}: {u.has_leader.reason}"
        counting = tuple(m.instance for m in read if m.has_leader.value == 1)
        failed = [m for m in self.members if m.error and member_failed(m.error)]
        without = [m for m in read if m.has_leader.value != 1]
        unread = tuple(m for m in self.members if m.error and not member_failed(m.error))
        return EtcdQuorum(len(self.members), counting, (*failed, *without), unread)

    @property
    def view(self) -> EtcdView:
        """Members, the apiservers' view, both, or none."""
        members = bool(self.answering) or (
            bool(self.members) and any(m.last_ok is not None for m in self.members)
        )
        apiserver = self.apiserver_view is not None and not self.apiserver_view.unknown_reason
        if members and apiserver:
            return EtcdView.BOTH
        if members:
            return EtcdView.MEMBERS
        return EtcdView.APISERVER if apiserver else EtcdView.NONE
