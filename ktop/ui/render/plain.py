"""The overview as plain text: for ``ktop snapshot`` and pasting into an incident channel."""

from __future__ import annotations

from collections.abc import Sequence

from ktop.analysis.findings import Finding
from ktop.model.events import Area
from ktop.model.snapshot import ClusterSnapshot
from ktop.ui.render.areas import overview_panel
from ktop.ui.render.findings import finding_line, ranked
from ktop.ui.render.status import state_words, status_line

FINDING_WIDTH = 400
"""Findings are printed whole: a pasted line may wrap, but is never cut."""
PANEL_ROWS = 12
"""Lines each area gets: enough that nothing a panel shows is cut."""


def overview_text(
    snapshot: ClusterSnapshot,
    findings: Sequence[Finding],
    width: int,
    *,
    banner: str = "",
    headline: str = "",
) -> str:
    """The diagnosis' line (``headline``) above the status line, the five areas (title,
    age, lines), then every finding.
    """
    out: list[str] = []
    if banner:
        out.append(banner)
    if headline:
        out.append(headline)
    out.append(status_line(snapshot, findings, width).plain)
    for area in Area:
        view = overview_panel(snapshot, area, PANEL_ROWS, width)
        out.append("")
        out.append(f"{view.title.plain}  [{state_words(snapshot, area)}]")
        out.extend(line.plain.rstrip() for line in view.lines if line.plain.strip())
    top = ranked(findings)
    out.append("")
    out.append(f"findings: {len(top)}" if top else "findings: none")
    out.extend(finding_line(f, FINDING_WIDTH).plain.rstrip() for f in top)
    return "\n".join(out)
