"""The ktop Textual app: sources in workers, a publish timer, screens as modes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, ClassVar

from rich.theme import Theme as RichTheme
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.filter import LineFilter, Monochrome, NoColor
from textual.reactive import var
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState

from ktop.config import user_themes_dir
from ktop.gc_policy import Collector
from ktop.hub import Hub, Published
from ktop.model.areas import AREAS
from ktop.model.events import Area
from ktop.record.rotating import RotatingRecorder
from ktop.sources.base import Source
from ktop.sources.replay import ReplaySource
from ktop.ui.diff_driver import driver_class
from ktop.ui.display import AsciiFilter, Display, StripColor
from ktop.ui.frame import Frame
from ktop.ui.messages import FeedsSynced, SourceFailed
from ktop.ui.recording import RecordingControls
from ktop.ui.render.areas import AREA_KEYS
from ktop.ui.render.reasons import prepare as prepare_reasons
from ktop.ui.render.trend import WINDOWS, window_label
from ktop.ui.screens.base import KtopScreen
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.findings import FindingsScreen
from ktop.ui.screens.help import HelpScreen, help_screen, key_rows
from ktop.ui.screens.overview import OverviewScreen
from ktop.ui.screens.timeline import TimelineScreen
from ktop.ui.screens.triage import TriageScreen
from ktop.ui.theming import (
    DEFAULT_THEME,
    NO_COLOR_THEME,
    KtopTheme,
    all_themes,
    data_styles,
    derived_status,
)

SOURCES_GROUP = "sources"
IDLE_EVERY = 5
"""While nothing but the clock (and ktop's own cost) changed, the screen is published and
redrawn at every this many refreshes (every 5 s at the default 1 s) instead of at each:
an idle frame at 100,000 nodes costs a snapshot, findings and a render for ages alone.
Data arriving is shown at the next refresh."""
OVERVIEW_HELP = "overview: all five areas"
"""What ``o`` and escape do (both bindings say it)."""
_STRIP_COLOR = StripColor()
_ASCII = AsciiFilter()


def _drill(area: Area) -> Screen[None]:
    return DrillScreen(area)


class KtopApp(App[None]):
    """The dashboard: one worker per source feeding the hub, published every ``refresh_s``."""

    CSS_PATH = "ktop.tcss"
    TITLE = "ktop"

    BINDINGS: ClassVar[list[BindingType]] = [
        # help and quit first: a narrow key bar cuts from the right, and these two must stay
        Binding("question_mark", "help", "help", key_display="?", tooltip="every key (this help)"),
        Binding("q", "quit", "quit", tooltip="quit"),
        Binding("o", "goto('overview')", "overview", tooltip=OVERVIEW_HELP),
        Binding("escape", "goto('overview')", "Overview", show=False, tooltip=OVERVIEW_HELP),
        *(
            Binding(
                key,
                f"goto('{area.value}')",
                AREAS[area].short,
                key_display=key,
                tooltip=AREAS[area].help,
            )
            for area, key in AREA_KEYS.items()
        ),
        Binding("f", "goto('findings')", "findings", tooltip="all findings with evidence"),
        Binding(
            "T",
            "cycle_theme",
            "theme",
            show=False,
            tooltip="next theme (ktop's themes and yours, in name order)",
        ),
        Binding(
            "y",
            "copy",
            "copy",
            show=False,
            tooltip="copy the findings, or the table in focus, to the clipboard (OSC 52)",
        ),
        Binding(
            "w",
            "trend_window",
            "window",
            tooltip="trend window of sparklines and charts: 5m, 15m, 1h",
        ),
        *RecordingControls.bindings(),
        Binding(
            "t",
            "goto('triage')",
            "triage",
            tooltip="triage: every path's verdict and evidence; enter opens the pane",
        ),
        Binding(
            "i",
            "goto('timeline')",
            "timeline",
            show=False,
            tooltip="incident timeline: restarts, etcd leader changes, zone states, "
            "first threshold crossings, the diagnosis' onset and markers, oldest first",
        ),
    ]
    """Every app-wide key: its footer label (``description``) and what it does
    (``tooltip``, the help's text). The help screen, the command palette's help and
    README's key table are generated from them (:func:`ktop.ui.screens.help.key_rows`)."""

    PALETTE: ClassVar[dict[str, str]] = {
        "goto('overview')": "Overview",
        **{f"goto('{area.value}')": f"Drill-down: {area.value}" for area in AREA_KEYS},
        "goto('findings')": "Findings",
        "goto('triage')": "Triage",
        "goto('timeline')": "Incident timeline",
        "help": "Help",
        "cycle_theme": "Next theme",
        "copy": "Copy",
    }
    """The actions the command palette offers, with their titles; each command's help is
    its binding's ``tooltip`` and its keys."""

    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        "overview": OverviewScreen,
        "findings": FindingsScreen,
        "triage": TriageScreen,
        "timeline": TimelineScreen,
        **{area.value: partial(_drill, area) for area in Area},
    }
    DEFAULT_MODE = "overview"

    trend_window_s: var[float] = var(WINDOWS[0][1], init=False)
    """The window sparklines and charts show (the ``w`` key cycles through WINDOWS); the
    screen in front redraws when it changes."""

    def __init__(
        self,
        hub: Hub,
        sources: Sequence[Source] = (),
        *,
        refresh_s: float = 1.0,
        theme: str | None = None,
        display: Display | None = None,
        user_themes: bool = True,
        replay: ReplaySource | None = None,
        record_dir: str = ".",
        always_on: RotatingRecorder | None = None,
        always_on_shown: bool = True,
        collector: Collector | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self._hub = hub
        self.notes = [hub.secrets.scrub(n) for n in notes]
        """What the user is told as the app starts (files skipped or set aside)."""
        self.collector = collector
        """Full garbage collections on the refresh timer (the dashboard's process sets one
        up; an app in a test leaves Python's own)."""
        self.sources = tuple(sources)
        self.rec = RecordingControls(
            self, replay, record_dir, always_on, always_on_shown=always_on_shown
        )
        """Recording (live) or replay controls and their status lines."""
        self.refresh_s = refresh_s
        self._idle_skipped = 0
        """Refreshes skipped in a row because only time passed (:data:`IDLE_EVERY`)."""
        self._sync_publish_pending = False
        """A publish asked for by a synced feed waits (:meth:`_feeds_synced`)."""
        self.display_options = display or Display()
        self.no_color = self.no_color or self.display_options.no_color
        self._theme_name = theme or (NO_COLOR_THEME if self.no_color else DEFAULT_THEME)
        self.ktop_themes, refused = all_themes(user_themes_dir() if user_themes else None)
        self.theme_errors = [hub.secrets.scrub(e) for e in refused]
        """ktop's themes by name (bundled and user), and user theme files that were refused
        (scrubbed with the session's secrets, as every error the app shows)."""
        self.style_generation = 0
        """Bumped when the data colours change; screens re-render when it moved."""
        self._pushed_styles = False
        first = self.ktop_themes.get(self._theme_name) or self.ktop_themes[DEFAULT_THEME]
        self.use_data_styles(first.rich)
        if self.display_options.low_bandwidth:
            self.animation_level = "none"
        self.source_errors: list[str] = []
        self.frame = self._frame(hub.latest)
        """What the screens show: the last published snapshot and findings, and errors."""
        self._shown = False
        """Whether the first frame is on screen (:meth:`stop_soon`)."""
        self._stop_asked = False

    @property
    def hub(self) -> Hub:
        """The hub whose publications the screens show."""
        return self._hub

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this platform, writing only changed cells on a Unix terminal."""
        return driver_class(super().get_driver_class())

    def get_line_filters(self) -> list[LineFilter]:
        """Textual's filters; without colour at all under NO_COLOR; ASCII with ``--ascii``."""
        filters = list(super().get_line_filters())
        if self.no_color:
            filters = [f for f in filters if not isinstance(f, Monochrome | NoColor)]
            filters.append(_STRIP_COLOR)
        if self.display_options.ascii_only:
            filters.append(_ASCII)
        return filters

    @property
    def crash(self) -> BaseException | None:
        """The unexpected error that ended the app, if one did (for the crash report)."""
        return self._exception

    def _fatal_error(self) -> None:
        # Textual prints the traceback with local variables, which can hold credentials:
        # exit quietly instead; the command line writes a scrubbed report.
        self.bell()
        self._close_messages_no_wait()

    def stop_soon(self) -> None:
        """Exit as ``q`` does, now or, while the app is still starting, once its first
        frame is shown (an exit while its screens are mounted breaks Textual's start): a
        signal's way out (``ktop/runner.py``).
        """
        if self._shown:
            self.exit()
        else:
            self._stop_asked = True

    def on_ready(self) -> None:
        """The first frame is shown: a stop asked for meanwhile happens now."""
        self._shown = True
        if self._stop_asked:
            self.exit()

    def on_mount(self) -> None:
        """Register themes, start one worker per source and the publish timer."""
        for kt in self.ktop_themes.values():
            self.register_theme(kt.theme)
        for error in self.theme_errors:
            self.notify(error, title="theme not loaded", severity="warning", timeout=10)
        for note in self.notes:
            self.notify(note, title="recordings", severity="warning", timeout=15)
        if self._theme_name in self.available_themes:
            self.theme = self._theme_name
        else:
            fallback = NO_COLOR_THEME if self.no_color else DEFAULT_THEME
            self.theme = fallback
            known = ", ".join(sorted(self.ktop_themes))
            self.notify(
                f"unknown theme {self._theme_name!r}; using {fallback}. Known: {known}",
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
        self.set_interval(self.refresh_s, self.pump_off_loop, name="publish")
        self.hub.listen_synced(self._feeds_synced)

    def _feeds_synced(self) -> None:
        """The hub saw a feed finish a whole list: post :class:`FeedsSynced` (at most one
        waits at a time).
        """
        if not self._sync_publish_pending:
            self._sync_publish_pending = True
            self.post_message(FeedsSynced())

    async def on_feeds_synced(self, _message: FeedsSynced) -> None:
        """Publish after the message in hand, not at the next refresh: the node count reads
        complete as soon as it is.
        """
        self._sync_publish_pending = False
        await self._publish_and_present()

    def watch_theme(self, theme_name: str) -> None:
        """Apply the theme's data colours (``[status]``) and re-render every screen."""
        kt = self.ktop_themes.get(theme_name)
        styles = kt.rich if kt is not None else derived_status(self.current_theme)
        self.use_data_styles(styles)

    def use_data_styles(self, styles: RichTheme) -> None:
        """Make the level styles (``ktop.ok`` ...) look like ``styles`` from now on (and the
        critical count readable on a 16-colour terminal: :func:`data_styles`).
        """
        if self._pushed_styles:
            self.console.pop_theme()
        self.console.push_theme(data_styles(styles, self.console.color_system))
        self._pushed_styles = True
        self.style_generation += 1
        if self.is_running and self.screen_stack:
            self._show()

    def action_cycle_theme(self) -> None:
        """Switch to the next of ktop's themes."""
        names = sorted(self.ktop_themes)
        index = names.index(self.theme) + 1 if self.theme in names else 0
        self.theme = names[index % len(names)]
        kt: KtopTheme = self.ktop_themes[self.theme]
        self.notify(f"{kt.name}: {kt.description}" if kt.description else kt.name, timeout=3)

    def action_copy(self) -> None:
        """Copy what the screen offers (findings, the table in focus) with OSC 52."""
        screen = self.screen
        if not isinstance(screen, KtopScreen):
            return
        what, text = screen.copy_text()
        if not text:
            self.notify(f"nothing to copy: {what}", severity="warning", timeout=4)
            return
        self.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        self.notify(f"copied {what}: {lines} lines (OSC 52 clipboard)", timeout=4)

    def pump(self) -> None:
        """Publish now (if anything changed) and update the active screen; while the timer's
        publish runs in a worker thread, that one will.
        """
        if not self.hub.publishing:
            self.present(self.hub.publish())

    async def pump_off_loop(self) -> None:
        """The refresh timer: publish in a worker thread, then update the active screen
        (the snapshot and findings of 100,000 nodes take tens of ms the loop need not wait).
        """
        # A screen pushed while the thread ran may not have its widgets yet: show after the
        # next refresh, as screens do on mount.
        if self.collector is not None:
            self.collector.tick()
        if self.hub.only_time_passed and self._idle_skipped < IDLE_EVERY - 1:
            self._idle_skipped += 1
            self.present(None, show=self._show_after_refresh)  # the banner, if it changed
            return
        self._idle_skipped = 0
        await self._publish_and_present()

    async def _publish_and_present(self) -> None:
        """Publish in a worker thread (nothing when one runs already), then show it."""
        published = await self.hub.publish_off_loop()
        if published is not None:  # each pane's unknown reasons, found off the loop too
            await asyncio.to_thread(prepare_reasons, published.snapshot)
        self.present(published, show=self._show_after_refresh)

    def present(self, published: Published | None, show: Callable[[], None] | None = None) -> None:
        """Show ``published`` (or, when ``None``, the same frame with a changed banner); a
        rewound live session shows its moment instead, as the live one goes on behind.
        """
        banner = self.rec.banner(self.size.width or 80)
        rewound = self.rec.rewound
        if rewound is not None:
            if rewound.published is not self.frame.published or banner != self.frame.banner:
                self.frame = self._frame(rewound.published)
                (show or self._show)()
            return
        if published is not None or banner != self.frame.banner:
            self.frame = self._frame(published or self.hub.latest)
            (show or self._show)()

    def _show_after_refresh(self) -> None:
        self.call_after_refresh(self._show)

    def _frame(self, published: Published) -> Frame:
        banner = self.rec.banner(self.size.width or 80)
        return Frame(published, tuple(self.source_errors), banner)

    def _show(self) -> None:
        for screen in (self.screen, *self.screen_stack):
            if isinstance(screen, KtopScreen) and screen.is_mounted:
                screen.show(self.frame)
                break

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A source's worker that raised: post :class:`SourceFailed` (scrubbed)."""
        worker = event.worker
        if worker.group != SOURCES_GROUP or event.state != WorkerState.ERROR:
            return
        error = worker.error
        reason = f"source {worker.name} failed: {type(error).__name__}: {error}"
        self.post_message(SourceFailed(self.hub.secrets.scrub(reason)))

    def on_source_failed(self, message: SourceFailed) -> None:
        """A source failed: notify, add an error line; the others keep running."""
        self.source_errors.append(message.reason)
        self.notify(message.reason, title="source failed", severity="error", timeout=10)
        self.frame = replace(self.frame, errors=tuple(self.source_errors))
        self._show()

    def action_goto(self, mode: str) -> None:
        """Show a screen: ``overview``, an area, or ``findings``."""
        while isinstance(self.screen, ModalScreen) and len(self.screen_stack) > 1:
            self.pop_screen()
        self.switch_mode(mode)

    def action_trend_window(self) -> None:
        """Show the next trend window (5m, 15m, 1h, then 5m again)."""
        seconds = [s for _, s in WINDOWS]
        i = seconds.index(self.trend_window_s) if self.trend_window_s in seconds else -1
        self.trend_window_s = seconds[(i + 1) % len(seconds)]
        self.notify(f"trend window {window_label(self.trend_window_s)}", timeout=2)

    def watch_trend_window_s(self) -> None:
        """Redraw the screen in front with the new trend window."""
        self._show()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Replay keys only in a replay, recording keys only on a live or simulated source."""
        return self.rec.allowed(action, parameters)

    async def action_toggle_recording(self) -> None:
        """Start or stop recording (not in a replay)."""
        await self.hub.idle()  # hub.keyframe() refuses while a publish reads the model
        self.rec.toggle()
        self.pump()

    def action_marker(self) -> None:
        """Ask for a note and add a marker to the recording."""
        self.rec.ask_marker()

    def action_replay(self, control: str) -> None:
        """A replay control: pause, speed, steps, jumps, markers."""
        self.rec.control(control)
        self.pump()

    def action_return_live(self) -> None:
        """Leave a rewound moment: show the live session."""
        self.rec.return_live()

    def action_seek(self) -> None:
        """Ask for a time and go there."""
        self.rec.ask_seek()

    def action_help(self) -> None:
        """Open the help screen (unless it is open): this app's keys."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(help_screen(type(self)))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Palette commands for every action of :data:`PALETTE`, then Textual's own."""
        rows = {row.action: row for row in key_rows(type(self)) if not row.where}
        for action, title in self.PALETTE.items():
            row = rows[action]
            yield SystemCommand(
                title, f"{row.what} ({row.shown})", partial(self.run_action, action)
            )
        yield from super().get_system_commands(screen)
