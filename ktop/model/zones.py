"""The node lifecycle controller's zone-state rule."""

from __future__ import annotations

from ktop.model.snapshot import ZoneState

DEFAULT_UNHEALTHY_ZONE_THRESHOLD = 0.55


def zone_state(
    ready: int, not_ready: int, threshold: float = DEFAULT_UNHEALTHY_ZONE_THRESHOLD
) -> ZoneState:
    """``ComputeZoneState``: FullDisruption when no node is ready and some are not;
    PartialDisruption when more than 2 are not ready and their share is at
    least ``threshold``; Normal otherwise (``not_ready`` counts every node whose
    Ready condition is not True)."""
    raise NotImplementedError


def zone_key(region: str, zone: str) -> str:
    """``GetZoneKey``: ``region + ":\\x00:" + zone``, or "" when both are empty."""
    raise NotImplementedError
