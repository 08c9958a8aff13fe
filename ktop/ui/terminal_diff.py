"""Write only the cells that changed: a shadow of the terminal between Textual and the tty.

Textual repaints a whole widget when any of its text changes, and every styled
segment carries its full colour escape followed by a reset. Over a slow SSH link
that is most of what ktop writes: a panel whose one number moved is sent again,
line by line, with every colour. :class:`ScreenDiff` keeps what the terminal shows
(style and character per cell), reads the stream Textual writes (absolute cursor
moves, SGR colour escapes and text), and writes only the cells that differ, with a
colour escape only where the colour changes.

It is conservative where it cannot be sure what the terminal shows: any escape it
does not model is passed through unchanged, and one that can change the screen
(erase, scroll, relative cursor moves, the alternate screen) forgets the shadow, so
the next frame is written in full. The owner forgets it too on a resize and when
the application resumes (:meth:`ScreenDiff.forget`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from rich.cells import cell_len

_TOKEN = re.compile(
    r"(?P<csi>\x1b\[(?P<params>[0-9;:?<>=$ ]*)(?P<final>[@-~]))"
    r"|(?P<osc>\x1b\][^\x07\x1b]*(?:\x07|\x1b\\))"
    r"|(?P<esc>\x1b[^\[\]])"
    r"|(?P<ctl>[\r\n\x08])"
    r"|(?P<text>[^\x1b\r\n\x08]+)"
    r"|(?P<lone>\x1b)"
)
"""One piece of the stream: a CSI escape, an OSC string, another escape, a cursor
control character, a run of text, or a lone escape at the end of a write."""

_SHADOW_SAFE_FINALS = frozenset("hlpnqtu")
"""CSI finals that set modes or ask questions and leave the screen's cells alone
(``?25l``, ``?1049h`` excepted, see :data:`_SCREEN_SWITCH`)."""

_SCREEN_SWITCH = ("?1049", "?47", "?1047")
"""Modes that switch between the normal and the alternate screen."""

_GAP = 4
"""Unchanged cells shorter than this between two changes are written again rather
than jumped over: a cursor move costs about eight bytes."""

Cell = tuple[str, str]
"""What the terminal shows in one cell: the SGR parameters in force and the
character (``""`` for the right half of a wide character)."""


@lru_cache(maxsize=4096)
def _width(ch: str) -> int:
    return cell_len(ch)


@dataclass
class ScreenDiff:
    """The terminal's cells as last written, and a filter that writes only changes."""

    rows: int = 0
    """The screen's height, when known: a line feed on its last line scrolls."""
    cols: int = 0
    """The screen's width, when known: text past it lands on the last column."""
    cells: dict[tuple[int, int], Cell] = field(default_factory=dict)
    wide_rows: set[int] = field(default_factory=set)
    """Rows where the shadow holds part of a wide character (kept until forgotten)."""
    _style: str = ""
    """SGR parameters in force in the stream read so far ("" after a reset)."""
    _out_style: str = ""
    """SGR parameters in force on the terminal, as written by this filter."""
    _carry: str = ""
    """An escape sequence cut off at the end of the last write, read with the next."""
    _y: int = 1
    _x: int = 1
    """Where the stream read so far has left the cursor (1-based row and column)."""

    def forget(self) -> None:
        """Forget what the terminal shows: the next write is passed on in full."""
        self.cells.clear()
        self.wide_rows.clear()

    def filter(self, data: str) -> str:
        """What to write instead of ``data`` so the terminal ends up the same."""
        data, self._carry = _split_incomplete(self._carry + data)
        out: list[str] = []
        pending: list[tuple[int, int, Cell]] = []
        y, x = self._y, self._x
        out_pos: tuple[int, int] | None = None
        moved = False
        for m in _TOKEN.finditer(data):
            kind = m.lastgroup
            if kind == "text":
                run = m.group("text")
                if pending and len(run) > 1:
                    # the shadow must hold what this write put before the run: a cell
                    # still pending may be one the run writes again
                    out_pos = self._flush(out, pending, out_pos)
                if self._unchanged_run(y, x, run):
                    # the common case of a repainted widget: nothing to compare cell by
                    # cell; its last cell stays pending (a combining mark may follow)
                    x += len(run)
                    pending.append((y, x - 1, (self._style, run[-1])))
                    continue
                for ch in run:
                    w = _width(ch)
                    if w == 0:
                        prev = pending[-1] if pending and pending[-1][:2] == (y, x - 1) else None
                        if prev is not None:
                            pending[-1] = (prev[0], prev[1], (prev[2][0], prev[2][1] + ch))
                        else:  # a combining mark on a cell we cannot see: redraw it whole
                            out_pos = self._flush(out, pending, out_pos)
                            out.append(ch)
                            self.cells.pop((y, x - 1), None)
                        continue
                    at = min(x, self.cols) if self.cols and w == 1 else x
                    # without autowrap (Textual turns it off) text past the last column
                    # overwrites the last column
                    pending.append((y, at, (self._style, ch)))
                    if w == 2:
                        pending.append((y, x + 1, (self._style, "")))
                    x += w
                continue
            if kind == "csi":
                final, params = m.group("final"), m.group("params")
                if final == "H" and not params.startswith("?"):
                    row, _, col = params.partition(";")
                    y = int(row) if row.isdigit() else 1
                    x = int(col) if col.isdigit() else 1
                    moved = True
                    continue
                if final == "m":
                    self._style = _apply_sgr(self._style, params)
                    continue
                out_pos = self._flush(out, pending, out_pos)
                out.append(m.group(0))
                if final not in _SHADOW_SAFE_FINALS or params.startswith(_SCREEN_SWITCH):
                    self.forget()
                out_pos = None
                continue
            if kind == "ctl":
                ch = m.group("ctl")
                if ch == "\r":
                    x = 1
                elif ch == "\n" and self.rows and y >= self.rows:
                    # a line feed on the last line scrolls the screen: pass it on, forget
                    out_pos = self._flush(out, pending, out_pos)
                    out.append(f"\x1b[{y};{x}H\n")
                    self.forget()
                    out_pos = None
                elif ch == "\n":
                    y += 1
                else:
                    x = max(1, x - 1)
                moved = True
                continue
            out_pos = self._flush(out, pending, out_pos)
            out.append(m.group(0))
            if kind != "osc":
                self.forget()
                out_pos = None
        out_pos = self._flush(out, pending, out_pos)
        if self._out_style:
            out.append("\x1b[0m")
            self._out_style = ""
        if moved and out_pos != (y, x):
            out.append(f"\x1b[{y};{x}H")
        self._y, self._x = y, x
        return "".join(out)

    def _unchanged_run(self, y: int, x: int, run: str) -> bool:
        """Whether ``run``, written at ``(y, x)`` in the current style, changes nothing:
        inside the width, on a row with no wide character in the shadow (whose neighbours
        a new wide one could change), and the same as the shadow cell for cell. Each
        character then takes one cell: the shadow keeps a character alone in a cell only
        when it is one cell wide (a wide one marks its row, a zero-width one joins the
        cell before it).
        """
        n = len(run)
        if n < 2 or y in self.wide_rows or (self.cols and x + n - 1 > self.cols):
            return False
        get, style = self.cells.get, self._style
        return all(get((y, x + i)) == (style, ch) for i, ch in enumerate(run))

    def _flush(
        self,
        out: list[str],
        pending: list[tuple[int, int, Cell]],
        pos: tuple[int, int] | None,
    ) -> tuple[int, int] | None:
        """Write the pending cells that differ from the shadow; return the cursor after."""
        if not pending:
            return pos
        cells = self.cells
        flags: list[bool] = []
        wide_rows: set[int] = set()
        for y, x, cell in pending:
            old = cells.get((y, x))
            flags.append(old != cell)
            if old != cell and _is_wide_part(old, cell):
                # a wide character appears or goes: its neighbours change on the terminal
                # too, so the row is written as Textual wrote it
                wide_rows.add(y)
            cells[(y, x)] = cell
            if cell[1] == "" or _width(cell[1][0]) == 2:
                self.wide_rows.add(y)
        last: tuple[int, int] | None = None
        for (y, x, cell), changed in zip(pending, flags, strict=True):
            if not changed and y not in wide_rows:
                continue
            ch = cell[1]
            if ch == "":  # right half of a wide character: written with its left half
                if last != (y, x - 1):
                    left = cells.get((y, x - 1))
                    if left is not None and left[1] and _width(left[1][0]) == 2:
                        pos = self._move(out, pos, y, x - 1)
                        self._put(out, left)
                        pos, last = (y, x + 1), (y, x - 1)
                continue
            pos = self._move(out, pos, y, x)
            self._put(out, cell)
            pos, last = (y, x + _width(ch[0])), (y, x)
        pending.clear()
        return pos

    def _move(self, out: list[str], pos: tuple[int, int] | None, y: int, x: int) -> tuple[int, int]:
        """Put the cursor at ``(y, x)``: a move, or the few cells between written again."""
        if pos == (y, x):
            return pos
        if pos is not None and pos[0] == y and 0 < x - pos[1] < _GAP:
            bridged = [self.cells.get((y, c)) for c in range(pos[1], x)]
            if all(b is not None and b[1] != "" and _width(b[1][0]) == 1 for b in bridged):
                for b in bridged:
                    assert b is not None
                    self._put(out, b)
                return (y, x)
        out.append(f"\x1b[{y};{x}H")
        return (y, x)

    def _put(self, out: list[str], cell: Cell) -> None:
        style, ch = cell
        if style != self._out_style:
            out.append(_sgr_change(self._out_style, style))
            self._out_style = style
        out.append(ch)


