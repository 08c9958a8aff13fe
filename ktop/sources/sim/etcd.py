"""The simulated etcd cluster: disks, raft leadership and the database.

WAL fsync and backend commit latencies are log-normal: healthy fsync has a
median of ~0.7 ms and a p99 of ~2 ms; ``etcd-slow-disk`` multiplies the
median (see ``plan.disk_slowdown``). fsyncs are sequential, so a slow disk
also lowers how many happen per second. apiserver writes wait for the
quorum's fsync and the leader's commit. A leader change bumps
``leader_changes_seen_total`` on every member, briefly leaves the cluster
without a leader and fails the proposals in flight. A member that defragments
(``plan.etcd_defrag``) reports ``etcd_disk_defrag_inflight`` 1 and its disk work waits.
"""

from __future__ import annotations

import math
import random

from ktop.model.events import Sample
from ktop.sources.sim.catalog import ETCD_DISK_BUCKETS, ETCD_VERSION, PEER_RTT_BUCKETS
from ktop.sources.sim.metrics import Histogram, gauge, labels
from ktop.sources.sim.plan import Plan, defragmenting, disk_slowdown

FSYNC_MEDIAN_S = 0.0007
FSYNC_SIGMA = 0.45
COMMIT_SIGMA = 0.5
QUOTA_BYTES = 8 * 1024**3
ELECTION_S = 2.0


def _lognormal_mean(median: float, sigma: float) -> float:
    return median * math.exp(sigma * sigma / 2)


SLOW_APPLY_S = 0.1
"""etcd counts an apply slower than this as slow (``etcd_server_slow_apply_total``)."""


def _share_above(limit: float, median: float, sigma: float) -> float:
    """The share of a lognormal distribution above ``limit``."""
    return 0.5 * math.erfc(math.log(limit / median) / (sigma * math.sqrt(2.0)))


class Member:
    """One etcd member's process state."""

    def __init__(self, rng: random.Random, index: int, member_id: str, start_time: float) -> None:
        self.index = index
        self.instance = f"etcd-{index}:2379"
        self.member_id = member_id
        self.start_time = start_time
        self.disk_jitter = 0.9 + 0.2 * rng.random()
        self.is_leader = False
        self.has_leader = True
        self.leader_changes = 1.0
        self.proposals_failed = float(rng.randint(0, 3))
        self.slow_applies = 0.0
        self.pending = 0.0
        self.wal = Histogram(ETCD_DISK_BUCKETS)
        self.commit = Histogram(ETCD_DISK_BUCKETS)
        self.rtt: dict[str, Histogram] = {}
        self.fsync_median = FSYNC_MEDIAN_S
        self.commit_median = 0.004
        self.defragmenting = False


