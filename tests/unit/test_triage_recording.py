"""`ktop triage --recording FILE [--at TIME]` on the shipped simulator recordings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ktop.cli import main

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["triage", *argv, "--output", "json"])
    return code, json.loads(capsys.readouterr().out)


def _verdict(doc: dict[str, Any], path_id: str) -> str:
    return str(next(p["verdict"] for p in doc["paths"] if p["id"] == path_id))


def test_a_zone_outage_recording_is_suspect_at_its_end_and_clear_at_its_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rec = str(RECORDINGS / "zone-outage.ktrec")
    code, end = _report(capsys, "--recording", rec)
    assert code == 1
    assert _verdict(end, "P4") == "suspect"
    zones = end["signals"]["nodes"]["zones"]
    assert any(z["state"] == "FullDisruption" for z in zones)
    code, start = _report(capsys, "--recording", rec, "--at", "+5")
    assert _verdict(start, "P4") != "suspect"
    assert start["signals"]["nodes"]["not_ready"] == 0


def test_a_steady_recording_has_no_suspect_node_path(capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = _report(capsys, "--recording", str(RECORDINGS / "steady.ktrec"))
    assert _verdict(doc, "P4") != "suspect"


def test_a_cut_recording_is_triaged_up_to_its_last_chunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = RECORDINGS / "zone-outage.ktrec"
    cut = tmp_path / "cut.ktrec"
    shutil.copy(whole, cut)
    with cut.open("r+b") as f:
        f.truncate(whole.stat().st_size * 3 // 4)
    code, doc = _report(capsys, "--recording", str(cut))
    assert code in (0, 1)
    assert doc["paths"]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--at", "+99999"], "it covers"),
        (["--bundle", "x"], "cannot be combined"),
    ],
)
def test_bad_recording_arguments_exit_2(
    extra: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = str(RECORDINGS / "zone-outage.ktrec")
    assert main(["triage", "--recording", rec, *extra]) == 2
    assert words in capsys.readouterr().err


def test_not_a_recording_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "x.ktrec"
    bad.write_bytes(b"not a recording at all")
    assert main(["triage", "--recording", str(bad)]) == 2
    assert capsys.readouterr().err.startswith("ktop triage:")
