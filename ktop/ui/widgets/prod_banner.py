"""The production banner: one line on every screen while the context looks like production."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ktop.ui.display import Display


class ProdBanner(Static):
    """Shown (and only then taking a line) when the context matches ``--prod-pattern``."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self._shown: str | None = None

    def show(self, context: str, options: Display) -> None:
        """Show the banner for ``context`` if it is production, else hide it."""
        prod = options.is_production(context)
        if prod == self.display and context == self._shown:
            return
        self._shown = context
        self.display = prod
        if prod:
            self.update(
                Text.assemble(
                    ("PRODUCTION", "bold reverse"),
                    f"  context {context}  ·  ktop only reads this cluster",
                )
            )

    @property
    def plain(self) -> str:
        """The banner as plain text ('' when hidden)."""
        content = self.content
        text = content.plain if isinstance(content, Text) else str(content)
        return text if self.display else ""
