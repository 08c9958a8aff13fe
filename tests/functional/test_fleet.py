"""The fleet screen with Pilot at 80x24 and 160x48, on the demo's own cells.

The cells are the ones ``ktop fleet --demo`` plays (``demo_plays``: one per simulator
scenario), each simulator advanced to the same moment and folded into its cell's hub
beforehand, so what the screen shows is fixed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache

import pytest

from ktop.analysis.findings import Severity
from ktop.commands.fleet import demo_plays, demo_specs
from ktop.fleet import CellSpec, CellUnavailableError, Fleet, OpenedCell
from ktop.model.events import Event
from ktop.scrub import Secrets
from ktop.sources.sim.scenarios import SCENARIOS
from ktop.sources.sim.simulator import Simulator
from ktop.ui.fleet_app import FLEET_MODE, FleetApp
from ktop.ui.render.fleet import WIDE
from ktop.ui.screens.fleet import FleetScreen
from ktop.ui.screens.help import HelpScreen
from tests.functional.scenarios import NODES, SEED
from tests.functional.screen import screen_text

STORY_S = 180.0
"""Every demo scenario shows its story by then (zone FullDisruption, APF rejections)."""
SIZES = [(80, 24), (160, 48)]
SnapCompare = Callable[..., bool]


async def _no_sources() -> OpenedCell:
    return OpenedCell([])


async def _refused() -> OpenedCell:
    raise CellUnavailableError("dial tcp 10.0.0.9:6443: connection refused")


@cache
def _played(scenario: str, seed: int) -> tuple[tuple[Event, ...], float]:
    sim = Simulator(scenario, nodes=NODES, seed=seed)
    events = (*sim.start(), *sim.advance(STORY_S))
    return events, sim.now


def _fixed(now: float) -> Callable[[], float]:
    return lambda: now


def demo_fleet(*, unreachable: bool = False) -> Fleet:
    """The demo's cells at ``STORY_S``; optionally one more cell that cannot connect."""
    specs = []
    for name, scenario, seed in demo_plays(SEED):
        _, now = _played(scenario, seed)
        specs.append(CellSpec(name, _no_sources, clock=_fixed(now)))
    if unreachable:
        specs.append(CellSpec("prod-cell-x", _refused))
    fleet = Fleet(specs)
    for cell, (_, scenario, seed) in zip(fleet.cells, demo_plays(SEED), strict=False):
        cell.ingest(_played(scenario, seed)[0])
    return fleet


