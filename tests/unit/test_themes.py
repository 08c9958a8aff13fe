"""Theme files: every bundled one loads and styles every status; broken ones name file and field."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from rich.style import Style

from ktop.ui.render.level import STYLE, SYMBOL, Level
from ktop.ui.theming import (
    ThemeError,
    all_themes,
    bundled_theme_files,
    bundled_themes,
    load_theme,
    parse_theme,
)

THEMES_DIR = Path(__file__).resolve().parents[2] / "themes"
REQUIRED = {"ktop-dark", "ktop-light", "high-contrast", "colorblind", "ansi", "monochrome"}
STATUSES = {"ok", "warn", "bad", "unknown", "stale"}


def test_bundled_themes_are_the_files_in_top_level_themes() -> None:
    on_disk = sorted(p.name for p in THEMES_DIR.glob("*.toml"))
    assert [e.name for e in bundled_theme_files()] == on_disk
    names = {tomllib.loads((THEMES_DIR / n).read_text())["name"] for n in on_disk}
    assert {t.name for t in bundled_themes()} == names
    assert names >= REQUIRED


@pytest.mark.parametrize("path", sorted(THEMES_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_theme_loads_and_styles_every_status(path: Path) -> None:
    theme = load_theme(path)
    assert theme.name == tomllib.loads(path.read_text())["name"] == path.stem
    assert set(theme.status) == STATUSES
    for status in STATUSES:
        assert f"ktop.{status}" in theme.rich.styles
    # Every level the screens colour has a theme style and a symbol that is not blank.
    for level in (Level.OK, Level.WARN, Level.CRIT, Level.UNKNOWN):
        assert STYLE[level].removeprefix("ktop.") in theme.status
        assert SYMBOL[level].strip()


def test_themes_tell_ok_warn_bad_apart_without_colour() -> None:
    mono = load_theme(THEMES_DIR / "monochrome.toml")
    looks = {s: Style.parse(v).without_color for s, v in mono.status.items()}
    assert len({looks["ok"], looks["warn"], looks["bad"], looks["unknown"]}) == 4


GOOD = """
name = "mine"
[colors]
primary = "#112233"
[status]
ok = "green"
warn = "yellow"
bad = "bold red"
unknown = "magenta"
stale = "reverse"
"""


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (('bad = "bold red"', 'bad = "bold rde"'), "[status].bad"),
        (('stale = "reverse"\n', ""), "[status].stale"),
        (('primary = "#112233"', 'primary = "#11223"'), "[colors].primary"),
        (('primary = "#112233"', 'primary = "#112233"\nprimery = "#000000"'), "[colors].primery"),
        (('name = "mine"', 'name = "mine"\ndark = "yes"'), "dark"),
        (('name = "mine"', 'name = "mine"\ncolour = 1'), "colour"),
        (('name = "mine"', ""), "name"),
        (("[status]", '[status]\nfine = "bold"'), "[status].fine"),
        (('name = "mine"', 'name = "two words"'), "name"),
    ],
)
def test_broken_theme_names_file_and_field(change: tuple[str, str], field: str) -> None:
    old, new = change
    assert old in GOOD
    with pytest.raises(ThemeError) as err:
        parse_theme(GOOD.replace(old, new), "x/mine.toml")
    assert str(err.value).startswith(f"x/mine.toml: {field}:")


def test_good_theme_parses() -> None:
    assert parse_theme(GOOD, "x/mine.toml").name == "mine"


def test_not_toml(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("name = \n")
    with pytest.raises(ThemeError, match=r"bad\.toml: not valid TOML"):
        load_theme(path)


def test_user_themes_are_picked_up_and_broken_ones_reported(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text(GOOD)
    (tmp_path / "broken.toml").write_text(GOOD.replace("bold red", "bold rde"))
    themes, errors = all_themes(tmp_path)
    assert "mine" in themes and set(themes) >= REQUIRED
    assert len(errors) == 1 and errors[0].startswith(f"{tmp_path / 'broken.toml'}: [status].bad")
