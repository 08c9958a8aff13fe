"""Scenario dispatch: inject an incident into a lab cluster, or recover from it.

The scenarios are those of the one scenario list (``ktop.sources.sim.scenarios``) that
the lab can make happen; :data:`INJECT` and :data:`RECOVER` hold what each one does,
and a unit test checks that they cover exactly :data:`SCENARIOS`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ktop.lab import scenarios_api as api_s
from ktop.lab import scenarios_proc as proc_s
from ktop.lab.scenario_skew import apiserver_skew
from ktop.lab.target import LabTarget, check_is_lab
from ktop.sources.sim.scenarios import LAB_SCENARIOS

SCENARIOS = LAB_SCENARIOS
"""The scenarios the lab can make happen (derived from the one scenario list)."""

Result = dict[str, Any]


async def _zone_outage(target: LabTarget, zone: str, duration_s: float | None) -> Result:
    return proc_s.zone_outage(target, zone)


async def _scheduler_backlog(target: LabTarget, zone: str, duration_s: float | None) -> Result:
    return await api_s.scheduler_backlog(target)


async def _apf_saturation(target: LabTarget, zone: str, duration_s: float | None) -> Result:
    return await api_s.apf_saturation(target, duration_s=duration_s)


async def _apiserver_skew(target: LabTarget, zone: str, duration_s: float | None) -> Result:
    return await apiserver_skew(target, duration_s=duration_s)


async def _etcd_leader_loss(target: LabTarget, zone: str, duration_s: float | None) -> Result:
    return proc_s.etcd_leader_loss(target)


DURATION_SCENARIOS = frozenset({"apf-saturation", "apiserver-skew"})
"""The scenarios that last for a duration they are given (the others are a change that
stays until recovered)."""

INJECT: dict[str, Callable[[LabTarget, str, float | None], Awaitable[Result]]] = {
    "zone-outage": _zone_outage,
    "scheduler-backlog": _scheduler_backlog,
    "apf-saturation": _apf_saturation,
    "apiserver-skew": _apiserver_skew,
    "etcd-leader-loss": _etcd_leader_loss,
}
"""What makes each scenario happen, given the target, the zone (for zone-outage) and the
duration (for :data:`DURATION_SCENARIOS`)."""


async def _recover_zone_outage(target: LabTarget, zone: str, member: str | None) -> Result:
    return proc_s.recover_zone_outage(target, zone)


async def _recover_scheduler_backlog(target: LabTarget, zone: str, member: str | None) -> Result:
    return await api_s.recover_scheduler_backlog(target)


async def _recover_apf_saturation(target: LabTarget, zone: str, member: str | None) -> Result:
    return await api_s.recover_apf_saturation(target)


async def _recover_apiserver_skew(target: LabTarget, zone: str, member: str | None) -> Result:
    return {
        "scenario": "apiserver-skew",
        "recovered": True,
        "note": "nothing to undo: the load ended with the injection",
    }


async def _recover_etcd_leader_loss(target: LabTarget, zone: str, member: str | None) -> Result:
    if member is None:
        raise ValueError("recovering etcd-leader-loss needs --member (the killed member)")
    return proc_s.recover_etcd_leader_loss(target, member)


RECOVER: dict[str, Callable[[LabTarget, str, str | None], Awaitable[Result]]] = {
    "zone-outage": _recover_zone_outage,
    "scheduler-backlog": _recover_scheduler_backlog,
    "apf-saturation": _recover_apf_saturation,
    "apiserver-skew": _recover_apiserver_skew,
    "etcd-leader-loss": _recover_etcd_leader_loss,
}
"""What undoes each scenario, given the target, the zone and the killed etcd member."""


async def inject(
    scenario: str,
    target: LabTarget,
    *,
    force: bool = False,
    zone: str = "zone-a",
    duration_s: float | None = None,
) -> dict[str, Any]:
    """Make `scenario` really happen in the target cluster; return what was done.

    Refuses clusters without the lab marker unless `force`, and a duration for a scenario
    that is not one of :data:`DURATION_SCENARIOS`.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)}")
    if duration_s is not None and scenario not in DURATION_SCENARIOS:
        raise ValueError(
            f"{scenario} takes no duration (only {', '.join(sorted(DURATION_SCENARIOS))})"
        )
    await check_is_lab(target, force=force)
    return await INJECT[scenario](target, zone, duration_s)


async def recover(
    scenario: str,
    target: LabTarget,
    *,
    force: bool = False,
    zone: str = "zone-a",
    member: str | None = None,
) -> dict[str, Any]:
    """Undo `scenario` (restart what was stopped, delete what was created)."""
    await check_is_lab(target, force=force)
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    return await RECOVER[scenario](target, zone, member)
