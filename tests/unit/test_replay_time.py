"""Times typed for ``--at`` and ``g``: inside the recording or refused with its range;
``+N`` / ``-N`` from the current position; landing on a marker shows its note."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from ktop.model.cluster import ClusterModel
from ktop.model.events import Event
from ktop.sources.replay import ReplayPlayer, parse_time

START = 1767225600.0  # 2026-01-01 00:00:00 UTC
END = START + 360.0
RANGE = "it covers 2026-01-01 00:00:00 to 2026-01-01 00:06:00 UTC"


@pytest.mark.parametrize(
    ("text", "position", "want"),
    [
        ("+30", None, START + 30),
        ("+30", START + 100, START + 130),
        ("-30", START + 100, START + 70),
        ("00:04:00", START + 300, START + 240),
        ("00:04", None, START + 240),
        ("120", None, START + 120),
        (f"{START + 7:.0f}", None, START + 7),
    ],
)
def test_a_time_inside_the_recording(text: str, position: float | None, want: float) -> None:
    assert parse_time(text, START, END, position) == want


@pytest.mark.parametrize(
    ("text", "position", "where"),
    [
        ("99:00:00", None, "after"),
        ("+400", None, "after"),
        ("+30", END - 10, "after"),
        ("-30", START + 10, "before"),
        ("-1", None, "before"),
        (f"{START - 5:.0f}", None, "before"),
    ],
)
def test_a_time_outside_is_refused_with_the_range(
    text: str, position: float | None, where: str
) -> None:
    with pytest.raises(ValueError) as err:
        parse_time(text, START, END, position)
    assert str(err.value) == f"{text} is {where} the recording: {RANGE}"


@pytest.mark.parametrize("text", ["", "soon", "1:2:3:4", "00:75", "nan", "inf", "+x", "12:-5"])
def test_not_a_time(text: str) -> None:
    with pytest.raises(ValueError, match="not a time"):
        parse_time(text, START, END)


@dataclass
class _Mark:
    at: float
    note: str


@dataclass
class _Gap:
    start: float
    end: float


@dataclass
class _Cursor:
    model: ClusterModel = field(default_factory=ClusterModel)
    restarted: bool = False

    def take(self, until: float) -> list[Event]:
        return []


@dataclass
class _Timeline:
    start: float = START
    end: float = END
    markers: list[_Mark] = field(default_factory=list)
    gaps: list[_Gap] = field(default_factory=list)

    def cursor(
        self, at: float | None = None, progress: object = None, *, frames: bool = False
    ) -> _Cursor:
        return _Cursor()


def test_landing_on_a_marker_shows_its_note() -> None:
    tl = _Timeline(markers=[_Mark(START + 60, "zone a lost power"), _Mark(START + 200, "")])
    player = ReplayPlayer(tl, lambda m: None)
    player.marker(+1)
    assert player.position == START + 60
    assert player.message == "marker: zone a lost power"
    player.seek(START + 200)  # a seek back from a keyframe lands there too
    assert player.message == "marker: (no note)"
    player.seek(START + 100)
    assert player.message == ""


def test_playing_over_a_marker_shows_its_note() -> None:
    tl = _Timeline(markers=[_Mark(START + 10, "spike")])
    player = ReplayPlayer(tl, lambda m: None)
    player.tick(5.0)
    assert player.message == ""
    player.tick(6.0)
    assert player.message == "marker: spike"
