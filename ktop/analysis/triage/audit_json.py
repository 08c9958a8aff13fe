"""The audit logs' digest in the triage JSON document (``audit``, docs/triage-json.md)."""

from __future__ import annotations

from typing import Any

from ktop.model.audit_digest import AuditDigest, ClientRow


def _client(r: ClientRow) -> dict[str, Any]:
    return {
        "user": r.user,
        "user_agent": r.user_agent,
        "verb": r.verb,
        "resource": r.resource,
        "requests": r.requests,
        "rejected": r.rejected,
        "server_errors": r.server_errors,
        "peak_per_s": r.peak_per_s,
        "latency_p99_s": r.latency_p99_s,
        "priority_level": r.priority_level or None,
        "flow_schema": r.flow_schema or None,
        "at_least": r.at_least,
        "impersonated_by": r.impersonated_by or None,
    }


def audit_json(d: AuditDigest | None) -> dict[str, Any] | None:
    """The digest (None when no audit log was given)."""
    if d is None:
        return None
    return {
        "files": list(d.files),
        "first": d.first,
        "last": d.last,
        "requests": d.requests,
        "rejected": d.rejected,
        "server_errors": d.server_errors,
        "classified_by": d.classified_by,
        "clients": [_client(r) for r in d.clients],
        "minutes": [
            {
                "minute": m.minute,
                "requests": m.requests,
                "rejected": m.rejected,
                "top": [
                    {
                        "user": k[0],
                        "user_agent": k[1],
                        "verb": k[2],
                        "resource": k[3],
                        "requests": n,
                        "rejected": rej,
                    }
                    for k, n, rej in m.top
                ],
            }
            for m in d.minutes
        ],
        "malformed_lines": d.malformed,
        "outside_window": d.outside,
        "other_stages": d.other_stages,
        "clients_dropped": d.dropped,
        "problems": list(d.problems),
    }
