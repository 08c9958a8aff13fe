"""Key bindings are the one place keys are described: the help screen, the command palette
and README's key table are generated from them (README's through ``make docs``).
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.binding import Binding

from ktop.ui.app import KtopApp
from ktop.ui.fleet_app import FLEET_MODE, FleetApp
from ktop.ui.recording import RecordingControls
from ktop.ui.screens.help import (
    SCREENS,
    TEXTUAL_KEYS,
    HelpScreen,
    help_screen,
    key_rows,
    keys_markdown,
)

RECORDING = {b.action for b in RecordingControls.bindings()}


def _actions(owner: type[Any]) -> set[str]:
    return {b.action for b in Binding.make_bindings(owner.BINDINGS)}


@pytest.mark.parametrize("owner", [KtopApp, FleetApp, *(s for s, _ in SCREENS)])
def test_every_binding_says_what_it_does(owner: type[Any]) -> None:
    """Each binding has its help (``tooltip``), and the keys of one action say the same."""
    said: dict[str, set[str]] = {}
    for b in Binding.make_bindings(owner.BINDINGS):
        assert b.tooltip.strip(), f"{owner.__name__}: {b.key} -> {b.action}"
        said.setdefault(b.action, set()).add(b.tooltip)
    assert all(len(texts) == 1 for texts in said.values()), said


@pytest.mark.parametrize("app", [KtopApp, FleetApp])
def test_no_help_row_lacks_a_binding(app: type[KtopApp]) -> None:
    """Every row of the help that names an action is a binding of the app or of the screen
    it names, and says what that binding says; rows without an action are Textual's keys
    (and the fleet table's), bound by no ktop binding."""
    where = {name: screen for screen, name in SCREENS}
    bound = {
        (owner_name, b.action): b.tooltip
        for owner_name, owner in (("", app), *((n, s) for n, s in where.items()))
        for b in Binding.make_bindings(owner.BINDINGS)
    }
    rows = key_rows(app)
    for row in rows:
        if row.action:
            assert bound[(row.where, row.action)] == row.what, row
        else:
            assert row in TEXTUAL_KEYS or row in getattr(app, "HELP_FIRST", ()), row
    assert {(r.where, r.action) for r in rows if r.action} == set(bound)


@pytest.mark.parametrize("app", [KtopApp, FleetApp])
def test_every_palette_command_is_a_bound_action(app: type[KtopApp]) -> None:
    assert set(app.PALETTE) <= _actions(app)


def test_the_help_lists_every_binding_once_with_its_description() -> None:
    rows = key_rows(KtopApp)
    listed = [(r.action, key) for r in rows if r.action and not r.where for key in r.keys]
    bound = [(b.action, b.key_display or b.key) for b in Binding.make_bindings(KtopApp.BINDINGS)]
    assert sorted(listed) == sorted(bound)
    tooltips = {b.action: b.tooltip for b in Binding.make_bindings(KtopApp.BINDINGS)}
    assert all(r.what == tooltips[r.action] for r in rows if r.action and not r.where)
    assert next(r for r in rows if r.action == "goto('overview')").keys == ("o", "escape")


def test_the_fleets_help_shows_the_fleets_keys() -> None:
    """The fleet's ``?`` showed the single-cell help: no F, escape as overview, and the
    recording and replay keys a fleet never answers."""
    rows = {r.action: r for r in key_rows(FleetApp) if not r.where}
    assert rows[f"goto('{FLEET_MODE}')"].keys == ("F",)
    assert rows["fleet_back"].keys == ("escape",)
    assert rows["goto('overview')"].keys == ("o",)
    assert not RECORDING & set(rows)


def test_screen_keys_jump_from_the_help_of_each_app() -> None:
    jumps = {
        app: {(b.key, b.action) for b in Binding.make_bindings(type(help_screen(app)).BINDINGS)}
        for app in (KtopApp, FleetApp)
    }
    assert ("1", "app.goto('apf')") in jumps[KtopApp]
    assert ("w", "app.trend_window") in jumps[KtopApp]
    assert ("F", f"app.goto('{FLEET_MODE}')") in jumps[FleetApp]
    assert not any(key in ("escape", "q", "question_mark") for key, _ in jumps[FleetApp])
    assert isinstance(help_screen(FleetApp), HelpScreen)


def test_the_readme_table_has_the_fleets_keys() -> None:
    md = keys_markdown(KtopApp, FleetApp)
    single, fleet = md.split("In `ktop fleet`:")
    assert "| `F` |" not in single and "| `F` |" in fleet
    back = next(b for b in Binding.make_bindings(FleetApp.BINDINGS) if b.action == "fleet_back")
    assert f"| `escape` | {back.tooltip} |" in fleet
    assert "`R`" in fleet.split("does not bind")[1]
