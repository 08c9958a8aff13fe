"""The lab itself: every component up, nodes spread over zones/racks, the injector's guard."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from ktop.lab import Lab, NotALabClusterError, kube, resolve_target
from ktop.lab.config import MARKER_NAME, MARKER_NAMESPACE, RACK_LABEL, ZONE_LABEL
from ktop.lab.target import check_is_lab
from ktop.lab.util import http_get, http_ok
from tests.e2e.cadence import PROCESS_START_S, deadline, lab_cadence, steps
from tests.e2e.helpers import nodes, poll, promql_by, ready_status, with_api


def test_all_nodes_ready_and_spread_over_three_zones(lab: Lab) -> None:
    # Ready at the lab's start; an earlier test's outage or flood may still be healing.
    def all_ready() -> list[Any] | None:
        got = nodes(lab)
        return got if got and all(ready_status(n) == "True" for n in got) else None

    all_nodes = poll(
        all_ready, timeout_s=deadline(lab_cadence(lab).zone_back_s), what="every node Ready"
    )
    assert len(all_nodes) == lab.cfg.nodes
    zones = Counter(n.metadata.labels[ZONE_LABEL] for n in all_nodes)
    assert set(zones) == {"zone-a", "zone-b", "zone-c"}
    assert max(zones.values()) - min(zones.values()) <= 1
    racks = {n.metadata.labels[RACK_LABEL] for n in all_nodes}
    assert len(racks) == min(lab.cfg.nodes, 3 * lab.cfg.racks_per_zone)
    # Deliberately no kwok NoSchedule taint: ordinary pods must schedule (docs/testing.md).
    tainted = {n.metadata.name: n.spec.taints for n in all_nodes if n.spec.taints}
    assert not tainted


def test_both_apiservers_serve_metrics_and_apf_debug_with_the_admin_token(lab: Lab) -> None:
    token = lab.info["admin_token"]
    for api in lab.info["apiservers"]:
        assert http_ok(f"{api['url']}/readyz", token)
        status, body = http_get(f"{api['url']}/metrics", token)
        assert status == 200 and b"apiserver_request_total" in body
        status, body = http_get(
            f"{api['url']}/debug/api_priority_and_fairness/dump_priority_levels", token
        )
        assert status == 200 and b"workload-low" in body
        # The low-privilege user may not read metrics.
        status, _ = http_get(f"{api['url']}/metrics", lab.info["low_user"]["token"])
        assert status == 403


def test_prometheus_scrapes_every_component(lab: Lab) -> None:
    def all_up() -> dict[str, float] | None:
        up = promql_by(lab, "min by (job) (up)", "job")
        wanted = {"apiserver", "etcd", "kube-scheduler", "kube-controller-manager", "kwok"}
        return up if wanted <= set(up) and all(v == 1 for v in up.values()) else None

    up = poll(all_up, timeout_s=deadline(lab_cadence(lab).in_prometheus_s), what="every target up")
    assert up["apiserver"] == 1
    per_instance = promql_by(lab, "count by (component) (up{job='apiserver'})", "component")
    assert set(per_instance) == {"apiserver-a", "apiserver-b"}


def test_cluster_info_lists_every_endpoint(lab: Lab) -> None:
    info = json.loads(lab.layout.cluster_info.read_text())
    assert len(info["apiservers"]) == 2
    assert len(info["etcd"]) == 3
    assert info["prometheus_url"].startswith("http://127.0.0.1:")
    for key in ("scheduler", "controller_manager"):
        assert info[key]["metrics_url"].startswith("https://127.0.0.1:")
    assert info["tokens_file"].endswith("tokens.csv")
    assert info["context"] == "ktop-e2e"


def test_injector_refuses_a_cluster_without_the_marker(lab: Lab) -> None:
    async def delete_marker(api: client.ApiClient) -> None:
        await client.CoreV1Api(api).delete_namespaced_config_map(MARKER_NAME, MARKER_NAMESPACE)

    async def restore_marker(api: client.ApiClient) -> None:
        await kube.write_marker(api, lab.info["lab_id"])

    cmd = [
        sys.executable,
        "-m",
        "ktop.lab",
        "inject",
        "scheduler-backlog",
        "--kubeconfig",
        str(lab.layout.kubeconfig),
    ]
    with_api(lab, delete_marker)
    try:
        # the injector starts, reads the marker (one step) and refuses
        refused = deadline(PROCESS_START_S, steps(1))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=refused, check=False)
    finally:
        with_api(lab, restore_marker)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "refusing" in proc.stderr and "--i-know-this-is-not-a-lab-cluster" in proc.stderr

    # Nothing was injected.
    async def namespaces(api: client.ApiClient) -> list[str]:
        items = (await client.CoreV1Api(api).list_namespace()).items
        return [ns.metadata.name for ns in items]

    assert "ktop-lab-backlog" not in with_api(lab, namespaces)


def test_injector_refuses_a_lab_dir_whose_id_does_not_match(lab: Lab, tmp_path: Path) -> None:
    info = json.loads(lab.layout.cluster_info.read_text())
    info["lab_id"] = "someone-else"
    (tmp_path / "cluster-info.json").write_text(json.dumps(info))
    target = resolve_target(lab.layout.kubeconfig, lab_dir=tmp_path)
    with pytest.raises(NotALabClusterError, match="does not match"):
        asyncio.run(check_is_lab(target))
    # The explicit override flag is the only way past the guard.
    asyncio.run(check_is_lab(target, force=True))
