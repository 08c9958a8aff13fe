"""All findings with their evidence, filtered with ``/``."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from ktop.analysis.findings import Finding
from ktop.ui.frame import Frame
from ktop.ui.render.findings import counts, full_text, matches, ranked
from ktop.ui.screens.base import KtopScreen
from ktop.ui.widgets.filter_input import FilterInput


class FindingsScreen(KtopScreen):
    """Every finding, worst first, with code, area, title and evidence."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "filter", key_display="/"),
    ]

    KEY_HELP: ClassVar[dict[str, str]] = {
        "filter": "filter the findings: code, area, severity or any text of a finding; "
        "enter keeps it, escape clears it",
    }
    """Help for the findings screen's own keys (the help screen lists them)."""

    def __init__(self) -> None:
        super().__init__(name="findings")
        self._shown: object = None
        self.filter_text = ""
        """Only findings with this text in their code, area, title or evidence are listed."""

    def compose_body(self) -> ComposeResult:
        """A title, a scrollable list and the (hidden) filter line."""
        yield Static("", id="findings-title")
        with VerticalScroll(id="findings-scroll"):
            yield Static("", id="findings-list")
        line = FilterInput(
            placeholder="filter: code, area or text (enter keeps, escape clears)",
            id="findings-filter",
            compact=True,
        )
        line.display = False
        yield line

    def shown_findings(self, findings: tuple[Finding, ...]) -> list[Finding]:
        """The findings the list shows: ranked, and matching the filter."""
        return [f for f in ranked(findings) if matches(f, self.filter_text)]

    def show_body(self, frame: Frame) -> None:
        """Re-render only when the findings or the filter changed."""
        key = (frame.findings, self.filter_text)
        if key == self._shown:
            return
        self._shown = key
        shown = self.shown_findings(frame.findings)
        title = Text("f Findings  ", style="bold")
        title.append_text(counts(frame.findings))
        if self.filter_text:
            total = len(ranked(frame.findings))
            title.append(f"   {len(shown)} of {total} match {self.filter_text!r}")
        title.append("   esc/o overview · / filter · ↑↓ scroll", style="dim")
        self.query_one("#findings-title", Static).update(title)
        body = (
            full_text(shown, frame.snapshot.at)
            if shown or not self.filter_text
            else Text(f"no finding matches {self.filter_text!r} (escape on / clears it)")
        )
        self.query_one("#findings-list", Static).update(body)

    def action_filter(self) -> None:
        """Open the filter line."""
        line = self.query_one(FilterInput)
        line.display = True
        line.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Filter as the user types."""
        self._apply_filter(event.value)

    def on_filter_input_closed(self, event: FilterInput.Closed) -> None:
        """Enter keeps the filter, escape cleared it; the list takes the focus back."""
        self._apply_filter(event.value)
        self.query_one(FilterInput).display = False
        self.query_one("#findings-scroll").focus()

    def _apply_filter(self, text: str) -> None:
        self.filter_text = text.strip()
        self.show_body(self.ktop.frame)

    def copy_text(self) -> tuple[str, str]:
        """``y`` copies the findings shown (those matching the filter)."""
        shown = self.shown_findings(self.ktop.frame.findings)
        return "findings", full_text(shown, self.ktop.frame.snapshot.at).plain.rstrip()

    def forget(self) -> None:
        """Render again on the next show (the theme changed)."""
        self._shown = None

    @property
    def list_text(self) -> str:
        """The list as plain text."""
        content = self.query_one("#findings-list", Static).content
        return content.plain if isinstance(content, Text) else str(content)
