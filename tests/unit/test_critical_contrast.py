"""On a 16-colour terminal (``TERM=xterm``) the critical count stays readable, whatever
the theme: the colours it is drawn in, brought down to 16 the way Textual and Rich do,
have a WCAG contrast of at least 4.5:1 in xterm's own palette.
"""

from __future__ import annotations

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from rich.theme import Theme as RichTheme
from textual._ansi_theme import ALABASTER, MONOKAI
from textual.color import Color
from textual.filter import ANSIToTruecolor
from textual.theme import BUILTIN_THEMES

from ktop.ui.render.level import CRITICAL_COUNT_STYLE
from ktop.ui.theming import bundled_themes, data_styles, derived_status

XTERM_16: tuple[tuple[int, int, int], ...] = (
    (0x00, 0x00, 0x00),  # black
    (0xCD, 0x00, 0x00),  # red
    (0x00, 0xCD, 0x00),  # green
    (0xCD, 0xCD, 0x00),  # yellow
    (0x00, 0x00, 0xEE),  # blue
    (0xCD, 0x00, 0xCD),  # magenta
    (0x00, 0xCD, 0xCD),  # cyan
    (0xE5, 0xE5, 0xE5),  # white
    (0x7F, 0x7F, 0x7F),  # bright black
    (0xFF, 0x00, 0x00),  # bright red
    (0x00, 0xFF, 0x00),  # bright green
    (0xFF, 0xFF, 0x00),  # bright yellow
    (0x5C, 0x5C, 0xFF),  # bright blue
    (0xFF, 0x00, 0xFF),  # bright magenta
    (0x00, 0xFF, 0xFF),  # bright cyan
    (0xFF, 0xFF, 0xFF),  # bright white
)
"""xterm's default 16 colours (its ``XTerm`` resources, ``charproc.c``)."""


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2 relative luminance."""

    def linear(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio, 1 to 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def on_16_colours(
    style: Style, native_ansi: bool, terminal: TerminalTheme, system: ColorSystem
) -> tuple[int, int]:
    """The xterm colour numbers ``style`` is drawn in on a 16-colour terminal, foreground
    then background: Textual turns ANSI colours into truecolour through its terminal
    theme (unless the theme uses the terminal's own colours), then Rich brings every
    colour down to 16 (``Strip.render``).
    """
    [segment] = ANSIToTruecolor(terminal, enabled=not native_ansi).apply(
        [Segment("✖3", style)], Color(0, 0, 0)
    )
    shown = segment.style
    assert shown is not None and shown.color is not None and shown.bgcolor is not None, (
        "the critical count must set both its colours: the status line's own background "
        "is brought down to whatever the theme's panel colour lands on"
    )

    def number(c: RichColor) -> int:
        n = c.downgrade(system).number
        assert n is not None and 0 <= n < 16
        return n

    fg, bg = number(shown.color), number(shown.bgcolor)
    return (bg, fg) if shown.reverse else (fg, bg)


THEMES: dict[str, tuple[RichTheme, bool]] = {
    **{kt.name: (kt.rich, kt.theme.ansi) for kt in bundled_themes()},
    **{f"textual:{n}": (derived_status(t), t.ansi) for n, t in BUILTIN_THEMES.items()},
}


@pytest.mark.parametrize("terminal", [MONOKAI, ALABASTER], ids=["dark", "light"])
@pytest.mark.parametrize("name", sorted(THEMES))
@pytest.mark.parametrize("system", ["standard", "windows"])
def test_the_critical_count_is_readable_on_16_colours(
    name: str, terminal: TerminalTheme, system: str
) -> None:
    styles, native_ansi = THEMES[name]
    style = data_styles(styles, system).styles[CRITICAL_COUNT_STYLE]
    down = ColorSystem.WINDOWS if system == "windows" else ColorSystem.STANDARD
    fg, bg = on_16_colours(style, native_ansi, terminal, down)
    ratio = contrast(XTERM_16[fg], XTERM_16[bg])
    assert ratio >= 4.5, f"{name}: colour {fg} on colour {bg} is {ratio:.1f}:1 in xterm"


def test_the_reported_pair_was_unreadable() -> None:
    # bright red on bright black, as TERM=xterm drew the count before: about 1:1
    assert contrast(XTERM_16[9], XTERM_16[8]) < 1.1
    # what is drawn now: bright white on red, 5.8:1
    assert contrast(XTERM_16[15], XTERM_16[1]) == pytest.approx(5.84, abs=0.01)


@pytest.mark.parametrize("system", [None, "256", "truecolor"])
def test_with_more_colours_the_count_is_the_themes_bad_style(system: str | None) -> None:
    for kt in bundled_themes():
        styles = data_styles(kt.rich, system)
        assert styles.styles[CRITICAL_COUNT_STYLE] == kt.rich.styles["ktop.bad"]
        # the theme's own styles are kept as they are
        assert {k: v for k, v in styles.styles.items() if k != CRITICAL_COUNT_STYLE} == (
            kt.rich.styles
        )
