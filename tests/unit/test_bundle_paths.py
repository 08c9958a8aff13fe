"""Synthetic bundles for P2, P3, P6, SKEW, API-RELIST, API-CPU and AXIS: suspect and near miss.

Each bundle is written file by file as kubectl and curl would leave it (Lists as
``kubectl get -A -o json`` prints them, ``/metrics`` text per scrape), and judged
through ``ktop triage --bundle DIR --output json`` with its exit code. Expected
numbers come from the inputs written here (counter increases over the 60 s between
the two scrapes, bucket increases through an independent ``histogram_quantile``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.bundles import (
    T0,
    apiserver_text,
    etcd_text,
    pod,
    warning,
    write_list,
    write_metrics,
)
from tests.unit.test_bundle_real import histogram_quantile
from tests.unit.test_bundle_triage import (
    DT,
    FAST,
    healthy_control_plane,
    nodes_bundle,
    paths,
    triage_json,
)

INSUFFICIENT = (
    "0/20 nodes are available: 20 Insufficient cpu. preemption: 0/20 nodes are available."
)
AFFINITY = (
    "0/20 nodes are available: 20 node(s) didn't match Pod's node affinity/selector. "
    "preemption: 0/20 nodes are available."
)
SANDBOX = (
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for "
    'sandbox "abc": plugin type="calico" failed (add): no IPs available in range'
)
BEFORE_SLOW = [("0.005", 10), ("0.02", 20), ("1", 30), ("5", 40), ("+Inf", 40)]
AFTER_SLOW = [("0.005", 10), ("0.02", 20), ("1", 30), ("5", 140), ("+Inf", 140)]
"""100 requests waited between 1 s and 5 s in the window: p99 about 4.96 s (warning, not
critical)."""


def suspects(doc: dict[str, Any]) -> list[str]:
    return sorted(p["id"] for p in doc["paths"] if p["verdict"] == "suspect")


def evidence(doc: dict[str, Any], pid: str, eid: str) -> dict[str, Any]:
    return next(e for e in paths(doc)[pid]["evidence"] if e["id"] == eid)


def cluster(root: Path, pods: list[dict[str, Any]], events: list[dict[str, Any]]) -> None:
    """A healthy control plane and 20 Ready nodes in two zones, with these pods and events."""
    healthy_control_plane(root)
    nodes_bundle(root, {"zone-a": (10, 0), "zone-b": (10, 0)})
    write_list(root, "pods", "PodList", pods)
    write_list(root, "events", "EventList", events)
    write_list(root, "resourcequotas", "ResourceQuotaList", [])


# ------------------------------------------------------------------ P2


def test_p2_pods_that_fit_no_node(tmp_path: Path) -> None:
    # 20 nodes: many is more than 10 pods (never fewer, whatever the size)
    cluster(tmp_path, [pod(f"web-{i}", unschedulable=INSUFFICIENT) for i in range(11)], [])
    code, doc = triage_json(tmp_path)
    assert code == 1 and paths(doc)["P2"]["verdict"] == "suspect"
    assert evidence(doc, "P2", "sched.unschedulable")["value"] == 11
    assert "no resources fit: Insufficient cpu (11 pods)" in paths(doc)["P2"]["conclusion"]
    assert doc["signals"]["scheduler"]["pending_by_reason"] == {"Insufficient cpu": 11}


def test_p2_near_miss_a_few_pods_that_fit_no_node_are_a_note(tmp_path: Path) -> None:
    cluster(tmp_path, [pod(f"web-{i}", unschedulable=INSUFFICIENT) for i in range(10)], [])
    code, doc = triage_json(tmp_path)
    e = evidence(doc, "P2", "sched.unschedulable")
    assert (e["value"], e["status"], e["note"]) == (10, "ok", True)
    assert paths(doc)["P2"]["verdict"] == "clear" and "to note" in paths(doc)["P2"]["conclusion"]
    assert suspects(doc) == [] and code == 0


def test_p2_near_miss_pods_not_yet_tried(tmp_path: Path) -> None:
    # the same three pods before the scheduler looked at them: no PodScheduled condition
    cluster(tmp_path, [pod(f"web-{i}") for i in range(3)], [])
    code, doc = triage_json(tmp_path)
    assert paths(doc)["P2"]["verdict"] == "clear"
    assert evidence(doc, "P2", "sched.unschedulable")["value"] == 0
    assert suspects(doc) == [] and code == 0


# ------------------------------------------------------------------ P3


def test_p3_bound_pods_that_do_not_start_are_grouped_by_cause_and_node(tmp_path: Path) -> None:
    # twelve pods on two nodes of zone-a, each with a sandbox (CNI) Warning: more than
    # the 10 that are never many
    nodes = ["zone-a-node-000", "zone-a-node-001"]
    pods = [pod(f"api-{i}", node=nodes[i % 2]) for i in range(12)]
    events = [
        warning(f"api-{i}", "FailedCreatePodSandBox", SANDBOX, T0 + DT - 10) for i in range(12)
    ]
    cluster(tmp_path, pods, events)
    code, doc = triage_json(tmp_path)
    p3 = paths(doc)["P3"]
    assert code == 1 and p3["verdict"] == "suspect"
    assert evidence(doc, "P3", "pods.bound_not_started")["value"] == 12
    assert evidence(doc, "P3", "pods.start_failures")["value"] == 12
    # all twelve in zone-a of two zones: that zone's shared dependencies
    assert p3["conclusion"] == (
        "12 of 12 pods in zone zone-a: that zone's shared dependencies (sandbox / CNI)"
    )


def test_p3_near_miss_bound_pods_without_start_warnings(tmp_path: Path) -> None:
    pods = [pod(f"api-{i}", node="zone-a-node-000") for i in range(4)]
    cluster(tmp_path, pods, [])
    code, doc = triage_json(tmp_path)
    assert paths(doc)["P3"]["verdict"] == "clear"
    assert evidence(doc, "P3", "pods.start_failures")["value"] == 0
    assert suspects(doc) == [] and code == 0


# ------------------------------------------------------------------ P6


@pytest.mark.parametrize(
    ("affinity", "cpu", "verdict", "code"),
    [
        (8, 4, "suspect", 1),  # 8 of 12 refused by affinity: 0.67 >= 0.5
        (4, 8, "clear", 1),  # 4 of 12: 0.33 (P2 stays suspect: 12 pods fit no node)
    ],
)
def test_p6_constraints_rather_than_capacity(
    tmp_path: Path, affinity: int, cpu: int, verdict: str, code: int
) -> None:
    pods = [pod(f"a-{i}", unschedulable=AFFINITY) for i in range(affinity)]
    pods += [pod(f"c-{i}", unschedulable=INSUFFICIENT) for i in range(cpu)]
    cluster(tmp_path, pods, [])
    got, doc = triage_json(tmp_path)
    assert paths(doc)["P6"]["verdict"] == verdict
    share = evidence(doc, "P6", "sched.constraint_share")["value"]
    assert share == pytest.approx(affinity / (affinity + cpu))
    assert got == code
    assert suspects(doc) == sorted({"P2", *(["P6"] if verdict == "suspect" else [])})


# ------------------------------------------------------------------ SKEW


def skewed(root: Path, rates: tuple[float, ...]) -> None:
    """Apiservers serving ``rates`` requests/s over the window (500 watches each), one
    etcd member."""
    for i, t in enumerate((T0, T0 + DT)):
        write_metrics(root, "etcd", "etcd-0", t, etcd_text(changes=1, fsync=FAST))
        for n, rate in enumerate(rates):
            text = apiserver_text(
                requests=1000 + rate * DT * i, rejected=0, queued=0, wait=FAST,
                start=T0 - 86400, watches=500,
            )  # fmt: skip
            write_metrics(root, "apiserver", f"apiserver-{n}", t, text)


@pytest.mark.parametrize(
    ("rates", "verdict", "code"),
    [
        ((100.0, 100.0, 400.0), "suspect", 1),  # 400 / 100 (the others' mean) = 4.0x > 2.5x
        ((100.0, 100.0, 130.0), "clear", 0),  # 130 / 100 = 1.3x
        ((100.0, 300.0), "suspect", 1),  # two instances: 300 / 100 = 3.0x (max / mean: 1.5x)
        ((100.0, 180.0), "clear", 0),  # a healthy pair split 64/36: 1.8x
    ],
)
def test_skew_one_apiserver_carries_most_requests(
    tmp_path: Path, rates: tuple[float, ...], verdict: str, code: int
) -> None:
    skewed(tmp_path, rates)
    got, doc = triage_json(tmp_path)
    assert paths(doc)["SKEW"]["verdict"] == verdict
    skew = evidence(doc, "SKEW", "api.request_skew")["value"]
    others = sorted(rates)[:-1]
    assert skew == pytest.approx(max(rates) / (sum(others) / len(others)))
    per = {r["instance"]: r["requests_per_s"] for r in doc["signals"]["apiservers"]}
    assert per == {f"apiserver-{n}": pytest.approx(r) for n, r in enumerate(rates)}
    assert got == code and suspects(doc) == (["SKEW"] if verdict == "suspect" else [])


# ------------------------------------------------------------------ API-RELIST and AXIS


def pressured(
    root: Path, *, changes: tuple[int, int], wait: bool, writes_per_s: float | None = None
) -> None:
    """One apiserver (APF waits slow when ``wait``), one etcd member with ``changes``
    leader changes seen at each scrape, 20 Ready nodes (2 heartbeat writes/s)."""
    for i, t in enumerate((T0, T0 + DT)):
        # etcd commits all the time (Lease renewals): its histograms move between scrapes
        moving = [(le, c * (i + 1)) for le, c in FAST]
        write_metrics(root, "etcd", "etcd-0", t, etcd_text(changes=changes[i], fsync=moving))
        hist = (AFTER_SLOW if i else BEFORE_SLOW) if wait else [(le, c * (i + 1)) for le, c in FAST]
        writes = None if writes_per_s is None else 100 + writes_per_s * DT * i
        text = apiserver_text(
            requests=1000 + 60 * DT * i,
            rejected=0,
            queued=0,
            wait=hist,
            start=T0 - 86400,
            writes=writes,
        )
        write_metrics(root, "apiserver", "apiserver-0", t, text)
    nodes_bundle(root, {"zone-a": (10, 0), "zone-b": (10, 0)})


def slow_p99() -> float:
    increase = [(float(le), a - b) for (le, a), (_, b) in zip(AFTER_SLOW, BEFORE_SLOW, strict=True)]
    return histogram_quantile(0.99, increase)


def test_relist_storm_after_an_etcd_leader_change(tmp_path: Path) -> None:
    pressured(tmp_path, changes=(1, 2), wait=True)
    code, doc = triage_json(tmp_path)
    relist = paths(doc)["API-RELIST"]
    assert relist["verdict"] == "suspect" and code == 1
    assert evidence(doc, "API-RELIST", "etcd.leader_changes")["value"] == 1
    assert evidence(doc, "API-RELIST", "apf.wait_p99")["value"] == pytest.approx(slow_p99())
    assert "clients relist without jitter" in relist["conclusion"]
    assert "ETCD" in suspects(doc)


def test_relist_near_miss_a_leader_change_without_queueing(tmp_path: Path) -> None:
    pressured(tmp_path, changes=(1, 2), wait=False)
    code, doc = triage_json(tmp_path)
    assert paths(doc)["API-RELIST"]["verdict"] == "clear"
    # the leader change itself is still an etcd finding
    assert suspects(doc) == ["ETCD"] and code == 1


def test_relist_near_miss_queueing_without_a_trigger(tmp_path: Path) -> None:
    pressured(tmp_path, changes=(1, 1), wait=True)
    _, doc = triage_json(tmp_path)
    assert paths(doc)["API-RELIST"]["verdict"] == "clear"


@pytest.mark.parametrize(
    ("writes_per_s", "axis"),
    [
        (1.0, "node-bound"),  # 2 heartbeat writes/s of 3 writes/s (2 + 1): 0.67 >= 0.5
        (8.0, "churn-bound"),  # 2 of 10: 0.2
    ],
)
def test_axis_under_pressure_names_the_axis(tmp_path: Path, writes_per_s: float, axis: str) -> None:
    # the heartbeat PATCHes are part of the apiserver's writes: 2/s from 20 nodes / 10 s
    pressured(tmp_path, changes=(1, 1), wait=True, writes_per_s=2.0 + writes_per_s)
    code, doc = triage_json(tmp_path)
    p = paths(doc)["AXIS"]
    assert p["verdict"] == "suspect" and code == 1
    share = evidence(doc, "AXIS", "axis.heartbeat_share")["value"]
    assert share == pytest.approx(2.0 / (2.0 + writes_per_s))
    assert f"; {axis}" in p["conclusion"]


def test_axis_near_miss_no_pressure(tmp_path: Path) -> None:
    pressured(tmp_path, changes=(1, 1), wait=False, writes_per_s=3.0)
    code, doc = triage_json(tmp_path)
    assert paths(doc)["AXIS"]["verdict"] == "clear"
    assert paths(doc)["AXIS"]["conclusion"] == "no axis is under pressure"
    assert suspects(doc) == [] and code == 0


# ------------------------------------------------------------------ API-CPU


def test_api_cpu_needs_a_baseline_a_bundle_does_not_hold(tmp_path: Path) -> None:
    # However high the CPU (3 cores over the window), a bundle is one moment: no baseline,
    # so the path is unknown, says why, and does not fail the gate.
    for i, t in enumerate((T0, T0 + DT)):
        text = apiserver_text(
            requests=1000 + 60 * DT * i, rejected=0, queued=0, wait=FAST, start=T0 - 86400,
            cpu_s=100 + 3.0 * DT * i,
        )  # fmt: skip
        write_metrics(tmp_path, "apiserver", "apiserver-0", t, text)
        write_metrics(tmp_path, "etcd", "etcd-0", t, etcd_text(changes=1, fsync=FAST))
    nodes_bundle(tmp_path, {"zone-a": (10, 0), "zone-b": (10, 0)})
    code, doc = triage_json(tmp_path)
    (api,) = doc["signals"]["apiservers"]
    assert api["cpu_cores"] == pytest.approx(3.0)
    cpu = paths(doc)["API-CPU"]
    assert cpu["verdict"] == "unknown"
    assert evidence(doc, "API-CPU", "api.cpu_vs_baseline")["detail"].startswith("no baseline yet")
    assert doc["baseline"].startswith("no baseline yet")
    assert suspects(doc) == [] and code == 0
