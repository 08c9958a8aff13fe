"""Low-bandwidth mode: hold back redraws that change only numbers, not a state."""

from __future__ import annotations

HOLD_FRAMES = 3
"""In low-bandwidth mode a widget whose state (levels, symbols, codes) is unchanged
redraws its numbers on every third frame only: every 15 s at the 5 s refresh."""


class RedrawHold:
    """Counts the frames a widget held back; a changed state is never held."""

    def __init__(self) -> None:
        self.held = 0

    def hold(self, lean: bool, same_state: bool) -> bool:
        """Whether to skip this redraw: low-bandwidth mode, the same state, and fewer
        than :data:`HOLD_FRAMES` - 1 frames skipped in a row.
        """
        if lean and same_state and self.held < HOLD_FRAMES - 1:
            self.held += 1
            return True
        self.held = 0
        return False
