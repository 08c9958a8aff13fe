"""The incident timeline (``i``): what changed, oldest first, with a filter."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.widgets import Input, Static

from ktop.analysis.triage.timeline import KIND_WORD, TimelineEvent
from ktop.ui.frame import Frame
from ktop.ui.render.timeline import legend, plain_line, timeline_text
from ktop.ui.screens.base import KtopScreen
from ktop.ui.widgets.filter_input import FilterInput


def matches(e: TimelineEvent, text: str) -> bool:
    """Whether the event's words, subjects or kind contain ``text`` (any case)."""
    if not text:
        return True
    hay = f"{e.line} {KIND_WORD[e.kind]} {e.kind.value}".lower()
    return text.lower() in hay


class TimelineScreen(KtopScreen):
    """apiserver restarts, etcd leader changes, zone transitions, first threshold
    crossings, the diagnosis' onset and recording markers, in time order.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "slash",
            "filter",
            "filter",
            key_display="/",
            tooltip="filter the timeline: kind, subject or any word of an event; "
            "enter keeps it, escape clears it",
        ),
    ]
    """The timeline screen's own keys; each ``tooltip`` is its text in the help screen."""

    filter_text: var[str] = var("", init=False)
    """Only events with this text in their words, subjects or kind are listed (the ``/``
    line sets it; the list is drawn again when it changes)."""

    def __init__(self) -> None:
        super().__init__(name="timeline")
        self._shown: object = None

    def compose_body(self) -> ComposeResult:
        """A title, the legend, a scrollable list and the (hidden) filter line."""
        yield Static("", id="timeline-title")
        yield Static(Text(legend(), style="dim"), id="timeline-legend")
        with VerticalScroll(id="timeline-scroll"):
            yield Static("", id="timeline-list")
        line = FilterInput(
            placeholder="filter: kind, subject or text (enter keeps, escape clears)",
            id="timeline-filter",
            compact=True,
        )
        line.display = False
        yield line

    def shown_events(self, events: tuple[TimelineEvent, ...]) -> list[TimelineEvent]:
        """The events the list shows: those matching the filter, oldest first."""
        return [e for e in events if matches(e, self.filter_text)]

    def show_body(self, frame: Frame) -> None:
        """Re-render only when the timeline, the width or the filter changed."""
        events = frame.published.timeline
        width = self.size.width - 2
        key = (events, self.filter_text, width, frame.snapshot.at // 60)
        if key == self._shown:
            return
        self._shown = key
        shown = self.shown_events(events)
        title = Text("i Timeline  ", style="bold")
        title.append(f"{len(events)} events, oldest first")
        if self.filter_text:
            title.append(f"   {len(shown)} of {len(events)} match {self.filter_text!r}")
        title.append("   esc/o overview · t triage · / filter · ↑↓ scroll", style="dim")
        self.query_one("#timeline-title", Static).update(title)
        body = (
            timeline_text(shown, frame.snapshot.at, width)
            if shown or not self.filter_text
            else Text(f"no event matches {self.filter_text!r} (escape on / clears it)")
        )
        self.query_one("#timeline-list", Static).update(body)

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
        self.query_one("#timeline-scroll").focus()

    def _apply_filter(self, text: str) -> None:
        self.filter_text = text.strip()

    def watch_filter_text(self) -> None:
        """Draw the list again with the new filter."""
        if self.is_mounted:
            self.show_body(self.ktop.frame)

    def copy_text(self) -> tuple[str, str]:
        """``y`` copies the events shown (those matching the filter)."""
        frame = self.ktop.frame
        shown = self.shown_events(frame.published.timeline)
        return "timeline", "\n".join(plain_line(e, frame.snapshot.at) for e in shown)

    def forget(self) -> None:
        """Render again on the next show (the theme changed)."""
        self._shown = None

    @property
    def list_text(self) -> str:
        """The list as plain text."""
        content = self.query_one("#timeline-list", Static).content
        return content.plain if isinstance(content, Text) else str(content)
