"""Command lines of every lab component, and the Prometheus scrape configuration."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ktop.lab.binaries import Binaries
from ktop.lab.config import LabConfig, Layout
from ktop.model.zones import DEFAULT_UNHEALTHY_ZONE_THRESHOLD

HOST = "127.0.0.1"


KUBEADM_PORTS = {"etcd-client": 2379, "etcd-peer": 2380, "etcd-metrics": 2381,
                 "apiserver": 6443, "scheduler": 10259, "controller-manager": 10257}  # fmt: skip
"""kubeadm's ports, used on a lab whose control-plane hosts have addresses of their own."""
ALLOW_METRICS = "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"
"""Lets the apiserver's pod proxy (which forwards no credentials) read /metrics, as
clusters that let their monitoring scrape the scheduler and controller-manager do."""


@dataclass(frozen=True)
class EtcdMember:
    """One etcd member's identity, host and ports."""

    name: str
    client_port: int
    peer_port: int
    host: str = HOST
    metrics_port: int | None = None
    """``--listen-metrics-urls``' port (None: metrics on the client port only)."""

    @property
    def client_url(self) -> str:  # noqa: D102
        return f"http://{self.host}:{self.client_port}"

    @property
    def peer_url(self) -> str:  # noqa: D102
        return f"http://{self.host}:{self.peer_port}"

    @property
    def metrics_url(self) -> str:
        """Where the member serves /metrics without client certificates."""
        if self.metrics_port is None:
            return f"{self.client_url}/metrics"
        return f"http://{self.host}:{self.metrics_port}/metrics"


@dataclass(frozen=True)
class Endpoint:
    """A named HTTP(S) endpoint (on loopback unless a host is given)."""

    name: str
    port: int
    scheme: str = "https"
    host: str = HOST

    @property
    def url(self) -> str:  # noqa: D102
        return f"{self.scheme}://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        """``host:port``."""
        return f"{self.host}:{self.port}"


def as_host(node: str, argv: list[str], *, restart: bool = False) -> list[str]:
    """``argv`` run with ``node`` as its host name (a UTS namespace of its own): a
    component's leader-election identity is ``HOSTNAME_UUID``, which names the node its pod
    runs on, as on a real control plane. With ``restart``, it is started again whenever it
    exits, as the kubelet restarts a static pod (a scheduler or controller-manager exits
    when it loses its leader Lease, e.g. while its apiserver restarts); stopping the
    component's process group stops both.
    """
    script = (
        'hostname "$0" && while :; do "$@"; sleep 1; done'
        if restart
        else ('hostname "$0" && exec "$@"')
    )
    return ["unshare", "--uts", "sh", "-c", script, node, *argv]


def etcd_argv(
    bins: Binaries,
    layout: Layout,
    member: EtcdMember,
    cluster: list[EtcdMember],
    *,
    unsafe_no_fsync: bool = True,
) -> list[str]:
    """Etcd member command line (plain HTTP on loopback; /metrics on the client port);
    ``unsafe_no_fsync``: without WAL fsync (:attr:`LabConfig.etcd_unsafe_no_fsync`).
    """
    initial = ",".join(f"{m.name}={m.peer_url}" for m in cluster)
    return [
        bins.etcd,
        f"--name={member.name}",
        f"--data-dir={layout.data(member.name)}",
        f"--listen-client-urls={member.client_url}",
        f"--advertise-client-urls={member.client_url}",
        f"--listen-peer-urls={member.peer_url}",
        f"--initial-advertise-peer-urls={member.peer_url}",
        f"--initial-cluster={initial}",
        *(
            [f"--listen-metrics-urls=http://{member.host}:{member.metrics_port}"]
            if member.metrics_port is not None
            else []
        ),
        "--initial-cluster-state=new",
        "--initial-cluster-token=ktop-lab",
        "--logger=zap",
        "--log-level=warn",
        *(["--unsafe-no-fsync"] if unsafe_no_fsync else []),
    ]


AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
"""
"""Every request at Metadata level (who, what, how it ended, when), each once complete."""


def audit_flags(layout: Layout, api: Endpoint) -> list[str]:
    """An audit log as production apiservers keep one (who called: ``ktop triage
    --audit-log`` reads it), rotated small: a lab runs for minutes.
    """
    return [
        f"--audit-policy-file={layout.audit_policy}",
        f"--audit-log-path={layout.audit_log(api.name)}",
        "--audit-log-format=json",
        "--audit-log-maxsize=64",
        "--audit-log-maxbackup=2",
    ]


