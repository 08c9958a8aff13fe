"""Scenarios that stop or restart real control-plane processes of a local lab."""

from __future__ import annotations

import re
from typing import Any

from ktop.lab import procs
from ktop.lab.target import LabTarget
from ktop.lab.util import LabError, http_get, http_ok, wait_for

_IS_LEADER = re.compile(rb"^etcd_server_is_leader\s+1(\.0)?\s*$", re.MULTILINE)


# -- zone-outage ---------------------------------------------------------------------------
def zone_outage(target: LabTarget, zone: str = "zone-a") -> dict[str, Any]:
    """Kill the kwok controller of `zone`: its nodes stop renewing leases and heartbeating,
    so the real node lifecycle controller marks them Unknown and taints them unreachable.
    """
    lab_dir = target.require_lab_dir("zone-outage")
    name = f"kwok-{zone}"
    if name not in procs.read_state(lab_dir)["components"]:
        raise LabError(f"no kwok controller for zone {zone!r} in this lab")
    stopped = procs.stop(lab_dir, name, hard=True)
    return {"scenario": "zone-outage", "zone": zone, "stopped": name, "was_running": stopped}


def recover_zone_outage(target: LabTarget, zone: str = "zone-a") -> dict[str, Any]:
    """Start the zone's kwok again; it re-initialises the nodes to Ready."""
    lab_dir = target.require_lab_dir("zone-outage")
    procs.restart(lab_dir, f"kwok-{zone}")
    return {"scenario": "zone-outage", "zone": zone, "restarted": f"kwok-{zone}"}


# -- etcd-leader-loss ----------------------------------------------------------------------
def etcd_leader(target: LabTarget) -> str | None:
    """Name of the etcd member that currently reports itself leader (None if none does)."""
    assert target.info is not None
    for member in target.info["etcd"]:
        try:
            status, body = http_get(member["metrics_url"], timeout_s=2.0)
        except OSError:
            continue
        if status == 200 and _IS_LEADER.search(body):
            return str(member["name"])
    return None


def etcd_leader_loss(target: LabTarget, timeout_s: float = 60.0) -> dict[str, Any]:
    """SIGKILL the current etcd leader and wait until the survivors elect a new one."""
    lab_dir = target.require_lab_dir("etcd-leader-loss")
    assert target.info is not None
    if len(target.info["etcd"]) < 3:
        raise LabError("etcd-leader-loss needs a lab started with --etcd-members 3")
    old = wait_for(lambda: etcd_leader(target), timeout_s=timeout_s, what="an etcd leader")
    procs.stop(lab_dir, old, hard=True)

    def new_leader() -> str | None:
        name = etcd_leader(target)
        return name if name and name != old else None

    new = wait_for(new_leader, timeout_s=timeout_s, what="a new etcd leader")
    return {"scenario": "etcd-leader-loss", "old_leader": old, "new_leader": new}


def recover_etcd_leader_loss(target: LabTarget, member: str) -> dict[str, Any]:
    """Restart the killed member (it rejoins from its data dir as a follower)."""
    lab_dir = target.require_lab_dir("etcd-leader-loss")
    procs.restart(lab_dir, member)
    assert target.info is not None
    url = next(m["client_url"] for m in target.info["etcd"] if m["name"] == member)
    wait_for(lambda: http_ok(f"{url}/health"), timeout_s=60, what=f"{member} healthy")
    return {"scenario": "etcd-leader-loss", "restarted": member}
