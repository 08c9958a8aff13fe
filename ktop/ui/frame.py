"""What every screen renders: one published snapshot, its findings, and source errors."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from ktop.analysis.findings import Finding
from ktop.analysis.triage.types import TriageReport
from ktop.hub import Published
from ktop.model.snapshot import ClusterSnapshot


@dataclass(frozen=True, slots=True)
class Frame:
    """The data a screen shows at one refresh: what the hub published, and the source
    errors and banner lines of the moment. Screens run no analysis: the findings and
    the triage report are the hub's.
    """

    published: Published
    errors: tuple[str, ...] = ()
    """Source failures (``source demo failed: RuntimeError: boom``), oldest first."""
    banner: tuple[Text, ...] = ()
    """Lines above the status line: the replay timeline, the REC indicator."""

    @property
    def snapshot(self) -> ClusterSnapshot:
        """The published snapshot."""
        return self.published.snapshot

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The findings drawn from it."""
        return self.published.findings

    @property
    def triage(self) -> TriageReport:
        """Its triage report (drawn once, the first time a screen asks)."""
        return self.published.triage
