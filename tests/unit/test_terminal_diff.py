"""The changed-cells-only writer leaves the terminal exactly as Textual's full output does.

The judge is an independent terminal emulator (pyte): the stream Textual wrote and the
stream the writer makes of it are fed to two emulated screens, which must hold the same
characters with the same colours and attributes after every write. The input is real
Textual output captured from ktop in a pty (tests/fixtures, with its .source.txt) and
frames made up by Hypothesis with wide characters, colour changes and resets.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pyte
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.ui.terminal_diff import ScreenDiff

FIXTURE = Path(__file__).parents[1] / "fixtures" / "textual_output_zone-outage_100x30.bin.zst"
COLS, ROWS = 100, 30
FRAME_START = re.compile(r"(?=\x1b\[1;1H)")
EXIT = "\x1b[?2004l"
"""Where Textual starts to leave the terminal (pyte knows none of those modes)."""


def textual_output() -> str:
    """The captured stream up to the exit."""
    raw = zstandard.ZstdDecompressor().decompress(FIXTURE.read_bytes()).decode()
    return raw[: raw.index(EXIT)]


def screen(cols: int = COLS, rows: int = ROWS) -> tuple[pyte.Screen, pyte.Stream]:
    term = pyte.Screen(cols, rows)
    return term, pyte.Stream(term)


def differences(a: pyte.Screen, b: pyte.Screen) -> list[tuple[int, int, object, object]]:
    return [
        (y, x, a.buffer[y][x], b.buffer[y][x])
        for y in range(a.lines)
        for x in range(a.columns)
        if a.buffer[y][x] != b.buffer[y][x]
    ]


def writes(stream: str, cuts: list[int]) -> list[str]:
    """``stream`` cut into writes at token boundaries (escape starts) near ``cuts``."""
    starts = sorted({m.start() for m in re.finditer("\x1b", stream)} | {0})
    points = sorted({starts[c % len(starts)] for c in cuts} | {0, len(stream)})
    return [stream[a:b] for a, b in itertools.pairwise(points) if b > a]


def check_same_screen(chunks: list[str], cols: int = COLS, rows: int = ROWS) -> int:
    """Feed ``chunks`` raw and filtered; the screens must agree after each; bytes written."""
    diff = ScreenDiff(rows=rows, cols=cols)
    raw, raw_feed = screen(cols, rows)
    out, out_feed = screen(cols, rows)
    written = 0
    for i, chunk in enumerate(chunks):
        filtered = diff.filter(chunk)
        written += len(filtered.encode())
        raw_feed.feed(chunk)
        out_feed.feed(filtered)
        assert differences(raw, out) == [], f"after write {i}: {chunk[:200]!r}"
    return written


def test_real_textual_frames_give_the_same_screen_for_a_fraction_of_the_bytes() -> None:
    stream = textual_output()
    frames = [f for f in FRAME_START.split(stream) if f]
    assert len(frames) > 10, "the capture must hold many frames (or this test is void)"
    written = check_same_screen(frames)
    assert written < len(stream.encode()) / 3


@given(st.lists(st.integers(min_value=0), max_size=40))
def test_real_textual_output_cut_anywhere_between_escapes(cuts: list[int]) -> None:
    check_same_screen(writes(textual_output()[:30_000], cuts))


def test_an_unchanged_frame_costs_almost_nothing() -> None:
    frames = [f for f in FRAME_START.split(textual_output()) if f]
    diff = ScreenDiff()
    for frame in frames:
        diff.filter(frame)
    again = diff.filter(frames[-1])
    assert len(again) < 40, repr(again)


def test_forgetting_writes_everything_again() -> None:
    frame = "\x1b[1;1H\x1b[38;5;1mhello\x1b[0m\x1b[2;1Hworld"
    diff = ScreenDiff()
    first = diff.filter(frame)
    assert "hello" in first and "world" in first
    assert "hello" not in diff.filter(frame)
    diff.forget()
    assert "hello" in diff.filter(frame)


@pytest.mark.parametrize("erase", ["\x1b[2J", "\x1b[K", "\x1b[?1049h", "\x1bM", "\x1b[3A"])
def test_an_escape_that_can_change_the_screen_is_passed_on_and_forgets(erase: str) -> None:
    frame = "\x1b[1;1Hhello"
    diff = ScreenDiff()
    diff.filter(frame)
    again = diff.filter(erase + frame)
    assert again.startswith(erase)
    assert "hello" in again


def test_a_colour_escape_only_where_the_colour_changes() -> None:
    # Textual resets after every segment and sets the full colour again.
    frame = "\x1b[1;1H" + "".join(f"\x1b[38;5;2;48;5;0m{c}\x1b[0m" for c in "abcdef")
    out = ScreenDiff().filter(frame)
    assert out.count("38;5;2") == 1
    assert "abcdef" in out


STYLES = [
    "",
    "1",
    "38;5;1",
    "48;5;4",
    "1;38;5;203;48;5;234",
    "7",
    "0;32",
    "38;2;10;20;30",
    "39",
    "49",
]
STYLES += ["22", "3;4", "48;5;234", "38;5;251;48;5;234", "1;38;5;75;48;5;236", "91", "104"]
TEXT = st.text(alphabet="ab ┃▁█✖中", min_size=1, max_size=12)
FUZZ_COLS, FUZZ_ROWS = 24, 10


@st.composite
def strip(draw: st.DrawFn) -> str:
    """One run of styled text as Textual writes it: a cursor move, then segments that
    stay inside the screen (Textual lays out within the width), sometimes a line feed.
    """
    y, x = draw(st.integers(1, FUZZ_ROWS)), draw(st.integers(1, FUZZ_COLS))
    out, room = [f"\x1b[{y};{x}H"], FUZZ_COLS - x + 1
    for style, text in draw(st.lists(st.tuples(st.sampled_from(STYLES), TEXT), max_size=4)):
        kept = ""
        for ch in text:
            if cell_len(kept + ch) > room:
                break
            kept += ch
        room -= cell_len(kept)
        out.append(f"\x1b[{style}m{kept}\x1b[0m" if draw(st.booleans()) else f"\x1b[{style}m{kept}")
    if draw(st.booleans()):
        out.append("\r\n")
    return "".join(out)


@given(st.lists(st.lists(strip(), max_size=12), min_size=1, max_size=8))
def test_made_up_frames_give_the_same_screen(frames: list[list[str]]) -> None:
    # Textual turns autowrap off first (``?7l``), as the real stream above does
    writes = ["\x1b[?7l\x1b[1;1H"] + ["\x1b[1;1H" + "".join(f) for f in frames]
    check_same_screen(writes, cols=FUZZ_COLS, rows=FUZZ_ROWS)


def test_a_run_over_cells_the_same_write_changed_is_written() -> None:
    # one write blanks a cell, then writes back what the terminal held before: the run
    # equals the shadow, but not the cell the same write just changed (found by the fuzz)
    chunks = ["\x1b[?7l\x1b[1;1H", "\x1b[1;1H\x1b[maa", "\x1b[1;1H\x1b[m \x1b[1;1H\x1b[maa"]
    check_same_screen(chunks, cols=FUZZ_COLS, rows=FUZZ_ROWS)


def test_a_colour_change_alone_sets_only_that_colour() -> None:
    frame = "\x1b[1;1H\x1b[38;5;251;48;5;234mab\x1b[0m\x1b[38;5;221;48;5;234mcd\x1b[0m"
    out = ScreenDiff().filter(frame)
    assert "\x1b[38;5;221m" in out  # the background stays: not set again
    assert out.count("48;5;234") == 1
