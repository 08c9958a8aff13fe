"""The load-balanced apiserver reads: shown only while no real instance is fresh."""

from __future__ import annotations

from ktop.analysis.catalogue import STALE_AFTER
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    LOAD_BALANCED,
    ApfDumpRead,
    ApfLevelDump,
    ClockTick,
    Component,
    Event,
    MetricsScraped,
    Sample,
    ScrapeFailed,
    Target,
)

REAL = "10.0.0.1:6443"
STALE_S = float(STALE_AFTER.warn or 0)
"""The catalogue's staleness limit, which the model must follow."""


def read(at: float, instance: str, executing: int) -> list[Event]:
    target = Target(Component.APISERVER, instance)
    start = Sample("process_start_time_seconds", (), 100.0)
    level = ApfLevelDump("exempt", 0, False, False, 0, executing)
    return [MetricsScraped(at, target, (start,)), ApfDumpRead(at, instance, (level,))]


def shown(model: ClusterModel) -> tuple[list[str], float | None]:
    snap = model.snapshot()
    levels = {r.priority_level: r.executing.value for r in snap.apf.levels}
    return [r.instance for r in snap.apiservers.instances], levels.get("exempt")


def test_load_balanced_reads_are_shown_when_every_real_instance_is_stale() -> None:
    model = ClusterModel()
    model.apply_all(read(0.0, LOAD_BALANCED, 5))  # before any instance was known
    assert shown(model) == ([LOAD_BALANCED], 5)
    model.apply_all(read(1.0, REAL, 2))
    assert shown(model) == ([REAL], 2)  # never summed: 2, not 7

    # Prometheus, which served the instance, dies; the load-balanced reads go on.
    t = 1.0 + STALE_S
    failed = ScrapeFailed(t, Target(Component.APISERVER, REAL), "Prometheus failed")
    model.apply_all([failed, *read(t, LOAD_BALANCED, 4), ClockTick(t)])
    assert shown(model) == ([REAL], 2)  # silent for exactly the limit: still fresh
    model.apply_all([*read(t + 1, LOAD_BALANCED, 4), ClockTick(t + 1)])
    assert shown(model) == ([LOAD_BALANCED], 4)
    # The stale instance stays listed with its error: it says why.
    stale = {f.name: f.error for f in model.snapshot().freshness}
    assert stale[f"apiserver {REAL}"] == "Prometheus failed"

    # It answers again: the load-balanced reads are hidden again.
    model.apply_all([*read(t + 2, REAL, 3), ClockTick(t + 2)])
    assert shown(model) == ([REAL], 3)
    assert not any(LOAD_BALANCED in f.name for f in model.snapshot().freshness)


def test_only_the_clock_makes_real_instances_stale() -> None:
    model = ClusterModel()
    model.apply_all([*read(0.0, LOAD_BALANCED, 5), *read(1.0, REAL, 2)])
    assert shown(model) == ([REAL], 2)
    model.apply(ClockTick(2.0 + STALE_S))  # nothing arrives: the tick alone flips it
    assert shown(model) == ([LOAD_BALANCED], 5)
