"""Why pods bound to a node do not start: Warning events grouped by cause (triage P3).

Warnings about a pod's start (image pull, sandbox / CNI, volume attach and
mount) are kept per pod, newest first wins, within the model's window. At
snapshot time the pods that are bound but not started are grouped by the
cause of their latest warning, with their nodes and failure domains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ktop.model.events import PendingPodRecord, PodWait, WarningEvent
from ktop.model.snapshot_scheduler import StartFailure

IMAGE_PULL = "image pull"
SANDBOX = "sandbox / CNI"
VOLUME = "volume attach / mount"
OTHER = "other"
SAMPLES = 3
NODES_LISTED = 5


def start_category(reason: str, message: str) -> str | None:
    """The cause class of a Warning about a pod's start, or None when it is not one."""
    if reason == "FailedCreatePodSandBox":
        return SANDBOX
    if reason in ("FailedMount", "FailedAttachVolume"):
        return VOLUME
    if reason in ("Failed", "BackOff"):
        text = message.lower()
        if "image" in text or "pull" in text:
            return IMAGE_PULL
        return OTHER if reason == "Failed" else None
    return None


class StartWarnings:
    """The latest start-related Warning per pod, within a window."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.by_pod: dict[tuple[str, str], tuple[float, str, str]] = {}

    def note(self, e: WarningEvent) -> None:
        """Keep a Warning if it is about a pod's start."""
        if e.object_kind != "Pod":
            return
        cat = start_category(e.reason, e.message)
        if cat is None:
            return
        key = (e.namespace, e.object_name)
        prev = self.by_pod.get(key)
        if prev is None or prev[0] <= e.at:
            self.by_pod[key] = (e.at, cat, e.reason)

    def group(
        self,
        pods: Iterable[PendingPodRecord],
        now: float,
        zone_of: Callable[[str], str],
    ) -> tuple[StartFailure, ...]:
        """Bound-but-not-started pods with a recent start warning, by (cause, reason)."""
        groups: dict[tuple[str, str], tuple[list[str], dict[str, int], dict[str, int]]] = {}
        for p in pods:
            if p.wait is not PodWait.BOUND_NOT_STARTED:
                continue
            w = self.by_pod.get((p.namespace, p.name))
            if w is None or w[0] < now - self.window_s:
                continue
            names, nodes, zones = groups.setdefault((w[1], w[2]), ([], {}, {}))
            names.append(f"{p.namespace}/{p.name}")
            nodes[p.node] = nodes.get(p.node, 0) + 1
            z = zone_of(p.node)
            zones[z] = zones.get(z, 0) + 1
        out = [
            StartFailure(
                category=cat,
                reason=reason,
                pods=len(names),
                nodes=_top(nodes, NODES_LISTED),
                node_count=len(nodes),
                zones=_top(zones, len(zones)),
                sample_pods=tuple(sorted(names)[:SAMPLES]),
            )
            for (cat, reason), (names, nodes, zones) in groups.items()
        ]
        return tuple(sorted(out, key=lambda f: (-f.pods, f.category, f.reason)))


def _top(counts: Mapping[str, int], n: int) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n])
