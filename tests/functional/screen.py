"""Read what a running app shows, as text."""

from __future__ import annotations

import io

from rich.console import Console
from textual.app import App


def screen_text(app: App[None]) -> str:
    """What the terminal shows, as plain text lines (no colour)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system=None,
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


async def seeks_done(app: App[None]) -> None:
    """Wait for a replay's seeks running off the UI loop (not its sources, which never end)."""
    seeks = [w for w in app.workers if w.name == "seek"]
    if seeks:  # an empty list would wait for every worker
        await app.workers.wait_for_complete(seeks)
