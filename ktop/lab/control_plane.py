"""A lab control plane laid out as kubeadm lays one out (``LabConfig.kubeadm_hosts``).

Three control-plane hosts (``cp-1`` to ``cp-3``), each with an address of its own
(``ktop/lab/hosts.py``); etcd members, apiservers, the scheduler and the
controller-manager listen on them at kubeadm's ports; each host is a control-plane Node
(tainted, in one zone each, kept Ready by that zone's kwok), and each component has a pod
in ``kube-system`` on its host's node, labelled and with the command line a kubeadm static
pod has, so that a client with nothing but a kubeconfig finds them by label and reads
their metrics through the apiserver's pod proxy. The processes themselves run on this
machine, not in those pods: the pods only say where they are, as mirror pods do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ktop.lab import components as comp
from ktop.lab.config import RACK_LABEL, REGION, REGION_LABEL, ZONE_LABEL

CONTROL_PLANE_HOSTS = 3
CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"
KUBE_SYSTEM = "kube-system"


def node_of(host: str) -> str:
    """The control-plane node of a host address: ``10.200.N.2`` is ``cp-2``."""
    return f"cp-{host.rsplit('.', 1)[1]}"


def kubeadm_endpoints(
    hosts: list[str], n_etcd: int
) -> tuple[list[comp.EtcdMember], list[comp.Endpoint], comp.Endpoint, comp.Endpoint]:
    """Etcd members on the first hosts, an apiserver on each of the first two, the
    scheduler on the first and the controller-manager on the second; kubeadm's ports.
    """
    p = comp.KUBEADM_PORTS
    etcd = [
        comp.EtcdMember(f"etcd-{i}", p["etcd-client"], p["etcd-peer"], hosts[i], p["etcd-metrics"])
        for i in range(n_etcd)
    ]
    apis = [
        comp.Endpoint("apiserver-a", p["apiserver"], host=hosts[0]),
        comp.Endpoint("apiserver-b", p["apiserver"], host=hosts[1]),
    ]
    sched = comp.Endpoint("kube-scheduler", p["scheduler"], host=hosts[0])
    kcm = comp.Endpoint("kube-controller-manager", p["controller-manager"], host=hosts[1])
    return etcd, apis, sched, kcm


def control_plane_nodes(hosts: list[str], zones: tuple[str, ...]) -> list[dict[str, Any]]:
    """One tainted control-plane Node per host, in the zones in turn (their zone's kwok
    keeps them Ready; their address is the host's).
    """
    nodes = []
    for i, host in enumerate(hosts):
        name, zone = node_of(host), zones[i % len(zones)]
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "kubernetes.io/os": "linux",
                        "kubernetes.io/arch": "amd64",
                        CONTROL_PLANE_ROLE: "",
                        ZONE_LABEL: zone,
                        REGION_LABEL: REGION,
                        RACK_LABEL: f"{zone}-control-plane",
                    },
                },
                "spec": {"taints": [{"key": CONTROL_PLANE_ROLE, "effect": "NoSchedule"}]},
                "status": {
                    "addresses": [
                        {"type": "InternalIP", "address": host},
                        {"type": "Hostname", "address": name},
                    ],
                    "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                    "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                },
            }
        )
    return nodes


@dataclass(frozen=True)
class PodStyle:
    """How a distribution lays out one component's static pod: its namespace, labels and
    name (``PREFIX-NODE``), and whether its command line names its metrics port.
    """

    namespace: str
    labels: dict[str, str]
    prefix: str
    flags: bool = True
    """False: the port comes from a config file (OpenShift), the client uses the default."""


KUBEADM_PODS: dict[str, PodStyle] = {
    c: PodStyle(KUBE_SYSTEM, {"component": c, "tier": "control-plane"}, c)
    for c in ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager")
}
"""kubeadm's static pods: kube-system, labelled ``component=NAME``."""
OPENSHIFT_SCHEDULER_NS = "openshift-kube-scheduler"
OPENSHIFT_PODS: dict[str, PodStyle] = {
    "etcd": PodStyle("openshift-etcd", {"app": "etcd", "k8s-app": "etcd", "etcd": "true"}, "etcd"),
    "kube-apiserver": PodStyle(
        "openshift-kube-apiserver",
        {"app": "openshift-kube-apiserver", "apiserver": "true"},
        "kube-apiserver",
    ),
    "kube-scheduler": PodStyle(
        OPENSHIFT_SCHEDULER_NS,
        {"app": "openshift-kube-scheduler", "scheduler": "true"},
        "openshift-kube-scheduler",
        flags=False,
    ),
    "kube-controller-manager": PodStyle(
        "openshift-kube-controller-manager",
        {"app": "kube-controller-manager", "kube-controller-manager": "true"},
        "kube-controller-manager",
        flags=False,
    ),
}
"""OpenShift 4's static pods (the cluster-*-operator repositories' bindata): a namespace
per component, ``app=`` labels, the scheduler's and controller-manager's ports from their
config files (10259 and 10257, kubeadm's too)."""


MIRROR_CONDITIONS = ("PodScheduled", "Initialized", "ContainersReady", "Ready")


def mirror_status(host: str) -> dict[str, Any]:
    """Running and Ready, as a kubelet posts a static pod's mirror (the lab, not kwok)."""
    return {
        "phase": "Running",
        "hostIP": host,
        "podIP": host,
        "podIPs": [{"ip": host}],
        "conditions": [{"type": t, "status": "True"} for t in MIRROR_CONDITIONS],
    }


def _pod(component: str, host: str, command: list[str], style: PodStyle) -> dict[str, Any]:
    """A static pod's mirror: ``PREFIX-NODE`` in the style's namespace, host network."""
    node = node_of(host)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{style.prefix}-{node}",
            "namespace": style.namespace,
            "labels": dict(style.labels),
        },
        "spec": {
            "nodeName": node,
            "hostNetwork": True,
            "priorityClassName": "system-node-critical",
            "tolerations": [
                {"operator": "Exists", "effect": "NoExecute"},
                {"operator": "Exists", "effect": "NoSchedule"},
            ],
            "containers": [
                {"name": component, "image": f"registry.k8s.io/{component}", "command": command}
            ],
        },
        "status": mirror_status(host),
    }


