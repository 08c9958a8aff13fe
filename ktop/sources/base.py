"""The contract every source keeps."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from ktop.model.events import ClockTick, Event

Emit = Callable[[Sequence[Event]], None]
"""Hand a batch of events to the hub (called on the event loop)."""


def emit_batched(emit: Emit, events: Iterable[Event], start: float, batch_s: float) -> None:
    """Emit time-ordered ``events`` from ``start``, ``batch_s`` seconds of them per batch,
    each batch ending with a clock tick at its last event (a span read after the fact).
    """
    batch: list[Event] = []
    edge = start + batch_s
    for e in events:
        if e.at >= edge and batch:
            emit([*batch, ClockTick(batch[-1].at)])
            batch, edge = [], e.at + batch_s
        batch.append(e)
    if batch:
        emit([*batch, ClockTick(batch[-1].at)])


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
