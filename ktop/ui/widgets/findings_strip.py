"""The findings strip under the overview panels."""

from __future__ import annotations

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from ktop.analysis.findings import Finding, Severity
from ktop.ui.render.findings import strip_lines
from ktop.ui.widgets.redraw_hold import RedrawHold


class FindingsStrip(Static):
    """The top findings by severity, with codes, in as many lines as it has."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._findings: tuple[Finding, ...] | None = None
        self._shown_size: tuple[int, int] = (0, 0)
        self._shown_text: Text | None = None
        self._shown_state: tuple[tuple[str, Severity], ...] = ()
        self._hold = RedrawHold()
        self.lean = False
        """Low-bandwidth mode: findings whose codes and severities are unchanged are
        redrawn (with their new numbers) on every third frame only."""

    def show(self, findings: tuple[Finding, ...]) -> None:
        """Render ``findings`` unless they and the size are unchanged."""
        size = (self.content_size.height, self.content_size.width)
        if size == self._shown_size and findings == self._findings:
            return
        self._findings, self._shown_size = findings, size
        if size[0] > 0 and size[1] > 0:
            text = Text("\n").join(strip_lines(findings, size[0], size[1]))
            if text == self._shown_text:  # findings whose lines read the same: no redraw
                return
            state = tuple((f.code, f.severity) for f in findings)
            same = state == self._shown_state and self._shown_text is not None
            if self._hold.hold(self.lean, same):
                self._findings = None  # the next frame redraws even if nothing moves
                return
            self._shown_text, self._shown_state = text, state
            self.update(text)

    def forget(self) -> None:
        """Render again on the next :meth:`show` (the theme changed)."""
        self._shown_size = (0, 0)
        self._shown_text = None

    def on_resize(self, _event: Resize) -> None:
        """Fit the lines to the new size."""
        if self._findings is not None:
            self.show(self._findings)

    @property
    def plain(self) -> str:
        """The content as plain text."""
        content = self.content
        return content.plain if isinstance(content, Text) else str(content)
