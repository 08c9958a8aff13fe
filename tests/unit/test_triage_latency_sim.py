"""How soon triage names each simulator scenario's injected cause, from its first visible
symptom, at several sizes and seeds (``tests/unit/sim_latency.py``). The figures of
docs/triage.md are these; with ``KTOP_TRIAGE_SIM_LATENCY_OUT`` set to a path, the test
writes them there (``benchmarks/results/triage-sim-latency.json``, read by
``ktop.docgen``)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ktop.sources.sim.scenarios import ALL
from tests.unit.sim_latency import STEP_S, Latency, measure

SIZES = ((240, 3, 2), (600, 4, 5))
"""(nodes, zones, seed): small, so that every scenario plays in a few seconds."""
OUT = "KTOP_TRIAGE_SIM_LATENCY_OUT"
CAUSED = [s.name for s in ALL if s.sim is not None and s.cause is not None]
MEASURED: list[Latency] = []


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}n{s[1]}z-seed{s[2]}")
@pytest.mark.parametrize("scenario", CAUSED)
def test_the_cause_is_named_after_its_first_symptom(
    scenario: str, size: tuple[int, int, int]
) -> None:
    got = measure(scenario, *size)
    MEASURED.append(got)
    assert got.symptom is not None and got.named is not None, got
    assert got.injected <= got.symptom <= got.named


def test_write_the_figures_when_asked() -> None:
    """With every measurement above made, write them for docs/triage.md."""
    path = os.environ.get(OUT)
    if not path:
        pytest.skip(f"{OUT} not set")
    assert len(MEASURED) == len(SIZES) * len(CAUSED), "run the whole file"
    rows = [
        {
            "scenario": m.scenario,
            "nodes": m.nodes,
            "zones": m.zones,
            "seed": m.seed,
            "symptom_s": m.symptom,
            "named_s": m.named,
            "delay_s": m.delay,
        }
        for m in MEASURED
    ]
    doc = {
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "step_s": STEP_S,
        "runs": rows,
    }
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")
