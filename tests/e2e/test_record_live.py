"""``ktop record --context`` against the real control plane, then read back with today's model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ktop.cli import main
from ktop.lab import Lab
from ktop.record.reader import Recording
from tests.e2e.cadence import (
    KTOP_SCRAPE_S,
    PROBE_LIMIT_S,
    REQUEST_LIMIT_S,
    cycles,
    deadline,
    steps,
)
from tests.e2e.helpers import nodes

DURATION_S = round(steps(1) + cycles(2, KTOP_SCRAPE_S))
"""``ktop record --duration`` (counted from the first event, source clock): every
instance found and scraped twice at the tests' interval."""
SPAN_MAX_S = deadline(DURATION_S, PROBE_LIMIT_S)
"""The recording spans its duration from the first event, which comes after ktop
connected (within its probe limit), up to the batch that reaches the duration."""


def _ready_at(truth: list[Any], at: float) -> tuple[int, int]:
    """How many of the API's nodes (read after ``at``) were Ready at ``at``: the fewest and
    the most. A node whose Ready condition changed after ``at``, or too shortly before it
    for its watch event to be in the recording (a request limit: on a busy machine KWOK
    can miss a heartbeat and the node controller marks the node Unknown, then Ready
    again), may have been either.
    """
    fewest = most = 0
    for node in truth:
        conditions = node.status.conditions or []
        ready = next((c for c in conditions if c.type == "Ready"), None)
        now_ready = ready is not None and ready.status == "True"
        changed = ready.last_transition_time if ready is not None else None
        if changed is not None and changed.timestamp() > at - REQUEST_LIMIT_S:
            most += 1
        else:
            fewest += now_ready
            most += now_ready
    return fewest, most


def test_headless_live_recording_replays_to_api_truth(
    lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "live.ktrec"
    argv = [
        "record",
        "-o",
        str(out),
        "--kubeconfig",
        str(lab.layout.kubeconfig),
        "--duration",
        f"{DURATION_S}",
        "--scrape-interval",
        f"{KTOP_SCRAPE_S:g}",
        "--insecure-components",
        "--scheduler-metrics",
        lab.info["scheduler"]["metrics_url"],
        *(f"--apiserver={a['url']}" for a in lab.info["apiservers"]),
    ]
    assert main(argv) == 0, capsys.readouterr().err
    truth = nodes(lab)
    with Recording(str(out)) as rec:
        assert rec.indexed and not rec.truncated and not rec.gaps
        assert rec.header["source"]["kind"] == "live"
        assert DURATION_S - 5 <= rec.end - rec.start <= SPAN_MAX_S, rec.end - rec.start
        end = rec.end
        snap = rec.cursor(end).model.snapshot()
        # Every recorded event, decoded: no credential of the kubeconfig is among them.
        stored = repr(rec.header) + repr(rec.cursor(rec.start - 1.0).advance(rec.end))
    # The nodes the recording holds are the API's (the lab's nodes do not churn here).
    assert snap.nodes.total == len(truth)
    fewest, most = _ready_at(truth, end)
    assert fewest <= snap.nodes.ready <= most, (snap.nodes, fewest, most)
    # Both apiserver instances were recorded by name, with rates from two or more scrapes.
    instances = {r.instance for r in snap.apiservers.instances}
    assert instances == {a["url"].split("//", 1)[1] for a in lab.info["apiservers"]}
    token = (lab.dir / "admin.token").read_text(encoding="utf-8").strip()
    assert token
    assert "NodeRecord" in stored
    assert token not in stored
