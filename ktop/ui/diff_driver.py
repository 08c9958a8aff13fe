"""Textual's terminal driver with :class:`~ktop.ui.terminal_diff.ScreenDiff` in front of the tty."""

from __future__ import annotations

from typing import Any

from textual import constants
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.geometry import Size

from ktop.ui.terminal_diff import ScreenDiff


class DiffingDriver(LinuxDriver):
    """Writes only the cells that changed since the last frame (docs/terminal-bytes.md).

    The shadow of the screen is forgotten when the terminal may have changed under it:
    at the start of application mode (start-up and resume after suspend) and when the
    application's size changes.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.diff = ScreenDiff()
        self._size: Size | None = None

    def start_application_mode(self) -> None:
        """Start as Textual does, with nothing assumed about the screen."""
        self.diff.forget()
        super().start_application_mode()  # type: ignore[no-untyped-call]

    def write(self, data: str) -> None:
        """Write what changes the screen from what it shows now to what ``data`` draws."""
        size = self._app.size
        if size != self._size:
            self._size = size
            self.diff.forget()
            self.diff.rows, self.diff.cols = size.height, size.width
        out = self.diff.filter(data)
        if out:
            super().write(out)


def driver_class(default: type[Driver]) -> type[Driver]:
    """The driver ktop runs with: the diffing one on a Unix terminal, else ``default``.

    ``TEXTUAL_DRIVER`` in the environment still chooses Textual's driver; with
    ``TEXTUAL_DRIVER=textual.drivers.linux_driver:LinuxDriver`` ktop writes every
    frame in full, as Textual draws it.
    """
    if constants.DRIVER is not None or not issubclass(default, LinuxDriver):
        return default
    return DiffingDriver
