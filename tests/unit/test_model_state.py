"""Model state export/import (recording keyframes): complete, exact, plain data."""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest

from ktop.model.cluster import ClusterModel
from ktop.model.state import DERIVED, export_state, import_state
from ktop.sources.sim.simulator import Simulator


def test_every_model_attribute_is_exported_or_declared_derived() -> None:
    """Adding state to the model without adding it to keyframes fails here."""
    model = ClusterModel()
    exported = set(export_state(model))
    missing = set(vars(model)) - exported - DERIVED
    assert missing == set(), f"add these to ktop/model/state.py (or to DERIVED): {missing}"


@pytest.mark.parametrize("scenario", ["zone-outage", "scheduler-backlog", "apf-saturation"])
def test_import_of_an_export_gives_the_same_snapshots_now_and_later(scenario: str) -> None:
    sim = Simulator(scenario, nodes=120)
    live = ClusterModel()
    live.apply_all(sim.start())
    live.apply_all(sim.advance(130))
    # Through msgpack, as a keyframe goes to disk: plain data only.
    state = msgpack.unpackb(msgpack.packb(export_state(live)), strict_map_key=False)
    copy = import_state(state)
    assert replace(copy.snapshot(), seq=0) == replace(live.snapshot(), seq=0)
    later = sim.advance(90)
    live.apply_all(later)
    copy.apply_all(later)
    assert replace(copy.snapshot(), seq=0) == replace(live.snapshot(), seq=0)


def test_missing_sections_are_empty_and_unknown_ones_ignored() -> None:
    sim = Simulator("steady", nodes=30)
    live = ClusterModel()
    live.apply_all(sim.start())
    state = export_state(live)
    del state["pending"]
    state["history_from_a_newer_ktop"] = [1, 2, 3]
    copy = import_state(state)
    assert copy.pending.pods == {}
    assert copy.nodes.nodes == live.nodes.nodes


def test_a_newer_state_version_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="version 99 is newer"):
        import_state({"version": 99})
