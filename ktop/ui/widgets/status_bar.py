"""The status line at the bottom of every screen."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.events import Resize
from textual.widgets import Static

from ktop.ui.frame import Frame
from ktop.ui.render.status import connecting, connecting_headline, error_lines, status_line
from ktop.ui.render.triage import headline_bar

FINDINGS_ACTION = "goto('findings')"
"""The action that lists every finding: its key is the one the headline names."""


def bound_key(owner: type[Any], action: str) -> str:
    """The key ``owner``'s bindings give ``action`` (as the key bar shows it); empty when
    none does.
    """
    return next(
        (
            b.key_display or b.key
            for b in Binding.make_bindings(owner.BINDINGS)
            if b.action == action
        ),
        "",
    )


class StatusBar(Static):
    """The diagnosis' headline, then source and context, the source clock, per-area data
    age, findings counts.

    Banner lines (replay timeline, REC) come between the headline and the status line;
    source failures add one line each below.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._shown_frame: Frame | None = None
        self._shown_width = 0
        self._shown_text: Text | None = None
        self._shown_lines = 0
        self.coarse = False
        """Low-bandwidth mode: the clock to the minute, coarse ages."""

    def show(self, frame: Frame) -> None:
        """Render the status of ``frame`` (no redraw when the text did not change)."""
        width = self.size.width
        if frame is self._shown_frame and width == self._shown_width:
            return
        self._shown_frame, self._shown_width = frame, width
        if width <= 0:
            return
        headline = (
            connecting_headline(width)
            if connecting(frame.snapshot)
            else headline_bar(frame.triage, width, bound_key(type(self.app), FINDINGS_ACTION))
        )
        lines = [
            headline,
            *frame.banner,
            status_line(frame.snapshot, frame.findings, width, self.coarse),
        ]
        lines += error_lines(frame.errors, width)
        text = Text("\n").join(lines)
        if text != self._shown_text:
            # Its height is its line count: a layout pass only when that changes.
            relayout = self._shown_text is None or len(lines) != self._shown_lines
            self._shown_text, self._shown_lines = text, len(lines)
            self.update(text, layout=relayout)

    def forget(self) -> None:
        """Render again on the next :meth:`show` (the theme changed)."""
        self._shown_frame = None
        self._shown_text = None

    def on_resize(self, _event: Resize) -> None:
        """Fit the line to the new width."""
        if self._shown_frame is not None:
            self.show(self._shown_frame)

    @property
    def plain(self) -> str:
        """The content as plain text."""
        content = self.content
        return content.plain if isinstance(content, Text) else str(content)
