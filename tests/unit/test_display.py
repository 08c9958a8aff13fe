"""ASCII stand-ins, locale detection, the production pattern."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from ktop.ui.display import Display, locale_is_utf8, to_ascii
from ktop.ui.render.level import SEVERITY_SYMBOL, SYMBOL


@given(st.text())
def test_to_ascii_is_ascii_and_keeps_the_width(text: str) -> None:
    out = to_ascii(text)
    assert out.isascii()
    assert cell_len(out) == cell_len(text)


def test_status_symbols_stay_distinct_in_ascii() -> None:
    shown = [to_ascii(s) for s in SYMBOL.values() if s.strip()]
    assert len(set(shown)) == len(shown)
    severities = [to_ascii(s) for s in SEVERITY_SYMBOL.values()]
    assert len(set(severities)) == len(severities)
    # none is a box corner or edge, nor the "+5 more" of a cut list
    frame = {to_ascii(c) for c in "╭╮╰╯┏┓┗┛┃━│─┼"} | {"+"}
    assert not set(shown) & frame


def test_box_drawing() -> None:
    assert to_ascii("╭──╮") == "+--+"
    assert to_ascii("│ok│") == "|ok|"
    assert to_ascii("▁▄█") == "_-#"
    assert to_ascii("450µs") == "450us"


@pytest.mark.parametrize(
    ("env", "utf8"),
    [
        ({"LANG": "en_US.UTF-8"}, True),
        ({"LANG": "C"}, False),
        ({}, False),
        ({"LANG": "C", "LC_CTYPE": "C.UTF-8"}, False),  # Python's own coercion of C
        ({"LANG": "en_GB.utf8"}, True),
        ({"LANG": "en_US.UTF-8", "LC_ALL": "C"}, False),
        ({"LANG": "C", "LC_ALL": "en_US.UTF-8"}, True),
        ({"LANG": "en_US.ISO-8859-1"}, False),
        ({"LANG": "de_DE.UTF-8", "LC_CTYPE": "de_DE.ISO-8859-1"}, False),
    ],
)
def test_locale_is_utf8(env: dict[str, str], utf8: bool) -> None:
    assert locale_is_utf8(env) is utf8


def test_ascii_is_automatic_only_when_not_asked() -> None:
    c_locale = {"LANG": "C"}
    assert Display.from_options(ascii_only=None, environ=c_locale).ascii_only
    assert not Display.from_options(ascii_only=False, environ=c_locale).ascii_only
    assert Display.from_options(ascii_only=True, environ={"LANG": "en_US.UTF-8"}).ascii_only


def test_no_color_follows_the_convention() -> None:
    assert Display.from_options(ascii_only=False, environ={"NO_COLOR": "1"}).no_color
    assert not Display.from_options(ascii_only=False, environ={"NO_COLOR": ""}).no_color


@pytest.mark.parametrize(
    ("context", "prod"),
    [("prod-cell-a", True), ("eu-PROD-1", True), ("staging", False), ("", False)],
)
def test_default_production_pattern(context: str, prod: bool) -> None:
    from ktop.cli import DEFAULT_PROD_PATTERN

    display = Display.from_options(ascii_only=False, prod_pattern=DEFAULT_PROD_PATTERN, environ={})
    assert display.is_production(context) is prod


def test_empty_pattern_turns_the_banner_off() -> None:
    assert not Display.from_options(ascii_only=False, prod_pattern="", environ={}).is_production(
        "prod"
    )


@given(st.floats(min_value=0.001, max_value=1e11, allow_nan=False))
def test_sort_keys_read_back_what_fmt_prints(x: float) -> None:
    from ktop.model.text import fmt_bytes, fmt_duration, fmt_rate, fmt_si
    from ktop.ui.render.sortkey import numeric

    for fmt in (fmt_si, fmt_rate, fmt_duration, fmt_bytes):
        value = numeric(fmt(x))
        assert value is not None, fmt(x)
        assert abs(value - x) <= 0.06 * x + 0.5, (fmt(x), value, x)  # rounding
