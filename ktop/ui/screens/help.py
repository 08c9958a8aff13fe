"""The help screen: every key, generated from the bindings.

What a key does is said once, in its binding: the ``tooltip`` of each of an app's
``BINDINGS`` (``ktop/ui/app.py``, ``ktop/ui/fleet_app.py``) and of the screens' own
(drill-downs, findings, timeline); the ``description`` is its key bar label.
:func:`key_rows` turns them into the rows the help screen shows, the command palette's
help and README's key table (:func:`keys_markdown`) are made of; only the keys Textual
binds itself (:data:`KEYS`) are listed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ktop.ui.render.level import legend
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.findings import FindingsScreen
from ktop.ui.screens.timeline import TimelineScreen


@dataclass(frozen=True, slots=True)
class KeyRow:
    """One line of the help: the keys of one action and what they do."""

    keys: tuple[str, ...]
    what: str
    action: str = ""
    """The bound action ("" for a key Textual binds itself)."""
    where: str = ""
    """The screens the keys work on ("" everywhere)."""

    @property
    def shown(self) -> str:
        """The keys as the help shows them."""
        return " / ".join(self.keys)

    @property
    def text(self) -> str:
        """What the keys do, and where when not everywhere."""
        return f"{self.what} ({self.where})" if self.where else self.what


TEXTUAL_KEYS: tuple[KeyRow, ...] = (
    KeyRow((App.COMMAND_PALETTE_BINDING,), "command palette: jump to a screen, change theme"),
    KeyRow(("tab", "shift+tab"), "next / previous table"),
    KeyRow(("↑↓", "pgup", "pgdn"), "move in a table or list"),
    KeyRow(("click",), "a panel opens its drill-down; a table header sorts by that column"),
)
"""The keys Textual binds itself (and the mouse), which no ktop binding declares."""

KEYS: tuple[tuple[str, str], ...] = tuple((row.shown, row.text) for row in TEXTUAL_KEYS)
"""(keys, what) of :data:`TEXTUAL_KEYS`, as the help shows them."""

SCREENS: tuple[tuple[type[Any], str], ...] = (
    (DrillScreen, "drill-downs"),
    (FindingsScreen, "findings"),
    (TimelineScreen, "timeline"),
)
"""Screens with keys of their own (their ``BINDINGS``), and their name."""

LEGEND = (
    legend() + "   "
    "~ value over the process lifetime, not the window   * etcd leader   "
    "age! stale or failing input"
)


def _bound_rows(owner: type[Any], where: str = "") -> list[KeyRow]:
    """The bindings of ``owner``, the keys of one action together, in binding order, with
    what the action's first binding says it does (its ``tooltip``).
    """
    keys: dict[str, list[str]] = {}
    what: dict[str, str] = {}
    for binding in Binding.make_bindings(owner.BINDINGS):
        keys.setdefault(binding.action, []).append(binding.key_display or binding.key)
        what.setdefault(binding.action, binding.tooltip)
    return [KeyRow(tuple(k), what[action], action, where) for action, k in keys.items()]


def key_rows(app: type[App[Any]]) -> list[KeyRow]:
    """Every key of ``app``, in the order the help lists them: the keys of the app's own
    first screen (``HELP_FIRST``, e.g. the fleet's), the app's bindings, the keys Textual
    binds, then the keys of the drill-downs and of the findings screen.
    """
    first: tuple[KeyRow, ...] = getattr(app, "HELP_FIRST", ())
    rows = list(first) + _bound_rows(app) + list(TEXTUAL_KEYS)
    for screen, where in SCREENS:
        rows += _bound_rows(screen, where)
    return rows


def _md_row(row: KeyRow) -> str:
    return "| " + ", ".join(f"`{k}`" for k in row.keys) + f" | {row.text} |"


def keys_markdown(app: type[App[Any]], fleet: type[App[Any]]) -> str:
    """README's key table: the keys of ``app`` (``ktop``), then where ``fleet``'s differ."""
    rows = key_rows(app)
    lines = ["| key | action |", "|---|---|", *(_md_row(r) for r in rows)]
    does = {(key, r.text) for r in rows for key in r.keys}
    fleet_rows = key_rows(fleet)
    other = [r for r in fleet_rows if any((key, r.text) not in does for key in r.keys)]
    fleet_keys = {key for r in fleet_rows for key in r.keys}
    unbound = [key for r in rows for key in r.keys if key not in fleet_keys]
    lines += ["", "In `ktop fleet`:", "", "| key | action |", "|---|---|"]
    lines += [_md_row(r) for r in other]
    if unbound:
        lines += ["", "`ktop fleet` does not bind " + ", ".join(f"`{k}`" for k in unbound) + "."]
    return "\n".join(lines) + "\n"


JUMPS = ("goto(", "trend_window")
"""Actions of app keys that still work while the help is open (they close it)."""


class HelpScreen(ModalScreen[None]):
    """Keys and symbols; escape, ? or q closes it, and screen keys still jump."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        """The key table of this app and the legend."""
        title = getattr(self.app, "HELP_TITLE", "ktop keys")
        text = Text(f"{title}\n\n", style="bold")
        rows = key_rows(type(self.app))
        width = max(len(row.shown) for row in rows)
        for row in rows:
            text.append(f"{row.shown:>{width}}  ", style="bold")
            text.append(f"{row.text}\n")
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


def _jump_bindings(bindings: Iterable[BindingType], taken: Sequence[str]) -> list[BindingType]:
    return [
        Binding(b.key, f"app.{b.action}", show=False)
        for b in Binding.make_bindings(bindings)
        if b.action.startswith(JUMPS) and b.key not in taken
    ]


@cache
def _help_class(app: type[App[Any]]) -> type[HelpScreen]:
    taken = [b.key for b in Binding.make_bindings(HelpScreen.BINDINGS)]
    jumps = _jump_bindings(app.BINDINGS, taken)
    return type(f"{app.__name__}Help", (HelpScreen,), {"BINDINGS": jumps})


def help_screen(app: type[App[Any]]) -> HelpScreen:
    """The help of ``app``: its keys, and its screen keys (:data:`JUMPS`) jump from it."""
    return _help_class(app)()
