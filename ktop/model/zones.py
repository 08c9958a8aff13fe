"""The node lifecycle controller's zone-state rule: the one rule and the one threshold.

The model, the simulator's lifecycle controller (``ktop/sources/sim/lifecycle.py``) and
the lab's kube-controller-manager flags (``ktop/lab/components.py``) all take them from
here, so the zone state ktop computes, the one the simulator acts on and the one a real
controller reaches on the lab agree, boundary cases included.
"""

from __future__ import annotations

import struct

from ktop.model.snapshot_nodes import ZoneState

DEFAULT_UNHEALTHY_ZONE_THRESHOLD = 0.55
"""``--unhealthy-zone-threshold`` default of kube-controller-manager (a float32 flag)."""

_F32 = struct.Struct("<f")


def _float32(x: float) -> float:
    """``x`` rounded to the nearest float32, as Go's ``float32(x)``."""
    value: float = _F32.unpack(_F32.pack(x))[0]
    return value


def zone_state(
    ready: int, not_ready: int, threshold: float = DEFAULT_UNHEALTHY_ZONE_THRESHOLD
) -> ZoneState:
    """``ComputeZoneState``: FullDisruption when no node is ready and some are not;
    PartialDisruption when more than 2 are not ready and their share is at
    least ``threshold``; Normal otherwise (``not_ready`` counts every node whose
    Ready condition is not True).

    The share is compared in float32 as the controller does
    (``float32(notReady)/float32(notReady+ready) >= unhealthyZoneThreshold``,
    the threshold being a float32 flag), so boundary cases match it exactly.
    """
    if ready == 0 and not_ready > 0:
        return ZoneState.FULL_DISRUPTION
    if not_ready > 2:
        share = _float32(_float32(not_ready) / _float32(not_ready + ready))
        if share >= _float32(threshold):
            return ZoneState.PARTIAL_DISRUPTION
    return ZoneState.NORMAL


ZONE_KEY_SEP = ":\x00:"
"""What Kubernetes' ``GetZoneKey`` puts between a region and a zone: the
``node_collector_*{zone}`` labels hold ``region:\\x00:zone``."""


def zone_key(region: str, zone: str) -> str:
    """``GetZoneKey``: ``region + ZONE_KEY_SEP + zone``, or "" when both are empty."""
    if not region and not zone:
        return ""
    return region + ZONE_KEY_SEP + zone
