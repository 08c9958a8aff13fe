"""etcd members: leader, disk latency, proposals, db size against quota."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from ktop.model.series import TargetSeries
from ktop.model.since_start import increase_since_start
from ktop.model.snapshot_etcd import EtcdMemberRow, EtcdSnapshot
from ktop.model.values import Val, ratio

DB_SIZE = "etcd_mvcc_db_total_size_in_bytes"
DB_SIZE_OLD = "etcd_debugging_mvcc_db_total_size_in_bytes"
"""The 3.4 name, deprecated in 3.5."""
DEFRAG_INFLIGHT = "etcd_disk_defrag_inflight"
DEFRAG_SINCE = "etcd 3.4.18"
"""The first release exposing :data:`DEFRAG_INFLIGHT` (etcd CHANGELOG-3.4, etcd#13397)."""


def _defrag(ts: TargetSeries) -> Val:
    """1 while the member defragments; unknown, saying why, when the gauge is absent."""
    v = ts.gauge(DEFRAG_INFLIGHT)
    if v.known:
        return v
    return Val.unknown(f"{DEFRAG_INFLIGHT} not exposed (added in {DEFRAG_SINCE})")


ALARMS = "etcd_debugging_server_alarms"
ALARMS_SINCE = (3, 6)
"""The first etcd release exposing :data:`ALARMS` (etcd CHANGELOG-3.6, etcd#14276)."""


def _alarms(ts: TargetSeries) -> tuple[Val, tuple[str, ...]]:
    """How many alarms stand as the member applied them, and their types.

    etcd moves the gauge when it applies an alarm's activation or disarming, never at its
    start: a 3.6 member's own metrics (they carry ``process_start_time_seconds``) without
    a series have applied none since it started, which is 0; an alarm raised before a
    restart and still standing is only in ``etcdctl alarm list`` (a must-gather's
    ``etcd_info/alarm_list.json``, whose every type is given, 0 included). Unknown,
    saying why, for an older member or samples that are not the member's own metrics.
    """
    by_type = ts.gauge_by(ALARMS, ("alarm_type",))
    standing = {k[0]: v.or_(0) for k, v in by_type.items() if v.or_(0) > 0}
    if standing:
        return Val.of(sum(standing.values())), tuple(sorted(standing))
    versions = ts.label_values("etcd_server_version", "server_version")
    own = ts.gauge("process_start_time_seconds").known
    if by_type or (own and any(_at_least(v, ALARMS_SINCE) for v in versions)):
        return Val.of(0.0), ()
    since = ".".join(map(str, ALARMS_SINCE))
    return Val.unknown(f"{ALARMS} not exposed (etcd {since}+) and no etcdctl alarm list"), ()


def _at_least(version: str, wanted: tuple[int, ...]) -> bool:
    parts = version.split(".")[: len(wanted)]
    try:
        return tuple(int(p) for p in parts) >= wanted
    except ValueError:
        return False


def _fragmentation(in_use: Val, total: Val) -> Val:
    r = ratio(in_use, total, zero_reason="empty database")
    return r if r.value is None else Val.of(1.0 - r.value)


LEADER_CHANGES = "etcd_server_leader_changes_seen_total"
FIRST_LEADER_SEEN = 1.0
"""What a member's :data:`LEADER_CHANGES` holds once it has found its first leader after
it started: etcd counts every leader it sees that differs from the last (none, at the
start), so the first count is the member's own start, not an election."""


def _leader_changes(ts: TargetSeries) -> tuple[Val, float | None]:
    """Changes over the window, and the member's start time when they are counted since
    it started within the window (:mod:`ktop.model.since_start`: all its counts after
    the first leader it found); with a single scrape of a member started earlier, the
    lifetime count marked as such.
    """
    inc, started = increase_since_start(ts, LEADER_CHANGES, FIRST_LEADER_SEEN)
    if inc.known or ts.scrapes >= 2:
        return inc, started
    total = ts.gauge(LEADER_CHANGES)
    return (Val.of(total.value, lifetime=True) if total.value is not None else inc), None


def member_row(
    instance: str, ts: TargetSeries | None, last_ok: float | None, error: str
) -> EtcdMemberRow:
    """One member's row; every value unknown (with ``error``) if never scraped."""
    if ts is None:
        u = Val.unknown(error or "never scraped")
        vals: dict[str, Any] = {f.name: u for f in fields(EtcdMemberRow) if f.type in ("Val", Val)}
        return EtcdMemberRow(
            instance=instance, last_ok=last_ok, error=error, leader_changes_since=None, **vals
        )
    db = ts.gauge(DB_SIZE)
    if not db.known:
        db = ts.gauge(DB_SIZE_OLD)
    in_use = ts.gauge("etcd_mvcc_db_total_size_in_use_in_bytes")
    leader_changes, changes_since = _leader_changes(ts)
    alarms, alarm_types = _alarms(ts)
    return EtcdMemberRow(
        instance=instance,
        is_leader=ts.gauge("etcd_server_is_leader"),
        has_leader=ts.gauge("etcd_server_has_leader"),
        leader_changes=leader_changes,
        leader_changes_since=changes_since,
        wal_fsync_p50_s=ts.quantile(0.5, "etcd_disk_wal_fsync_duration_seconds"),
        wal_fsync_p99_s=ts.quantile(0.99, "etcd_disk_wal_fsync_duration_seconds"),
        backend_commit_p99_s=ts.quantile(0.99, "etcd_disk_backend_commit_duration_seconds"),
        proposals_pending=ts.gauge("etcd_server_proposals_pending"),
        proposals_failed_per_s=ts.rate("etcd_server_proposals_failed_total"),
        slow_applies_per_s=ts.rate("etcd_server_slow_apply_total"),
        db_size_bytes=db,
        db_in_use_bytes=in_use,
        quota_bytes=ts.gauge("etcd_server_quota_backend_bytes"),
        fragmentation=_fragmentation(in_use, db),
        peer_rtt_p99_s=ts.quantile(0.99, "etcd_network_peer_round_trip_time_seconds"),
        defrag_inflight=_defrag(ts),
        alarms=alarms,
        alarm_types=alarm_types,
        start_time=ts.gauge("process_start_time_seconds"),
        last_ok=last_ok,
        error=error,
    )


def build_etcd(
    series: Mapping[str, TargetSeries],
    health: Mapping[str, tuple[float | None, str]],
    unknown_reason: str,
) -> EtcdSnapshot:
    """All members, the leader among the members that answered."""
    rows = []
    for instance in sorted(set(series) | set(health)):
        last_ok, error = health.get(instance, (None, ""))
        rows.append(member_row(instance, series.get(instance), last_ok, error))
    readable = [r for r in rows if not r.error and r.is_leader.known]
    leaders = [r.instance for r in readable if r.is_leader.value == 1.0]
    return EtcdSnapshot(
        members=tuple(rows),
        leader=leaders[0] if leaders else "",
        leader_known=bool(readable),
        unknown_reason="" if rows else (unknown_reason or "no etcd metrics source"),
    )
