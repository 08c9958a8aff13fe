"""What every screen renders: one published snapshot, its findings, and source errors."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from ktop.analysis.findings import Finding
from ktop.model.snapshot import ClusterSnapshot


@dataclass(frozen=True, slots=True)
class Frame:
    """The data a screen shows at one refresh."""

    snapshot: ClusterSnapshot
    findings: tuple[Finding, ...]
    errors: tuple[str, ...] = ()
    """Source failures (``source demo failed: RuntimeError: boom``), oldest first."""
    banner: tuple[Text, ...] = ()
    """Lines above the status line: the replay timeline, the REC indicator."""
