"""``ktop replay DIR`` of an OpenShift must-gather, with no conversion step: its metrics
slice and objects rebuilt as a recording that plays from the slice's first scrape to the
must-gather's time, what it lacks said, and the screen driven with Pilot at 80x24 and a
large size. Expectations come from the fixture files (nodes, zones, the slice's times),
read here with plain code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ktop.commands.replay_bundle import rebuild
from ktop.hub import Hub
from ktop.model.cluster import ClusterModel
from ktop.record.reader import Recording
from ktop.scrub import Secrets
from ktop.sources.bundle.reader import read_bundle
from ktop.sources.bundle.timeline import is_bundle
from ktop.sources.replay import ReplayPlayer, ReplaySource
from ktop.ui.app import KtopApp
from tests.functional.screen import screen_text, seeks_done
from tests.unit.test_must_gather import NODES, must_gather
from tests.unit.test_openmetrics_slice import etcd_slice
from tests.unit.test_triage_json_errors import run, triage_json

SIZES = [(80, 24), (200, 60)]


@pytest.fixture
def gathered(tmp_path: Path) -> tuple[Path, float, float]:
    """A must-gather with a metrics slice of two real etcd scrapes, 30 s apart."""
    root = must_gather(tmp_path / "mg")
    inner = next(p for p in root.iterdir() if p.is_dir())
    (inner / "monitoring" / "metrics").mkdir(parents=True)
    t1, t2 = etcd_slice(inner / "monitoring" / "metrics" / "metrics.openmetrics")
    return root, t1, t2


def test_a_bundle_or_must_gather_is_told_from_a_record_directory(
    gathered: tuple[Path, float, float], tmp_path: Path
) -> None:
    root, _, _ = gathered
    assert is_bundle(root)
    records = tmp_path / "records"
    records.mkdir()
    assert not is_bundle(records) and not is_bundle(tmp_path / "absent")


def test_info_plays_from_the_slice_to_the_must_gathers_time_and_says_what_it_lacks(
    gathered: tuple[Path, float, float],
) -> None:
    root, t1, t2 = gathered
    code, out, err = run(["replay", "--info", str(root)])
    assert code == 0, err
    assert out.startswith(f"{root}: a bundle, rebuilt as a ktop recording")
    assert "ktop-replay-" not in out, "the temporary file is not the user's business"
    assert f"({t2 - t1:.0f} s)" in out
    assert "not in it:" in out and "coordination.k8s.io/leases.yaml" in out


def test_the_rebuilt_recording_triages_as_the_bundle_does(
    gathered: tuple[Path, float, float], tmp_path: Path
) -> None:
    root, t1, t2 = gathered
    path = tmp_path / "mg.ktrec"
    assert rebuild(read_bundle(root), str(root), path, Secrets()) == ""
    _, by_bundle, _ = triage_json("--bundle", str(root))
    _, by_recording, _ = triage_json("--recording", str(path))
    assert by_recording["at"] == pytest.approx(t2)
    total = len(json.loads(NODES.read_text())["items"])
    assert by_recording["signals"]["nodes"]["total"] == by_bundle["signals"]["nodes"]["total"]
    assert by_recording["signals"]["nodes"]["total"] == total
    (member,) = by_recording["signals"]["etcd"]
    assert member["window"] == pytest.approx(t2 - t1)
    verdicts = {p["id"]: p["verdict"] for p in by_bundle["paths"]}
    assert {p["id"]: p["verdict"] for p in by_recording["paths"]} == verdicts


def test_a_bundle_with_nothing_to_replay_is_refused_saying_what_it_lacks(tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    code, out, err = run(["replay", "--info", str(tmp_path)])
    assert (code, out) == (2, "")
    assert "nothing in it to replay" in err and "not in it: api/nodes.json" in err


@pytest.fixture
def rebuilt(gathered: tuple[Path, float, float], tmp_path: Path) -> Path:
    """The must-gather rebuilt as a recording (outside the UI test's event loop)."""
    root, _, _ = gathered
    path = tmp_path / "mg.ktrec"
    assert rebuild(read_bundle(root), str(root), path, Secrets()) == ""
    return path


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x60"])
async def test_the_replay_screen_shows_the_must_gathers_nodes_and_etcd(
    gathered: tuple[Path, float, float], rebuilt: Path, size: tuple[int, int]
) -> None:
    _, t1, t2 = gathered
    rec = Recording(rebuilt)
    hub = Hub(ClusterModel(rec.model_config))
    player = ReplayPlayer(rec, hub.reset)
    player.paused = True
    source = ReplaySource(player, tick_s=3600.0)  # the test moves the clock, not the wall
    app = KtopApp(hub, [source], replay=source)
    total = len(json.loads(NODES.read_text())["items"])
    async with app.run_test(size=size) as pilot:
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*f"+{t2 - rec.start:.0f}", "enter")
        await pilot.pause()
        await seeks_done(app)
        app.pump()
        await pilot.pause()
        assert rec.start == pytest.approx(t1) and player.position == pytest.approx(t2)
        assert app.frame.snapshot.nodes.total == total
        assert "REPLAY" in screen_text(app)
    rec.close()
