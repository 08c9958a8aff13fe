"""The app around the screens: source workers, failures, themes."""

from __future__ import annotations

import asyncio

from ktop.model.events import Event, SourceStarted
from ktop.sources.base import Emit
from ktop.ui.app import KtopApp
from ktop.ui.widgets.status_bar import StatusBar
from tests.functional.factories import AT, StaticHub, busy_snapshot, findings


def busy_app(**kwargs: object) -> KtopApp:
    return KtopApp(StaticHub(busy_snapshot(), findings()), **kwargs)  # type: ignore[arg-type]


class Failing:
    """A source that raises at once."""

    name = "broken"

    async def run(self, emit: Emit) -> None:
        raise RuntimeError("boom")


class Steady:
    """A source that emits one event and then waits to be cancelled."""

    name = "steady"

    def __init__(self) -> None:
        self.emitted = asyncio.Event()

    async def run(self, emit: Emit) -> None:
        events: list[Event] = [SourceStarted(AT, "demo", "steady")]
        emit(events)
        self.emitted.set()
        await asyncio.Event().wait()


async def test_failing_source_shows_error_and_others_keep_running() -> None:
    steady = Steady()
    app = KtopApp(StaticHub(busy_snapshot(), findings()), [Failing(), steady])
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await steady.emitted.wait()
        await pilot.pause()
        assert app.is_running
        assert app.source_errors == ["source broken failed: RuntimeError: boom"]
        status = app.screen.query_one(StatusBar).plain
        assert "✖ source broken failed: RuntimeError: boom" in status
        assert any("boom" in str(n.message) for n in app._notifications)
        assert app.hub.events_total == 1
        running = [w for w in app.workers if w.name == "steady"]
        assert running and running[0].is_running


async def test_themes() -> None:
    app = busy_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "ktop-dark"
        assert "ktop-light" in app.available_themes
    app = busy_app(theme="ansi-dark")
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "ansi-dark"


async def test_unknown_theme_falls_back_to_default() -> None:
    app = busy_app(theme="no-such-theme")
    async with app.run_test(notifications=True) as pilot:
        await pilot.pause()
        assert app.theme == "ktop-dark"
        assert any("no-such-theme" in str(n.message) for n in app._notifications)
