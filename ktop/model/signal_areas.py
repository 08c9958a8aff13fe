"""The signal areas: the overview's five panels, which every input, reading and finding
belongs to. What each area is called, its finding codes, its part of a snapshot and how
to tell it was not read: its spec in the area registry, :data:`ktop.model.areas.AREAS`.
"""

from __future__ import annotations

from enum import StrEnum


class Area(StrEnum):
    """The five signal areas of the overview."""

    APF = "apf"
    APISERVERS = "apiservers"
    ETCD = "etcd"
    SCHEDULER = "scheduler"
    NODES = "nodes"