def control_plane_pods(
    hosts: list[str],
    etcd: list[comp.EtcdMember],
    apis: list[comp.Endpoint],
    sched: comp.Endpoint,
    kcm: comp.Endpoint,
    styles: dict[str, PodStyle] = KUBEADM_PODS,
) -> list[dict[str, Any]]:
    """The components' pods, with the flags a client reads to find their metrics."""
    pods = [
        _pod(
            "etcd",
            m.host,
            [
                "etcd",
                f"--name={m.name}",
                f"--listen-client-urls={m.client_url}",
                f"--advertise-client-urls={m.client_url}",
                f"--listen-peer-urls={m.peer_url}",
                f"--listen-metrics-urls=http://{m.host}:{m.metrics_port}",
            ],
            styles["etcd"],
        )
        for m in etcd
    ]
    pods += [
        _pod(
            "kube-apiserver",
            a.host,
            ["kube-apiserver", f"--advertise-address={a.host}", f"--secure-port={a.port}"],
            styles["kube-apiserver"],
        )
        for a in apis
    ]
    for component, ep in (("kube-scheduler", sched), ("kube-controller-manager", kcm)):
        style = styles[component]
        ports = [f"--bind-address={ep.host}", f"--secure-port={ep.port}"] if style.flags else []
        config = [] if style.flags else [f"--config=/etc/kubernetes/{component}/config.yaml"]
        command = [component, *config, *ports, "--leader-elect=true"]
        pods.append(_pod(component, ep.host, command, style))
    return pods
