"""The findings strip under the overview panels."""

from __future__ import annotations

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from ktop.analysis.findings import Finding
from ktop.ui.render.findings import strip_lines


class FindingsStrip(Static):
    """The top findings by severity, with codes, in as many lines as it has."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._findings: tuple[Finding, ...] | None = None
        self._shown_size: tuple[int, int] = (0, 0)

    def show(self, findings: tuple[Finding, ...]) -> None:
        """Render ``findings`` unless they and the size are unchanged."""
        size = (self.content_size.height, self.content_size.width)
        if size == self._shown_size and findings == self._findings:
            return
        self._findings, self._shown_size = findings, size
        if size[0] > 0 and size[1] > 0:
            self.update(Text("\n").join(strip_lines(findings, size[0], size[1])))

    def forget(self) -> None:
        """Render again on the next :meth:`show` (the theme changed)."""
        self._shown_size = (0, 0)

    def on_resize(self, _event: Resize) -> None:
        """Fit the lines to the new size."""
        if self._findings is not None:
            self.show(self._findings)

    @property
    def plain(self) -> str:
        """The content as plain text."""
        content = self.content
        return content.plain if isinstance(content, Text) else str(content)
