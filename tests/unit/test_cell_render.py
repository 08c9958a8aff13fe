"""The fast cell renderer draws exactly what Rich's general path draws for a DataTable cell."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual.renderables.styled import Styled

from ktop.ui.widgets.cell_render import CellRenderer, cell_segments, fits_fast_path

CONSOLE = Console(width=200, color_system="truecolor")
PRE = Style(color="red", bgcolor="black") + Style.from_meta({"row": 3, "column": 1})
POST = Style(bgcolor="blue")


def rich_path(cell: Text, width: int, padding: int, pre: Style, post: Style) -> list[list[Segment]]:
    """What Textual 8's DataTable does for a cell in a row of height 1."""
    options = CONSOLE.options.update_dimensions(width, 1).update(no_wrap=True)
    styled = Styled(Padding(cell, (0, padding)), pre_style=pre, post_style=post)
    return CONSOLE.render_lines(styled, options)


def fixed_styles(pre: Style, post: Style) -> Callable[[], tuple[Style, Style]]:
    """The styles of a cell's place, as the table would give them."""
    return lambda: (pre, post)


STYLES = st.sampled_from(["", "bold", "red", "dim", "bold green on black", "italic underline"])
WORDS = st.text(alphabet=st.sampled_from([*"abcXYZ019 -_/.:\t", "日", "本", "é", "…"]), max_size=30)


@st.composite
def cells(draw: st.DrawFn) -> Text:
    plain = draw(WORDS)
    spans = []
    for _ in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, len(plain)))
        end = draw(st.integers(start, len(plain)))
        spans.append(Span(start, end, draw(STYLES)))
    return Text(
        plain,
        style=draw(STYLES),
        spans=spans,
        justify=draw(st.sampled_from([None, "left", "right", "center", "full", "default"])),
        overflow=draw(st.sampled_from([None, "fold", "crop", "ellipsis", "ignore"])),
    )


@settings(max_examples=400, deadline=None)
@given(cell=cells(), width=st.integers(1, 40), padding=st.integers(0, 2))
def test_fast_path_equals_richs_render(cell: Text, width: int, padding: int) -> None:
    if not fits_fast_path(cell, width, padding, 1):
        return
    renderer = CellRenderer()
    for post in (POST, Style.null()):
        expected = rich_path(cell, width, padding, PRE, post)
        styles = fixed_styles(PRE, post)
        assert renderer.line(CONSOLE, cell, width, padding, post, styles) == expected
        # Remembered by content: a second, equal cell gives the same line.
        assert renderer.line(CONSOLE, cell.copy(), width, padding, post, styles) == expected


def test_fast_path_covers_ordinary_cells_and_refuses_the_rest() -> None:
    assert fits_fast_path(Text("node-a-001"), 12, 1, 1)
    assert not fits_fast_path(Text("two\nlines"), 12, 1, 1)
    assert not fits_fast_path(Text("tall row"), 12, 1, 2)
    assert not fits_fast_path(Text("no room"), 2, 1, 1)
    assert not fits_fast_path("a str", 12, 1, 1)


def test_a_changed_cell_is_drawn_again() -> None:
    renderer = CellRenderer(size=8)
    styles = lambda: (PRE, POST)  # noqa: E731
    before = renderer.line(CONSOLE, Text("12s", style="red"), 8, 1, "here", styles)
    after = renderer.line(CONSOLE, Text("13s", style="red"), 8, 1, "here", styles)
    assert "".join(s.text for s in before[0]).strip() == "12s"
    assert "".join(s.text for s in after[0]).strip() == "13s"
    restyled = renderer.line(CONSOLE, Text("13s", style="green"), 8, 1, "here", styles)
    assert restyled != after
    assert restyled == rich_path(Text("13s", style="green"), 8, 1, PRE, POST)


def test_styles_are_asked_once_per_content_and_place() -> None:
    renderer = CellRenderer()
    asked: list[str] = []

    def styles_at(place: str, pre: Style) -> Callable[[], tuple[Style, Style]]:
        def styles() -> tuple[Style, Style]:
            asked.append(place)
            return pre, POST

        return styles

    cursor = Style(bgcolor="yellow")
    for _ in range(3):  # frames in which nothing moved
        plain = renderer.line(CONSOLE, Text("node-1"), 10, 1, "row 1", styles_at("row 1", PRE))
        under = renderer.line(CONSOLE, Text("node-1"), 10, 1, "cursor", styles_at("cursor", cursor))
    assert asked == ["row 1", "cursor"]
    assert plain == rich_path(Text("node-1"), 10, 1, PRE, POST)
    assert under == rich_path(Text("node-1"), 10, 1, cursor, POST)
    renderer.clear()
    renderer.line(CONSOLE, Text("node-1"), 10, 1, "row 1", styles_at("row 1", PRE))
    assert asked == ["row 1", "cursor", "row 1"]


def test_segments_are_as_wide_as_the_cell() -> None:
    for width in range(3, 30):
        line = cell_segments(CONSOLE, Text("a fairly long cell text"), width, 1)
        assert sum(s.cell_length for s in line) == width