def apiserver_argv(
    bins: Binaries,
    layout: Layout,
    cfg: LabConfig,
    api: Endpoint,
    etcd: list[EtcdMember],
    *,
    reconcile_endpoints: bool,
) -> list[str]:
    """kube-apiserver command line: token auth, Node+RBAC authz, shared SA key pair."""
    pki = layout.pki
    argv = [
        bins.kube_apiserver,
        f"--etcd-servers={','.join(m.client_url for m in etcd)}",
        f"--bind-address={api.host}",
        f"--advertise-address={api.host}",
        f"--secure-port={api.port}",
        f"--cert-dir={layout.data(api.name)}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        # No front proxy, but components look for this CA and log errors every few seconds
        # without it. Only certs for CN front-proxy-client signed by the lab CA would pass.
        f"--requestheader-client-ca-file={pki / 'ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        *(
            [
                f"--proxy-client-cert-file={pki / 'front-proxy-client.crt'}",
                f"--proxy-client-key-file={pki / 'front-proxy-client.key'}",
                "--enable-aggregator-routing=true",
            ]
            if cfg.eks_layout
            else []
        ),
        f"--token-auth-file={layout.tokens_file}",
        *(audit_flags(layout, api) if cfg.audit_log else []),
        "--authorization-mode=Node,RBAC",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        "--service-cluster-ip-range=10.96.0.0/16",
        "--allow-privileged=true",
        "--enable-priority-and-fairness=true",
        f"--max-requests-inflight={cfg.max_requests_inflight}",
        f"--max-mutating-requests-inflight={cfg.max_mutating_requests_inflight}",
        # Two apiservers advertise the same IP with different ports: only one may own the
        # `kubernetes` Service endpoints, else they overwrite each other forever.
        f"--endpoint-reconciler-type={'lease' if reconcile_endpoints else 'none'}",
        "--profiling=false",
        # Events are served straight from etcd, as many large clusters do (they keep
        # Events in an etcd of their own): a watch from a compacted resourceVersion then
        # gets a real 410 Gone, which the e2e tests use to exercise relisting.
        "--watch-cache-sizes=events#0",
        "--v=1",
    ]
    return argv + list(cfg.extra_apiserver_args)


def _election(kubeadm: bool) -> list[str]:
    """Leader election (a kubeadm-like lab: on, with /metrics open to the pod proxy)."""
    return ["--leader-elect=true", ALLOW_METRICS] if kubeadm else ["--leader-elect=false"]


def scheduler_argv(
    bins: Binaries, layout: Layout, ep: Endpoint, *, kubeadm: bool = False, lease_ns: str = ""
) -> list[str]:
    """kube-scheduler command line (secure metrics port, delegated authn/authz); its
    leader-election Lease in ``lease_ns`` when given (OpenShift's scheduler keeps it in
    its own namespace).
    """
    kubeconfig = layout.component_kubeconfig("kube-scheduler")
    lease = [f"--leader-elect-resource-namespace={lease_ns}"] if lease_ns else []
    return [
        bins.kube_scheduler,
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={ep.host}",
        f"--secure-port={ep.port}",
        f"--cert-dir={layout.data(ep.name)}",
        *_election(kubeadm),
        *lease,
        "--kube-api-qps=200",
        "--kube-api-burst=400",
        "--v=1",
    ]


def controller_manager_argv(
    bins: Binaries, layout: Layout, cfg: LabConfig, ep: Endpoint
) -> list[str]:
    """kube-controller-manager command line with a fast node lifecycle controller."""
    kubeconfig = layout.component_kubeconfig("kube-controller-manager")
    pki = layout.pki
    return [
        bins.kube_controller_manager,
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={ep.host}",
        f"--secure-port={ep.port}",
        f"--cert-dir={layout.data(ep.name)}",
        *_election(cfg.kubeadm_hosts),
        # The default client QPS (20) lets the node lifecycle controller lift start-up
        # not-ready taints at ~5 nodes/s; large clusters raise it too.
        "--kube-api-qps=300",
        "--kube-api-burst=600",
        "--controllers=" + ",".join(["*", *(f"-{c}" for c in cfg.disabled_controllers)]),
        f"--service-account-private-key-file={pki / 'sa.key'}",
        f"--root-ca-file={pki / 'ca.crt'}",
        f"--cluster-signing-cert-file={pki / 'ca.crt'}",
        f"--cluster-signing-key-file={pki / 'ca.key'}",
        "--use-service-account-credentials=false",
        "--allocate-node-cidrs=false",
        f"--node-monitor-period={cfg.node_monitor_period_s}s",
        f"--node-monitor-grace-period={cfg.node_monitor_grace_period_s}s",
        f"--large-cluster-size-threshold={cfg.large_cluster_size_threshold}",
        f"--unhealthy-zone-threshold={DEFAULT_UNHEALTHY_ZONE_THRESHOLD}",
        f"--node-eviction-rate={cfg.node_eviction_rate}",
        f"--secondary-node-eviction-rate={cfg.secondary_node_eviction_rate}",
        "--v=1",
    ]


