"""Pure converters from Kubernetes API objects (as JSON dicts) to compact records.

They keep only what the model needs, intern repeated strings (zone, region,
rack, namespace) and never keep the object itself.
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

from ktop.model.events import NodeRecord, PendingPodRecord, PodWait, QuotaRecord, Readiness

# In the order the node lifecycle controller reads them (GetZoneKey): the beta label
# first, so that zones group exactly as the controller groups them.
ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")
EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NOT_READY = "node.kubernetes.io/not-ready"


def parse_time(value: Any) -> float | None:
    """An RFC 3339 timestamp as Unix seconds, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def first_label(labels: dict[str, str], keys: tuple[str, ...]) -> str:
    """The value of the first of ``keys`` set on ``labels`` (interned), else empty."""
    for k in keys:
        if labels.get(k):
            return sys.intern(labels[k])
    return ""


def _condition(conditions: Any, kind: str) -> dict[str, Any] | None:
    for c in conditions or []:
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def node_record(obj: dict[str, Any], rack_label: str) -> NodeRecord:
    """A Node object as a :class:`NodeRecord`."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    spec = obj.get("spec") or {}
    ready = _condition((obj.get("status") or {}).get("conditions"), "Ready")
    status = str(ready.get("status")) if ready else "Unknown"
    readiness = Readiness(status) if status in ("True", "False") else Readiness.UNKNOWN
    taints = {t.get("key") for t in spec.get("taints") or [] if isinstance(t, dict)}
    return NodeRecord(
        name=str(meta.get("name", "")),
        region=first_label(labels, REGION_LABELS),
        zone=first_label(labels, ZONE_LABELS),
        rack=sys.intern(labels.get(rack_label, "")),
        ready=readiness,
        ready_since=parse_time(ready.get("lastTransitionTime")) if ready else None,
        unreachable_taint=TAINT_UNREACHABLE in taints,
        not_ready_taint=TAINT_NOT_READY in taints,
        unschedulable=bool(spec.get("unschedulable", False)),
        exclude_disruption=EXCLUDE_DISRUPTION in labels,
    )


def pending_pod_record(obj: dict[str, Any]) -> PendingPodRecord | None:
    """A Pending pod as a :class:`PendingPodRecord`; None when the pod is not Pending."""
    status = obj.get("status") or {}
    if status.get("phase", "Pending") != "Pending":
        return None
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    node = str(spec.get("nodeName") or "")
    cond = _condition(status.get("conditions"), "PodScheduled")
    message = str(cond.get("message", "")) if cond else ""
    reason = str(cond.get("reason", "")) if cond else ""
    if node:
        wait = PodWait.BOUND_NOT_STARTED
    elif spec.get("schedulingGates") or reason == "SchedulingGated":
        wait = PodWait.GATED
    elif cond and cond.get("status") == "False" and reason == "Unschedulable":
        wait = PodWait.UNSCHEDULABLE
    elif cond and cond.get("status") == "False" and reason == "SchedulerError":
        wait = PodWait.SCHEDULER_ERROR
    else:
        wait = PodWait.NOT_ATTEMPTED
    return PendingPodRecord(
        namespace=sys.intern(str(meta.get("namespace", ""))),
        name=str(meta.get("name", "")),
        created=parse_time(meta.get("creationTimestamp")) or 0.0,
        wait=wait,
        node=node,
        message=message,
    )


_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9,
            "T": 1e12, "P": 1e15, "E": 1e18}  # fmt: skip


def parse_quantity(text: Any) -> float | None:
    """A Kubernetes quantity (``500m``, ``10Gi``, ``1.5e3``, ``2k``) as a number, or None."""
    if isinstance(text, int | float):
        return float(text)
    if not isinstance(text, str) or not text:
        return None
    s = text.strip()
    for suffix, factor in _BINARY.items():
        if s.endswith(suffix):
            return _number(s[: -len(suffix)], factor)
    unit = s[-1] if s[-1] in "numkMGTPE" else ""
    if unit == "E" and "e" in s[:-1].lower():
        unit = ""  # "1e3E" is malformed; "1E" is one exa: only a bare trailing E is a suffix
    return _number(s[: -len(unit)] if unit else s, _DECIMAL[unit])


def _number(digits: str, factor: float) -> float | None:
    try:
        return float(digits) * factor
    except ValueError:
        return None


def quota_record(obj: dict[str, Any]) -> QuotaRecord:
    """A ResourceQuota as a :class:`QuotaRecord` (resources with a hard limit only)."""
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    hard = status.get("hard") or (obj.get("spec") or {}).get("hard") or {}
    used = status.get("used") or {}
    items = []
    for resource, limit in sorted(hard.items()):
        h = parse_quantity(limit)
        u = parse_quantity(used.get(resource, "0"))
        if h is not None and u is not None:
            items.append((sys.intern(str(resource)), u, h))
    return QuotaRecord(
        namespace=sys.intern(str(meta.get("namespace", ""))),
        name=str(meta.get("name", "")),
        items=tuple(items),
    )
