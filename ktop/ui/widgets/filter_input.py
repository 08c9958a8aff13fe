"""The ``/`` filter line shared by the drill-downs and the findings screen."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import Input


class FilterInput(Input):
    """The ``/`` filter line: enter keeps the filter, escape clears it.

    Either way it posts :class:`FilterInput.Closed`; the screen hides the line
    and applies its value (empty after escape).
    """

    class Closed(Message):
        """The line is done: keep ``value`` as the filter ("" clears it)."""

        def __init__(self, value: str) -> None:
            super().__init__()
            self.value = value

    def on_key(self, event: events.Key) -> None:
        """Escape clears the filter and closes the line (instead of leaving the screen)."""
        if event.key == "escape":
            event.stop()
            event.prevent_default()
            self.value = ""
            self.post_message(self.Closed(""))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter keeps the filter."""
        event.stop()
        self.post_message(self.Closed(self.value))
