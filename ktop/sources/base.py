"""The contract every source keeps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ktop.model.events import Event

Emit = Callable[[Sequence[Event]], None]
"""Hand a batch of events to the hub (called on the event loop)."""


class Source(Protocol):
    """Something that emits events until it is cancelled."""

    @property
    def name(self) -> str:
        """A short name for status lines and errors."""
        ...

    async def run(self, emit: Emit) -> None:
        """Emit events until cancelled. Must not raise for data errors:
        those become ``ScrapeFailed`` / ``FeedFailed`` events.
        """
        ...
