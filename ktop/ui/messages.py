"""The messages the app posts itself when a source's state changes.

The hub and the source workers know nothing of Textual: the app turns what they report
into these messages and reacts to them in ``on_...`` handlers (``ktop/ui/app.py``).
"""

from __future__ import annotations

from textual.message import Message


class FeedsSynced(Message):
    """A feed finished a whole list (the hub saw a ``FeedSynced``): publish at once."""


class SourceFailed(Message):
    """A source's worker raised: it is shown on the status line and notified."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason
        """``source demo failed: RuntimeError: boom``, scrubbed of the session's secrets."""
