"""What every data screen shares: a body, the status bar and the footer."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from ktop.ui.frame import Frame
from ktop.ui.render.findings import full_text
from ktop.ui.widgets.prod_banner import ProdBanner
from ktop.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from ktop.ui.app import KtopApp


class KtopScreen(Screen[None]):
    """A screen that renders the app's current :class:`Frame`.

    Subclasses compose their body in :meth:`compose_body` and render it in
    :meth:`show_body`. The app calls :meth:`show` after every publish; a
    screen that becomes active again renders the latest frame at once.
    """

    _generation = 0

    def compose(self) -> ComposeResult:
        """The production banner, the body, then the status bar and the footer."""
        yield ProdBanner(id="prod-banner")
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
        """Render ``frame``: the banner, the body, then the status bar.

        After a theme change (the app's ``style_generation`` moved) every widget
        forgets what it showed, so the new data colours apply at once.
        """
        if self._generation != self.ktop.style_generation:
            self._generation = self.ktop.style_generation
            self.forget()
            for widget in self.query("*"):
                forget = getattr(widget, "forget", None)
                if callable(forget):
                    forget()
        self.query_one(ProdBanner).show(frame.snapshot.context, self.ktop.display_options)
        self.show_body(frame)
        status = self.query_one(StatusBar)
        status.coarse = self.ktop.display_options.low_bandwidth
        status.show(frame)

    def show_body(self, frame: Frame) -> None:
        """Render the screen's own widgets."""

    def forget(self) -> None:
        """Drop the screen's own render caches (its widgets have their own ``forget``)."""

    def copy_text(self) -> tuple[str, str]:
        """What ``y`` copies on this screen: a short name for it, and the text."""
        frame = self.ktop.frame
        return "findings", full_text(frame.findings, frame.snapshot.at).plain.rstrip()

    def on_mount(self) -> None:
        """Render the latest frame as soon as the widgets exist."""
        self.call_after_refresh(self._show_latest)

    def on_screen_resume(self) -> None:
        """Catch up with frames published while another screen was active."""
        self._show_latest()

    def _show_latest(self) -> None:
        if self.is_mounted:
            self.show(self.ktop.frame)
