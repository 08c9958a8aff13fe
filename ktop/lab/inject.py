"""Scenario dispatch: inject an incident into a lab cluster, or recover from it."""

from __future__ import annotations

from typing import Any

from ktop.lab import scenarios_api as api_s
from ktop.lab import scenarios_proc as proc_s
from ktop.lab.target import Target, check_is_lab

SCENARIOS = (
    "zone-outage",
    "scheduler-backlog",
    "apf-saturation",
    "apiserver-skew",
    "etcd-leader-loss",
)


async def inject(
    scenario: str, target: Target, *, force: bool = False, zone: str = "zone-a"
) -> dict[str, Any]:
    """Make `scenario` really happen in the target cluster; return what was done.

    Refuses clusters without the lab marker unless `force`.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)}")
    await check_is_lab(target, force=force)
    if scenario == "zone-outage":
        return proc_s.zone_outage(target, zone)
    if scenario == "scheduler-backlog":
        return await api_s.scheduler_backlog(target)
    if scenario == "apf-saturation":
        return await api_s.apf_saturation(target)
    if scenario == "apiserver-skew":
        return await proc_s.apiserver_skew(target)
    return proc_s.etcd_leader_loss(target)


async def recover(
    scenario: str,
    target: Target,
    *,
    force: bool = False,
    zone: str = "zone-a",
    member: str | None = None,
) -> dict[str, Any]:
    """Undo `scenario` (restart what was stopped, delete what was created)."""
    await check_is_lab(target, force=force)
    if scenario == "zone-outage":
        return proc_s.recover_zone_outage(target, zone)
    if scenario == "scheduler-backlog":
        return await api_s.recover_scheduler_backlog(target)
    if scenario == "apf-saturation":
        return await api_s.recover_apf_saturation(target)
    if scenario == "etcd-leader-loss":
        if member is None:
            raise ValueError("recovering etcd-leader-loss needs --member (the killed member)")
        return proc_s.recover_etcd_leader_loss(target, member)
    if scenario == "apiserver-skew":
        return {"scenario": scenario, "recovered": True, "note": "nothing to undo"}
    raise ValueError(f"unknown scenario {scenario!r}")
