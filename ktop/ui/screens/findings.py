"""All findings with their evidence."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ktop.ui.frame import Frame
from ktop.ui.render.findings import counts, full_text
from ktop.ui.screens.base import KtopScreen


class FindingsScreen(KtopScreen):
    """Every finding, worst first, with code, area, title and evidence."""

    def __init__(self) -> None:
        super().__init__(name="findings")
        self._shown: object = None

    def compose_body(self) -> ComposeResult:
        """A title and a scrollable list."""
        yield Static("", id="findings-title")
        with VerticalScroll(id="findings-scroll"):
            yield Static("", id="findings-list")

    def show_body(self, frame: Frame) -> None:
        """Re-render only when the findings changed."""
        if frame.findings == self._shown:
            return
        self._shown = frame.findings
        title = Text("f Findings  ", style="bold")
        title.append_text(counts(frame.findings))
        title.append("   esc/o overview · ↑↓ scroll", style="dim")
        self.query_one("#findings-title", Static).update(title)
        self.query_one("#findings-list", Static).update(
            full_text(frame.findings, frame.snapshot.at)
        )

    def forget(self) -> None:
        """Render again on the next show (the theme changed)."""
        self._shown = None

    @property
    def list_text(self) -> str:
        """The list as plain text."""
        content = self.query_one("#findings-list", Static).content
        return content.plain if isinstance(content, Text) else str(content)
