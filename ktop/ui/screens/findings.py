"""All findings with their evidence, filtered with ``/``; enter on one opens its area."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.reactive import var
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ktop.analysis.findings import Finding
from ktop.ui.frame import Frame
from ktop.ui.render.findings import (
    NO_FINDINGS,
    counts,
    finding_block,
    full_text,
    matches,
    ranked,
)
from ktop.ui.screens.base import KtopScreen
from ktop.ui.widgets.filter_input import FilterInput


class FindingsScreen(KtopScreen):
    """Every finding, worst first, with code, area, title and evidence."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "slash",
            "filter",
            "filter",
            key_display="/",
            tooltip="filter the findings: code, area, severity or any text of a finding; "
            "enter keeps it, escape clears it",
        ),
        Binding(
            "enter",
            "open",
            "open",
            key_display="enter",
            show=False,
            tooltip="open the highlighted finding's area (its drill-down); "
            "↑↓ move between findings",
        ),
    ]
    """The findings screen's own keys; each ``tooltip`` is its text in the help screen."""

    filter_text: var[str] = var("", init=False)
    """Only findings with this text in their code, area, title or evidence are listed (the
    ``/`` line sets it; the list is drawn again when it changes)."""

    def __init__(self) -> None:
        super().__init__(name="findings")
        self._shown: object = None
        self._listed: list[Finding] = []

    def compose_body(self) -> ComposeResult:
        """A title, a scrollable list and the (hidden) filter line."""
        yield Static("", id="findings-title")
        yield OptionList(id="findings-list")
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
        title.append("   esc/o overview · / filter · ↑↓ move · enter opens its area", style="dim")
        self.query_one("#findings-title", Static).update(title)
        listed = self.query_one("#findings-list", OptionList)
        highlighted = self._highlighted_code(listed)
        self._listed = shown
        listed.clear_options()
        if not shown:
            empty = (
                f"no finding matches {self.filter_text!r} (escape on / clears it)"
                if self.filter_text
                else NO_FINDINGS
            )
            listed.add_option(Option(Text(empty), disabled=True))
            return
        at = frame.snapshot.at
        options: list[Option | None] = []
        for i, f in enumerate(shown):
            if i:
                options.append(None)  # a separator line between findings
            options.append(Option(finding_block(f, at), id=f"{f.code}|{i}"))
        listed.add_options(options)
        codes = [f.code for f in shown]
        listed.highlighted = codes.index(highlighted) if highlighted in codes else 0

    def _highlighted_code(self, listed: OptionList) -> str | None:
        """The code of the finding under the cursor (kept across refreshes)."""
        i = listed.highlighted
        if i is None or not self._listed or i >= len(self._listed):
            return None
        return self._listed[i].code

    @property
    def highlighted_finding(self) -> Finding | None:
        """The finding under the cursor, if any."""
        i = self.query_one("#findings-list", OptionList).highlighted
        return self._listed[i] if i is not None and i < len(self._listed) else None

    def action_open(self) -> None:
        """Open the highlighted finding's area."""
        f = self.highlighted_finding
        if f is not None:
            self.ktop.action_goto(f.area.value)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter (or a click) on a finding opens its area."""
        event.stop()
        self.action_open()

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
        self.query_one("#findings-list").focus()

    def _apply_filter(self, text: str) -> None:
        self.filter_text = text.strip()

    def watch_filter_text(self) -> None:
        """Draw the list again with the new filter."""
        if self.is_mounted:
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
        """The list as plain text (as ``y`` copies it)."""
        if not self._listed:
            listed = self.query_one("#findings-list", OptionList)
            return "\n".join(
                str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)
            )
        return full_text(self._listed, self.ktop.frame.snapshot.at).plain
