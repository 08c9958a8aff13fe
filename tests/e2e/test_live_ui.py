"""The whole thing, as a user runs it: ktop's UI on a live source against the real cluster."""

from __future__ import annotations

import time

from ktop.hub import Hub
from ktop.lab import Lab
from ktop.sources.live.source import LiveSource
from ktop.ui.app import KtopApp
from tests.e2e.cadence import KTOP_REFRESH_S, deadline, ktop_rates_s, steps
from tests.e2e.live import account, options
from tests.functional.screen import screen_text


async def test_live_screens_show_the_cluster_and_ktops_own_cost(lab: Lab) -> None:
    kubeconfig = await account(lab, "ktop")
    app = KtopApp(Hub(), [LiveSource(options(lab, kubeconfig))], refresh_s=KTOP_REFRESH_S)
    async with app.run_test(size=(160, 48)) as pilot:
        # nodes listed, etcd's leader scraped, ktop's own rates (two scrapes)
        ends = time.monotonic() + deadline(ktop_rates_s(), steps(1))
        text = ""
        want = (
            f"{lab.cfg.nodes}/{lab.cfg.nodes} ready",
            "live ktop-e2e",
            "me ",
            "leader 127.0.0.1:",
        )
        while not all(w in text for w in want):
            assert time.monotonic() < ends, f"overview never showed {want}:\n{text}"
            await pilot.pause(KTOP_REFRESH_S)
            text = screen_text(app)
        await pilot.press("1")
        # the drill-down drawn at the next refresh, with the flow schema of an answer
        ends = time.monotonic() + deadline(steps(1))
        while "its requests land in flow schema" not in text:
            assert time.monotonic() < ends, f"APF drill-down lacks ktop's cost:\n{text}"
            await pilot.pause(KTOP_REFRESH_S)
            text = screen_text(app)
        assert "ktop's own load" in text and "watches open" in text
    # Leaving the app cancelled the source: nothing keeps running.
    assert app.return_code in (0, None)
