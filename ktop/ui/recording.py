"""Recording and replay in the app: key bindings, actions, the status lines above the footer.

The keys are defined once in ``ktop.ui.render.replay``; the app's BINDINGS
and the help screen both derive from them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding

from ktop.model.text import fmt_clock
from ktop.record.rotating import RotatingRecorder
from ktop.record.session import Recorder
from ktop.sources.replay import ReplayPlayer, ReplaySource, parse_time
from ktop.ui.render.replay import (
    KEY_DISPLAY,
    RECORD_KEYS,
    REPLAY_KEYS,
    REWIND_KEYS,
    ReplayState,
    always_on_line,
    recording_line,
    rewind_line,
    seek_question,
    timeline_line,
)
from ktop.ui.rewind import MOVES, Rewinder, Rewound, rewind_target
from ktop.ui.screens.prompt import PromptScreen

if TYPE_CHECKING:
    from ktop.ui.app import KtopApp

MINUTE = 60.0
CONTROLS: dict[str, Callable[[ReplayPlayer], float | None]] = {
    "pause": ReplayPlayer.toggle,
    "faster": ReplayPlayer.faster,
    "slower": ReplayPlayer.slower,
    "step_forward": lambda p: p.step_target(+1),
    "step_back": lambda p: p.step_target(-1),
    "jump_1m": lambda p: p.position + MINUTE,
    "back_1m": lambda p: p.position - MINUTE,
    "jump_10m": lambda p: p.position + 10 * MINUTE,
    "back_10m": lambda p: p.position - 10 * MINUTE,
    "next_marker": lambda p: p.marker_target(+1),
    "previous_marker": lambda p: p.marker_target(-1),
}
"""Each replay control: what it does to the player, and where it moves to (``None``: it
does not move). A move other than a short one forward runs off the UI loop."""
_RECORD_ACTIONS = {action for _, action, _, _ in RECORD_KEYS}
_REPLAY_ACTIONS = {action.split("(")[0] for _, action, _, _ in REPLAY_KEYS}


class RecordingControls:
    """Owns the in-app recorder (live) or drives the replay player (replay)."""

    def __init__(
        self,
        app: KtopApp,
        replay: ReplaySource | None,
        record_dir: str,
        always_on: RotatingRecorder | None = None,
        *,
        always_on_shown: bool = True,
    ) -> None:
        self.app = app
        self.replay = replay
        self.record_dir = Path(record_dir)
        self.recorder: Recorder | None = None
        self.always_on = always_on
        """The session's own recorder (``--record-dir``, or a private directory)."""
        self.always_on_shown = always_on_shown
        """Whether it is the user's (``--record-dir``: on the status line, ``m`` marks it)
        or only the private one that lets the session be rewound."""
        live, secrets = replay is None, app.hub.secrets
        self.rewinder = Rewinder(always_on, secrets) if always_on is not None and live else None
        """Rewinds a live session from its own recording (None: a replay, or no recording)."""
        self.rewound: Rewound | None = None
        """The moment a rewound live screen shows (None: live)."""
        self.rewinding_to: float | None = None
        """Where a rewind running off the UI loop is going."""
        self._reported_error = ""
        self._stopped_seen = False
        """The current recorder's stop was seen (its sink removed, the key bar redrawn)."""
        if replay is not None:  # the incident timeline shows the recording's markers
            app.hub.add_markers([(m.at, m.note) for m in replay.player.timeline.markers])

    @staticmethod
    def bindings() -> list[Binding]:
        """The bindings of every recording, replay and rewind key, each with its help text
        as its ``tooltip``.
        """
        return [
            Binding(key, action, label, key_display=KEY_DISPLAY.get(key, key), tooltip=what)
            for key, action, label, what in (*RECORD_KEYS, *REPLAY_KEYS, *REWIND_KEYS)
        ]

    def allowed(self, action: str, parameters: tuple[object, ...] = ()) -> bool:
        """Whether ``action`` applies: replay keys in a replay (in a live session, those
        that move in time rewind it), recording keys otherwise, ``L`` while rewound.
        """
        if action == "return_live":
            return self.rewound is not None
        if action in _REPLAY_ACTIONS:
            if self.replay is not None:
                return True
            return (
                self.rewinder is not None
                and action == "replay"
                and (bool(parameters) and parameters[0] in MOVES)
            )
        if action in _RECORD_ACTIONS:
            if self.replay is not None:
                return False
            if action == "marker":
                return self._marks() is not None
        return True

    # ----------------------------------------------------------- record

    def toggle(self) -> None:
        """Start recording to a new file, or stop the current recording."""
        rec = self.recorder
        if rec is not None and rec.active:
            rec.stop("stopped with R")
            self.app.hub.remove_sink(rec)
            self.app.notify(f"recording saved to {rec.path}", title="recording")
            self.app.refresh_bindings()  # "m mark" leaves the key bar
            return
        model = self.app.hub.model
        stamp = datetime.fromtimestamp(time.time(), UTC).strftime("%Y%m%d-%H%M%S")
        path = self.record_dir / f"ktop-{stamp}.ktrec"
        source = {"kind": model.source_kind, "context": model.context, "detail": ""}
        try:
            self.recorder = Recorder(str(path), self.app.hub, source=source)
        except OSError as exc:
            self.app.notify(
                f"cannot record to {path}: {exc.strerror or exc}",
                title="recording",
                severity="error",
            )
            return
        self._reported_error = ""
        self._stopped_seen = False
        self.app.hub.add_sink(self.recorder)
        self.app.refresh_bindings()  # "m mark" joins the key bar

    def _marks(self) -> Recorder | RotatingRecorder | None:
        """Where a marker goes: the recording started with ``R``, else the always-on one."""
        if self.recorder is not None and self.recorder.active:
            return self.recorder
        if self.always_on is not None and self.always_on_shown and self.always_on.active:
            return self.always_on
        return None

    def ask_marker(self) -> None:
        """Ask for the note of a marker, then add it."""

        def done(note: str | None) -> None:
            target = self._marks()
            if note is not None and target is not None:
                marker = target.mark(note.strip())
                if marker is not None:
                    self.app.hub.add_markers([(marker.at, marker.note)])
                    self.app.notify(f"marker added: {note.strip() or '(no note)'}")
                self.app.pump()

        self.app.push_screen(PromptScreen("Marker note (enter to add, escape to cancel)"), done)

    # ----------------------------------------------------------- replay

    def control(self, name: str) -> None:
        """Run a replay control by name (in a live session: rewind)."""
        if self.replay is not None and name in CONTROLS:
            self._seek(self.replay.control(CONTROLS[name]))
        elif self.rewinder is not None and name in MOVES:
            self.app.run_worker(self._rewind(MOVES[name]), group="rewind", exclusive=True)

    async def _rewind(self, move: float) -> None:
        """Show the live session ``move`` seconds from the moment shown; live past now."""
        rewinder = self.rewinder
        if rewinder is None:
            return
        live = self.app.hub.now
        base = self.rewound.at if self.rewound is not None else live
        start = self.rewound.start if self.rewound is not None else float("-inf")
        target = rewind_target(base, move, live, start)
        if target is None:
            self.return_live()
            return
        self.rewinding_to = target
        self.app.present(None)
        rewinder.flush()
        try:
            view = await asyncio.to_thread(rewinder.at, target)
        except (OSError, ValueError) as exc:  # FormatError is a ValueError
            self.app.notify(f"cannot rewind: {exc}", title="rewind", severity="error")
            return
        finally:
            self.rewinding_to = None
        if view.at >= live:
            self.return_live()
            return
        if target < view.start:
            self.app.notify("the session's recording starts here", timeout=3)
        self.rewound = view
        self.app.refresh_bindings()  # "L live" joins the key bar
        self.app.present(view.published)

    def return_live(self) -> None:
        """Show the live session again."""
        self.rewound = None
        self.app.refresh_bindings()
        self.app.present(self.app.hub.latest)

    def ask_seek(self) -> None:
        """Ask for a time, then seek there off the UI loop (the banner shows where to)."""
        replay = self.replay
        if replay is None:
            return
        player = replay.player

        def done(text: str | None) -> None:
            if not text or not text.strip():
                return
            tl = player.timeline
            try:
                at = parse_time(text, tl.start, tl.end, player.position)
            except ValueError as exc:
                self.app.notify(str(exc), title="go to time", severity="error", timeout=8)
                return
            self._seek(replay.move(at))
            self.app.pump()

        self.app.push_screen(PromptScreen(seek_question(player.position)), done)

    def _seek(self, travel: Coroutine[Any, Any, None] | None) -> None:
        """Run a seek off the UI loop (``None``: the move was made at once, or none)."""
        if travel is not None:
            self.app.run_worker(travel, name="seek", group="seek")

    # ----------------------------------------------------------- banner

    def banner(self, width: int) -> tuple[Text, ...]:
        """The timeline (replay), the rewind line (a rewound live session) or the REC line
        (recording), if any.
        """
        if self.rewound is not None or self.rewinding_to is not None:
            at = self.rewinding_to if self.rewinding_to is not None else self.rewound_at
            return (rewind_line(at, self.app.hub.now, self.rewinding_to is not None, width),)
        if self.replay is not None:
            p = self.replay.player
            tl = p.timeline
            message = p.message
            if p.seeking is not None:
                message = f"seeking to {fmt_clock(p.seeking)} ... {p.seek_progress:.0%}"
            state = ReplayState(
                tl.start,
                tl.end,
                p.position,
                p.speed,
                p.paused,
                tuple(m.at for m in tl.markers),
                tuple((g.start, g.end) for g in tl.gaps),
                message,
            )
            return (timeline_line(state, width),)
        rec = self.recorder
        if rec is None:
            if self.always_on is None or not self.always_on_shown:
                return ()
            status = self.always_on.status()
            self._report(status.error)
            return (always_on_line(status, str(self.always_on.directory), width),)
        status = rec.status()
        if not rec.active and not self._stopped_seen:
            self._stopped_seen = True
            self.app.hub.remove_sink(rec)  # it stopped by itself (size limit, write error)
            self.app.refresh_bindings()
        self._report(status.error)
        return (recording_line(status, width),)

    def _report(self, error: str) -> None:
        """Notify a recording's error once."""
        if error and error != self._reported_error:
            self._reported_error = error
            self.app.notify(error, title="recording", severity="error", timeout=15)

    @property
    def rewound_at(self) -> float:
        """The moment shown (live: the live clock)."""
        return self.rewound.at if self.rewound is not None else self.app.hub.now
