"""Lab parameters, on-disk layout, tokens and kubeconfigs."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path

CONTEXT = "ktop-e2e"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
RACK_LABEL = "topology.ktop.dev/rack"
REGION = "region-1"
LOW_USER = "ktop-lab-low"
MARKER_NAMESPACE = "kube-system"
MARKER_NAME = "ktop-lab-marker"


@dataclass(frozen=True)
class LabConfig:
    """What to start. Defaults match the e2e suite."""

    nodes: int = 200
    etcd_members: int = 1
    zones: tuple[str, ...] = ("zone-a", "zone-b", "zone-c")
    racks_per_zone: int = 10
    node_monitor_grace_period_s: int = 20
    #: how often the node lifecycle controller checks every node (Kubernetes default 5 s;
    #: 2 s lets the e2e tests see a node go NotReady sooner). Each check walks all nodes:
    #: at 50,000 nodes every 2 s, half a core of the controller-manager
    node_monitor_period_s: int = 2
    node_lease_duration_s: int = 20
    large_cluster_size_threshold: int = 10
    #: NoExecute taints per second in a healthy (or lone fully-disrupted) zone; high so a whole
    #: zone gets tainted within seconds in tests (Kubernetes default 0.1)
    node_eviction_rate: float = 5.0
    #: rate in a partially disrupted zone larger than the threshold (Kubernetes default 0.01)
    secondary_node_eviction_rate: float = 0.5
    max_requests_inflight: int = 60
    max_mutating_requests_inflight: int = 30
    start_timeout_s: float = 240.0
    prometheus: bool = True
    #: the ``cluster`` label the lab's Prometheus puts on every target (one Prometheus
    #: may hold several labs, as a global query endpoint holds several clusters)
    cluster: str = "ktop-lab"
    extra_apiserver_args: tuple[str, ...] = field(default_factory=tuple)
    #: controller-manager controllers to leave off (``--controllers=*,-name``)
    disabled_controllers: tuple[str, ...] = field(default_factory=tuple)
    #: look like kubeadm to a kubeconfig-only client (``ktop/lab/hosts.py``): each
    #: control-plane host its own address and kubeadm's ports, leader election on, and
    #: the components' pods in kube-system on control-plane nodes (needs root)
    kubeadm_hosts: bool = False
    #: with ``kubeadm_hosts``: the components' pods laid out as OpenShift lays its static
    #: pods (its namespaces, labels and names, the scheduler's Lease in its namespace) and
    #: the ``config.openshift.io`` API group served (its ClusterVersion CRD), so that a
    #: client detects OpenShift and looks where OpenShift keeps them
    openshift_layout: bool = False
    #: with ``kubeadm_hosts``: laid out as EKS shows its control plane to a client: no
    #: component pods, the scheduler's and controller-manager's metrics served through the
    #: apiservers by an aggregated ``metrics.eks.amazonaws.com`` API
    #: (``ktop/lab/eks_metrics.py``)
    eks_layout: bool = False
    #: start etcd with ``--unsafe-no-fsync`` (a throwaway lab on a small VM: fsync costs
    #: seconds under load and buys nothing). Off, etcd fsyncs its WAL as a real cluster
    #: does, so its WAL fsync histogram is observed
    etcd_unsafe_no_fsync: bool = True
    #: the apiservers keep an audit log (every request at Metadata level, JSON lines, in
    #: their data directories; ``cluster-info.json``'s ``audit_logs``), as production
    #: apiservers do: what ``ktop triage --audit-log`` reads
    audit_log: bool = False


@dataclass(frozen=True)
class Layout:
    """Every path the lab writes, relative to its work dir."""

    root: Path

    @property
    def pki(self) -> Path:  # noqa: D102
        return self.root / "pki"

    @property
    def tokens_file(self) -> Path:  # noqa: D102
        return self.root / "tokens.csv"

    @property
    def audit_policy(self) -> Path:
        """The apiservers' audit policy (every request at Metadata level)."""
        return self.root / "audit-policy.yaml"

    def audit_log(self, apiserver: str) -> Path:
        """Where apiserver ``apiserver`` writes its audit log (JSON lines)."""
        return self.data(apiserver) / "audit.log"

    @property
    def kubeconfig(self) -> Path:
        """The user-facing kubeconfig (context `ktop-e2e`, apiserver a)."""
        return self.root / "kubeconfig"

    @property
    def cluster_info(self) -> Path:  # noqa: D102
        return self.root / "cluster-info.json"

    @property
    def stages(self) -> Path:  # noqa: D102
        return self.root / "kwok-stages.yaml"

    @property
    def prometheus_config(self) -> Path:  # noqa: D102
        return self.root / "prometheus.yml"

    def data(self, name: str) -> Path:
        """A data directory for component `name`."""
        path = self.root / "data" / name
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.chmod(0o700)
        return path

    def component_kubeconfig(self, name: str) -> Path:
        """The kubeconfig a component uses."""
        return self.root / "kubeconfigs" / f"{name}.kubeconfig"


@dataclass(frozen=True)
class Tokens:
    """Static bearer tokens for --token-auth-file."""

    admin: str
    low: str
    components: dict[str, str]

    @staticmethod
    def generate(component_users: list[str]) -> Tokens:
        """Random tokens for the admin, the low-privilege user and each component user."""
        return Tokens(
            admin=secrets.token_hex(16),
            low=secrets.token_hex(16),
            components={user: secrets.token_hex(16) for user in component_users},
        )

    def write_csv(self, path: Path) -> None:
        """Write the token file: token,user,uid,"groups"."""
        lines = [f'{self.admin},ktop-admin,ktop-admin,"system:masters"']
        lines.append(f"{self.low},{LOW_USER},{LOW_USER}")
        for user, token in self.components.items():
            # Components are cluster-admins too: simplest correct choice for a throwaway lab.
            lines.append(f'{token},{user},{user},"system:masters"')
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        path.chmod(0o600)


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    token: str,
    ca_file: Path,
    context: str = CONTEXT,
    extra_servers: dict[str, str] | None = None,
) -> None:
    """Write a kubeconfig (JSON, which every YAML loader reads) with one token user.

    `extra_servers` adds more clusters/contexts (e.g. `ktop-e2e-apiserver-b`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    servers = {context: server, **(extra_servers or {})}
    ca = str(ca_file.resolve())
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": name, "cluster": {"server": url, "certificate-authority": ca}}
            for name, url in servers.items()
        ],
        "users": [{"name": "ktop-lab-user", "user": {"token": token}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": "ktop-lab-user"}}
            for name in servers
        ],
        "current-context": context,
    }
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    path.chmod(0o600)
