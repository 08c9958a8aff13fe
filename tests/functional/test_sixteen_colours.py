"""On a terminal with 16 colours (``TERM=xterm``, no ``COLORTERM``) the app draws the
critical count in the pair that stays readable there (``tests/unit/test_critical_contrast.py``
checks the pair's contrast), and with more colours in the theme's own bad style.
"""

from __future__ import annotations

import pytest
from rich.style import Style

from ktop.hub import Hub
from ktop.ui.app import KtopApp
from ktop.ui.render.level import CRITICAL_COUNT_STYLE
from ktop.ui.theming import CRITICAL_COUNT_16


@pytest.mark.parametrize(
    ("term", "colorterm", "sixteen"),
    [("xterm", None, True), ("xterm-256color", None, False), ("xterm", "truecolor", False)],
)
def test_the_critical_count_follows_the_terminals_colours(
    monkeypatch: pytest.MonkeyPatch, term: str, colorterm: str | None, sixteen: bool
) -> None:
    monkeypatch.setenv("TERM", term)
    monkeypatch.delenv("NO_COLOR", raising=False)
    if colorterm is None:
        monkeypatch.delenv("COLORTERM", raising=False)
    else:
        monkeypatch.setenv("COLORTERM", colorterm)
    app = KtopApp(Hub(), theme="ktop-dark", user_themes=False)
    assert (app.console.color_system == "standard") is sixteen
    bad = app.ktop_themes["ktop-dark"].rich.styles["ktop.bad"]
    count = app.console.get_style(CRITICAL_COUNT_STYLE)
    assert count == (Style.parse(CRITICAL_COUNT_16) if sixteen else bad)
    assert app.console.get_style("ktop.bad") == bad  # the rest of the data keeps its colours
