"""The fleet app: the fleet screen first, and every cell's full dashboard behind it.

Every cell runs its own sources into its own hub (:mod:`ktop.fleet`). Enter on a
cell makes it the app's cell, whose hub the app's screens then show
(:attr:`FleetApp.hub`: no hub is swapped); escape on its overview comes back to the
fleet. Recording is per cell in ``ktop`` and ``ktop record``, not here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen

from ktop.fleet import Fleet
from ktop.hub import Hub
from ktop.ui.app import KtopApp
from ktop.ui.recording import RecordingControls
from ktop.ui.screens.fleet import FleetScreen
from ktop.ui.screens.help import KeyRow

FLEET_MODE = "fleet"
CELLS_GROUP = "cells"
_RECORDING = frozenset(b.action for b in RecordingControls.bindings())
"""The recording and replay keys' actions: a fleet neither records nor replays."""


class FleetApp(KtopApp):
    """The dashboard of a fleet: :class:`FleetScreen`, then any cell's screens."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            b
            for b in KtopApp.BINDINGS
            if not (isinstance(b, Binding) and (b.key == "escape" or b.action in _RECORDING))
        ),
        Binding(
            "escape",
            "fleet_back",
            "back",
            show=False,
            tooltip="back: from a screen to the cell's overview, from the overview to the fleet",
        ),
        Binding(
            "F",
            f"goto('{FLEET_MODE}')",
            "fleet",
            tooltip="the fleet: every cell, worst first (enter opens one)",
        ),
    ]
    """The app's keys but recording and replay (a fleet does neither); escape goes back one
    level (a screen, then the fleet); F the fleet."""

    HELP_TITLE: ClassVar[str] = "ktop fleet keys (the cell keys act on the cell last opened)"
    HELP_FIRST: ClassVar[tuple[KeyRow, ...]] = (
        KeyRow(("enter",), "open the cell under the cursor: its overview", where="fleet"),
        KeyRow(("↑↓",), "move between cells, worst first", where="fleet"),
    )
    """The fleet screen's own keys, first in the help (Textual's table binds them)."""

    PALETTE: ClassVar[dict[str, str]] = {f"goto('{FLEET_MODE}')": "Fleet", **KtopApp.PALETTE}
    """The fleet, then the app's palette commands."""

    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        **KtopApp.MODES,
        FLEET_MODE: FleetScreen,
    }
    DEFAULT_MODE = FLEET_MODE

    def __init__(self, fleet: Fleet, **options: Any) -> None:
        if not fleet.cells:
            raise ValueError("a fleet needs at least one cell")
        self.fleet = fleet
        self.view = fleet.refresh()
        """The fleet view the fleet screen shows (refreshed at every publish)."""
        self.cell = fleet.cells[0]
        """The cell last opened, whose hub the other screens show (the first until one is)."""
        super().__init__(fleet.cells[0].hub, (), **options)

    @property
    def hub(self) -> Hub:
        """The hub of the cell last opened: the cell's screens show its publications."""
        return self.cell.hub

    @property
    def cell_name(self) -> str:
        """The name of the cell last opened."""
        return self.cell.name

    def on_mount(self) -> None:
        """Start every cell's sources (the app's own start the publish timer)."""
        super().on_mount()
        for cell in self.fleet.cells:
            self.run_worker(cell.run(), name=cell.name, group=CELLS_GROUP, exit_on_error=False)

    def pump(self) -> None:
        """Refresh the fleet view (publishing every hub) and the screen in front."""
        self._refresh_fleet()
        self._show()

    def _refresh_fleet(self) -> None:
        self.view = self.fleet.refresh()
        latest = self.hub.latest
        if latest.snapshot is not self.frame.snapshot or latest.findings != self.frame.findings:
            self.frame = self._frame(latest)

    async def pump_off_loop(self) -> None:
        """The refresh timer: publish every cell's hub in a worker thread, then refresh the
        fleet view and the screen in front (triage and ranking are cheap; snapshots are not).
        """
        for cell in self.fleet.cells:
            await cell.hub.publish_off_loop()
        if self.screen_stack:  # the app may have begun to close while the threads ran
            self._refresh_fleet()
            # a screen pushed while the threads ran may not have its widgets yet
            self._show_after_refresh()

    def open_cell(self, name: str) -> None:
        """Show the full dashboard of cell ``name``, fed by its own hub."""
        self.cell = self.fleet.cell(name)
        self.frame = self._frame(self.cell.hub.latest)
        self.action_goto("overview")

    def action_fleet_back(self) -> None:
        """Escape: a screen goes back to the cell's overview, the overview to the fleet."""
        modal = isinstance(self.screen, ModalScreen)
        if self.current_mode == "overview" and not modal:
            self.action_goto(FLEET_MODE)
        elif self.current_mode != FLEET_MODE or modal:
            self.action_goto("overview")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No recording from the fleet (record a cell with ``ktop record --context``)."""
        if action in ("toggle_recording", "marker"):
            return False
        return super().check_action(action, parameters)
