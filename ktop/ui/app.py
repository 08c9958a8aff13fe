"""The ktop Textual app: sources in workers, a publish timer, screens as modes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState

from ktop.hub import Hub, Published
from ktop.model.events import Area
from ktop.sources.base import Source
from ktop.ui.frame import Frame
from ktop.ui.render.areas import AREA_KEYS, AREA_TITLES
from ktop.ui.render.status import AREA_SHORT
from ktop.ui.screens.base import KtopScreen
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.findings import FindingsScreen
from ktop.ui.screens.help import HelpScreen
from ktop.ui.screens.overview import OverviewScreen
from ktop.ui.screens.triage import TriageScreen
from ktop.ui.theming import DEFAULT_THEME, bundled_themes

SOURCES_GROUP = "sources"


def _drill(area: Area) -> Screen[None]:
    return DrillScreen(area)


class KtopApp(App[None]):
    """The dashboard: one worker per source feeding the hub, published every ``refresh_s``."""

    CSS_PATH = "ktop.tcss"
    TITLE = "ktop"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "goto('overview')", "overview"),
        Binding("escape", "goto('overview')", "Overview", show=False),
        *(
            Binding(key, f"goto('{area.value}')", AREA_SHORT[area], key_display=key)
            for area, key in AREA_KEYS.items()
        ),
        Binding("f", "goto('findings')", "findings"),
        Binding("t", "goto('triage')", "triage"),
        Binding("question_mark", "help", "help", key_display="?"),
        Binding("q", "quit", "quit"),
    ]

    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        "overview": OverviewScreen,
        "findings": FindingsScreen,
        "triage": TriageScreen,
        **{area.value: partial(_drill, area) for area in Area},
    }
    DEFAULT_MODE = "overview"

    def __init__(
        self,
        hub: Hub,
        sources: Sequence[Source] = (),
        *,
        refresh_s: float = 1.0,
        theme: str | None = None,
    ) -> None:
        super().__init__()
        self.hub = hub
        self.sources = tuple(sources)
        self.refresh_s = refresh_s
        self._theme_name = theme or DEFAULT_THEME
        self.source_errors: list[str] = []
        self.frame = self._frame(hub.latest)
        """What the screens show: the last published snapshot and findings, and errors."""

    def on_mount(self) -> None:
        """Register themes, start one worker per source and the publish timer."""
        for bundled in bundled_themes():
            self.register_theme(bundled)
        if self._theme_name in self.available_themes:
            self.theme = self._theme_name
        else:
            self.theme = DEFAULT_THEME
            known = ", ".join(sorted(self.available_themes))
            self.notify(
                f"unknown theme {self._theme_name!r}; using {DEFAULT_THEME}. Known: {known}",
                severity="warning",
                timeout=10,
            )
        for source in self.sources:
            self.run_worker(
                source.run(self.hub.ingest),
                name=source.name,
                group=SOURCES_GROUP,
                exit_on_error=False,
            )
        self.set_interval(self.refresh_s, self.pump, name="publish")

    def pump(self) -> None:
        """Publish now (if anything changed) and update the active screen."""
        published = self.hub.publish()
        if published is not None:
            self.frame = self._frame(published)
            self._show()

    def _frame(self, published: Published) -> Frame:
        return Frame(published.snapshot, published.findings, tuple(self.source_errors))

    def _show(self) -> None:
        for screen in (self.screen, *self.screen_stack):
            if isinstance(screen, KtopScreen) and screen.is_mounted:
                screen.show(self.frame)
                break

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A source that raised: notify, add an error line; the others keep running."""
        worker = event.worker
        if worker.group != SOURCES_GROUP or event.state != WorkerState.ERROR:
            return
        error = worker.error
        message = f"source {worker.name} failed: {type(error).__name__}: {error}"
        self.source_errors.append(message)
        self.notify(message, title="source failed", severity="error", timeout=10)
        self.frame = Frame(self.frame.snapshot, self.frame.findings, tuple(self.source_errors))
        self._show()

    def action_goto(self, mode: str) -> None:
        """Show a screen: ``overview``, an area, or ``findings``."""
        while isinstance(self.screen, ModalScreen) and len(self.screen_stack) > 1:
            self.pop_screen()
        self.switch_mode(mode)

    def action_help(self) -> None:
        """Open the help screen (unless it is open)."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Palette commands to jump to every screen, then Textual's own."""
        yield SystemCommand(
            "Overview", "All five areas at once (o)", partial(self.action_goto, "overview")
        )
        for area, key in AREA_KEYS.items():
            yield SystemCommand(
                f"Drill-down: {area.value}",
                f"{AREA_TITLES[area]} ({key})",
                partial(self.action_goto, area.value),
            )
        yield SystemCommand(
            "Findings", "All findings with evidence (f)", partial(self.action_goto, "findings")
        )
        yield SystemCommand(
            "Triage",
            "Every triage path, most severe first (t)",
            partial(self.action_goto, "triage"),
        )
        yield SystemCommand("Help", "Every key (?)", self.action_help)
        yield from super().get_system_commands(screen)
