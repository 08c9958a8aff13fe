"""etcd space: how much a defragmentation would give back, and in which order to do it.

Each member's database file only grows: compaction frees pages inside it, and only a
defragmentation (``etcdctl defrag``, one member at a time) returns them. While a member
defragments it serves no reads or writes, so the usual order is the followers first and
the leader last (a leader that stalls makes the cluster elect another). The advice is
given when some member passes the fragmentation rule (KT-ETCD-006: at least half its file
free, above the in-use floor) or its database passes the quota's warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.analysis import catalogue as c
from ktop.model.extractors import reclaimable_bytes
from ktop.model.grading import Severity
from ktop.model.snapshot_etcd import EtcdMemberRow, EtcdSnapshot
from ktop.model.text import fmt_bytes
from ktop.model.values import Val


@dataclass(frozen=True, slots=True)
class DefragStep:
    """One member to defragment, in order."""

    instance: str
    leader: bool
    reclaimable_bytes: float | None
    """Its database size minus what it uses (None when either is unknown)."""


@dataclass(frozen=True, slots=True)
class DefragAdvice:
    """Members to defragment, followers first and the leader last."""

    steps: tuple[DefragStep, ...]
    reclaimable_bytes: float
    """Summed over the members whose reclaimable space is known."""
    why: str
    """What calls for it (``etcd-1 62% fragmented``)."""

    def text(self) -> str:
        """The advice in one line."""
        names = []
        for s in self.steps:
            size = "?" if s.reclaimable_bytes is None else fmt_bytes(s.reclaimable_bytes)
            role = ", the leader" if s.leader else ""
            names.append(f"{s.instance} ({size}{role})")
        order = ", ".join(names[:-1]) + (" then " if len(names) > 1 else "") + names[-1]
        return (
            f"Defragment one member at a time, followers first, leader last: {order}; "
            f"{fmt_bytes(self.reclaimable_bytes)} reclaimable in all ({self.why}). A member "
            "serves nothing while it defragments."
        )


def reclaimable(m: EtcdMemberRow) -> float | None:
    """Bytes a defragmentation of ``m`` would give back (None when unknown)."""
    return reclaimable_bytes(m).value


def _passes(t: c.Threshold, v: Val) -> bool:
    return v.value is not None and t.grade(v.value) >= Severity.WARNING


def _reasons(m: EtcdMemberRow) -> list[str]:
    out = []
    if _passes(c.ETCD_FRAGMENTATION, m.fragmentation) and _passes(
        c.ETCD_FRAG_MIN_IN_USE, m.db_in_use_bytes
    ):
        out.append(f"{m.instance} {m.fragmentation.or_(0) * 100:.0f}% fragmented")
    if _passes(c.ETCD_QUOTA, m.db_quota_ratio):
        out.append(f"{m.instance} at {m.db_quota_ratio.or_(0) * 100:.0f}% of its quota")
    return out


def defrag_advice(etcd: EtcdSnapshot) -> DefragAdvice | None:
    """What to defragment and in which order; None when no member calls for it."""
    read = etcd.answering
    why = [r for m in read for r in _reasons(m)]
    if not why:
        return None

    def is_leader(m: EtcdMemberRow) -> bool:
        return m.is_leader.value == 1.0 or (bool(etcd.leader) and m.instance == etcd.leader)

    ordered = sorted(read, key=lambda m: (is_leader(m), -(reclaimable(m) or 0.0), m.instance))
    steps = tuple(DefragStep(m.instance, is_leader(m), reclaimable(m)) for m in ordered)
    total = sum(s.reclaimable_bytes or 0.0 for s in steps)
    return DefragAdvice(steps, total, "; ".join(why))
