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
from ktop.ui.screens.help import SCREENS, HelpScreen, help_screen, key_rows, keys_markdown

RECORDING = {b.action for b in RecordingControls.bindings()}


def _actions(owner: type[Any]) -> set[str]:
    return {b.action for b in Binding.make_bindings(owner.BINDINGS)}


@pytest.mark.parametrize("owner", [KtopApp, FleetApp, *(s for s, _ in SCREENS)])
def test_every_bound_action_is_described(owner: type[Any]) -> None:
    assert _actions(owner) <= set(owner.KEY_HELP), owner.__name__


def test_the_apps_describe_no_action_they_do_not_bind() -> None:
    assert set(KtopApp.KEY_HELP) == _actions(KtopApp)
    assert set(FleetApp.KEY_HELP) - _actions(FleetApp) == RECORDING  # inherited, unbound


@pytest.mark.parametrize("app", [KtopApp, FleetApp])
def test_every_palette_command_is_a_bound_action(app: type[KtopApp]) -> None:
    assert set(app.PALETTE) <= _actions(app)


def test_the_help_lists_every_binding_once_with_its_description() -> None:
    rows = key_rows(KtopApp)
    listed = [(r.action, key) for r in rows if r.action and not r.where for key in r.keys]
    bound = [(b.action, b.key_display or b.key) for b in Binding.make_bindings(KtopApp.BINDINGS)]
    assert sorted(listed) == sorted(bound)
    assert all(r.what == KtopApp.KEY_HELP[r.action] for r in rows if r.action and not r.where)
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
    assert f"| `escape` | {FleetApp.KEY_HELP['fleet_back']} |" in fleet
    assert "`R`" in fleet.split("does not bind")[1]
