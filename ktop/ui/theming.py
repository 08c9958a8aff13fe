"""Themes from TOML files: the bundled ones in ``ktop/ui/themes/``.

The TOML files are package data, found with :mod:`importlib.resources`, so
the same code works from a source checkout and an installed wheel.
"""

from __future__ import annotations

import tomllib
from importlib.resources import files
from importlib.resources.abc import Traversable

from textual.theme import Theme

DEFAULT_THEME = "ktop-dark"


def themes_dir() -> Traversable:
    """The directory that holds the bundled ``*.toml`` themes."""
    return files("ktop.ui.themes")


def parse_theme(text: str) -> Theme:
    """A :class:`Theme` from TOML text; unknown keys raise ``TypeError``."""
    return Theme(**tomllib.loads(text))


def bundled_themes() -> list[Theme]:
    """Every bundled theme, sorted by file name."""
    entries = sorted(
        (entry for entry in themes_dir().iterdir() if entry.name.endswith(".toml")),
        key=lambda entry: entry.name,
    )
    return [parse_theme(entry.read_text(encoding="utf-8")) for entry in entries]
