"""Themes from TOML files: the bundled ones (top-level ``themes/``) and the user's own.

The bundled files install as the package ``ktop.themes`` (``themes/`` in a
checkout) and are found with :mod:`importlib.resources`; user themes are the
``*.toml`` files in the config directory's ``themes/``. A theme file is
checked field by field on load; a :class:`ThemeError` names the file and the
field. The format is documented in ``themes/README.md``.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Protocol

from rich.errors import StyleSyntaxError
from rich.style import Style
from rich.theme import Theme as RichTheme
from textual.color import Color, ColorParseError
from textual.css.stylesheet import Stylesheet, StylesheetParseError
from textual.css.tokenizer import TokenError
from textual.design import ColorSystem
from textual.theme import BUILTIN_THEMES, Theme

from ktop.files import THEME, FileRefusedError, read_text_bounded
from ktop.scrub import scrub_shapes
from ktop.structured import InputRefusedError, load_toml
from ktop.ui.render.level import (
    CRITICAL_COUNT_STYLE,
    STATUS_NAME,
    THEME_STATUSES,
    Level,
    style_name,
)

DEFAULT_THEME = "ktop-dark"
NO_COLOR_THEME = "monochrome"
"""The theme used when ``NO_COLOR`` is set and no theme was asked for."""

COLOR_FIELDS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
"""The ``[colors]`` a theme may set (Textual's theme colours); ``primary`` is required."""

ANSI_VARIABLES = ("ansi-background", "ansi-foreground")
"""Variables Textual's widgets need from a theme with ``ansi = true`` (default: the terminal's)."""

TOP_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "description": str,
    "dark": bool,
    "ansi": bool,
    "luminosity_spread": (int, float),
    "text_alpha": (int, float),
    "colors": dict,
    "variables": dict,
    "status": dict,
}
"""Top-level keys of a theme file and their TOML types."""

FRACTIONS = ("luminosity_spread", "text_alpha")
"""Top-level numbers that are fractions: finite, from 0 to 1."""


class ThemeError(ValueError):
    """A theme file that cannot be used: the message names the file and the field
    (scrubbed of the shapes of secrets as it is made: it may quote a value of the file;
    the app scrubs it again with the session's secrets before showing it).
    """

    def __init__(self, message: str) -> None:
        super().__init__(scrub_shapes(message))


class _Readable(Protocol):
    @property
    def name(self) -> str: ...

    def read_text(self, encoding: str = ...) -> str: ...


@dataclass(frozen=True, slots=True)
class KtopTheme:
    """A checked theme: Textual's colours plus ktop's data colours."""

    theme: Theme
    status: Mapping[str, str]
    """Rich style per ``[status]`` entry: ok, warn, bad, unknown, stale."""
    description: str = ""
    origin: str = ""
    """The file it came from."""
    rich: RichTheme = field(init=False)

    def __post_init__(self) -> None:
        styles = {style_name(key): Style.parse(value) for key, value in self.status.items()}
        object.__setattr__(self, "rich", RichTheme(styles, inherit=False))

    @property
    def name(self) -> str:
        """The theme's name (what ``--theme`` takes)."""
        return self.theme.name


def _type_name(expected: type | tuple[type, ...]) -> str:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    names = {bool: "true or false", str: "a string", dict: "a table", int: "a number"}
    return " or ".join(dict.fromkeys(names.get(k, "a number") for k in kinds))


