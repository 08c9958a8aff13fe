"""The dashboard on a bundle whose every metric family ktop reads is NaN, +Inf or -Inf:
every screen draws at 80x24, NaN shows as unknown, never as Python's ``nan``/``inf``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ktop.hub import Hub
from ktop.sources.bundle.reader import read_bundle
from ktop.ui.app import KtopApp
from ktop.ui.render.areas import AREA_KEYS
from tests.functional.screen import screen_text
from tests.unit.test_nonfinite_metrics import SPECIALS, special_bundle


@pytest.mark.parametrize("value", SPECIALS)
async def test_every_screen_draws_nan_and_inf(tmp_path: Path, value: str) -> None:
    hub = Hub()
    hub.ingest(read_bundle(special_bundle(tmp_path, value, scrapes=2)).events)
    app = KtopApp(hub, user_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in ("o", *AREA_KEYS.values(), "f", "t"):
            await pilot.press(key)
            await pilot.pause()
            text = screen_text(app)
            assert re.search(r"\b(nan|inf)\b", text) is None, (key, text)
        assert app.return_code is None
