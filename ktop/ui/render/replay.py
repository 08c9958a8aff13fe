"""The recording and replay lines: keys, REC indicator, timeline (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from ktop.model.text import counted, fmt_clock
from ktop.record.session import RecordingStatus

RECORD_KEYS: tuple[tuple[str, str, str, str], ...] = (
    ("R", "toggle_recording", "rec", "start or stop recording to a file"),
    ("m", "marker", "mark", "add a marker with a short note (while recording)"),
)
"""(key, action, footer label, help text) of the recording keys."""

REPLAY_KEYS: tuple[tuple[str, str, str, str], ...] = (
    ("space", "replay('pause')", "pause", "replay: pause or resume"),
    ("plus", "replay('faster')", "faster", "replay: faster (up to 64x)"),
    ("minus", "replay('slower')", "slower", "replay: slower (down to 0.25x)"),
    (
        "full_stop",
        "replay('step_forward')",
        "step",
        "replay: step forward (pauses); live: rewound, 5 s forward",
    ),
    ("comma", "replay('step_back')", "back", "replay: step back (pauses); live: rewind 5 s"),
    (
        "right_square_bracket",
        "replay('jump_1m')",
        "+1m",
        "replay, or a rewound live session: 1 minute forward",
    ),
    (
        "left_square_bracket",
        "replay('back_1m')",
        "-1m",
        "replay: 1 minute back; live: rewind 1 minute",
    ),
    (
        "right_curly_bracket",
        "replay('jump_10m')",
        "+10m",
        "replay, or a rewound live session: 10 minutes forward",
    ),
    (
        "left_curly_bracket",
        "replay('back_10m')",
        "-10m",
        "replay: 10 minutes back; live: rewind 10 minutes",
    ),
    ("n", "replay('next_marker')", "next mark", "replay: next marker"),
    ("N", "replay('previous_marker')", "prev mark", "replay: previous marker"),
    ("g", "seek", "seek", "replay: go to a time (HH:MM:SS UTC, or +N/-N seconds from here)"),
)
"""(key, action, footer label, help text) of the replay keys."""

REWIND_KEYS: tuple[tuple[str, str, str, str], ...] = (
    ("L", "return_live", "live", "rewound live session: back to live"),
)
"""(key, action, footer label, help text) of the rewind keys (the replay keys that move in
time rewind a live session: ``ktop/ui/rewind.py``)."""

KEY_DISPLAY = {
    "space": "space",
    "plus": "+",
    "minus": "-",
    "full_stop": ".",
    "comma": ",",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "right_curly_bracket": "}",
    "left_curly_bracket": "{",
}


def seek_question(position: float) -> str:
    """The ``g`` prompt: what a typed time means, and where the replay is now."""
    return (
        f"Go to time (now {fmt_clock(position)} UTC): HH:MM:SS UTC, "
        "or +N / -N seconds from now (enter to go, escape to cancel)"
    )


@dataclass(frozen=True, slots=True)
class ReplayState:
    """What the timeline shows."""

    start: float
    end: float
    position: float
    speed: float
    paused: bool
    markers: tuple[float, ...]
    gaps: tuple[tuple[float, float], ...]
    message: str = ""


def _speed(speed: float) -> str:
    return f"{speed:g}x"


def timeline_line(state: ReplayState, width: int) -> Text:
    """``▶ 4x 12:03:05 [━━━━━●────│──░░──] 12:30:00``: position, markers (│), gaps (░)."""
    icon = "⏸" if state.paused else "▶"
    head = f"REPLAY {icon} {_speed(state.speed)} {fmt_clock(state.position)} "
    tail = f" {fmt_clock(state.end)}"
    if state.message:
        tail += f"  {state.message}"
    bar_w = max(0, width - len(head) - len(tail) - 2)
    out = Text(head, style="bold")
    if bar_w >= 5:
        span = max(1e-9, state.end - state.start)

        def col(t: float) -> int:
            return min(bar_w - 1, max(0, int((t - state.start) / span * bar_w)))

        cells = ["─"] * bar_w
        here = col(state.position)
        for i in range(here):
            cells[i] = "━"
        for a, b in state.gaps:
            for i in range(col(a), col(b) + 1):
                cells[i] = "░"
        for m in state.markers:
            cells[col(m)] = "│"
        cells[here] = "●"
        out.append("[")
        for i, c in enumerate(cells):
            style = "bold" if i == here else ("reverse" if c == "│" else "")
            out.append(c, style=style)
        out.append("]")
    out.append(tail)
    out.truncate(width)
    return out


def rewind_line(at: float, live: float, moving: bool, width: int) -> Text:
    """``◀ REWOUND 10m 00s behind live · 14:02:10 UTC  ] } forward · L live``; while a
    rewind runs, ``rewinding to 14:02:10 UTC ...``.
    """
    if moving:
        out = Text("◀ rewinding", style="bold reverse")
        out.append(f" to {fmt_clock(at)} UTC ...")
    else:
        behind = max(0, int(live - at))
        out = Text(
            f"◀ REWOUND {behind // 60}m {behind % 60:02d}s behind live", style="bold reverse"
        )
        out.append(f" · {fmt_clock(at)} UTC  [ {{ back · ] }} forward · L live")
    out.truncate(width)
    return out


def always_on_line(status: RecordingStatus, directory: str, width: int) -> Text:
    """``● always-on 3.2 MB → FILE (DIR)``: the ``--record-dir`` recording, quieter than a
    recording started with ``R``; or why it stopped.
    """
    if status.error:
        out = Text("always-on recording stopped ", style="bold reverse")
        out.append(f" {status.error}; the live view goes on")
    else:
        out = Text("● always-on", style="red")
        out.append(f" {status.size / 1e6:.1f} MB → {status.path}  (in {directory})")
    out.truncate(width)
    return out


def recording_line(status: RecordingStatus, width: int) -> Text:
    """``● REC 3.2 MB 1234 events 2 markers → FILE`` or why the recording stopped."""
    if status.error:
        out = Text("REC stopped ", style="bold reverse")
        out.append(f" {status.error}; the live view goes on")
    elif status.active:
        out = Text("● REC", style="bold red")
        out.append(
            f" {status.size / 1e6:.1f} MB  {status.events} events  "
            f"{counted(status.markers, 'marker')}  → {status.path}"
        )
    else:
        out = Text(f"recording saved: {status.path} ({status.stopped_because})")
    out.truncate(width)
    return out
