"""Capacity arithmetic from the seeds (000 §1.2, §7.2, §8.3), where its inputs exist."""

from __future__ import annotations

from ktop.analysis.triage.types import Capacity
from ktop.model.events import PodWait
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.text import fmt_whole


def capacity(s: ClusterSnapshot) -> tuple[Capacity, ...]:
    """The seeds' capacity arithmetic, where its inputs exist."""
    out = []
    n = s.nodes
    hb = n.heartbeat_writes_per_s
    out.append(
        Capacity(
            "heartbeat_writes_per_s",
            "Heartbeat writes per second",
            hb.value,
            "/s",
            f"{n.total} nodes / Lease renew interval" if hb.known else hb.reason,
        )
    )
    sc = s.scheduler
    waiting = sum(
        k
        for w, k in sc.pending_by_wait.items()
        if w not in (PodWait.BOUND_NOT_STARTED, PodWait.GATED)
    )
    rate = sc.attempts_per_s.get("scheduled")
    if not sc.pods_known:
        floor = Capacity("recovery_floor_s", "Recovery floor", None, "s", sc.pods_reason)
    elif rate is None or rate.value is None:
        reason = rate.reason if rate is not None else "scheduling rate not exposed"
        floor = Capacity("recovery_floor_s", "Recovery floor", None, "s", reason)
    elif rate.value <= 0:
        floor = Capacity(
            "recovery_floor_s", "Recovery floor", None, "s", "no pod was scheduled in the window"
        )
    else:
        floor = Capacity(
            "recovery_floor_s",
            "Recovery floor",
            waiting / rate.value,
            "s",
            f"{waiting} pods waiting / {rate.value:.2f} pods/s scheduled",
        )
    out.append(floor)
    if n.nodes_known and n.zones and n.total:
        # the loss that hurts most: the zone with the most Ready nodes
        largest = max(n.zones, key=lambda z: z.ready)
        f = largest.ready / n.ready if n.ready else 1.0
        left = n.ready - largest.ready
        out.append(
            Capacity(
                "capacity_after_zone_loss",
                "Ready nodes left after losing the largest zone",
                float(left),
                "count",
                f"losing {largest.zone or '(no zone)'} (f = {f:.2f}) leaves {left} of {n.ready} "
                f"Ready nodes: demand must stay below C x {1 - f:.2f}",
            )
        )
    else:
        out.append(
            Capacity(
                "capacity_after_zone_loss",
                "Ready nodes left after losing the largest zone",
                None,
                "count",
                n.nodes_reason or "nodes not listed",
            )
        )
    return tuple(out) + list_sizes(s)


LIST_SIZES_SHOWN = 10
"""The largest resources whose full-LIST size estimate is reported."""


def list_sizes(s: ClusterSnapshot) -> tuple[Capacity, ...]:
    """Full-LIST size estimates from the apiserver's own metric, largest first."""
    a = s.apiservers
    if not a.list_sizes:
        why = a.list_sizes_reason or a.unknown_reason or "no apiserver metrics read"
        return (Capacity("full_list_bytes", "Full LIST size", None, "bytes", why),)
    out = []
    for size in a.list_sizes[:LIST_SIZES_SHOWN]:
        count = f" of {fmt_whole(size.objects)} objects" if size.objects is not None else ""
        out.append(
            Capacity(
                f"full_list_bytes.{size.resource}",
                f"Full LIST of {size.resource}",
                size.size_bytes,
                "bytes",
                f"{fmt_whole(size.size_bytes)} bytes{count} in their stored encoding "
                f"(apiserver_resource_size_estimate_bytes from {size.instance}; a JSON LIST is "
                "larger)",
            )
        )
    if a.list_sizes_reason:  # resources the apiserver could not, or not yet, estimate
        out.append(
            Capacity(
                "full_list_bytes", "Full LIST, not estimated", None, "bytes", a.list_sizes_reason
            )
        )
    return tuple(out)


def given_sizes(ids: set[str]) -> bool:
    """True when the caller measured some full-LIST sizes itself."""
    return any(i.startswith("full_list_bytes.") for i in ids)
