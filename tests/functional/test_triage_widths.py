"""The triage table uses the width: at 200 columns no symptom is cut, and at 80 columns
"where to look first" keeps a readable share (it had 6 characters)."""

from __future__ import annotations

import pytest

from ktop.ui.app import KtopApp
from ktop.ui.screens.triage import TriageScreen
from tests.functional.scenarios import scenario_hub


@pytest.mark.parametrize(("width", "min_conclusion"), [(80, 15), (120, 35), (200, 70)])
async def test_the_paths_table_sizes_its_text_columns_from_the_width(
    width: int, min_conclusion: int
) -> None:
    app = KtopApp(scenario_hub("etcd-slow-disk"))
    async with app.run_test(size=(width, 40)) as pilot:
        await pilot.press("t")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        table = screen.table("paths")
        columns = {str(k.value): c for k, c in table.columns.items()}
        assert columns["conclusion"].width >= min_conclusion
        used = sum(c.width + 2 for c in columns.values())
        assert used <= width, (used, width)  # nothing hidden to the right
        titles = [p.title for p in app.frame.triage.paths]
        if width >= 200:
            assert columns["title"].width >= max(len(t) for t in titles)
