"""Findings that are one reading of the registry graded by its own threshold.

A rule here is a row of data: the finding's code, the reading it grades (by its id in
:data:`ktop.model.signals.SIGNALS`, which holds the threshold, the area, the subject and
the extractor), the catalogue's summary and source, and how the finding reads. The
catalogue entry (``ktop/analysis/catalogue.py``), the finding, its signal and the
threshold its trend is measured against all derive from the reading, so a reading with a
finding is one entry in the registry and one row here.

Rules that combine readings or conditions (seats used against their limit,
fragmentation only on a database large enough to matter, a lifetime leader count, zone
states) stay written out in :mod:`ktop.analysis.rules`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ktop.analysis.findings import Finding, Severity
from ktop.model.areas import AREAS
from ktop.model.reading import Reading, key
from ktop.model.signals import BY_METRIC
from ktop.model.signals_nodes import NODES_LEASE_LAG_P99_S
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_apf import ApfRow
from ktop.model.snapshot_apiservers import ApiserverRow
from ktop.model.text import fmt_duration, fmt_whole
from ktop.model.values import Val

Describe = Callable[[ClusterSnapshot, str, Val], tuple[str, ...] | None]
"""The finding's title and evidence lines for one subject's graded value (None: not a
finding of that subject, e.g. an etcd member that did not answer)."""


@dataclass(frozen=True, slots=True)
class ReadingRule:
    """One finding code that grades one reading of the registry."""

    code: str
    metric: str
    """The reading's id in the registry."""
    summary: str
    """The catalogue's one-line summary."""
    source: str
    """Where the rule comes from (the threshold's own source is the reading's)."""
    describe: Describe
    fold: bool = False
    """True when the same finding of several subjects (etcd members, apiserver
    instances) is one fact, folded into one line naming them."""

    @property
    def reading(self) -> Reading:
        """The graded reading."""
        return BY_METRIC[self.metric]


def ms(v: Val) -> str:
    """A duration in whole milliseconds, ``?`` when unknown."""
    return "?" if v.value is None else f"{v.value * 1000:.0f} ms"


def _level(s: ClusterSnapshot, name: str) -> ApfRow:
    return next(r for r in s.apf.levels if r.priority_level == name)


def _instance(s: ClusterSnapshot, name: str) -> ApiserverRow:
    return next(r for r in s.apiservers.instances if r.instance == name)


def _rejects(s: ClusterSnapshot, level: str, v: Val) -> tuple[str, ...]:
    row = _level(s, level)
    reasons = ", ".join(
        f"{r} {x.or_(0):.1f}/s" for r, x in row.rejected_per_s.items() if x.or_(0) > 0
    )
    return (
        f"{level} rejects {v.or_(0):.1f} req/s ({reasons})",
        f"in queue {row.in_queue.or_(0):.0f}, p99 wait {ms(row.wait_p99_s)}",
    )


def _queues(s: ClusterSnapshot, level: str, v: Val) -> tuple[str, ...]:
    return (f"{level} p99 wait {ms(v)}, {_level(s, level).in_queue.or_(0):.0f} in queue",)


def _budget(s: ClusterSnapshot, instance: str, v: Val) -> tuple[str, ...] | None:
    slo = _instance(s, instance).worst_budget
    if slo is None:
        return None
    return (
        f"{instance}: {slo.kind} calls burned {v.or_(0) * 100:.0f}% of their error budget "
        f"{slo.budget_span}",
    )


def _member(text: Callable[[str, Val], str]) -> Describe:
    """An etcd member's finding, none for a member that did not answer."""

    def describe(s: ClusterSnapshot, name: str, v: Val) -> tuple[str, ...] | None:
        answered = any(m.instance == name for m in s.etcd.answering)
        return (text(name, v),) if answered else None

    return describe


def _alarms(s: ClusterSnapshot, name: str, v: Val) -> tuple[str, ...] | None:
    member = next((m for m in s.etcd.answering if m.instance == name), None)
    if member is None:
        return None
    kinds = " and ".join(member.alarm_types) or "an"
    return (
        f"{name}: {kinds} alarm standing ({fmt_whole(v.or_(0))})",
        "NOSPACE refuses every write until the space is freed and the alarm disarmed "
        "(etcdctl alarm disarm); CORRUPT refuses reads and writes",
    )