def _worst(fleet: Fleet, name: str) -> Severity:
    """A cell's worst finding, from its hub's own findings."""
    return max((f.severity for f in fleet.cell(name).hub.latest.findings), default=Severity.OK)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_every_cell_worst_first(size: tuple[int, int]) -> None:
    fleet = demo_fleet()
    app = FleetApp(fleet)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, FleetScreen)
        text = screen_text(app)
        lines = text.splitlines()
        assert all(len(line.rstrip()) <= size[0] for line in lines)
        shown = [c.name for c in app.view.cells]
        assert set(shown) == {name for name, _, _ in demo_plays(SEED)}
        assert len(shown) == len(SCENARIOS) + 1
        # every critical cell (by its hub's own findings) is above every cell that is not
        critical = {n for n in shown if _worst(fleet, n) is Severity.CRITICAL}
        assert {"zone-outage", "zone-outage-2", "apf-saturation"} <= critical
        assert set(shown[: len(critical)]) == critical
        assert shown[-1] != "zone-outage" and "steady" not in shown[: len(critical)]
        for header in ("cell", "zones", "skew", "etcd", "triage", "age"):
            assert header in text
        table = app.screen.table
        assert table.row_count == len(shown) and table.cursor_row == 0
        # the shared cause: the second zone outage in the same region
        assert "P4 in zone-outage, zone-outage-2" in " ".join(lines).replace("  ", " ")
        if size[0] >= WIDE:
            assert "top pending reason" in text and "Insufficient nvidia" in text


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_text_too_long_for_its_column_ends_in_an_ellipsis(size: tuple[int, int]) -> None:
    """No column is cut bare (``API-C`` for ``API-CPU`` reads as another path): the
    triage path and, on wide terminals, *why* are whole or end in ``…``."""
    app = FleetApp(demo_fleet())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        lines = screen_text(app).splitlines()
        header = next(i for i, line in enumerate(lines) if " triage " in line)
        cells = app.view.cells
        rows = lines[header + 1 : header + 1 + len(cells)]
        for c, row in zip(cells, rows, strict=True):
            assert len(row.rstrip()) <= size[0]
            words = row.split()
            path = c.path or c.verdict.value
            cut = [w for w in words if w.endswith("…") and path.startswith(w[:-1])]
            assert path in words or cut, (path, row)
            if size[0] >= WIDE:
                title = c.reason or c.path_title
                tail = row.rstrip()
                shown = tail[tail.index(title[:6]) :] if title else ""
                assert shown == title or (shown.endswith("…") and title.startswith(shown[:-1]))
        # the relist storm's path is longer than the narrow column: cut with a mark
        storm = next(c for c in cells if c.name == "apf-saturation")
        words = rows[cells.index(storm)].split()
        assert storm.path == "API-RELIST"
        assert (storm.path in words) is (size[0] >= WIDE)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_enter_opens_the_cell_and_escape_comes_back(size: tuple[int, int]) -> None:
    fleet = demo_fleet()
    app = FleetApp(fleet)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        second = app.view.cells[1].name
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.current_mode == "overview"
        assert app.hub is fleet.cell(second).hub
        assert app.frame.snapshot is fleet.cell(second).hub.latest.snapshot
        await pilot.press("3")  # a drill-down of that cell
        await pilot.pause()
        assert app.current_mode == "etcd"
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_mode == "overview"
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_mode == FLEET_MODE
        assert isinstance(app.screen, FleetScreen)
        await pilot.press("escape")  # nowhere further back: the fleet stays
        await pilot.pause()
        assert app.current_mode == FLEET_MODE
        await pilot.press("up", "enter")
        await pilot.pause()
        assert app.hub is fleet.cell(app.view.cells[0].name).hub


async def test_a_cell_that_cannot_connect_stays_unknown_with_its_reason() -> None:
    app = FleetApp(demo_fleet(unreachable=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.pump()
        await pilot.pause()
        gone = next(c for c in app.view.cells if c.name == "prod-cell-x")
        assert gone.severity is Severity.UNKNOWN
        assert gone.reason == "dial tcp 10.0.0.9:6443: connection refused"
        text = screen_text(app)
        row = next(line for line in text.splitlines() if "prod-cell-x" in line and "?" in line)
        assert row.count("?") >= 5
        assert "prod-cell-x: dial tcp 10.0.0.9:6443: connection refused" in " ".join(text.split())
        names = [c.name for c in app.view.cells]
        critical = [c for c in app.view.cells if c.severity is Severity.CRITICAL]
        assert names.index("prod-cell-x") >= len(critical)


async def test_help_lists_the_fleet_keys_once() -> None:
    app = FleetApp(demo_fleet())
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        plain = app.screen.plain
        assert plain.count("the fleet: every cell, worst first") == 1
        assert "from the overview to the fleet" in plain
        # the fleet's own help: its title, and how to open a cell before the cell keys
        assert plain.startswith("ktop fleet keys")
        assert plain.index("open the cell under the cursor") < plain.index("drill-down")


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_fleet_demo_snapshot(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(FleetApp(demo_fleet()), terminal_size=size)


async def test_the_demo_cells_run_their_own_simulators() -> None:
    """``ktop fleet --demo``'s own cells: every cell's simulator feeds its own hub."""
    secrets = Secrets()
    specs = demo_specs(secrets, nodes=60, zones=3, seed=SEED, speed=20.0, rack_label="rack")
    fleet = Fleet(specs, secrets)
    app = FleetApp(fleet, refresh_s=0.2)
    async with app.run_test(size=(80, 24)) as pilot:
        deadline = time.monotonic() + 60
        while not all(c.read for c in app.view.cells) and time.monotonic() < deadline:
            await pilot.pause(0.2)
        assert all(c.read for c in app.view.cells), [c.reason for c in app.view.cells]
        contexts = {c.name: c.hub.latest.snapshot.context for c in fleet.cells}
        assert contexts == {name: f"sim/{scenario}" for name, scenario, _ in demo_plays(SEED)}
        assert len({id(c.hub) for c in fleet.cells}) == len(fleet.cells)
