"""The help screen: every key."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ktop.ui.render.areas import AREA_KEYS
from ktop.ui.render.level import legend
from ktop.ui.render.replay import RECORD_KEYS, REPLAY_KEYS, help_lines
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.findings import FindingsScreen

KEYS: tuple[tuple[str, str], ...] = (
    ("o / escape", "overview: all five areas"),
    ("1", "APF: priority levels, flow schemas, per instance"),
    ("2", "apiserver instances side by side"),
    ("3", "etcd members"),
    ("4", "scheduler: pending reasons, wait categories, quota"),
    ("5", "nodes: zones, racks, NotReady nodes"),
    ("f", "all findings with evidence"),
    ("w", "trend window of sparklines and charts: 5m, 15m, 1h"),
    ("t", "triage: every path's verdict and evidence; enter opens the pane"),
    ("?", "this help"),
    ("ctrl+p", "command palette: jump to a screen, change theme"),
    ("tab / shift+tab", "next / previous table"),
    ("↑↓ pgup pgdn", "move in a table or list"),
    ("click", "a panel opens its drill-down; a table header sorts by that column"),
    ("q", "quit"),
    *help_lines(RECORD_KEYS),
    *help_lines(REPLAY_KEYS),
)
"""Every key ktop answers to, in the order the help lists them."""

LEGEND = (
    legend() + "   "
    "~ value over the process lifetime, not the window   * etcd leader   "
    "age! stale or failing input"
)


def bound_keys(app: App[object]) -> list[tuple[str, str]]:
    """Keys bound where ``KEY_HELP`` describes them: the app's, the drill-downs', the
    findings screen's.
    """
    out: list[tuple[str, str]] = []
    owners: tuple[tuple[type, str], ...] = (
        (type(app), ""),
        (DrillScreen, " (drill-downs)"),
        (FindingsScreen, " (findings)"),
    )
    for owner, where in owners:
        described: dict[str, str] = getattr(owner, "KEY_HELP", {})
        for binding in getattr(owner, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.action in described:
                key = binding.key_display or binding.key
                out.append((key, described[binding.action] + where))
    return out


class HelpScreen(ModalScreen[None]):
    """Keys and symbols; escape, ? or q closes it, and screen keys still jump."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
        Binding("o", "app.goto('overview')", show=False),
        Binding("f", "app.goto('findings')", show=False),
        Binding("w", "app.trend_window", show=False),
        Binding("t", "app.goto('triage')", show=False),
        *(Binding(key, f"app.goto('{area.value}')", show=False) for area, key in AREA_KEYS.items()),
    ]

    def compose(self) -> ComposeResult:
        """The key table (the fixed list, then keys the app and screens bind) and the legend."""
        text = Text("ktop keys\n\n", style="bold")
        for key, what in (*KEYS, *bound_keys(self.app)):
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
