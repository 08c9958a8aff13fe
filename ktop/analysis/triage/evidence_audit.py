"""Evidence from apiserver audit logs (``ktop triage --audit-log``): the 429s they
record and the client they name. Without audit logs a path leaves them out (they would
only say "not given"); neither is first-line, so no path waits for them; with them, the
429s make the queueing path suspect on their own (``api429`` in :mod:`.evaluate`), as
the live 429 rate does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ktop.analysis.findings import Severity
from ktop.analysis.triage.evidence import Context, EvidenceReading, Reader, graded, unknown
from ktop.analysis.triage.evidence_specs import EvidenceSpec
from ktop.model import limits
from ktop.model.audit_digest import AuditDigest, ClientRow, MinuteRow
from ktop.model.events import Area
from ktop.model.values import Val

NO_AUDIT_LOG = "no audit log given (--audit-log)"

AUDIT_REJECTED = EvidenceSpec(
    "audit.rejected",
    "429 responses in the audit logs",
    "apiserver audit events (audit.k8s.io/v1) at their final stage: responseStatus.code",
    "requests answered 429 in the audit logs' worst minute, per second",
    "/s",
    Area.APF,
    limits.API_THROTTLED,
    first_line=False,
    suspect_at=Severity.WARNING,
)
AUDIT_CLIENT = EvidenceSpec(
    "audit.top_client",
    "Client the audit logs name",
    "apiserver audit events: user (after impersonation), userAgent, verb, objectRef; "
    "its APF level from the FlowSchemas",
    "the client with the most 429s (else the most requests) in the audit logs' worst "
    "minute, as a share of that minute's 429s (else requests)",
    "ratio",
    Area.APF,
    limits.TALKER_DOMINANCE,
    first_line=False,
    suspect_at=None,
)


def minute_words(minute: float) -> str:
    """``03:10 UTC``."""
    return time.strftime("%H:%M UTC", time.gmtime(minute))


def client_words(row: ClientRow, *, user: bool = True) -> str:
    """A client with its counts, latency and APF level, in words (without its user when
    ``user`` is false: its call and user agent).
    """
    parts = [f"{row.requests:,}{'+' if row.at_least else ''} requests"]
    if row.peak_per_s:
        parts.append(f"{row.peak_per_s:.1f}/s at peak")
    if row.rejected:
        parts.append(f"{row.rejected:,} answered 429")
    if row.server_errors:
        parts.append(f"{row.server_errors:,} answered 5xx")
    if row.latency_p99_s is not None:
        parts.append(f"p99 <= {row.latency_p99_s:.2g} s")
    level = f"{row.priority_level} ({row.flow_schema})" if row.priority_level else "no APF level"
    parts.append(level)
    agent = f" ({row.user_agent})" if row.user_agent else ""
    who = row.sentence() if user else f"{row.verb} {row.resource}{agent}"
    return f"{who}: {', '.join(parts)}"


def worst_minute(d: AuditDigest) -> tuple[MinuteRow, bool] | None:
    """The minute with the most 429s (True), else the one with the most requests."""
    rejected = d.peak_rejected
    if rejected is not None:
        return rejected, True
    peak = d.peak
    return (peak, False) if peak is not None else None


@dataclass(frozen=True, slots=True)
class NamedClient:
    """The user the audit logs name, with its calls (busiest or most rejected first)."""

    user: str
    calls: tuple[ClientRow, ...]
    share: float
    """Its share of the worst minute's 429s (``by_rejected``), else of its requests."""
    minute: MinuteRow
    by_rejected: bool

    def sentence(self) -> str:
        """``ktop-lab-low (python/3.11 aiohttp) list nodes, list pods, +2 more``."""
        agent = next((c.user_agent for c in self.calls if c.user_agent), "")
        kinds = [f"{c.verb} {c.resource}" for c in self.calls[:CALLS_SHOWN]]
        more = len(self.calls) - CALLS_SHOWN
        said = ", ".join(kinds) + (f", +{more} more" if more > 0 else "")
        return f"{self.user}{f' ({agent})' if agent else ''} {said}".rstrip()


CALLS_SHOWN = 3


def named_client(d: AuditDigest) -> NamedClient | None:
    """The user the audit logs name: the one with the most 429s in the minute with the
    most (else the most requests in the busiest minute); None with no request counted.
    """
    worst = worst_minute(d)
    if worst is None or not worst[0].users:
        return None
    minute, by_rejected = worst
    pick = max(minute.users, key=lambda u: (u[2], u[1])) if by_rejected else minute.users[0]
    user, requests, rejected = pick
    total = minute.rejected if by_rejected else minute.requests
    share = (rejected if by_rejected else requests) / total if total else 0.0
    rank = (lambda r: (-r.rejected, -r.requests)) if by_rejected else (lambda r: -r.requests)
    calls = tuple(sorted((r for r in d.clients if r.user == user), key=rank))
    return NamedClient(user, calls, share, minute, by_rejected)


def audit_rejected(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``audit.rejected``."""
    d = ctx.audit
    if d is None:
        return unknown(NO_AUDIT_LOG)
    if not d.requests:
        return unknown("the audit logs hold no request in the window")
    worst = d.peak_rejected
    if worst is None:
        return graded_words(spec, 0.0, f"no 429 among {d.requests:,} requests")
    detail = (
        f"{worst.rejected:,} answered 429 at {minute_words(worst.minute)} "
        f"({d.rejected:,} of {d.requests:,} requests in the logs)"
    )
    return graded_words(spec, worst.rejected / 60.0, detail)


def graded_words(spec: EvidenceSpec, value: float, detail: str) -> EvidenceReading:
    """A known value graded by the spec's threshold."""
    assert spec.threshold is not None
    return EvidenceReading(spec.threshold.grade(value), value, detail)


def audit_client(ctx: Context, spec: EvidenceSpec) -> EvidenceReading:
    """Evidence ``audit.top_client``."""
    d = ctx.audit
    if d is None:
        return unknown(NO_AUDIT_LOG)
    named = named_client(d)
    if named is None:
        return unknown("the audit logs hold no request in the window")
    what = "429s" if named.by_rejected else "requests"
    at = minute_words(named.minute.minute)
    calls = "; ".join(client_words(c, user=False) for c in named.calls[:CALLS_SHOWN]) or "-"
    detail = f"{named.user}: {named.share:.0%} of the {what} at {at}; its calls: {calls}"
    return graded(spec, Val.of(named.share), detail)


AUDIT_EVIDENCE = frozenset({AUDIT_REJECTED.id, AUDIT_CLIENT.id})
"""The evidence read from audit logs (left out of a path without them)."""

AUDIT_READERS: dict[str, Reader] = {
    AUDIT_REJECTED.id: audit_rejected,
    AUDIT_CLIENT.id: audit_client,
}
