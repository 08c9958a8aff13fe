"""zone_state and zone_key: the node lifecycle controller's rules."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ktop.model.snapshot_nodes import ZoneState
from ktop.model.zones import DEFAULT_UNHEALTHY_ZONE_THRESHOLD, zone_key, zone_state

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.mark.parametrize(
    ("ready", "not_ready", "expected"),
    [
        (0, 0, ZoneState.NORMAL),  # an empty zone
        (0, 1, ZoneState.FULL_DISRUPTION),  # no ready node: full, whatever the count
        (0, 2, ZoneState.FULL_DISRUPTION),
        (1, 2, ZoneState.NORMAL),  # 2 of 3 not ready: not more than 2
        (2, 3, ZoneState.PARTIAL_DISRUPTION),  # 3 of 5 = 0.6 >= 0.55
        (3, 3, ZoneState.NORMAL),  # 0.5 < 0.55
        (9, 11, ZoneState.PARTIAL_DISRUPTION),  # exactly 0.55
        (10, 11, ZoneState.NORMAL),  # 0.5238
        (1, 0, ZoneState.NORMAL),
        (5000, 2, ZoneState.NORMAL),
        (1, 5000, ZoneState.PARTIAL_DISRUPTION),
    ],
)
def test_default_threshold(ready: int, not_ready: int, expected: ZoneState) -> None:
    assert DEFAULT_UNHEALTHY_ZONE_THRESHOLD == 0.55
    assert zone_state(ready, not_ready) is expected


def test_threshold_is_inclusive_and_configurable() -> None:
    assert zone_state(7, 3, threshold=0.3) is ZoneState.PARTIAL_DISRUPTION  # 0.3 >= 0.3
    assert zone_state(7, 3, threshold=0.31) is ZoneState.NORMAL
    assert zone_state(0, 3, threshold=1.0) is ZoneState.FULL_DISRUPTION
    assert zone_state(1, 3, threshold=1.0) is ZoneState.NORMAL  # 0.75 < 1


def test_share_is_compared_in_float32_like_the_controller() -> None:
    # In float64 3/5 = 0.6 < 0.6000000001, but float32(0.6000000001) == float32(0.6).
    assert zone_state(2, 3, threshold=0.6000000001) is ZoneState.PARTIAL_DISRUPTION
    assert zone_state(2, 3, threshold=0.6001) is ZoneState.NORMAL


def test_zone_key() -> None:
    assert zone_key("us-east1", "us-east1-b") == "us-east1:\x00:us-east1-b"
    assert zone_key("", "") == ""
    assert zone_key("", "z") == ":\x00:z"
    assert zone_key("r", "") == "r:\x00:"
    assert zone_key("a:b", "c") != zone_key("a", "b:c")  # the NUL keeps colons apart


def test_real_three_zone_cluster() -> None:
    nodes = json.loads((FIXTURES / "openshift-insights_gcp-3zone_nodelist.json").read_text())
    keys: Counter[str] = Counter()
    ready: Counter[str] = Counter()
    for node in nodes["items"]:
        labels = node["metadata"]["labels"]
        key = zone_key(
            labels.get("topology.kubernetes.io/region", ""),
            labels.get("topology.kubernetes.io/zone", ""),
        )
        keys[key] += 1
        conditions = {c["type"]: c["status"] for c in node["status"]["conditions"]}
        ready[key] += conditions.get("Ready") == "True"
    assert keys == {f"us-east1:\x00:us-east1-{z}": 2 for z in "bcd"}
    for key, total in keys.items():
        assert zone_state(ready[key], total - ready[key]) is ZoneState.NORMAL


def test_the_lab_gives_its_controller_manager_the_models_threshold(tmp_path: Path) -> None:
    from ktop.lab import components
    from ktop.lab.binaries import Binaries
    from ktop.lab.config import LabConfig, Layout

    bins = Binaries(*(f"/bin/{n}" for n in ("a", "kcm", "s", "e", "k", "p", "kubectl")))
    argv = components.controller_manager_argv(
        bins, Layout(tmp_path), LabConfig(), components.Endpoint("kcm", 1)
    )
    flags = [a for a in argv if a.startswith("--unhealthy-zone-threshold=")]
    assert flags == [f"--unhealthy-zone-threshold={DEFAULT_UNHEALTHY_ZONE_THRESHOLD}"]
    assert float(flags[0].split("=")[1]) == DEFAULT_UNHEALTHY_ZONE_THRESHOLD


def test_every_text_that_states_the_threshold_states_the_models() -> None:
    """Texts written by hand (or in another package's catalogue) that name the threshold."""
    from ktop.analysis.catalogue import BY_CODE
    from ktop.sources.sim.scenarios import SCENARIOS

    t = DEFAULT_UNHEALTHY_ZONE_THRESHOLD
    root = Path(__file__).resolve().parents[2]
    panes = (root / "docs" / "panes.md").read_text(encoding="utf-8")
    assert f"`--unhealthy-zone-threshold` ({t:g})" in panes
    rule = BY_CODE["KT-NODE-002"]
    assert f">= {t * 100:g} % of the zone" in rule.condition
    assert f"--unhealthy-zone-threshold {t:g}" in rule.source
    phase = SCENARIOS["zone-outage"].phase_at(
        SCENARIOS["zone-outage"].start_of("partial-disruption")
    )
    assert f"{t:.0%} of the zone" in phase.description
