"""Seek correctness on every scenario: the snapshot after a seek equals the one reached by
folding the recorded events from the start, at many random times (back and forth)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ktop.record.reader import Recording
from ktop.record.writer import WriterSettings
from ktop.sources.sim.scenarios import SCENARIOS
from tests.unit.test_record import _direct, _make, _strip

SEEKS = 12


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_seek_lands_on_the_state_folded_from_the_start(tmp_path: Path, scenario: str) -> None:
    made = _make(
        tmp_path,
        scenario=scenario,
        seconds=240,
        settings=WriterSettings(chunk_s=20.0, keyframe_s=45.0),
    )
    events = made.events
    start, end = events[0].at, events[-1].at
    rng = random.Random(scenario)
    times = [rng.uniform(start, end) for _ in range(SEEKS)]  # in random order
    expected = _direct(events, sorted(times))
    with Recording(made.path) as rec:
        assert len(rec.keyframes) >= 4
        for t in times:
            assert _strip(rec.cursor(t).model.snapshot()) == expected[t], (scenario, t)