def kwok_argv(
    bins: Binaries, layout: Layout, cfg: LabConfig, zone: str, index: int, ep: Endpoint
) -> list[str]:
    """One kwok controller that manages only the nodes of `zone` (and their pods/leases)."""
    return [
        bins.kwok,
        f"--kubeconfig={layout.component_kubeconfig(ep.name)}",
        f"--config={layout.stages}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-label-selector=topology.kubernetes.io/zone={zone}",
        f"--node-lease-duration-seconds={cfg.node_lease_duration_s}",
        f"--server-address={HOST}:{ep.port}",
        f"--cidr=10.{100 + index}.0.0/16",
        f"--node-ip=10.{100 + index}.255.254",
    ]


def prometheus_argv(bins: Binaries, layout: Layout, ep: Endpoint) -> list[str]:
    """Debian's Prometheus on loopback with a 1 h, lab-local TSDB."""
    return [
        bins.prometheus,
        f"--config.file={layout.prometheus_config}",
        f"--storage.tsdb.path={layout.data('prometheus')}",
        f"--web.listen-address={HOST}:{ep.port}",
        "--storage.tsdb.retention.time=1h",
        "--log.level=warn",
    ]


def prometheus_config(
    layout: Layout,
    apiservers: list[Endpoint],
    etcd: list[EtcdMember],
    scheduler: Endpoint,
    controller_manager: Endpoint,
    kwoks: dict[str, Endpoint],
    prometheus: Endpoint,
    cluster: str = "ktop-lab",
) -> str:
    """Scrape config (1 s) for every component; TLS targets use the admin token file.
    Every target carries the label ``cluster`` (as in a Prometheus that holds many).
    """
    token_file = str(layout.root / "admin.token")

    def https_job(job: str, eps: list[Endpoint]) -> dict[str, object]:
        return {
            "job_name": job,
            "scheme": "https",
            "authorization": {"type": "Bearer", "credentials_file": token_file},
            "tls_config": {"insecure_skip_verify": True},
            "static_configs": [
                {
                    "targets": [ep.address],
                    "labels": {"component": ep.name, "cluster": cluster},
                }
                for ep in eps
            ],
        }

    jobs: list[dict[str, object]] = [
        https_job("apiserver", apiservers),
        https_job("kube-scheduler", [scheduler]),
        https_job("kube-controller-manager", [controller_manager]),
        {
            "job_name": "etcd",
            "static_configs": [
                {
                    "targets": [f"{m.host}:{m.client_port}"],
                    "labels": {"member": m.name, "cluster": cluster},
                }
                for m in etcd
            ],
        },
        {
            "job_name": "kwok",
            "static_configs": [
                {"targets": [f"{HOST}:{ep.port}"], "labels": {"zone": zone, "cluster": cluster}}
                for zone, ep in kwoks.items()
            ],
        },
        {
            "job_name": "prometheus",
            "static_configs": [
                {"targets": [f"{HOST}:{prometheus.port}"], "labels": {"cluster": cluster}}
            ],
        },
    ]
    config = {
        # A scrape of an apiserver's /metrics (megabytes) on a busy machine takes more
        # than a second; the tests' deadlines are derived from this interval.
        "global": {"scrape_interval": "2s", "evaluation_interval": "2s", "scrape_timeout": "2s"},
        "scrape_configs": jobs,
    }
    return json.dumps(config, indent=2) + "\n"  # JSON is valid YAML


def stage_files() -> list[Path]:
    """The kwok Stage definitions shipped in ktop/lab/stages (copied from kwok v0.8.0)."""
    return sorted((Path(__file__).parent / "stages").glob("*.yaml"))


def write_stages(layout: Layout) -> None:
    """Concatenate the Stage files into one multi-document YAML for kwok --config."""
    docs = [p.read_text(encoding="utf-8").strip() for p in stage_files()]
    layout.stages.write_text("\n---\n".join(docs) + "\n", encoding="utf-8")
