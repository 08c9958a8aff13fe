"""SVG snapshots of every screen, from real scenarios (sync tests: snap_compare runs its own loop).

Update with ``pytest tests/functional/test_snapshots.py --snapshot-update`` after a
deliberate change, and look at the new SVGs before committing them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ktop.ui.app import KtopApp
from tests.functional.factories import StaticHub, busy_snapshot, findings
from tests.functional.scenarios import scenario_hub
from tests.unit.played import critical_without_cause

SnapCompare = Callable[..., bool]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
@pytest.mark.parametrize("scenario", ["zone-outage", "apf-saturation"])
def test_overview(snap_compare: SnapCompare, scenario: str, size: tuple[int, int]) -> None:
    assert snap_compare(KtopApp(scenario_hub(scenario)), terminal_size=size)


@pytest.mark.parametrize(
    ("key", "scenario"),
    [
        ("1", "apf-saturation"),
        ("2", "apiserver-skew"),
        ("3", "etcd-slow-disk"),
        ("4", "scheduler-backlog"),
        ("5", "zone-outage"),
        ("f", "zone-outage"),
    ],
)
@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_drill_down(
    snap_compare: SnapCompare, key: str, scenario: str, size: tuple[int, int]
) -> None:
    assert snap_compare(KtopApp(scenario_hub(scenario)), press=[key], terminal_size=size)


def test_unknown_values(snap_compare: SnapCompare) -> None:
    app = KtopApp(StaticHub(busy_snapshot(), findings()))
    assert snap_compare(app, terminal_size=(80, 24))


def test_unknown_etcd_drill_down(snap_compare: SnapCompare) -> None:
    app = KtopApp(StaticHub(busy_snapshot(), findings()))
    assert snap_compare(app, press=["3"], terminal_size=(80, 24))


def test_unknown_from_apiserver_restart(snap_compare: SnapCompare) -> None:
    assert snap_compare(KtopApp(scenario_hub("apf-saturation", 36)), terminal_size=(80, 24))


def test_connecting(snap_compare: SnapCompare) -> None:
    """The first frame of every session: no source has started, nothing has failed."""
    from ktop.hub import Hub

    assert snap_compare(KtopApp(Hub()), terminal_size=(80, 24))


def test_no_probable_cause_yet(snap_compare: SnapCompare) -> None:
    """A critical Lease lag that no triage path explains: no probable cause yet."""
    published = critical_without_cause()
    app = KtopApp(StaticHub(published.snapshot, published.findings))
    assert snap_compare(app, terminal_size=(80, 24))


def test_help(snap_compare: SnapCompare) -> None:
    assert snap_compare(KtopApp(scenario_hub("steady")), press=["question_mark"])


THEMES = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "themes").glob("*.toml"))


@pytest.mark.parametrize("theme", THEMES)
def test_overview_in_every_theme(snap_compare: SnapCompare, theme: str) -> None:
    app = KtopApp(scenario_hub("zone-outage"), theme=theme, user_themes=False)
    assert snap_compare(app, terminal_size=(100, 30))


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_triage(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(KtopApp(scenario_hub("zone-outage")), press=["t"], terminal_size=size)
