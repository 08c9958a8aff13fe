"""A bundle's malformed input is named by file and line, never Python's own words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ktop.sources.bundle.reader import read_bundle
from tests.unit.bundles import T0, apiserver_text, write_metrics
from tests.unit.test_bundle_triage import FAST, run


def _api_file(root: Path, name: str, body: str) -> None:
    (root / "api").mkdir(parents=True, exist_ok=True)
    (root / "api" / name).write_text(body)


HOSTILE = {
    "long number": ('{"kind": "NodeList",\n "items": [\n' + "9" * 5000 + "]}", 3, "5000 digits"),
    "deep nesting": (
        '{"kind": "NodeList",\n "items": ' + "[" * 5000 + "]" * 5000 + "}",
        2,
        "nested",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_api_json_is_named_by_file_and_line(tmp_path: Path, case: str) -> None:
    body, line, words = HOSTILE[case]
    _api_file(tmp_path, "nodes.json", body)
    errors = [e for e in read_bundle(tmp_path).errors if e.file == "api/nodes.json"]
    assert len(errors) == 1
    assert (errors[0].line, words in errors[0].message) == (line, True)
    assert "set_int_max_str_digits" not in errors[0].message
    code, out, err = run(["triage", "--bundle", str(tmp_path), "--output", "json"])
    assert code in (0, 1), err
    assert any(e.startswith(f"api/nodes.json:{line}: ") for e in json.loads(out)["errors"])


MALFORMED = {
    "family ktop does not read": "garbage here",
    "no metric name": '{code="200"} 5',
    "invalid name": "apiserver_request\x00total 5",
    "value out of range": 'apiserver_request_total{code="500",verb="GET"} 1e400',
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_each_malformed_metrics_line_is_reported(tmp_path: Path, case: str) -> None:
    text = apiserver_text(requests=10, rejected=0, queued=0, wait=FAST, start=T0 - 60)
    bad_line = len(text.splitlines()) + 1
    write_metrics(tmp_path, "apiserver", "a", T0, text + MALFORMED[case] + "\n")
    errors = [str(e) for e in read_bundle(tmp_path).errors]
    assert [e for e in errors if ".prom" in e] == [
        e for e in errors if e.startswith(f"metrics/apiserver/a/{T0}.prom:{bad_line}: ")
    ]
    assert len([e for e in errors if ".prom" in e]) == 1
    _, out, _ = run(["triage", "--bundle", str(tmp_path)])
    assert f"error: metrics/apiserver/a/{T0}.prom:{bad_line}: " in out