def _fraction(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1


def parse_theme(text: str, origin: str) -> KtopTheme:
    """A checked theme from TOML ``text``; ``origin`` names the file in errors."""

    def fail(where: str, problem: str) -> ThemeError:
        return ThemeError(f"{origin}: {where}: {problem}")

    try:
        data = load_toml(text, origin)
    except InputRefusedError as exc:
        raise ThemeError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeError(f"{origin}: not valid TOML: {exc}") from exc
    for key, value in data.items():
        if key not in TOP_FIELDS:
            raise fail(key, f"unknown field; known: {', '.join(TOP_FIELDS)}")
        expected = TOP_FIELDS[key]
        if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
            raise fail(key, f"expected {_type_name(expected)}, got {value!r}")
        if key in FRACTIONS and not _fraction(value):
            raise fail(key, f"expected a number from 0 to 1, got {value!r}")
    for required in ("name", "colors", "status"):
        if required not in data:
            raise fail(required, "missing")
    name = data["name"].strip()
    if not name or any(c.isspace() for c in name):
        raise fail("name", f"must be one word, got {data['name']!r}")
    colors = _colors(data["colors"], fail)
    variables = _variables(data.get("variables", {}), fail)
    if data.get("ansi", False):
        # Textual's own CSS refers to these when a theme uses the terminal's colours.
        for key in ANSI_VARIABLES:
            variables.setdefault(key, "ansi_default")
    status = _status(data["status"], fail)
    theme = Theme(
        name=name,
        dark=data.get("dark", True),
        ansi=data.get("ansi", False),
        luminosity_spread=float(data.get("luminosity_spread", 0.15)),
        text_alpha=float(data.get("text_alpha", 0.95)),
        variables=variables,
        **colors,
    )
    return KtopTheme(theme, status, data.get("description", ""), origin)


def _colors(table: dict[str, Any], fail: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in table.items():
        where = f"[colors].{key}"
        if key not in COLOR_FIELDS:
            raise fail(where, f"unknown colour; known: {', '.join(COLOR_FIELDS)}")
        if not isinstance(value, str):
            raise fail(where, f"expected a colour string, got {value!r}")
        try:
            Color.parse(value)
        except ColorParseError as exc:
            raise fail(where, f"not a colour: {value!r} ({exc})") from exc
        out[key] = value
    if "primary" not in out:
        raise fail("[colors].primary", "missing")
    return out


@cache
def textual_variables() -> frozenset[str]:
    """The names of the variables a Textual theme sets (what ``[variables]`` may override)."""
    return frozenset(ColorSystem(primary="#000000").generate()) | frozenset(ANSI_VARIABLES)


def variable_property(key: str) -> str:
    """The CSS property a Textual variable's value is written into, by its name: text
    styles (``*-style``: ``bold``, ``b reverse``, ``none``), backgrounds (no ``auto``
    colour there) and colours (``#rrggbb``, a name, ``ansi_red``, ``auto 87%``).
    """
    if key.endswith("-style"):
        return "text-style"
    return "background" if "background" in key else "color"


EXPECTED_VALUE = {
    "text-style": "a text style (bold, italic, underline, reverse, strike, dim, none, "
    "'not' before one)",
    "background": "a colour (#rrggbb, a colour name, ansi_NAME, transparent)",
    "color": "a colour (#rrggbb, a colour name, ansi_NAME, transparent, auto 87%)",
}
"""What each kind of variable takes, for the error message."""


def css_accepts(prop: str, value: str) -> bool:
    """True when Textual's CSS parser takes ``value`` for ``prop`` (as a theme variable)."""
    sheet = Stylesheet(variables={"value": value})
    sheet.add_source(f"Screen {{ {prop}: $value; }}", read_from=("theme", "[variables]"))
    try:
        sheet.parse()
    except (StylesheetParseError, TokenError):
        return False
    return True


def _variables(table: dict[str, Any], fail: Any) -> dict[str, str]:
    known = textual_variables()
    for key, value in table.items():
        where = f"[variables].{key}"
        if key not in known:
            raise fail(where, "not one of Textual's theme variables (themes/README.md)")
        prop = variable_property(key)
        if not isinstance(value, str) or not css_accepts(prop, value):
            raise fail(where, f"expected {EXPECTED_VALUE[prop]}, got {value!r}")
    return dict(table)


def _status(table: dict[str, Any], fail: Any) -> dict[str, str]:
    for key in table:
        if key not in THEME_STATUSES:
            raise fail(f"[status].{key}", f"unknown status; known: {', '.join(THEME_STATUSES)}")
    out: dict[str, str] = {}
    for key in THEME_STATUSES:
        where = f"[status].{key}"
        if key not in table:
            raise fail(where, "missing (every theme styles ok, warn, bad, unknown and stale)")
        value = table[key]
        if not isinstance(value, str):
            raise fail(where, f"expected a style string, got {value!r}")
        try:
            Style.parse(value)
        except StyleSyntaxError as exc:
            raise fail(where, f"not a style: {value!r} ({exc})") from exc
        out[key] = value
    return out


def load_theme(entry: _Readable | Path, origin: str | None = None) -> KtopTheme:
    """Read and check one theme file."""
    where = origin or str(entry)
    try:
        text = (
            read_text_bounded(entry, THEME) if isinstance(entry, Path) else entry.read_text("utf-8")
        )
    except FileRefusedError as exc:
        raise ThemeError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeError(f"{where}: cannot read: {exc}") from exc
    return parse_theme(text, where)


def bundled_theme_files() -> list[_Readable]:
    """The bundled ``*.toml`` theme files, sorted by name."""
    entries: list[_Readable] = [
        e for e in files("ktop.themes").iterdir() if e.name.endswith(".toml")
    ]
    return sorted(entries, key=lambda e: e.name)


def bundled_themes() -> list[KtopTheme]:
    """Every bundled theme (a broken bundled theme is a bug: it raises)."""
    return [load_theme(e, f"themes/{e.name}") for e in bundled_theme_files()]


def user_themes(directory: Path | None) -> tuple[list[KtopTheme], list[str]]:
    """Themes in ``directory`` (``*.toml``) and one error per file that could not be used."""
    if directory is None or not directory.is_dir():
        return [], []
    themes: list[KtopTheme] = []
    errors: list[str] = []
    for path in sorted(directory.glob("*.toml")):
        try:
            themes.append(load_theme(path))
        except ThemeError as exc:
            errors.append(str(exc))
    return themes, errors


def all_themes(user_dir: Path | None) -> tuple[dict[str, KtopTheme], list[str]]:
    """Bundled then user themes by name (a user theme may replace a bundled one)."""
    found, errors = user_themes(user_dir)
    return _by_name([*bundled_themes(), *found]), errors


def chosen_theme_problem(name: str, user_dir: Path | None) -> str | None:
    """Why the theme ``name`` cannot be used (None: it is ktop's, the user's or one of
    Textual's): the user's file of that name that fails its checks, or the known names.
    """
    themes, errors = all_themes(user_dir)
    if name in themes or name in BUILTIN_THEMES:
        return None
    own = user_dir / f"{name}.toml" if user_dir is not None else None
    if own is not None and own.is_file():
        try:
            load_theme(own)
        except ThemeError as exc:
            return str(exc)
    unread = f"; not loaded: {'; '.join(errors)}" if errors else ""
    return str(
        ThemeError(
            f"--theme {name!r}: no such theme; known: {', '.join(sorted(themes))}, "
            f"or Textual's {', '.join(sorted(BUILTIN_THEMES))}{unread}"
        )
    )


def _by_name(themes: Iterable[KtopTheme]) -> dict[str, KtopTheme]:
    return {t.name: t for t in themes}


def _rich_color(value: str | None, fallback: str) -> str:
    """A Textual theme colour as a Rich colour (``ansi_bright_red`` -> ``bright_red``)."""
    if not value:
        return fallback
    return value.removeprefix("ansi_") if value.startswith("ansi_") else value


def derived_status(theme: Theme) -> RichTheme:
    """Data colours for a theme that is not one of ktop's (a Textual built-in):
    ok from its success colour, warn from warning, bad from error, unknown from secondary.
    """
    ok = _rich_color(theme.success, "green")
    warn = _rich_color(theme.warning, "yellow")
    bad = _rich_color(theme.error, "red")
    unknown = _rich_color(theme.secondary, "magenta")
    status = {"ok": ok, "warn": warn, "bad": f"bold {bad}", "unknown": unknown}
    status["stale"] = f"reverse {warn}"
    return RichTheme({style_name(k): Style.parse(v) for k, v in status.items()}, inherit=False)


SIXTEEN_COLOURS = frozenset({"standard", "windows"})
"""Rich's names of the colour systems with 16 colours (``TERM=xterm`` without
``COLORTERM``, a legacy Windows console): every colour drawn is brought down to one of 16."""

CRITICAL_COUNT_16 = "bold #ffffff on #aa0000"
"""The critical count on 16 colours: bright white on red. A theme's bad colour, brought
down to 16 colours, may land on bright red over a status line brought down to bright
black (#ff0000 on #7f7f7f in xterm: 1.0:1). These two are entries of the palette Rich
brings colours down to (``rich._palettes.STANDARD_PALETTE``), so they become exactly
colours 15 and 1 whatever the theme (an ANSI colour name would first go through
Textual's ANSI-to-truecolour filter and could come back as another colour): in xterm's
palette #ffffff on #cd0000, 5.8:1."""
CRITICAL_COUNT_16_PLAIN = "bold reverse #ffffff on #000000"
"""The same for a theme whose bad style has no colour (monochrome): black on white
(21:1), and reverse still marks it when ``NO_COLOR`` takes the colours away."""


def data_styles(styles: RichTheme, color_system: str | None) -> RichTheme:
    """The data styles to draw with: the theme's ``[status]`` styles plus the critical
    count's (:data:`~ktop.ui.render.level.CRITICAL_COUNT_STYLE`), which is the theme's bad
    style, or, when the terminal has 16 colours (``color_system``, Rich's name), a pair
    that is readable there (:data:`CRITICAL_COUNT_16`).
    """
    bad = styles.styles.get(style_name(STATUS_NAME[Level.CRIT]), Style.parse("bold red"))
    count = bad
    if color_system in SIXTEEN_COLOURS:
        plain = bad.color is None and bad.bgcolor is None
        count = Style.parse(CRITICAL_COUNT_16_PLAIN if plain else CRITICAL_COUNT_16)
    return RichTheme({**styles.styles, CRITICAL_COUNT_STYLE: count}, inherit=False)