def _lease_lag(_s: ClusterSnapshot, _subject: str, v: Val) -> tuple[str, ...]:
    t = NODES_LEASE_LAG_P99_S.threshold
    assert t is not None
    return (
        f"lease lag p99 {fmt_duration(v.or_(0))} (warning > {t.warn:g}s, kubelet lease "
        f"duration {t.critical:g}s)",
    )


_ETCD = "etcd health (000 §4.4)"

READING_RULES: tuple[ReadingRule, ...] = (
    ReadingRule(
        "KT-APF-001", "apf.rejected_per_s", "A priority level rejects requests", "triage P1",
        _rejects,
    ),
    ReadingRule(
        "KT-APF-002", "apf.wait_p99_s", "Requests queue in a priority level", "triage P1",
        _queues,
    ),
    ReadingRule(
        "KT-API-004", "api.throttled_per_s", "Clients are throttled (HTTP 429)", "triage P1, P5",
        lambda _s, i, v: (f"{i} answers {v.or_(0):.1f} 429/s",), fold=True,
    ),
    ReadingRule(
        "KT-API-005", "api.terminations_per_s", "An apiserver terminates requests", "triage P1",
        lambda _s, i, v: (f"{i} terminates {v.or_(0):.1f} requests/s",), fold=True,
    ),
    ReadingRule(
        "KT-API-006", "api.slo_budget", "An API call SLO's error budget is burning",
        "sig-scalability/slos api_call_latency; triage P1", _budget, fold=True,
    ),
    ReadingRule(
        "KT-ETCD-003", "etcd.fsync_p99_s", "WAL fsync is slow", _ETCD,
        _member(lambda m, v: f"{m} WAL fsync p99 {ms(v)}"), fold=True,
    ),
    ReadingRule(
        "KT-ETCD-004", "etcd.commit_p99_s", "Backend commit is slow", _ETCD,
        _member(lambda m, v: f"{m} backend commit p99 {ms(v)}"), fold=True,
    ),
    ReadingRule(
        "KT-ETCD-005", "etcd.db_quota_ratio", "etcd database is close to its quota",
        "etcd health (003 §6)",
        _member(lambda m, v: f"{m} db at {v.or_(0) * 100:.0f}% of quota"), fold=True,
    ),
    ReadingRule(
        "KT-ETCD-007", "etcd.proposals_failed_per_s", "Proposals are failing", _ETCD,
        _member(lambda m, v: f"{m} {v.or_(0):.2f} failed proposals/s"), fold=True,
    ),
    ReadingRule(
        "KT-ETCD-008", "etcd.peer_rtt_p99_s", "Peer round trips are slow", _ETCD,
        _member(lambda m, v: f"{m} peer round-trip p99 {ms(v)}"), fold=True,
    ),
    ReadingRule(
        "KT-ETCD-009", "etcd.alarms", "An etcd alarm stands", _ETCD, _alarms, fold=True,
    ),
    ReadingRule(
        "KT-NODE-004", "nodes.lease_lag_p99_s", "Node heartbeats (Leases) lag", "triage P4",
        _lease_lag,
    ),
)  # fmt: skip
"""Every finding that grades one reading, in catalogue order within its area."""

BY_READING_CODE = {r.code: r for r in READING_RULES}


def graded_findings(s: ClusterSnapshot, rule: ReadingRule) -> Iterator[tuple[str, Finding]]:
    """``(subject, finding)`` of every subject whose reading passes the rule's threshold
    (an unknown reading is no finding: the area's unknown finding and triage say so).
    """
    r = rule.reading
    t, area, extract = r.threshold, r.area, r.extract
    if t is None or area is None or extract is None or AREAS[area].unread(s):
        return
    for subject, v in extract(s):
        sev = Severity.OK if v.value is None else t.grade(v.value)
        if not sev:
            continue
        lines = rule.describe(s, subject, v)
        if lines is None:
            continue
        title, *evidence = lines
        signal = key(r.metric, subject)
        yield subject, Finding(rule.code, sev, area, title, tuple(evidence), signal, t.fires_at)
