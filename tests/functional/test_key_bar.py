"""The key bar keeps "? help" and "q quit" at every width and on every screen: a narrow
bar cuts from the right, so they come first."""

from __future__ import annotations

import pytest

from ktop.hub import Hub
from ktop.sources.sim.simulator import Simulator
from ktop.ui.app import KtopApp
from tests.functional.screen import screen_text


@pytest.mark.parametrize("width", [80, 100, 200])
async def test_the_key_bar_always_keeps_help_and_quit(width: int) -> None:
    sim = Simulator("steady", nodes=50, seed=3)
    hub = Hub()
    hub.ingest(sim.start())
    app = KtopApp(hub)
    async with app.run_test(size=(width, 24)) as pilot:
        for key in ("o", "1", "5", "f", "t", "i"):
            await pilot.press(key)
            await pilot.pause()
            bar = f" {screen_text(app).splitlines()[-1]} "
            assert " ? help " in bar and " q quit " in bar, (key, bar)
