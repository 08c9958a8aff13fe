"""Evidence from apiserver audit logs (``ktop triage --audit-log``): the 429s they
record and the client they name. Without audit logs a path leaves them out (they would
only say "not given"); neither is first-line, so no path waits for them; with them, the
429s make the queueing path suspect on their own (``api429`` in :mod:`.evaluate`), as
the live 429 rate does.
"""

from __future__ import annotations

import time

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


def client_words(row: ClientRow) -> str:
    """A client with its counts, latency and APF level, in words."""
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
    return f"{row.sentence()}: {', '.join(parts)}"


def worst_minute(d: AuditDigest) -> tuple[MinuteRow, bool] | None:
    """The minute with the most 429s (True), else the one with the most requests."""
    rejected = d.peak_rejected
    if rejected is not None:
        return rejected, True
    peak = d.peak
    return (peak, False) if peak is not None else None


def named_client(d: AuditDigest) -> tuple[ClientRow, float, MinuteRow, bool] | None:
    """The client the audit logs name (its row, its share of the worst minute, that
    minute, whether the share is of 429s); None with no request counted.
    """
    worst = worst_minute(d)
    if worst is None or not worst[0].top:
        return None
    minute, by_rejected = worst
    pick = max(minute.top, key=lambda t: (t[2], t[1])) if by_rejected else minute.top[0]
    key, requests, rejected = pick
    total = minute.rejected if by_rejected else minute.requests
    share = (rejected if by_rejected else requests) / total if total else 0.0
    row = next((r for r in d.clients if (r.user, r.user_agent, r.verb, r.resource) == key), None)
    if row is None:  # busy in that minute only: its counts are that minute's
        user, agent, verb, resource = key
        row = ClientRow(
            user, agent, verb, resource, requests, rejected, 0, requests / 60.0, None, "", ""
        )
    return row, share, minute, by_rejected


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
    row, share, minute, by_rejected = named
    what = "429s" if by_rejected else "requests"
    detail = f"{client_words(row)}; {share:.0%} of the {what} at {minute_words(minute.minute)}"
    return graded(spec, Val.of(share), detail)


AUDIT_EVIDENCE = frozenset({AUDIT_REJECTED.id, AUDIT_CLIENT.id})
"""The evidence read from audit logs (left out of a path without them)."""

AUDIT_READERS: dict[str, Reader] = {
    AUDIT_REJECTED.id: audit_rejected,
    AUDIT_CLIENT.id: audit_client,
}
