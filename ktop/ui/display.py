"""How the terminal is driven: ASCII only, no colour, low bandwidth, the production pattern.

``NO_COLOR`` (https://no-color.org) removes every colour from the bytes written;
``--ascii`` (on by itself when the locale cannot encode UTF-8) replaces every
non-ASCII character written with an ASCII one of the same width. Both work
as output filters on what Textual draws, so nothing on screen escapes them.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from ktop.ui.render.level import SEVERITY_SYMBOL, SYMBOL, Level

ASCII_SYMBOL: dict[str, str] = {
    SYMBOL[Level.OK]: "o",
    SYMBOL[Level.WARN]: "!",
    SYMBOL[Level.CRIT]: "X",
    SYMBOL[Level.UNKNOWN]: "?",
    **{symbol: "i" for symbol in SEVERITY_SYMBOL.values() if symbol == "i"},
}
"""The status symbols in ASCII: ``o`` ok, ``!`` warning, ``X`` critical, ``?`` unknown (not
``+`` for ok: that is every box corner, and the ``+5 more`` of a cut list)."""

_ASCII_CHARS: dict[str, str] = {
    **ASCII_SYMBOL,
    "…": ".",
    "·": ".",
    "—": "-",
    "\u2013": "-",  # en dash
    "µ": "u",
    "\u00d7": "x",  # multiplication sign
    "↑": "^",
    "↓": "v",
    "→": ">",
    "←": "<",
    "▁": "_",
    "▂": ".",
    "▃": ":",
    "▄": "-",
    "▅": "=",
    "▆": "+",
    "▇": "*",
    "█": "#",
    "▌": "|",
    "▐": "|",
    "▔": "-",
    "•": "*",
    "⏎": "<",
}
"""ASCII stand-ins for the characters ktop and Textual draw (same width: one cell)."""


@lru_cache(maxsize=4096)
def ascii_char(char: str) -> str:
    """One character as ASCII of the same cell width."""
    if char.isascii():
        return char
    if char in _ASCII_CHARS:
        return _ASCII_CHARS[char]
    width = cell_len(char)
    if width == 0:
        return ""
    name = unicodedata.name(char, "")
    if name.startswith("BOX DRAWINGS"):
        if "HORIZONTAL" in name and "VERTICAL" not in name:
            return "-"
        if "VERTICAL" in name and "HORIZONTAL" not in name:
            return "|"
        if "ARC" in name or "DOWN" in name or "UP" in name:
            return "+"
        return "-" if "HORIZONTAL" in name else "+"
    if name.startswith(("UPPER", "LOWER", "LEFT", "RIGHT")) and "BLOCK" in name:
        return "#" if "BLOCK" in name and width == 1 else "?" * width
    plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
    if len(plain) == width:
        return plain
    return "?" * width


@lru_cache(maxsize=8192)
def to_ascii(text: str) -> str:
    """``text`` with every non-ASCII character replaced by ASCII of the same width."""
    if text.isascii():
        return text
    return "".join(ascii_char(c) for c in text)


class AsciiFilter(LineFilter):
    """Replace non-ASCII characters in everything Textual draws."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        """Segments with ASCII text."""
        return [Segment(to_ascii(text), style, control) for text, style, control in segments]


class StripColor(LineFilter):
    """Remove every colour (foreground and background); keep bold, reverse, underline..."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        """Segments without colour."""
        return [
            Segment(text, None if style is None else style.without_color, control)
            for text, style, control in segments
        ]


_UTF8 = re.compile(r"utf-?8", re.IGNORECASE)


def locale_is_utf8(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the locale the user set (``LC_ALL``, ``LC_CTYPE``, ``LANG``) encodes UTF-8.

    Python replaces a C/POSIX locale by ``C.UTF-8`` for itself and says so by
    setting ``LC_CTYPE``; that is not the user's terminal, so when ``LC_CTYPE`` is
    ``C.UTF-8`` while ``LANG`` says C (or nothing) the locale counts as C.
    """
    env = os.environ if environ is None else environ
    lc_all, lc_ctype, lang = (env.get(k, "") for k in ("LC_ALL", "LC_CTYPE", "LANG"))
    if lc_all:
        return bool(_UTF8.search(lc_all))
    coerced = lc_ctype.upper() in ("C.UTF-8", "C.UTF8") and lang in ("", "C", "POSIX")
    if lc_ctype and not coerced:
        return bool(_UTF8.search(lc_ctype))
    return bool(_UTF8.search(lang))


@dataclass(frozen=True, slots=True)
class Display:
    """How to drive the terminal; built once from the command line."""

    ascii_only: bool = False
    no_color: bool = False
    low_bandwidth: bool = False
    prod_pattern: re.Pattern[str] | None = None

    @classmethod
    def from_options(
        cls,
        *,
        ascii_only: bool | None,
        low_bandwidth: bool = False,
        prod_pattern: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Display:
        """From the options; ``ascii_only`` None means: ASCII when the locale is not UTF-8."""
        env = os.environ if environ is None else environ
        return cls(
            ascii_only=not locale_is_utf8(env) if ascii_only is None else ascii_only,
            no_color=bool(env.get("NO_COLOR")),
            low_bandwidth=low_bandwidth,
            prod_pattern=re.compile(prod_pattern) if prod_pattern else None,
        )

    def is_production(self, context: str) -> bool:
        """Whether ``context`` matches the production pattern."""
        return (
            bool(context)
            and self.prod_pattern is not None
            and bool(self.prod_pattern.search(context))
        )
