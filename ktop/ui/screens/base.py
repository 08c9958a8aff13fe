"""What every data screen shares: a body, the status bar and the footer."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from ktop.ui.frame import Frame
from ktop.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from ktop.ui.app import KtopApp


class KtopScreen(Screen[None]):
    """A screen that renders the app's current :class:`Frame`.

    Subclasses compose their body in :meth:`compose_body` and render it in
    :meth:`show_body`. The app calls :meth:`show` after every publish; a
    screen that becomes active again renders the latest frame at once.
    """

    def compose(self) -> ComposeResult:
        """The body, then the status bar and the footer."""
        yield from self.compose_body()
        yield StatusBar(id="status")
        yield Footer(compact=True, show_command_palette=False)

    def compose_body(self) -> ComposeResult:
        """The screen's own widgets."""
        yield from ()

    @property
    def ktop(self) -> KtopApp:
        """The app, typed."""
        return cast("KtopApp", self.app)

    def show(self, frame: Frame) -> None:
        """Render ``frame``: the body, then the status bar."""
        self.show_body(frame)
        self.query_one(StatusBar).show(frame)

    def show_body(self, frame: Frame) -> None:
        """Render the screen's own widgets."""

    def on_mount(self) -> None:
        """Render the latest frame as soon as the widgets exist."""
        self.call_after_refresh(self._show_latest)

    def on_screen_resume(self) -> None:
        """Catch up with frames published while another screen was active."""
        self._show_latest()

    def _show_latest(self) -> None:
        if self.is_mounted:
            self.show(self.ktop.frame)
