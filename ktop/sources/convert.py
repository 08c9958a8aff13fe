"""Pure converters from Kubernetes API objects (as JSON dicts) to compact records.

They keep only what the model needs, intern repeated strings (zone, region,
rack, namespace) and never keep the object itself.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from typing import Any

from ktop.model.events import (
    NodeRecord,
    PendingPodRecord,
    PodWait,
    QuotaRecord,
    Readiness,
    row_namespace,
)

# In the order the node lifecycle controller reads them (GetZoneKey): the beta label
# first, so that zones group exactly as the controller groups them.
ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")
EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NOT_READY = "node.kubernetes.io/not-ready"


class ObjectError(ValueError):
    """A field of an API object has the wrong type: the object is skipped (and counted)."""


def mapping(parent: Any, key: str) -> dict[str, Any]:
    """``parent[key]`` as a mapping: ``{}`` when absent or null, ObjectError when not one."""
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ObjectError(f"{key} is {type(value).__name__}, not an object")
    return value


def sequence(parent: Any, key: str) -> list[Any]:
    """``parent[key]`` as a list: ``[]`` when absent or null, ObjectError when not one."""
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return []
    if not isinstance(value, list):
        raise ObjectError(f"{key} is {type(value).__name__}, not a list")
    return value


def text(parent: Any, key: str) -> str:
    """``parent[key]`` as a string: ``""`` when absent or null (never ``'None'``)."""
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise ObjectError(f"{key} is {type(value).__name__}, not a string")


def flag(parent: Any, key: str) -> bool:
    """``parent[key]`` as a boolean: JSON booleans, and ``"true"``/``"false"`` in any case."""
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ObjectError(f"{key} is {value!r:.40}, not true or false")


def count(parent: Any, key: str, default: int) -> int:
    """``parent[key]`` as a non-negative integer (``default`` when absent, null or zero)."""
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None or value == 0:
        return default
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ObjectError(f"{key} is {type(value).__name__}, not an integer")
    if isinstance(value, str):
        if not value.isdigit() or len(value) > 18:
            raise ObjectError(f"{key} is not an integer")
        value = int(value)
    if value < 0:
        raise ObjectError(f"{key} is negative")
    return value


def parse_time(value: Any) -> float | None:
    """An RFC 3339 timestamp as Unix seconds, or None.

    A time without an offset is UTC (Kubernetes writes UTC), never the
    machine's local time.
    """
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def first_label(labels: dict[str, Any], keys: tuple[str, ...]) -> str:
    """The value of the first of ``keys`` set on ``labels`` (interned), else empty."""
    for k in keys:
        value = text(labels, k)
        if value:
            return sys.intern(value)
    return ""


def _condition(conditions: list[Any], kind: str) -> dict[str, Any] | None:
    for c in conditions:
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def node_record(obj: dict[str, Any], rack_label: str) -> NodeRecord:
    """A Node object as a :class:`NodeRecord` (ObjectError when a field has the wrong type)."""
    meta = mapping(obj, "metadata")
    labels = mapping(meta, "labels")
    spec = mapping(obj, "spec")
    ready = _condition(sequence(mapping(obj, "status"), "conditions"), "Ready")
    status = text(ready, "status") if ready else "Unknown"
    readiness = Readiness(status) if status in ("True", "False") else Readiness.UNKNOWN
    taints = {text(t, "key") for t in sequence(spec, "taints") if isinstance(t, dict)}
    return NodeRecord(
        name=text(meta, "name"),
        region=first_label(labels, REGION_LABELS),
        zone=first_label(labels, ZONE_LABELS),
        rack=sys.intern(text(labels, rack_label)),
        ready=readiness,
        ready_since=parse_time(ready.get("lastTransitionTime")) if ready else None,
        unreachable_taint=TAINT_UNREACHABLE in taints,
        not_ready_taint=TAINT_NOT_READY in taints,
        unschedulable=flag(spec, "unschedulable"),
        exclude_disruption=EXCLUDE_DISRUPTION in labels,
    )


def pending_pod_record(obj: dict[str, Any]) -> PendingPodRecord | None:
    """A Pending pod as a :class:`PendingPodRecord`; None when the pod is not Pending."""
    status = mapping(obj, "status")
    if (text(status, "phase") or "Pending") != "Pending":
        return None
    meta = mapping(obj, "metadata")
    spec = mapping(obj, "spec")
    node = text(spec, "nodeName")
    cond = _condition(sequence(status, "conditions"), "PodScheduled")
    message = text(cond, "message")
    reason = text(cond, "reason")
    if node:
        wait = PodWait.BOUND_NOT_STARTED
    elif sequence(spec, "schedulingGates") or reason == "SchedulingGated":
        wait = PodWait.GATED
    elif cond and cond.get("status") == "False" and reason == "Unschedulable":
        wait = PodWait.UNSCHEDULABLE
    elif cond and cond.get("status") == "False" and reason == "SchedulerError":
        wait = PodWait.SCHEDULER_ERROR
    else:
        wait = PodWait.NOT_ATTEMPTED
    return PendingPodRecord(
        namespace=sys.intern(text(meta, "namespace")),
        name=text(meta, "name"),
        created=parse_time(meta.get("creationTimestamp")) or 0.0,
        wait=wait,
        node=node,
        message=message,
    )


_AGE = re.compile(r"(?:(\d+)y)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_AGE_UNITS = (365 * 86400, 86400, 3600, 60, 1)
NO_NODE = "<none>"
"""What a Table cell prints for an unset field (a pod's ``Node`` before it is bound)."""


def parse_age(value: str) -> float | None:
    """A Table's ``Age`` cell (the apiserver's human duration: ``45s``, ``5m12s``, ``3h``,
    ``2d5h``, ``3y10d``) in seconds; None for anything else (``<unknown>``, ``<invalid>``).
    """
    m = _AGE.fullmatch(value.strip())
    if m is None or not any(m.groups()):
        return None
    return float(sum(int(g) * unit for g, unit in zip(m.groups(), _AGE_UNITS, strict=True) if g))


def pending_pod_row(at: float, name: str, cells: dict[str, Any], ordinal: int) -> PendingPodRecord:
    """A Pending pod from a pod Table's row without its object: ``Status``
    (``SchedulingGated``), ``Node`` and ``Age`` are all a row says (no namespace, no
    PodScheduled condition). ``ordinal`` is the row's place among the list's rows of the
    same name (:func:`ktop.model.events.row_namespace`). The creation time is ``at``
    less the age, as exact as the age is printed (seconds under 2 minutes, then coarser).
    """
    node = text(cells, "Node")
    if node == NO_NODE:
        node = ""
    if node:
        wait = PodWait.BOUND_NOT_STARTED
    elif text(cells, "Status") == "SchedulingGated":
        wait = PodWait.GATED
    else:
        wait = PodWait.NOT_BOUND
    age = parse_age(text(cells, "Age"))
    return PendingPodRecord(
        namespace=row_namespace(ordinal),
        name=name,
        created=at - age if age is not None else at,
        wait=wait,
        node=node,
    )


_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9,
            "T": 1e12, "P": 1e15, "E": 1e18}  # fmt: skip


def parse_quantity(value: Any) -> float | None:
    """A Kubernetes quantity (``500m``, ``10Gi``, ``1.5e3``, ``2k``) as a number, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            return None
    if not isinstance(value, str) or len(value) > 64:
        return None
    s = value.strip()
    if not s:
        return None
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
    meta = mapping(obj, "metadata")
    status = mapping(obj, "status")
    hard = mapping(status, "hard") or mapping(mapping(obj, "spec"), "hard")
    used = mapping(status, "used")
    items = []
    for resource, limit in sorted(hard.items()):
        h = parse_quantity(limit)
        u = parse_quantity(used.get(resource, "0"))
        if h is not None and u is not None:
            items.append((sys.intern(str(resource)), u, h))
    return QuotaRecord(
        namespace=sys.intern(text(meta, "namespace")),
        name=text(meta, "name"),
        items=tuple(items),
    )
