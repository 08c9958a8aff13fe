"""A recording whose names, messages and marker notes hold terminal control sequences
(OSC 52 sets the clipboard, CSI 2J clears the screen, C1 CSI, a newline) is replayed at
80x24 and triaged: the terminal receives none of them, only their escapes as text.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from ktop.hub import Hub
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.sources.replay import ReplayPlayer, ReplaySource
from ktop.ui.app import KtopApp
from tests.functional.screen import screen_text, seeks_done
from tests.unit.redact_plant import run

OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
CLEAR = "\x1b[2J\x1b[H"
FAKE = "\nProbable cause: FAKE"
HOSTILE = f"x{OSC52}{CLEAR}\x9b31m{FAKE}"
SEQUENCES = ("\x1b]52", "\x1b[2J", "\x9b", "\x07")
"""What must never reach the terminal from the recording's text (Textual writes ESC [ ... m
and cursor moves of its own, never these)."""


def _hostile_recording(path: Path) -> None:
    """Events and markers written raw, as a hostile file would hold them (not through a hub,
    which would escape them)."""
    rec = Recorder(str(path), ClusterModel(), source={"kind": "live", "context": "ctx"})
    node = ev.NodeRecord(f"w{CLEAR}1", "r", "z", "k", ev.Readiness.FALSE, 1.0)
    pod = ev.PendingPodRecord("ns", "p-1", 1.0, ev.PodWait.UNSCHEDULABLE, "", HOSTILE)
    events: list[ev.Event] = [
        ev.NodeUpserted(1.0, node),
        ev.PendingPodUpserted(2.0, pod),
        ev.WarningEvent(3.0, "FailedScheduling", "ns", "Pod", "p-1", HOSTILE),
        ev.FeedFailed(4.0, ev.FEED_NODES, HOSTILE),
    ]
    for at, e in enumerate(events):
        rec([e])
        if at == 2:
            rec.mark(HOSTILE, 3.5)
    rec.stop()


def _terminal_bytes(app: KtopApp) -> str:
    """What Textual writes to the terminal for the whole screen (its own sequences too)."""
    out = io.StringIO()
    console = Console(width=80, height=24, file=out, force_terminal=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    return out.getvalue()


async def test_replay_sends_no_control_sequence_from_the_recording(tmp_path: Path) -> None:
    # The issue: Rich strips only BEL, BS, VT, FF and CR, so ESC from a recording reached
    # the terminal through the dashboard (the status bar's marker note, node names, ...).
    path = tmp_path / "hostile.ktrec"
    _hostile_recording(path)
    rec = Recording(path)
    hub = Hub(ClusterModel(rec.model_config))
    player = ReplayPlayer(rec, hub.reset)
    player.paused = True
    source = ReplaySource(player, tick_s=3600.0)
    app = KtopApp(hub, [source], replay=source)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        seen: list[str] = []
        for keys in (["full_stop"], ["n"], ["i"], ["t"], ["f"], ["o"]):
            for key in keys:
                await pilot.press(key)
            await seeks_done(app)
            await pilot.pause()
            app.pump()
            await pilot.pause()
            written = _terminal_bytes(app)
            for seq in SEQUENCES:
                assert seq not in written, (keys, seq)
            seen.append(screen_text(app))
        shown = "\n".join(seen)
        assert "\\x1b" in shown  # the escapes are visible
        assert not any(
            line.lstrip().startswith("Probable cause: FAKE") for line in shown.splitlines()
        )


def test_triage_of_the_recording_has_no_fake_line(tmp_path: Path) -> None:
    # The issue: a newline in a recording's message or marker note made a line of its own
    # in triage's text and Markdown reports.
    path = tmp_path / "hostile.ktrec"
    _hostile_recording(path)
    for output in ("text", "markdown"):
        code, said = run("triage", "--recording", str(path), "--output", output)
        assert code in (0, 1), said
        assert "Probable cause: FAKE" in said  # the text is kept, on its line
        for line in said.splitlines():
            assert not line.lstrip(" -*>|#").startswith("Probable cause: FAKE"), (output, line)
        assert not any(seq in said for seq in SEQUENCES)
