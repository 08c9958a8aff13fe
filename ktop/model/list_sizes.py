"""How big a full LIST of each resource is, as the apiserver itself estimates it.

``apiserver_resource_size_estimate_bytes{group,resource}`` (ALPHA, Kubernetes
1.34+, feature SizeBasedListCostEstimate) is the sum of the last observed
sizes of a resource's stored objects: the size of the objects a full LIST
reads from storage, in their stored encoding (protobuf for built-in types, so
a JSON LIST is larger). ``-1`` means the apiserver could not fetch it; ``0``
for a resource that has objects means it has not estimated it yet (shortly
after it starts), which is unknown, not an empty LIST.
``apiserver_resource_objects{group,resource}`` gives the object count beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ktop.model.series import TargetSeries

SIZE_METRIC = "apiserver_resource_size_estimate_bytes"
OBJECTS_METRIC = "apiserver_resource_objects"
NOT_EXPOSED = (
    f"{SIZE_METRIC} not exposed (Kubernetes before 1.34, or SizeBasedListCostEstimate off)"
)


@dataclass(frozen=True, slots=True)
class ListSize:
    """One resource's estimated full-LIST size, and where it was read."""

    resource: str
    """``pods``, or ``deployments.apps`` for a named group."""
    size_bytes: float
    objects: float | None
    instance: str


def _name(group: str, resource: str) -> str:
    return f"{resource}.{group}" if group else resource


def build_list_sizes(series: Mapping[str, TargetSeries]) -> tuple[tuple[ListSize, ...], str]:
    """Every resource's estimate from the first apiserver (by name) that exposes them,
    largest first; or no sizes and why.
    """
    failed: list[str] = []
    pending: list[str] = []
    for instance in sorted(series):
        ts = series[instance]
        sizes = ts.gauge_by(SIZE_METRIC, ("group", "resource"))
        if not sizes:
            continue
        objects = ts.gauge_by(OBJECTS_METRIC, ("group", "resource"))
        out = []
        for (group, resource), v in sizes.items():
            if v.value is None:
                continue
            if v.value < 0:
                failed.append(_name(group, resource))
                continue
            count = objects.get((group, resource))
            if v.value == 0 and count is not None and (count.value or 0) > 0:
                pending.append(_name(group, resource))
                continue
            out.append(
                ListSize(
                    _name(group, resource),
                    v.value,
                    count.value if count is not None else None,
                    instance,
                )
            )
        out.sort(key=lambda s: (-s.size_bytes, s.resource))
        reasons = []
        if failed:
            reasons.append(f"{instance} could not estimate {', '.join(sorted(failed))}")
        if pending:
            reasons.append(f"{instance} has not estimated {', '.join(sorted(pending))} yet")
        return tuple(out), "; ".join(reasons)
    return (), NOT_EXPOSED if series else "no apiserver metrics read"
