"""One apiserver audit event (``audit.k8s.io/v1``, one JSON object per line) read into
the facts ktop counts: who called, what, when, how it ended and how long it took.

Pure: bytes or a decoded object in, an :class:`AuditRecord` out. Only an event at its
final stage (``ResponseComplete``, or ``Panic``) is a request; the other stages of the
same request (``RequestReceived``, ``ResponseStarted``) are recognised and not counted.
A line that is not an audit event raises :class:`AuditLineError` saying what is wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ktop.model.flow_match import RequestFacts

FINAL_STAGES = frozenset({"ResponseComplete", "Panic"})
"""The stages at which an audit event closes a request (counted once, there)."""
OTHER_STAGES = frozenset({"RequestReceived", "ResponseStarted"})
LONG_RUNNING_SUBRESOURCES = frozenset({"exec", "attach", "portforward", "proxy", "log"})
"""Subresources whose requests stay open as long as the client wants (no latency)."""
MAX_LINE_BYTES = 4 << 20
"""A longer line is refused (an event at ``RequestResponse`` level carries objects; a
line past this is not an audit event ktop can count)."""
MAX_FIELD_CHARS = 256
"""User names, user agents and paths are cut to this many characters."""


class AuditLineError(ValueError):
    """A line that is not a countable audit event; the message says why."""


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One request, at its final stage."""

    at: float
    """When the apiserver received it (``requestReceivedTimestamp``, Unix seconds)."""
    latency_s: float | None
    """``stageTimestamp - requestReceivedTimestamp``; None for a long-running request
    (a watch, exec, proxy, log), whose duration is the client's choice."""
    code: int | None
    """The HTTP status code (``responseStatus.code``); None when the event has none."""
    facts: RequestFacts
    """What APF classifies the request by (the user after impersonation)."""
    user_agent: str
    resource: str
    """``pods``, ``leases.coordination.k8s.io``, ``pods/status``, or the URL path of a
    non-resource request (``/healthz``)."""
    impersonated_by: str = ""
    """The authenticated user when the request impersonated ``facts.user``."""


def _timestamp(value: Any, field: str) -> float:
    if not isinstance(value, str):
        raise AuditLineError(f"{field} is missing or not a string")
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise AuditLineError(f"{field} {value[:40]!r} is not an RFC 3339 time") from None


def _text(obj: Any, key: str) -> str:
    value = obj.get(key, "") if isinstance(obj, dict) else ""
    return value[:MAX_FIELD_CHARS] if isinstance(value, str) else ""


def _groups(user: Any) -> tuple[str, ...]:
    groups = user.get("groups") if isinstance(user, dict) else None
    if not isinstance(groups, list):
        return ()
    return tuple(g[:MAX_FIELD_CHARS] for g in groups[:64] if isinstance(g, str))


def _resource_words(group: str, resource: str, subresource: str) -> str:
    """``kubectl``'s way: ``leases.coordination.k8s.io``, ``pods/status``."""
    name = f"{resource}.{group}" if group else resource
    return f"{name}/{subresource}" if subresource else name


def _facts(user: Any, verb: str, **request: Any) -> RequestFacts:
    """What APF classifies by: ``user``'s name and groups, the verb, and ``request``."""
    return RequestFacts(user=_text(user, "username"), groups=_groups(user), verb=verb, **request)


def _code(event: dict[str, Any]) -> int | None:
    status = event.get("responseStatus")
    code = status.get("code") if isinstance(status, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def parse_event(event: Any) -> AuditRecord | None:
    """The request an audit event closes; None for an event at an earlier stage."""
    if not isinstance(event, dict):
        raise AuditLineError("not a JSON object")
    if event.get("kind") not in (None, "Event"):
        raise AuditLineError(f"kind {str(event.get('kind'))[:40]!r} is not an audit Event")
    stage = event.get("stage")
    stage = stage if isinstance(stage, str) else repr(stage)[:40]
    if stage in OTHER_STAGES:
        return None
    if stage not in FINAL_STAGES:
        raise AuditLineError(f"stage {stage[:40]!r} is not an audit stage")
    verb = _text(event, "verb")
    if not verb:
        raise AuditLineError("verb is missing")
    received = _timestamp(event.get("requestReceivedTimestamp"), "requestReceivedTimestamp")
    user = event.get("user")
    if not isinstance(user, dict) or not _text(user, "username"):
        raise AuditLineError("user.username is missing")
    acting = event.get("impersonatedUser")
    impersonated = isinstance(acting, dict) and bool(_text(acting, "username"))
    effective = acting if impersonated else user
    ref = event.get("objectRef")
    path = _text(event, "requestURI").split("?", 1)[0]
    if isinstance(ref, dict) and _text(ref, "resource"):
        group, resource, sub = (
            _text(ref, "apiGroup"),
            _text(ref, "resource"),
            _text(ref, "subresource"),
        )
        facts = _facts(
            effective,
            verb,
            resource_request=True,
            api_group=group,
            resource=resource,
            subresource=sub,
            namespace=_text(ref, "namespace"),
        )
        words = _resource_words(group, resource, sub)
        long_running = verb == "watch" or sub in LONG_RUNNING_SUBRESOURCES
    else:
        facts = _facts(effective, verb, resource_request=False, path=path)
        words, long_running = path or "(no path)", verb == "watch"
    latency = None
    if not long_running and "stageTimestamp" in event:
        latency = max(0.0, _timestamp(event["stageTimestamp"], "stageTimestamp") - received)
    return AuditRecord(
        at=received,
        latency_s=latency,
        code=_code(event),
        facts=facts,
        user_agent=_text(event, "userAgent"),
        resource=words,
        impersonated_by=_text(user, "username") if impersonated else "",
    )


def parse_line(line: bytes) -> AuditRecord | None:
    """One JSON line of an audit log: the request it closes, None for an earlier stage or
    a blank line.
    """
    if len(line) > MAX_LINE_BYTES:
        raise AuditLineError(f"line of {len(line)} bytes, over {MAX_LINE_BYTES} bytes")
    if not line.strip():
        return None
    try:
        event = json.loads(line)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise AuditLineError(f"not JSON ({str(exc)[:80]})") from None
    return parse_event(event)
