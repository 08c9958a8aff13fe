"""A seek's steps are counted from the recording's first event, not from the model's clock
(0 in the keyframe a recording starts with, before its first event), and are never more
than :data:`SEEK_STEPS` whatever time the recording spans.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ktop.record.cursor import SEEK_STEP_S, SEEK_STEPS
from ktop.record.reader import Recording
from tests.unit.recfiles import record_small

SHIPPED = Path(__file__).parent.parent.parent / "recordings" / "zone-outage.ktrec"


class Steps:
    """A seek's progress callback that counts its steps and stops a runaway seek."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.count = 0

    def __call__(self, fraction: float) -> None:
        self.count += 1
        assert self.count <= self.most, f"more than {self.most} steps"
        assert 0.0 <= fraction <= 1.0


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_small(tmp_path_factory.mktemp("steps") / "r.ktrec", seconds=120)


@pytest.mark.parametrize("path", ["small", "shipped"])
@pytest.mark.parametrize("offset", [0.0, 1.0, 31.0, 95.0])
def test_a_seek_near_the_start_takes_steps_from_the_first_event(
    recording: Path, path: str, offset: float
) -> None:
    with Recording(recording if path == "small" else SHIPPED) as rec:
        (first_key, *_) = rec.keyframes
        assert first_key.first == 0.0  # the keyframe made before the first event (2026)
        assert rec.start > 1.7e9
        target = rec.start + offset
        # The first event is at the recording's start (its first chunk's first time).
        most = math.ceil(offset / SEEK_STEP_S)
        steps = Steps(most)
        cur = rec.cursor(target, steps)
        assert cur.position == target
        plain = rec.cursor(target)  # the same state as a seek without steps
        assert cur.model.nodes.nodes == plain.model.nodes.nodes
        assert cur.folded == plain.folded


def test_a_recording_of_one_event_months_after_the_first_takes_a_bounded_number_of_steps(
    tmp_path: Path,
) -> None:
    from tests.unit import recfiles

    frames = recfiles.split(record_small(tmp_path / "r.ktrec", seconds=20))
    chunks = [f for f in frames if f.kind.name == "CHUNK"]
    last = chunks[-1]
    records = last.values()
    later = chunks[0].first + 300 * 86_400.0  # 300 days after the first event
    records[-1][1] = later
    last.raw = b"".join(recfiles.pack(r) for r in records)
    last.last = later
    path = tmp_path / "far.ktrec"
    path.write_bytes(recfiles.join(frames))
    with Recording(path) as rec:
        assert rec.end == later and not rec.faults
        steps = Steps(SEEK_STEPS + 1)
        cur = rec.cursor(rec.end, steps)
        assert cur.position == later
        assert cur.folded == rec.cursor(rec.end).folded
        assert not rec.faults  # the event decades later was read, not lost
