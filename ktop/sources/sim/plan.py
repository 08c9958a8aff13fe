"""The concrete timeline of a scenario, derived from its phases.

``make_plan`` reads the phase start times of a :class:`ScenarioSpec` and the
cluster's shape and returns plain numbers: which zone fails and when, which
apiserver restarts, how slow etcd's disks get. The components read the plan;
nothing else about the scenario is hard-wired in them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ktop.sources.sim.catalog import K8S_VERSION, K8S_VERSION_NEXT
from ktop.sources.sim.scenarios import ScenarioSpec


@dataclass(frozen=True, slots=True)
class Restart:
    """An apiserver process restart: unreachable from ``down_at`` to ``up_at``."""

    apiserver: int
    down_at: float
    up_at: float
    version: str


@dataclass(frozen=True, slots=True)
class Plan:
    """Scenario timings in seconds since the start (``None``: not in this scenario)."""

    outage_zone: int | None = None
    outage_start: float = 0.0
    outage_spread: float = 60.0
    flap_node: int | None = None
    flap_start: float = 0.0
    flap_end: float = 0.0
    etcd_slow_start: float | None = None
    etcd_all_slow: float = 0.0
    etcd_leader_change: float = 0.0
    etcd_defrag: tuple[int, float, float] | None = None
    """A defragmentation: (member, starts, ends); the member's disk work waits meanwhile
    (no scenario has one yet: tests set it)."""
    restarts: tuple[Restart, ...] = ()
    rebalance_per_s: float = 0.0
    """How fast clients drift back to an even spread over apiservers (fraction per second)."""
    storm: tuple[float, float, float, float] | None = None
    """Relist storm: (starts, at full strength, starts to subside, over)."""
    gpu_start: float | None = None
    gated_start: float = 0.0
    quota_start: float = 0.0


def make_plan(spec: ScenarioSpec, *, nodes: int, zones: int, apiservers: int) -> Plan:
    """The timeline of ``spec`` for a cluster of this shape."""
    name = spec.name
    if name == "steady":
        return Plan(
            flap_node=nodes // 2,
            flap_start=spec.start_of("one-node-flaps"),
            flap_end=spec.start_of("healthy-again"),
        )
    if name == "zone-outage":
        return Plan(outage_zone=1 if zones > 1 else 0, outage_start=spec.start_of("outage-wave"))
    if name == "etcd-slow-disk":
        return Plan(
            etcd_slow_start=spec.start_of("leader-disk-slows"),
            etcd_all_slow=spec.start_of("all-members-slow"),
            etcd_leader_change=spec.start_of("leader-change"),
        )
    if name == "apf-saturation":
        down = spec.start_of("apiserver-restart")
        subside = spec.start_of("storm-subsides")
        return Plan(
            restarts=(Restart(1 if apiservers > 1 else 0, down, down + 15.0, K8S_VERSION),),
            rebalance_per_s=0.05,
            storm=(
                spec.start_of("relist-storm"),
                spec.start_of("rejections"),
                subside,
                subside + 40,
            ),
        )
    if name == "apiserver-skew":
        first = spec.start_of("rolling-restart")
        gap = (spec.start_of("skewed") - first) / max(1, apiservers)
        outage = min(20.0, gap * 0.5)
        return Plan(
            restarts=tuple(
                Restart(i, first + i * gap, first + i * gap + outage, K8S_VERSION_NEXT)
                for i in range(apiservers)
            ),
            rebalance_per_s=0.0005,
        )
    if name == "scheduler-backlog":
        return Plan(
            gpu_start=spec.start_of("gpu-job-submitted"),
            gated_start=spec.start_of("gated-pods"),
            quota_start=spec.start_of("quota-exceeded"),
        )
    return Plan()


def _ramp(el: float, start: float, length: float) -> float:
    """0 before ``start``, 1 after ``start + length``, linear in between."""
    if el <= start:
        return 0.0
    return min(1.0, (el - start) / length)


def storm_level(plan: Plan, el: float) -> float:
    """Strength of the relist storm at ``el`` (0..1)."""
    if plan.storm is None:
        return 0.0
    start, full, subside, over = plan.storm
    if el >= over or el <= start:
        return 0.0
    if el < full:
        return (el - start) / (full - start)
    if el < subside:
        return 1.0
    return 1.0 - (el - subside) / (over - subside)


LEADER_SLOWDOWN = 400.0
"""WAL fsync median multiplier on the slow leader (0.7 ms -> 280 ms, p99 > 500 ms)."""
FOLLOWER_SLOWDOWN = 250.0
DEFRAG_SLOWDOWN = 1500.0
"""WAL fsync median multiplier while a member defragments (0.7 ms -> ~1 s: its writes
wait for the defragmentation)."""


def defragmenting(plan: Plan, member: int, el: float) -> bool:
    """True while ``member`` defragments at ``el``."""
    if plan.etcd_defrag is None:
        return False
    index, start, end = plan.etcd_defrag
    return index == member and start <= el < end


def disk_slowdown(plan: Plan, member: int, first_leader: int, el: float) -> float:
    """Multiplier on member's fsync median at ``el`` (1 = healthy)."""
    if defragmenting(plan, member, el):
        return DEFRAG_SLOWDOWN
    if plan.etcd_slow_start is None:
        return 1.0
    if member == first_leader:
        frac = _ramp(el, plan.etcd_slow_start, plan.etcd_all_slow - plan.etcd_slow_start)
        return math.exp(frac * math.log(LEADER_SLOWDOWN))
    frac = _ramp(el, plan.etcd_all_slow, 40.0)
    return math.exp(frac * math.log(FOLLOWER_SLOWDOWN))
