"""A one-line question (a marker's note, a time to seek to)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class PromptScreen(ModalScreen[str | None]):
    """Asks for one line of text; enter answers, escape cancels (``None``)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, placeholder: str = "") -> None:
        super().__init__()
        self.question = question
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        """The question and the input line."""
        with Vertical(id="prompt-box"):
            yield Label(self.question)
            yield Input(placeholder=self.placeholder, id="prompt-input", max_length=200)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Answer with the text typed."""
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Answer nothing."""
        self.dismiss(None)
