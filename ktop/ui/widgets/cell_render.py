"""One table cell of one line as segments, the way Textual's DataTable draws it, cheaply.

Textual's ``DataTable`` renders every cell through Rich's console (a ``Styled`` around a
``Padding`` around the cell), and forgets every rendered cell whenever any cell of the
table changes. At 100,000 nodes a drill-down changes some cell each second, so each frame
rendered every visible cell again that way: a third of the frame. :class:`CellRenderer`
gives the same segments for the common cell (a one-line :class:`~rich.text.Text`) from
the text directly, and remembers them by the cell's *content*, so a cell whose text did
not change costs one dictionary lookup and the styling of a few segments.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache

CACHE_CELLS = 4096
"""Rendered cell contents remembered per table (a few screens of an 8-column table)."""

_NULL = Style.null()
_NEWLINE = Text("\n")

ContentKey = tuple[object, ...]


def content_key(cell: Text, width: int, padding: int) -> ContentKey:
    """What the rendered segments of ``cell`` depend on (its text, spans, style, layout)."""
    return (
        cell.plain,
        tuple(cell.spans),
        cell.style,
        cell.justify,
        cell.overflow,
        cell.tab_size,
        width,
        padding,
    )


def fits_fast_path(cell: object, width: int, padding: int, height: int) -> bool:
    """Whether :func:`cell_segments` draws ``cell`` exactly as the DataTable would.

    One-line Text cells in a row of height 1, with room for at least one character
    between the paddings; anything else goes through Rich's console as before.
    """
    return (
        isinstance(cell, Text)
        and height == 1
        and width - 2 * padding >= 1
        and "\n" not in cell.plain
    )


def cell_segments(console: Console, cell: Text, width: int, padding: int) -> list[Segment]:
    """The segments of one cell ``width`` cells wide, before the table's styles apply.

    Equal to what ``console.render_lines(Padding(cell, (0, padding)))`` gives for a
    one-line cell at height 1 with wrapping off (the tests compare the two).
    """
    inner = width - 2 * padding
    lines = cell.wrap(
        console,
        inner,
        justify=cell.justify or "default",
        overflow=cell.overflow or "fold",
        tab_size=cell.tab_size or 8,
        no_wrap=True,
    )
    # As Text.__rich_console__ does: the join carries each line's own style as a span.
    segments = list(_NEWLINE.join(lines).render(console, end=""))
    segments = Segment.adjust_line_length(segments, inner, style=_NULL, pad=True)
    if padding:
        pad = Segment(" " * padding, _NULL)
        segments = [pad, *segments, pad]
    return segments


class CellRenderer:
    """Rendered cells of one table, remembered by content and by place (least recently
    used first out), so a cell drawn before costs a lookup.
    """

    def __init__(self, size: int = CACHE_CELLS) -> None:
        self._segments: LRUCache[ContentKey, list[Segment]] = LRUCache(size)
        self._lines: LRUCache[tuple[ContentKey, Hashable], list[list[Segment]]] = LRUCache(size)

    def line(
        self,
        console: Console,
        cell: Text,
        width: int,
        padding: int,
        place: Hashable,
        styles: Callable[[], tuple[Style, Style]],
    ) -> list[list[Segment]]:
        """The cell's one line, with the table's styles where it is drawn: ``styles()``
        gives the style under the cell's own (``pre``) and over them (``post``), as the
        DataTable's ``Styled`` applies them, and depends only on ``place`` (the position,
        the row's style, cursor, hover, focus).
        """
        content = content_key(cell, width, padding)
        lines = self._lines.get((content, place))
        if lines is None:
            segments = self._segments.get(content)
            if segments is None:
                segments = cell_segments(console, cell, width, padding)
                self._segments[content] = segments
            pre_style, post_style = styles()
            lines = [list(Segment.apply_style(segments, pre_style, post_style))]
            self._lines[(content, place)] = lines
        return lines

    def clear(self) -> None:
        """Forget every rendered cell (the theme changed)."""
        self._segments.clear()
        self._lines.clear()
