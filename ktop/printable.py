"""Text from input ktop did not write (a recording, a bundle, a cluster), made safe to print
to a terminal.

A recording attached to a bug report is read by someone else's terminal: a marker note or
a message holding ``ESC ] 52`` would set the reader's clipboard, ``ESC [ 2 J`` would clear
the screen. :func:`printable` shows every control character as its escape (``\\x1b``)
instead; every command that prints such text passes it through here.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""C0 controls (ESC, CR, BEL, tab and the rest), DEL and the C1 controls."""
_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group(0)):02x}"


def printable(text: str, *, newlines: bool = False) -> str:
    """``text`` with every control character shown as its escape (``\\x1b``), newlines
    too unless ``newlines`` (for a document of several lines); other text is unchanged.
    """
    return (_CONTROL_BUT_NEWLINE if newlines else _CONTROL).sub(_escape, text)