def _apply_sgr(style: str, params: str) -> str:
    """The SGR parameters in force after ``ESC [ params m`` over ``style``."""
    if params in ("", "0"):
        return ""
    if params.startswith("0;"):
        return params[2:]
    return f"{style};{params}" if style else params


def _is_wide_part(old: Cell | None, new: Cell) -> bool:
    """Whether a cell was or becomes part of a wide character."""
    return any(c is not None and (c[1] == "" or _width(c[1][0]) == 2) for c in (old, new))


_COMPLETE = re.compile(r"\x1b(?:\[[0-9;:?<>=$ ]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[^\[\]])")


def _split_incomplete(data: str) -> tuple[str, str]:
    """``data`` without an escape sequence cut off at its end, and that cut-off part."""
    start = data.rfind("\x1b", max(0, len(data) - 256))
    if start < 0 or _COMPLETE.match(data, start):
        return data, ""
    return data[:start], data[start:]


_ATTRIBUTES = frozenset({"1", "2", "3", "4", "5", "7", "8", "9", "53"})
"""SGR parameters that switch an attribute on (bold, dim, italic ...)."""


@lru_cache(maxsize=1024)
def _sgr_parts(style: str) -> tuple[frozenset[str], str, str] | None:
    """``style``'s attributes, foreground and background ("" for the default), or None
    when it holds a parameter this writer does not model (then it resets and sets all).
    """
    attrs: set[str] = set()
    fg = bg = ""
    params = style.split(";") if style else []
    i = 0
    while i < len(params):
        p = params[i]
        if p in ("38", "48"):
            size = {"5": 3, "2": 5}.get(params[i + 1] if i + 1 < len(params) else "", 0)
            if not size or i + size > len(params):
                return None
            colour = ";".join(params[i : i + size])
            fg, bg = (colour, bg) if p == "38" else (fg, colour)
            i += size
            continue
        if p in _ATTRIBUTES:
            attrs.add(p)
        elif p in ("39", "49"):
            fg, bg = ("", bg) if p == "39" else (fg, "")
        elif p.isdigit() and (30 <= int(p) <= 37 or 90 <= int(p) <= 97):
            fg = p
        elif p.isdigit() and (40 <= int(p) <= 47 or 100 <= int(p) <= 107):
            bg = p
        else:
            return None
        i += 1
    return frozenset(attrs), fg, bg


@lru_cache(maxsize=4096)
def _sgr_change(old: str, new: str) -> str:
    """The shortest escape this writer knows that turns SGR state ``old`` into ``new``:
    only the colours that change when no attribute goes away, else a reset and ``new``.
    """
    reset = f"\x1b[0;{new}m" if new else "\x1b[0m"
    was, will = _sgr_parts(old), _sgr_parts(new)
    if was is None or will is None or not was[0] <= will[0]:
        return reset
    params = sorted(will[0] - was[0])
    if will[1] != was[1]:
        params.append(will[1] or "39")
    if will[2] != was[2]:
        params.append(will[2] or "49")
    delta = f"\x1b[{';'.join(params)}m" if params else ""
    return delta if len(delta) < len(reset) else reset
