"""An error that stops ``ktop triage --output json`` is a JSON document on standard output
(exit 2) that a script can read: conflicting arguments, an unreadable recording, a
directory that is not a bundle, a cluster that cannot be reached.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ktop.cli import main
from ktop.compose import SourceError
from tests.unit.test_bundle_triage import healthy_control_plane


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def triage_json(*args: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run(["triage", *args, "--output", "json"])
    return code, json.loads(out), err


def _error_doc(doc: dict[str, Any], words: str) -> None:
    assert doc["version"] == 1 and doc["minor_version"] >= 1
    assert words in doc["error"]
    assert doc["errors"] == [doc["error"]]
    assert doc["paths"] == []


def test_an_unreadable_recording_is_a_json_error_document(tmp_path: Path) -> None:
    bad = tmp_path / "x.ktrec"
    bad.write_bytes(b"not a recording at all")
    code, doc, err = triage_json("--recording", str(bad))
    assert code == 2
    _error_doc(doc, "")
    assert doc["source"] == {"kind": "recording", "path": str(bad)}
    assert err.startswith("ktop triage:")


def test_a_bad_bundle_directory_is_a_json_error_document(tmp_path: Path) -> None:
    code, doc, _ = triage_json("--bundle", str(tmp_path / "nope"))
    assert code == 2
    _error_doc(doc, "not a directory")
    assert doc["source"] == {"kind": "bundle", "path": str(tmp_path / "nope")}


def test_a_connection_failure_is_a_json_error_document(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(*args: object) -> None:
        raise SourceError("cannot reach https://127.0.0.1:1: connection refused")

    monkeypatch.setattr("ktop.sampling.sample_live", refuse)
    code, doc, _ = triage_json("--context", "prod")
    assert code == 2
    _error_doc(doc, "connection refused")
    assert doc["source"] == {"kind": "live", "context": "prod"}


def test_bad_arguments_are_a_json_error_document() -> None:
    code, doc, _ = triage_json("--at", "+5")
    assert code == 2
    _error_doc(doc, "--at goes with --recording")


def test_a_report_says_it_has_no_error(tmp_path: Path) -> None:
    healthy_control_plane(tmp_path)
    _, doc, _ = triage_json("--bundle", str(tmp_path))
    assert doc["error"] is None and doc["minor_version"] >= 1
