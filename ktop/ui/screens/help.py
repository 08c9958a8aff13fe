"""The help screen: every key."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ktop.ui.render.areas import AREA_KEYS

KEYS: tuple[tuple[str, str], ...] = (
    ("o / escape", "overview: all five areas"),
    ("1", "APF: priority levels, flow schemas, per instance"),
    ("2", "apiserver instances side by side"),
    ("3", "etcd members"),
    ("4", "scheduler: pending reasons, wait categories, quota"),
    ("5", "nodes: zones, racks, NotReady nodes"),
    ("f", "all findings with evidence"),
    ("t", "triage: every path's verdict and evidence; enter opens the pane"),
    ("?", "this help"),
    ("ctrl+p", "command palette: jump to a screen, change theme"),
    ("tab / shift+tab", "next / previous table"),
    ("↑↓ pgup pgdn", "move in a table or list"),
    ("q", "quit"),
)
"""Every key ktop answers to, in the order the help lists them."""

LEGEND = (
    "✖ critical  ▲ warning  ? unknown (reason shown)  ✓ ok   "
    "~ value over the process lifetime, not the window   * etcd leader   "
    "age! stale or failing input"
)


class HelpScreen(ModalScreen[None]):
    """Keys and symbols; escape, ? or q closes it, and screen keys still jump."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
        Binding("o", "app.goto('overview')", show=False),
        Binding("f", "app.goto('findings')", show=False),
        Binding("t", "app.goto('triage')", show=False),
        *(Binding(key, f"app.goto('{area.value}')", show=False) for area, key in AREA_KEYS.items()),
    ]

    def compose(self) -> ComposeResult:
        """The key table and the symbol legend."""
        text = Text("ktop keys\n\n", style="bold")
        for key, what in KEYS:
            text.append(f"{key:>15}  ", style="bold")
            text.append(f"{what}\n")
        text.append("\n" + LEGEND, style="dim")
        with VerticalScroll(id="help-box"):
            yield Static(text, id="help-text")

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss()

    @property
    def plain(self) -> str:
        """The help as plain text."""
        content = self.query_one("#help-text", Static).content
        return content.plain if isinstance(content, Text) else str(content)