class Etcd:
    """All members plus the shared database size."""

    def __init__(
        self, rng: random.Random, *, members: int, nodes: int, plan: Plan, start_at: float
    ) -> None:
        self._rng = rng
        self.plan = plan
        self.start_at = start_at
        ids = [f"{rng.getrandbits(64):x}" for _ in range(members)]
        self.members = [
            Member(rng, i, ids[i], start_at - rng.uniform(20, 40) * 86_400.0)
            for i in range(members)
        ]
        for m in self.members:
            m.rtt = {peer: Histogram(PEER_RTT_BUCKETS) for peer in ids if peer != m.member_id}
        self.leader = 0
        self.first_leader = 0
        self.members[0].is_leader = True
        self.changed_leader = False
        self._election_until = -1.0
        self.db_size = min(0.55 * QUOTA_BYTES, 4.0e8 + nodes * 2.5e5)
        self._compaction_phase = rng.uniform(0, 300)
        for m in self.members:
            self._observe(m, 3600.0 * 24 * 3, 200.0)

    def step(self, el: float, dt: float, writes_per_s: float) -> None:
        """Advance ``dt`` seconds with this many apiserver writes per second."""
        plan = self.plan
        if (
            plan.etcd_slow_start is not None
            and not self.changed_leader
            and len(self.members) > 1
            and el >= plan.etcd_leader_change
        ):
            self._change_leader(el, writes_per_s)
        electing = el < self._election_until
        for m in self.members:
            m.has_leader = not electing
            m.is_leader = (m.index == self.leader) and not electing
            m.defragmenting = defragmenting(plan, m.index, el)
            slow = disk_slowdown(plan, m.index, self.first_leader, el) * m.disk_jitter
            m.fsync_median = FSYNC_MEDIAN_S * slow
            m.commit_median = 0.004 + 1.5 * m.fsync_median
            self._observe(m, dt, writes_per_s)
            if m.is_leader:
                latency = _lognormal_mean(m.fsync_median, FSYNC_SIGMA) + _lognormal_mean(
                    m.commit_median, COMMIT_SIGMA
                )
                m.pending = writes_per_s * latency * (0.7 + 0.6 * self._rng.random())
                if m.fsync_median > 0.05:
                    m.proposals_failed += writes_per_s * dt * 0.002
            else:
                m.pending = 0.0
        self.db_size += writes_per_s * dt * 40.0

    def _observe(self, m: Member, dt: float, writes_per_s: float) -> None:
        mean = _lognormal_mean(m.fsync_median, FSYNC_SIGMA)
        fsyncs = min(50.0 + writes_per_s * 0.5, 0.9 / mean) * dt
        m.wal.observe_lognormal(fsyncs, m.fsync_median, FSYNC_SIGMA)
        commits = min(
            10.0 + writes_per_s * 0.02, 0.9 / _lognormal_mean(m.commit_median, COMMIT_SIGMA)
        )
        m.commit.observe_lognormal(commits * dt, m.commit_median, COMMIT_SIGMA)
        m.slow_applies += commits * dt * _share_above(SLOW_APPLY_S, m.commit_median, COMMIT_SIGMA)
        for hist in m.rtt.values():
            hist.observe_lognormal(0.5 * dt, 0.0008, 0.5)

    def _change_leader(self, el: float, writes_per_s: float) -> None:
        self.changed_leader = True
        old = self.leader
        slow = [disk_slowdown(self.plan, m.index, self.first_leader, el) for m in self.members]
        self.leader = min((i for i in range(len(self.members)) if i != old), key=slow.__getitem__)
        self._election_until = el + ELECTION_S
        for m in self.members:
            m.leader_changes += 1.0
            m.proposals_failed += writes_per_s * ELECTION_S * (0.6 if m.index == old else 0.1)

    def write_latency_s(self) -> float:
        """Extra latency etcd adds to an apiserver write: quorum fsync + leader commit."""
        fsyncs = sorted(_lognormal_mean(m.fsync_median, FSYNC_SIGMA) for m in self.members)
        quorum = fsyncs[len(fsyncs) // 2]
        leader = self.members[self.leader]
        return 2 * quorum + _lognormal_mean(leader.commit_median, COMMIT_SIGMA)

    def samples(self, index: int, el: float) -> list[Sample]:
        """One member's ``/metrics`` (the families ktop reads)."""
        m = self.members[index]
        out: list[Sample] = []
        gauge(out, "etcd_server_has_leader", (), 1 if m.has_leader else 0)
        gauge(out, "etcd_server_is_leader", (), 1 if m.is_leader else 0)
        gauge(out, "etcd_server_leader_changes_seen_total", (), m.leader_changes)
        m.wal.export("etcd_disk_wal_fsync_duration_seconds", (), out)
        m.commit.export("etcd_disk_backend_commit_duration_seconds", (), out)
        gauge(out, "etcd_disk_defrag_inflight", (), 1 if m.defragmenting else 0)
        gauge(out, "etcd_server_proposals_pending", (), round(m.pending))
        gauge(out, "etcd_server_proposals_failed_total", (), math.floor(m.proposals_failed))
        gauge(out, "etcd_server_slow_apply_total", (), math.floor(m.slow_applies))
        size = round(self.db_size * (1.0 + 0.002 * index) / 4096) * 4096
        cycle = ((el + self._compaction_phase) % 300.0) / 300.0
        in_use = round(size * (0.58 + 0.06 * cycle) / 4096) * 4096
        gauge(out, "etcd_mvcc_db_total_size_in_bytes", (), size)
        gauge(out, "etcd_mvcc_db_total_size_in_use_in_bytes", (), in_use)
        gauge(out, "etcd_debugging_mvcc_db_total_size_in_bytes", (), size)
        gauge(out, "etcd_server_quota_backend_bytes", (), QUOTA_BYTES)
        for peer, hist in m.rtt.items():
            hist.export("etcd_network_peer_round_trip_time_seconds", labels(To=peer), out)
        gauge(out, "etcd_server_version", labels(server_version=ETCD_VERSION), 1)
        gauge(out, "process_start_time_seconds", (), round(m.start_time, 2))
        return out
