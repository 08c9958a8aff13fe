"""One list of scenario names (``ktop.sources.sim.scenarios.ALL``): the simulator's, the
lab's and kind's sets are derived from it, and every name used anywhere else is in it.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from ktop.lab import kind
from ktop.lab.__main__ import _parser as lab_parser
from ktop.lab.inject import INJECT, RECOVER
from ktop.lab.inject import SCENARIOS as INJECTABLE
from ktop.sources.sim import scenarios as sc

ROOT = Path(__file__).resolve().parents[2]
NAMES = {s.name for s in sc.ALL}
NAME = r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*"
"""A scenario name as written (placeholders such as SCENARIO or S are upper case)."""

USES = (
    re.compile(rf"--scenario[ =]\"?({NAME})\b"),
    re.compile(rf"--demo[ =]({NAME})\b"),
    re.compile(rf"ktop\.lab (?:inject|recover) +({NAME})\b"),
    re.compile(rf"recordings/({NAME})\.ktrec"),
    re.compile(rf"_(?:inject|recover)\(\w+, \"({NAME})\""),
)
"""How a scenario is named in the docs, the Makefile, the scripts and the e2e tests."""


def _texts() -> dict[str, str]:
    files = [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        ROOT / "Makefile",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "recordings").glob("*.md")),
        *sorted((ROOT / "scripts").glob("*.sh")),
        *sorted((ROOT / "tests" / "e2e").glob("*.py")),
    ]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files}


def _table_names(text: str) -> list[str]:
    """The first cells of every Markdown table whose first header cell is "scenario"."""
    out: list[str] = []
    in_table = False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|"):
            in_table = False
        elif cells[0].lower() == "scenario":
            in_table = True
        elif in_table and not set(cells[0]) <= set("-: "):
            out.append(cells[0].strip("`"))
    return out


def test_the_derived_sets_come_from_the_one_list() -> None:
    assert list(sc.SCENARIOS) == [s.name for s in sc.ALL if s.sim is not None]
    assert all(sc.SCENARIOS[s.name] is s.sim and s.sim.name == s.name for s in sc.ALL if s.sim)
    assert INJECTABLE == sc.LAB_SCENARIOS == tuple(s.name for s in sc.ALL if s.lab)
    assert kind.KIND_SCENARIOS == sc.KIND_SCENARIOS
    assert set(sc.KIND_SCENARIOS) == {s.name for s in sc.ALL if s.kind_order is not None}
    assert len(NAMES) == len(sc.ALL)


def test_the_lab_and_kind_can_make_exactly_their_scenarios_happen() -> None:
    assert set(INJECT) == set(RECOVER) == set(sc.LAB_SCENARIOS)
    assert set(kind.KIND_INJECT) == set(sc.KIND_SCENARIOS)
    assert kind.KIND_SCENARIOS[-1] == "zone-outage"  # it stops a worker: last


def test_every_scenario_can_be_shown_somewhere_and_counterparts_pair_both_worlds() -> None:
    for s in sc.ALL:
        assert s.sim is not None or s.lab or s.kind_order is not None, s.name
        if s.counterpart is not None:
            other = sc.BY_NAME[s.counterpart]
            assert (s.sim is None) != (other.sim is None), (s.name, other.name)
            assert s.lab != other.lab, (s.name, other.name)


def _choices(parser: argparse.ArgumentParser) -> list[tuple[str, list[str]]]:
    """(option, choices) of every scenario option of ``parser`` and its subcommands."""
    out: list[tuple[str, list[str]]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _choices(sub)
        elif action.dest in ("scenario", "demo") and action.choices is not None:
            out.append((action.dest, [str(c) for c in action.choices]))
    return out


def test_command_line_choices_and_defaults_are_in_the_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ktop import cli
    from ktop.commands.demo import default_scenario

    lab = _choices(lab_parser())
    assert lab == [("scenario", list(sc.LAB_SCENARIOS))] * 2  # inject and recover
    for option, choices in _choices(cli.build_parser()):
        assert set(choices) <= NAMES, option
    assert default_scenario(kind=False) in sc.SCENARIOS
    assert default_scenario(kind=True) in sc.KIND_SCENARIOS
    capsys.readouterr()


def test_every_name_in_the_docs_makefile_scripts_and_e2e_tests_is_in_the_list() -> None:
    used: dict[str, set[str]] = {}
    for where, text in _texts().items():
        for pattern in USES:
            for name in pattern.findall(text):
                used.setdefault(name, set()).add(where)
        for name in _table_names(text):
            used.setdefault(name, set()).add(where)
    unknown = {name: sorted(where) for name, where in used.items() if name not in NAMES}
    assert not unknown, f"scenario names not in ktop/sources/sim/scenarios.py ALL: {unknown}"
    # the check reads what it should: the demo's tables and the lab's commands
    assert set(sc.SCENARIOS) <= set(used) and set(sc.LAB_SCENARIOS) <= set(used)


def test_the_makefile_demo_plays_a_simulated_scenario() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    args = re.search(r"^ARGS \?=(.*)$", makefile, re.MULTILINE)
    assert args is not None
    played = re.findall(rf"--scenario ({NAME})", args.group(1))
    assert len(played) == 1 and played[0] in sc.SCENARIOS


def test_the_shipped_recordings_are_the_simulated_scenarios() -> None:
    stems = sorted(p.stem for p in (ROOT / "recordings").glob("*.ktrec"))
    assert stems == sorted(sc.SCENARIOS)
