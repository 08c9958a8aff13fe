"""The unknown-reason walk skips what cannot hold a reason (node records, renew times) and
still finds every reason: compared with a walk of everything, written here, on the
simulator's snapshots of every scenario and on a model that has read nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest

from ktop.hub import Hub
from ktop.model.events import Area
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.values import Val
from ktop.sources.sim.scenarios import SCENARIOS
from ktop.sources.sim.simulator import Simulator
from ktop.ui.render import reasons

REASON_FIELDS = ("error", "unknown_reason", "pods_reason", "nodes_reason", "metrics_reason")


def _add(seen: dict[str, None], prefix: str, reason: str) -> None:
    seen.setdefault(f"{prefix}: {reason}" if prefix and prefix not in reason else reason, None)


def walk_everything(obj: object, seen: dict[str, None], prefix: str = "") -> None:
    """Every dataclass field, mapping value and sequence item, whatever its type."""
    if isinstance(obj, Val):
        if obj.value is None and obj.reason and not obj.empty:
            _add(seen, prefix, obj.reason)
        return
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        instance = getattr(obj, "instance", "")
        prefix = instance if isinstance(instance, str) and instance else prefix
        names = [f.name for f in dataclasses.fields(obj)]
        for name in names:
            value = getattr(obj, name)
            if name in REASON_FIELDS and isinstance(value, str) and value:
                _add(seen, prefix, value)
        for name in names:
            if name not in REASON_FIELDS:
                walk_everything(getattr(obj, name), seen, prefix)
    elif isinstance(obj, Mapping):
        for value in obj.values():
            walk_everything(value, seen, prefix)
    elif isinstance(obj, tuple | list):
        for value in obj:
            walk_everything(value, seen, prefix)


def _published(hub: Hub) -> ClusterSnapshot:
    """A snapshot published now (what the events so far make)."""
    published = hub.publish(force=True)
    assert published is not None
    return published.snapshot


def _everything(obj: object) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    walk_everything(obj, seen)
    return tuple(seen)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_pruned_walk_finds_every_reason_the_whole_walk_finds(scenario: str) -> None:
    sim = Simulator(scenario, nodes=300, seed=3)
    hub = Hub()
    hub.ingest(sim.start())
    for _ in range(5):
        hub.ingest(sim.advance(45.0))
        snap = _published(hub)
        for area in Area:
            part = getattr(snap, area.value)
            assert reasons.val_reasons(part) == _everything(part), (scenario, area)


def test_a_model_that_read_nothing_has_its_reasons_found() -> None:
    snap = Hub().latest.snapshot
    found = 0
    for area in Area:
        part = getattr(snap, area.value)
        expected = _everything(part)
        assert reasons.val_reasons(part) == expected
        found += len(expected)
    assert found > 0  # nothing read: there are reasons to find


def test_node_records_and_renew_times_are_not_walked() -> None:
    from ktop.model.snapshot_nodes import NotReadyList

    own, walked = reasons._fields(NotReadyList)
    assert own == () and walked == ()  # records and renews hold no reason: skipped whole


def test_reasons_found_off_the_loop_are_the_ones_a_frame_reads() -> None:
    sim = Simulator("zone-outage", nodes=300, seed=5)
    hub = Hub()
    hub.ingest(sim.start())
    hub.ingest(sim.advance(60.0))
    first = _published(hub)
    hub.ingest(sim.advance(60.0))
    second = _published(hub)
    reasons.prepare(first)
    for area in Area:
        assert reasons.area_reasons(first, area) is reasons.area_reasons(first, area)
        assert reasons.area_reasons(first, area) == reasons._area_reasons(first, area)
        # each snapshot its own: a second snapshot is walked, never given the first's
        assert reasons.area_reasons(second, area) == reasons._area_reasons(second, area)
