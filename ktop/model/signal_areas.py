"""The signal areas: the overview's five panels, which every input, reading and finding
belongs to.
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
