"""The kubeadm-like lab's layout: what ktop, given only a kubeconfig, reads from it.

The components' pods the lab writes into kube-system are checked with ktop's own static
pod discovery (``ktop/sources/live/static_pods.py``): each must lead to the port the lab
really starts the component on (its command line, from ``ktop/lab/components.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ktop.lab import components as comp
from ktop.lab.binaries import Binaries
from ktop.lab.config import LabConfig, Layout
from ktop.lab.control_plane import (
    control_plane_nodes,
    control_plane_pods,
    kubeadm_endpoints,
    node_of,
)
from ktop.model.events import Component
from ktop.sources.live.static_pods import STATIC_COMPONENTS, leader_node, leader_pod, proxy_target

HOSTS = ["10.200.7.1", "10.200.7.2", "10.200.7.3"]
BINS = Binaries(
    *(f"/bin/{n}" for n in ("apiserver", "kcm", "sched", "etcd", "kwok", "prom", "kubectl"))
)


def _flag(argv: list[str], name: str) -> str:
    (value,) = [a.split("=", 1)[1] for a in argv if a.startswith(name + "=")]
    return value


def _running(pod: dict[str, Any]) -> dict[str, Any]:
    return {**pod, "status": {"phase": "Running", "podIP": HOSTS[0]}}


def test_each_host_is_a_tainted_control_plane_node_in_its_own_zone() -> None:
    zones = ("zone-a", "zone-b", "zone-c")
    nodes = control_plane_nodes(HOSTS, zones)
    assert [n["metadata"]["name"] for n in nodes] == ["cp-1", "cp-2", "cp-3"]
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == list(zones)
    for n, host in zip(nodes, HOSTS, strict=True):
        assert {"type": "InternalIP", "address": host} in n["status"]["addresses"]
        assert n["spec"]["taints"] == [
            {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
        ]


def test_ktop_finds_every_component_where_the_lab_starts_it(tmp_path: Path) -> None:
    etcd, apis, sched, kcm = kubeadm_endpoints(HOSTS, 3)
    layout = Layout(tmp_path)
    cfg = LabConfig(kubeadm_hosts=True)
    started = {
        Component.ETCD: [comp.etcd_argv(BINS, layout, m, etcd) for m in etcd],
        Component.SCHEDULER: [comp.scheduler_argv(BINS, layout, sched, kubeadm=True)],
        Component.CONTROLLER_MANAGER: [comp.controller_manager_argv(BINS, layout, cfg, kcm)],
    }
    pods = control_plane_pods(HOSTS, etcd, apis, sched, kcm)
    for spec in STATIC_COMPONENTS:
        key, _, value = spec.selector.partition("=")
        mine = [p for p in pods if p["metadata"]["labels"].get(key) == value]
        assert len(mine) == len(started[spec.component]), spec.component
        for pod, argv in zip(mine, started[spec.component], strict=True):
            target = proxy_target(spec, _running(pod))
            assert target.reason == "", target.reason
            if spec.component is Component.ETCD:
                listen = _flag(argv, "--listen-metrics-urls")  # http://HOST:2381
                scheme, _, address = listen.partition("://")
                port = address.rsplit(":", 1)[1]
            else:
                scheme, port = "https", _flag(argv, "--secure-port")
                assert (
                    _flag(argv, "--bind-address")
                    == pod["spec"]["containers"][0]["command"][1].split("=", 1)[1]
                )
                assert "--leader-elect=true" in argv
            assert target.path.endswith(f"/{scheme}:{pod['metadata']['name']}:{port}/proxy/metrics")


def test_each_pod_carries_the_status_its_kubelet_would_post() -> None:
    """Running and Ready at its node's address (host network), posted by the lab itself."""
    etcd, apis, sched, kcm = kubeadm_endpoints(HOSTS, 3)
    for pod in control_plane_pods(HOSTS, etcd, apis, sched, kcm):
        status = pod["status"]
        node = pod["spec"]["nodeName"]
        host = next(h for h in HOSTS if node_of(h) == node)
        assert status["phase"] == "Running" and status["podIP"] == status["hostIP"] == host
        assert {"type": "Ready", "status": "True"} in status["conditions"]
        for spec in STATIC_COMPONENTS:  # the pod is read as running where ktop reads it
            key, _, value = spec.selector.partition("=")
            if pod["metadata"]["labels"].get(key) == value:
                assert proxy_target(spec, pod).reason == ""


def test_a_leader_lease_held_as_the_host_names_its_pod() -> None:
    etcd, apis, sched, kcm = kubeadm_endpoints(HOSTS, 3)
    pods = control_plane_pods(HOSTS, etcd, apis, sched, kcm)
    schedulers = [p for p in pods if p["metadata"]["labels"]["component"] == "kube-scheduler"]
    # the scheduler runs with its host's name: its Lease holder is HOSTNAME_UUID
    lease = {"spec": {"holderIdentity": f"{node_of(sched.host)}_0f3e-uuid"}}
    pod = leader_pod(schedulers, leader_node(lease))
    assert pod is not None and pod["metadata"]["name"] == "kube-scheduler-cp-1"


def test_a_leader_elected_component_runs_as_its_host_and_comes_back() -> None:
    argv = comp.as_host("cp-2", ["/bin/kcm", "--v=1"], restart=True)
    assert argv[:3] == ["unshare", "--uts", "sh"]
    assert argv[-3:] == ["cp-2", "/bin/kcm", "--v=1"]
    assert "while :" in argv[4]
    assert "while" not in comp.as_host("cp-1", ["/bin/etcd"])[4]
