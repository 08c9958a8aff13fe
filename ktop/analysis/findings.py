"""Findings: what analysis concludes from a snapshot, with stable codes."""

from __future__ import annotations

from dataclasses import dataclass

from ktop.analysis.trends import Trend
from ktop.model.events import Area
from ktop.model.grading import Severity

__all__ = ["Finding", "Severity"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One conclusion about the cluster, with the evidence it rests on."""

    code: str
    """Stable code from the catalogue, e.g. ``KT-ETCD-003`` (WAL fsync is slow)."""
    severity: Severity
    area: Area
    title: str
    """One line, numbers included, e.g. ``WAL fsync p99 612 ms on etcd-1 (>500 ms)``."""
    evidence: tuple[str, ...] = ()
    """The readings the finding rests on, one per line."""
    signal: str = ""
    """The history key of the signal the finding is about (``ktop/model/signals.py``), if any."""
    threshold: float | None = None
    """The value of ``signal`` beyond which the finding holds."""
    trend: Trend | None = None
    """Since when ``signal`` breaches ``threshold`` and which way it goes (from history)."""
