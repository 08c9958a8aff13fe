"""Evidence that each injected scenario really happens in the real control plane.

Every check polls with a deadline derived from the cadence of what it waits for
(tests/e2e/cadence.py); nothing sleeps for luck.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

from kubernetes_asyncio import client

from ktop.lab import Lab, inject, recover, resolve_target
from ktop.lab.config import ZONE_LABEL
from ktop.lab.util import http_ok
from tests.e2e.cadence import PROCESS_START_S, cycles, deadline, lab_cadence, steps
from tests.e2e.helpers import (
    nodes,
    pods,
    poll,
    poll_query,
    promql,
    promql_by,
    ready_status,
    taint_keys,
    with_api,
)

UNREACHABLE = "node.kubernetes.io/unreachable"


def _inject(lab: Lab, scenario: str, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(inject(scenario, resolve_target(lab.layout.kubeconfig), **kwargs))


def _recover(lab: Lab, scenario: str, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(recover(scenario, resolve_target(lab.layout.kubeconfig), **kwargs))


def _unscheduled_message(pod: Any) -> str | None:
    for cond in pod.status.conditions or []:
        if cond.type == "PodScheduled" and cond.status == "False":
            return str(cond.message or "")
    return None


def _all_healthy(health: dict[str, float]) -> bool:
    return len(health) == 3 and all(v == 100 for v in health.values())


def _zone_a_down_alone(health: dict[str, float]) -> dict[str, float] | None:
    """The health gauges once zone-a is down and the others are whole (None until then)."""
    down = health.get("zone-a") == 0
    return health if down and health.get("zone-b") == 100 and health.get("zone-c") == 100 else None


def test_scheduler_backlog_shows_the_schedulers_own_failedscheduling_messages(lab: Lab) -> None:
    cmd = [
        sys.executable,
        "-m",
        "ktop.lab",
        "inject",
        "scheduler-backlog",
        "--kubeconfig",
        str(lab.layout.kubeconfig),
    ]
    # the injector starts, taints a rack's nodes and creates its pods
    injected = deadline(PROCESS_START_S, steps(3))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=injected, check=False)
    assert proc.returncode == 0, proc.stderr
    ns = "ktop-lab-backlog"
    cadence = lab_cadence(lab)
    try:

        def stuck() -> dict[str, str] | None:
            msgs = {p.metadata.name: _unscheduled_message(p) for p in pods(lab, ns)}
            gpu = [m for n, m in msgs.items() if n.startswith("gpu-job-") and m]
            pinned = [m for n, m in msgs.items() if n.startswith("rack-pinned-") and m]
            if len(gpu) == 20 and len(pinned) == 10:
                return {"gpu": gpu[0], "pinned": pinned[0]}
            return None

        # steps: the scheduler's first attempt at each pod and its status writes
        msgs = poll(
            stuck,
            timeout_s=deadline(steps(2)),
            what="30 unschedulable pods with scheduler messages",
        )
        assert "Insufficient nvidia.com/gpu" in msgs["gpu"], msgs
        assert "untolerated taint" in msgs["pinned"], msgs
        assert msgs["gpu"].startswith(f"0/{lab.cfg.nodes} nodes are available")

        def running() -> bool:
            ordinary = [p for p in pods(lab, ns) if p.metadata.name.startswith("ordinary-")]
            return len(ordinary) == 10 and all(p.status.phase == "Running" for p in ordinary)

        # steps: bound, then KWOK's pod stage marks each Running
        poll(running, timeout_s=deadline(steps(2)), what="ordinary pods Running on kwok nodes")

        async def events(api: client.ApiClient) -> list[Any]:
            return list((await client.CoreV1Api(api).list_namespaced_event(ns)).items)

        failed = poll(
            lambda: [e for e in with_api(lab, events) if e.reason == "FailedScheduling"],
            timeout_s=deadline(steps(1)),
            what="FailedScheduling events",
        )
        assert any("Insufficient nvidia.com/gpu" in (e.message or "") for e in failed)

        def pending_in_prometheus() -> float | None:
            got = promql(lab, 'sum(scheduler_pending_pods{queue="unschedulable"})')
            return got[0]["value"] if got and got[0]["value"] >= 30 else None

        poll(
            pending_in_prometheus,
            timeout_s=deadline(cadence.in_prometheus_s),
            what="scheduler_pending_pods unschedulable >= 30",
        )
    finally:
        _recover(lab, "scheduler-backlog")


def test_apf_saturation_queues_and_rejects_the_flooded_priority_level(lab: Lab) -> None:
    result = _inject(lab, "apf-saturation")
    try:
        assert int(result["statuses"].get("429", 0)) > 0, result
        level = 'priority_level="ktop-lab-low"'

        def rejected() -> float | None:
            got = promql(lab, f"sum(apiserver_flowcontrol_rejected_requests_total{{{level}}})")
            return got[0]["value"] if got and got[0]["value"] > 0 else None

        in_prometheus = deadline(lab_cadence(lab).in_prometheus_s)
        assert poll(rejected, timeout_s=in_prometheus, what="rejected requests in Prometheus") > 0
        inqueue = promql(
            lab,
            f"max(max_over_time(apiserver_flowcontrol_current_inqueue_requests{{{level}}}[5m]))",
        )
        assert inqueue and inqueue[0]["value"] > 0, inqueue
    finally:
        _recover(lab, "apf-saturation")


def test_apiserver_skew_diverges_per_instance_request_counts(lab: Lab) -> None:
    query = 'sum by (component) (apiserver_request_total{job="apiserver"})'
    starts = 'max by (component) (process_start_time_seconds{job="apiserver"})'
    in_prometheus = deadline(lab_cadence(lab).in_prometheus_s)
    before = poll_query(
        lab,
        query,
        "component",
        lambda v: len(v) == 2,
        timeout_s=in_prometheus,
        what="request totals for both apiservers",
    )
    start_before = promql_by(lab, starts, "component")

    result = _inject(lab, "apiserver-skew", duration_s=0)  # the load only while b restarts
    assert result["restarted"] == "apiserver-b" and result["requests_to_held"] > 0

    def diverged() -> dict[str, float] | None:
        after = promql_by(lab, query, "component")
        started = promql_by(lab, starts, "component")
        if len(after) != 2 or started.get("apiserver-b", 0) <= start_before["apiserver-b"]:
            return None
        grew = after["apiserver-a"] > before["apiserver-a"]
        reset = after["apiserver-b"] < before["apiserver-b"]
        return after if grew and reset else None

    # b is ready again (the injector waited for it): its next scrapes
    after = poll(
        diverged, timeout_s=in_prometheus, what="apiserver-b restarted and counts diverged"
    )
    assert (
        after["apiserver-a"] - after["apiserver-b"] > before["apiserver-a"] - before["apiserver-b"]
    )


def test_etcd_leader_loss_elects_a_new_leader(lab: Lab) -> None:
    changes = "etcd_server_leader_changes_seen_total"
    in_prometheus = deadline(lab_cadence(lab).in_prometheus_s)
    before = poll_query(
        lab,
        changes,
        "member",
        lambda v: len(v) == 3,
        timeout_s=in_prometheus,
        what="leader-change counters of 3 members",
    )
    result = _inject(lab, "etcd-leader-loss")
    old, new = result["old_leader"], result["new_leader"]
    assert old != new
    try:

        def moved() -> bool:
            leaders = promql_by(lab, "etcd_server_is_leader == 1", "member")
            seen = promql_by(lab, f'{changes} and on (instance) up{{job="etcd"}} == 1', "member")
            survivors = [m for m in before if m != old]
            return (
                set(leaders) == {new}
                and old not in seen
                and all(seen.get(m, 0) > before[m] for m in survivors)
            )

        # the injector waited for the new leader: Prometheus' next scrapes
        poll(moved, timeout_s=in_prometheus, what=f"Prometheus to see leader {old} -> {new}")
        api = lab.info["apiservers"][0]["url"]
        # steps: the apiserver's etcd client leaves the dead member, its health check passes
        poll(
            lambda: http_ok(f"{api}/readyz", lab.info["admin_token"]),
            timeout_s=deadline(steps(2)),
            what="apiserver ready on the surviving etcd members",
        )
    finally:
        _recover(lab, "etcd-leader-loss", member=old)


def test_zone_outage_marks_exactly_one_zone_unreachable(lab: Lab) -> None:
    zone_health = 'node_collector_zone_health{job="kube-controller-manager"}'
    cadence = lab_cadence(lab)

    def by_zone(query: str) -> dict[str, float]:
        return {k.rsplit(":", 1)[-1]: v for k, v in promql_by(lab, query, "zone").items()}

    poll(
        lambda: _all_healthy(by_zone(zone_health)),
        # an earlier test's outage may still be healing
        timeout_s=deadline(cadence.zone_back_s, cadence.in_prometheus_s),
        what="three healthy zones in node_collector_zone_health",
    )

    _inject(lab, "zone-outage", zone="zone-a")
    try:

        def outage() -> bool:
            by = {"zone-a": [], "other": []}  # type: dict[str, list[Any]]
            for n in nodes(lab):
                by["zone-a" if n.metadata.labels[ZONE_LABEL] == "zone-a" else "other"].append(n)
            down_ok = all(
                ready_status(n) == "Unknown" and UNREACHABLE in taint_keys(n) for n in by["zone-a"]
            )
            up_ok = all(ready_status(n) == "True" and not taint_keys(n) for n in by["other"])
            return bool(by["zone-a"]) and down_ok and up_ok

        poll(
            outage,
            timeout_s=deadline(cadence.zone_down_s),
            what="zone-a nodes Unknown+unreachable, other zones Ready",
        )
        no_execute = [
            n
            for n in nodes(lab)
            if any(t.key == UNREACHABLE and t.effect == "NoExecute" for t in n.spec.taints or [])
        ]
        assert no_execute, "no NoExecute unreachable taint applied"

        # the controller's monitor passes set the gauge, Prometheus scrapes it: a pass that
        # ran while the controller had not yet seen the last zone-a node's status gives a
        # value between (one pass more, and a scrape, bring it to 0)
        poll(
            lambda: _zone_a_down_alone(by_zone(zone_health)),
            timeout_s=deadline(cycles(2, cadence.node_monitor_period_s), cadence.in_prometheus_s),
            what="zone-a health 0 and the other zones 100 in node_collector_zone_health",
        )
        unhealthy = by_zone('node_collector_unhealthy_nodes_in_zone{job="kube-controller-manager"}')
        assert unhealthy["zone-a"] == len(
            [n for n in nodes(lab) if n.metadata.labels[ZONE_LABEL] == "zone-a"]
        )
    finally:
        _recover(lab, "zone-outage", zone="zone-a")

    def healed() -> bool:
        all_nodes = nodes(lab)
        return all(
            ready_status(n) == "True" and UNREACHABLE not in taint_keys(n) for n in all_nodes
        )

    poll(
        healed,
        timeout_s=deadline(cadence.zone_back_s),
        what="zone-a nodes Ready again after kwok restart",
    )
