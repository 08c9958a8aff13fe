"""Evidence readers: one pure function per evidence ID, snapshot (and baseline) in;
this module holds what they share, `evidence_api`, `evidence_etcd`, `evidence_pods`,
`evidence_nodes` and `evidence_ha` the readers of each area, `readers` the table.

Each returns a :class:`EvidenceReading`: a severity graded by the evidence's catalogue
threshold (or by the rule its spec states), the value and a detail line. An
unreadable input gives ``Severity.UNKNOWN`` with the reason as the detail: an input
that was not read never becomes a number (``0 of N``, a share of nothing), and a
value from a single scrape of a lifetime counter or histogram is not graded (it is
context in the detail until a second scrape gives a window).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ktop.analysis.findings import Severity
from ktop.analysis.triage.baseline import BaselineSource
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.model.audit_digest import AuditDigest
from ktop.model.reading import key as signal_key
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_apiservers import ApiserverRow
from ktop.model.text import finite_only
from ktop.model.values import Val

NOT_COLLECTED = "not collected by ktop"
LIFETIME = "(lifetime, single scrape): not graded until a second scrape gives a window"
"""Said of a value read from one scrape of a lifetime counter or histogram."""
PLAIN_RESOURCES = ("Insufficient cpu", "Insufficient memory", "Too many pods")


@dataclass(frozen=True, slots=True)
class EvidenceReading:
    """One evidence reading before it is attached to its spec."""

    severity: Severity
    value: float | None
    detail: str
    signal: str = ""
    """The history key of the signal the reading rests on (its worst subject's), if any."""
    threshold: float | None = None
    """The value of ``signal`` beyond which the reading is not ok, when it is not the
    spec's own threshold (e.g. a baseline-relative one)."""
    onset: float | None = None
    """When the problem began as the readings themselves date it, not a history: a
    process' start time, a node's Ready transition (source clock). It stands for the
    onset when the history did not see the breach begin (:func:`~.evaluate.read_evidence`)."""

    def on(self, signal: str, threshold: float | None = None) -> EvidenceReading:
        """The same reading, resting on ``signal`` (kept only when the reading is known)."""
        if self.severity is Severity.UNKNOWN:
            return self
        return replace(self, signal=signal, threshold=threshold)


@dataclass(frozen=True, slots=True)
class Context:
    """What the readers read: the snapshot and, when there are, its baseline and the
    audit logs' digest.
    """

    snap: ClusterSnapshot
    baseline: BaselineSource | None = None
    audit: AuditDigest | None = None
    """What the apiservers' audit logs say about the same time, when they were given."""


Reader = Callable[[Context, EvidenceSpec], EvidenceReading]


def feed_reason(snap: ClusterSnapshot, feed: str, default: str) -> str:
    """Why a feed is unknown, as its source said (e.g. which bundle file is missing)."""
    for f in snap.freshness:
        if f.name == feed and f.error:
            return f.error
    return default


def api_rows(ctx: Context) -> list[ApiserverRow]:
    """The apiserver instances that answered."""
    return list(ctx.snap.apiservers.answering)


def unknown(reason: str) -> EvidenceReading:
    """Evidence that could not be read, with why."""
    return EvidenceReading(Severity.UNKNOWN, None, reason or "unknown")


def graded(spec: EvidenceSpec, v: Val, detail: str) -> EvidenceReading:
    """A reading graded by the spec's threshold; unknown stays unknown with its reason,
    as does a value with no observations (nothing measured is not a measurement of
    health), and a lifetime value (one scrape) is unknown with the value in the detail.
    """
    if v.value is None:
        return unknown(v.reason)
    if v.lifetime:
        return unknown(f"{detail} {LIFETIME}")
    assert spec.threshold is not None, spec.id
    return EvidenceReading(spec.threshold.grade(v.value), v.value, detail)


def worst_row(rows: Sequence[tuple[str, Val]]) -> tuple[str, Val] | None:
    """The row with the highest known value; None when none is known."""
    known = [(n, v) for n, v in rows if v.value is not None]
    return max(known, key=lambda r: r[1].or_(0.0)) if known else None


def lifetime_note(rows: Sequence[tuple[str, Val]], fmt: Callable[[float], str]) -> str:
    """``(load-balanced) 1.25 s`` for each lifetime row, worst first."""
    life = sorted((r for r in rows if r[1].lifetime), key=lambda r: -r[1].or_(0.0))
    return ", ".join(f"{n}: {fmt(v.or_(0.0))}" for n, v in life)


def worst_reading(
    spec: EvidenceSpec,
    rows: Sequence[tuple[str, Val]],
    what: str,
    fmt: Callable[[float], str],
    metric: str = "",
) -> EvidenceReading:
    """Grade the worst known row; with none known (unread, or no observations) unknown,
    with every reason.

    With ``metric``, the reading rests on that signal of the worst row's subject.
    """
    if not rows:
        return unknown(f"no {what} seen")
    if worst_row(rows) is None:
        return unknown("; ".join(dict.fromkeys(v.reason for _, v in rows if v.reason)))
    # a lifetime value (one scrape) is context, never graded: the windowed rows decide
    life = lifetime_note(rows, fmt)
    w = worst_row([(n, v) for n, v in rows if not v.lifetime])
    if w is None:
        return unknown(f"{life} {LIFETIME}")
    name, v = w
    also = f"; {life} {LIFETIME}" if life else ""
    r = graded(spec, v, f"{name}: {fmt(v.or_(0.0))}{also}")
    return r.on(signal_key(metric, name)) if metric else r


@finite_only
def fmt_s(x: float) -> str:
    """Seconds: ``250 ms`` below a second, else ``1.25 s``."""
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


@finite_only
def fmt_rate(x: float) -> str:
    """A rate per second."""
    return f"{x:.2f}/s"


@finite_only
def fmt_ratio(x: float) -> str:
    """A share as a whole percentage."""
    return f"{x * 100:.0f} %"


@finite_only
def fmt_times(x: float) -> str:
    """A multiple: ``2.50x``."""
    return f"{x:.2f}x"


@finite_only
def fmt_count(x: float) -> str:
    """A count."""
    return f"{x:.0f}"


def not_collected(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ktop does not collect: always unknown, and says so."""
    return unknown(NOT_COLLECTED)
