"""Where a control plane keeps its components, by provider: data, and how it is detected.

A self-managed (kubeadm-like) cluster runs the scheduler, controller-manager and etcd as
static pods in ``kube-system``; OpenShift runs them in namespaces of their own with other
labels; EKS serves the scheduler's and controller-manager's metrics through the
apiserver; GKE and AKS keep them out of the cluster's reach (their metrics go to the
provider's monitoring). A :class:`ProviderProfile` says, per component, where ktop reads
it or why it cannot; :func:`detect` names the provider from what the cluster says about
itself (API groups, the apiserver's version, one node's ``providerID`` and labels), and
``--provider`` overrides it. docs/providers.md is generated from :data:`PROFILES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from ktop.model.scrape_targets import Component


class Provider(StrEnum):
    """Who runs the control plane."""

    SELF_MANAGED = "self-managed"
    EKS = "eks"
    GKE = "gke"
    AKS = "aks"
    OPENSHIFT = "openshift"


@dataclass(frozen=True, slots=True)
class PodLocation:
    """A component run as pods the apiserver can reach: found by label in a namespace,
    read through the pod proxy on the port its command line gives (or the default).
    """

    component: Component
    namespace: str
    selector: str
    """Label selector of its pods."""
    port_flag: str
    default_port: int
    scheme: str
    lease: str = ""
    """Its leader-election Lease as ``namespace/name``; empty when every pod is read
    (etcd: no leader Lease)."""

    @property
    def lease_namespace(self) -> str:
        """The Lease's namespace."""
        return self.lease.partition("/")[0]

    @property
    def lease_name(self) -> str:
        """The Lease's name."""
        return self.lease.partition("/")[2]


@dataclass(frozen=True, slots=True)
class ApiPath:
    """A component whose metrics the apiserver serves under an API group (EKS), read
    with the kubeconfig's identity when discovery lists the group.
    """

    component: Component
    path: str
    group: str
    """The API group discovery must list (``metrics.eks.amazonaws.com``)."""
    instance: str
    """The row name (one row: the provider's, not a pod's)."""


@dataclass(frozen=True, slots=True)
class NotExposed:
    """A component the provider keeps out of the cluster's reach: why, and where else
    its metrics are.
    """

    component: Component
    why: str
    instead: str

    @property
    def reason(self) -> str:
        """The pane's words: why, then where to read it."""
        return f"{self.why}; {self.instead}"


Location = PodLocation | ApiPath | NotExposed


@dataclass(frozen=True, slots=True)
class ProviderProfile:
    """One provider's layout: where each component is read, and what a user needs."""

    provider: Provider
    title: str
    short: str
    """The name the status line shows (``EKS``)."""
    components: Mapping[Component, Location]
    apiservers: str
    """How the apiserver instances are reached, in words."""
    etcd: str
    """What etcd is here, in words (managed storage is often not etcd)."""
    prometheus: str
    """Where the control plane's metrics are kept for ``--prometheus``."""
    first_run: tuple[str, ...] = field(default=())
    """A first-run checklist, one step per line."""


_SCHEDULER_DEFAULT = ("--secure-port", 10259, "https")
_KCM_DEFAULT = ("--secure-port", 10257, "https")

SELF_MANAGED = ProviderProfile(
    Provider.SELF_MANAGED,
    "self-managed (kubeadm-like)",
    "self-managed",
    {
        Component.SCHEDULER: PodLocation(
            Component.SCHEDULER,
            "kube-system",
            "component=kube-scheduler",
            *_SCHEDULER_DEFAULT,
            lease="kube-system/kube-scheduler",
        ),
        Component.CONTROLLER_MANAGER: PodLocation(
            Component.CONTROLLER_MANAGER,
            "kube-system",
            "component=kube-controller-manager",
            *_KCM_DEFAULT,
            lease="kube-system/kube-controller-manager",
        ),
        Component.ETCD: PodLocation(
            Component.ETCD,
            "kube-system",
            "component=etcd",
            "--listen-metrics-urls",
            2381,
            "http",
        ),
    },
    "each instance from the default/kubernetes EndpointSlices, read directly",
    "etcd static pods; every member read through the pod proxy (kubeadm's metrics port, "
    "2381, plain HTTP)",
    "any Prometheus that scrapes the components (--prometheus URL or k8s://ns/svc:port)",
    (
        "kubectl apply -f docs/rbac.yaml (ktop-reader, and ktop-components for the "
        "scheduler, controller-manager and etcd panes)",
        "ktop --context CONTEXT",
    ),
)

OPENSHIFT = ProviderProfile(
    Provider.OPENSHIFT,
    "OpenShift",
    "OpenShift",
    {
        Component.SCHEDULER: PodLocation(
            Component.SCHEDULER,
            "openshift-kube-scheduler",
            "app=openshift-kube-scheduler",
            *_SCHEDULER_DEFAULT,
            lease="openshift-kube-scheduler/kube-scheduler",
        ),
        Component.CONTROLLER_MANAGER: PodLocation(
            Component.CONTROLLER_MANAGER,
            "openshift-kube-controller-manager",
            "app=kube-controller-manager",
            *_KCM_DEFAULT,
            lease="kube-system/kube-controller-manager",
        ),
        Component.ETCD: NotExposed(
            Component.ETCD,
            "OpenShift's etcd serves metrics only to clients with etcd's own client "
            "certificate, which the pod proxy cannot present",
            "read etcd from the cluster monitoring stack (--prometheus auto: its "
            "thanos-querier route, with your token) or give --etcd-metrics",
        ),
    },
    "each instance from the default/kubernetes EndpointSlices (the kube-apiserver static "
    "pods in openshift-kube-apiserver)",
    "etcd static pods in openshift-etcd; their metrics need etcd's client certificate",
    "the cluster monitoring stack: --prometheus auto finds the thanos-querier route in "
    "openshift-monitoring and sends it your kubeconfig's token (a user with "
    "cluster-monitoring-view; --prometheus-ca with the ingress CA unless the router's "
    "certificate is publicly trusted)",
    (
        "oc apply -f docs/rbac.yaml (pods and pods/proxy in the openshift-kube-* "
        "namespaces for the scheduler and controller-manager panes; get on the "
        "thanos-querier route)",
        "ktop --context CONTEXT --prometheus auto --prometheus-ca INGRESS_CA.pem",
    ),
)

AMP_PROMETHEUS = "https://aps-workspaces.REGION.amazonaws.com/workspaces/WORKSPACE_ID"
"""An Amazon Managed Service for Prometheus workspace's query endpoint."""

EKS = ProviderProfile(
    Provider.EKS,
    "Amazon EKS",
    "EKS",
    {
        Component.SCHEDULER: ApiPath(
            Component.SCHEDULER,
            "/apis/metrics.eks.amazonaws.com/v1/ksh/container/metrics",
            "metrics.eks.amazonaws.com",
            "eks kube-scheduler",
        ),
        Component.CONTROLLER_MANAGER: ApiPath(
            Component.CONTROLLER_MANAGER,
            "/apis/metrics.eks.amazonaws.com/v1/kcm/container/metrics",
            "metrics.eks.amazonaws.com",
            "eks kube-controller-manager",
        ),
        Component.ETCD: NotExposed(
            Component.ETCD,
            "EKS runs etcd out of the cluster's reach (at its largest sizes not as etcd at all)",
            "the etcd pane shows etcd as the apiservers see it (request latency, storage "
            "size and objects)",
        ),
    },
    "the default/kubernetes EndpointSlices name the apiservers' addresses inside the VPC: "
    "read directly from inside it, else through the load-balanced endpoint (one instance "
    "per scrape: no skew)",
    "managed storage: only the apiservers' side of it is readable",
    f"Amazon Managed Service for Prometheus ({AMP_PROMETHEUS}, requests signed with AWS "
    "SigV4: --prometheus-sigv4, pip install 'ktop-tui[aws]'), or CloudWatch (not readable "
    "by ktop)",
    (
        "kubectl apply -f docs/rbac.yaml (its ktop-components role grants get on "
        "ksh/metrics and kcm/metrics in metrics.eks.amazonaws.com; Kubernetes 1.28 and "
        "later)",
        "ktop --context CONTEXT",
        f"ktop --context CONTEXT --prometheus {AMP_PROMETHEUS} --prometheus-sigv4",
    ),
)

GKE_PROMETHEUS = "https://monitoring.googleapis.com/v1/projects/PROJECT/location/global/prometheus"
GKE_TOKEN_COMMAND = "gcloud auth print-access-token"
"""Google Cloud Monitoring's PromQL endpoint, and the command that prints its OAuth token."""
AKS_PROMETHEUS = "https://WORKSPACE.REGION.prometheus.monitor.azure.com"
AKS_TOKEN_COMMAND = (
    "az account get-access-token --resource https://prometheus.monitor.azure.com "
    "--query accessToken -o tsv"
)
"""An Azure Monitor workspace's query endpoint, and the command that prints its Entra ID
token."""

GKE = ProviderProfile(
    Provider.GKE,
    "Google GKE",
    "GKE",
    {
        c: NotExposed(
            c,
            f"GKE does not expose the {c.value}'s metrics to the cluster's clients",
            "they are in Cloud Monitoring when the control-plane metrics package is on: "
            "query them with --prometheus and --prometheus-token-command",
        )
        for c in (Component.SCHEDULER, Component.CONTROLLER_MANAGER)
    }
    | {
        Component.ETCD: NotExposed(
            Component.ETCD,
            "GKE runs the cluster's store out of its reach (at its largest sizes not etcd)",
            "the etcd pane shows etcd as the apiservers see it",
        )
    },
    "one address for the control plane: read through it",
    "managed storage: only the apiservers' side of it is readable",
    f"Cloud Monitoring's PromQL API ({GKE_PROMETHEUS}) with an OAuth token from "
    f"'{GKE_TOKEN_COMMAND}'",
    (
        "kubectl apply -f docs/rbac.yaml",
        "ktop --context CONTEXT",
        f"ktop --context CONTEXT --prometheus {GKE_PROMETHEUS} "
        f"--prometheus-token-command '{GKE_TOKEN_COMMAND}'",
    ),
)

AKS = ProviderProfile(
    Provider.AKS,
    "Azure AKS",
    "AKS",
    {
        c: NotExposed(
            c,
            f"AKS does not expose the {c.value}'s metrics to the cluster's clients",
            "they go to Azure Monitor's managed Prometheus (off by default): query its "
            "workspace with --prometheus and --prometheus-token-command",
        )
        for c in (Component.SCHEDULER, Component.CONTROLLER_MANAGER)
    }
    | {
        Component.ETCD: NotExposed(
            Component.ETCD,
            "AKS runs etcd out of the cluster's reach",
            "its metrics go to Azure Monitor's managed Prometheus; the etcd pane shows "
            "etcd as the apiservers see it",
        )
    },
    "one load-balanced address, one instance per scrape: no per-instance figures or skew",
    "managed etcd: only the apiservers' side of it is readable",
    "Azure Monitor's managed Prometheus (a workspace PromQL endpoint, an Entra ID token "
    f"from '{AKS_TOKEN_COMMAND}'); its default profile keeps no request-latency histograms",
    (
        "kubectl apply -f docs/rbac.yaml",
        "ktop --context CONTEXT",
        f"ktop --context CONTEXT --prometheus {AKS_PROMETHEUS} "
        f"--prometheus-token-command '{AKS_TOKEN_COMMAND}'",
    ),
)

PROFILES: dict[Provider, ProviderProfile] = {
    p.provider: p for p in (SELF_MANAGED, OPENSHIFT, EKS, GKE, AKS)
}
"""Every provider's profile, in the order docs/providers.md lists them."""


def provider_words(provider: str, because: str) -> str:
    """``EKS (apiserver version v1.30.4-eks-…)``: a source's provider and why, in a
    report; empty when the source does not say.
    """
    name = short_name(provider)
    return f"{name} ({because})" if name and because else name


def short_name(provider: str) -> str:
    """The status line's name of a :class:`Provider` value; empty when not one."""
    try:
        return PROFILES[Provider(provider)].short
    except ValueError:
        return ""


@dataclass(frozen=True, slots=True)
class ClusterFacts:
    """What the cluster says about itself that names its provider."""

    api_groups: frozenset[str] = frozenset()
    git_version: str = ""
    """The apiserver's ``/version`` ``gitVersion``."""
    provider_id: str = ""
    """One node's ``spec.providerID``."""
    node_labels: Mapping[str, str] = field(default_factory=dict)
    """That node's labels."""


@dataclass(frozen=True, slots=True)
class Detected:
    """The provider, and the fact that named it (said beside it)."""

    provider: Provider
    because: str


@dataclass(frozen=True, slots=True)
class Sign:
    """One fact that names a provider: an API group discovery lists, a piece of the
    apiserver's ``gitVersion``, or a label on a node.
    """

    provider: Provider
    kind: str
    """``group``, ``version`` or ``label``."""
    value: str

    def seen(self, facts: ClusterFacts) -> str:
        """The words that name the fact when ``facts`` hold it, else empty."""
        if self.kind == "group" and self.value in facts.api_groups:
            return f"API group {self.value}"
        if self.kind == "version" and self.value in facts.git_version:
            return f"apiserver version {facts.git_version}"
        if self.kind == "label" and self.value in facts.node_labels:
            return f"node label {self.value}"
        return ""


SIGNS: tuple[Sign, ...] = (
    # OpenShift first: it runs on every cloud, and its nodes carry the cloud's labels too
    Sign(Provider.OPENSHIFT, "group", "config.openshift.io"),
    Sign(Provider.OPENSHIFT, "label", "node.openshift.io/os_id"),
    Sign(Provider.EKS, "version", "-eks-"),
    Sign(Provider.EKS, "group", "metrics.eks.amazonaws.com"),
    Sign(Provider.EKS, "label", "eks.amazonaws.com/nodegroup"),
    Sign(Provider.GKE, "version", "-gke."),
    Sign(Provider.GKE, "label", "cloud.google.com/gke-nodepool"),
    Sign(Provider.AKS, "label", "kubernetes.azure.com/cluster"),
)
"""The facts that name a provider, the first one seen deciding. A cloud's ``providerID``
alone names none: a self-managed cluster on that cloud's machines has it too."""
NO_SIGN = "no provider's own API group, version or node label"


def detect(facts: ClusterFacts) -> Detected:
    """The provider of the first of :data:`SIGNS` the facts hold; self-managed when none."""
    for sign in SIGNS:
        if because := sign.seen(facts):
            return Detected(sign.provider, because)
    return Detected(Provider.SELF_MANAGED, NO_SIGN)


def _where(loc: Location) -> str:
    if isinstance(loc, PodLocation):
        lease = f"; leader from Lease `{loc.lease}`" if loc.lease else "; every member"
        return (
            f"pods `{loc.selector}` in `{loc.namespace}`, through the pod proxy "
            f"({loc.scheme}, `{loc.port_flag}` or {loc.default_port}){lease}"
        )
    if isinstance(loc, ApiPath):
        return f"`{loc.path}` through the apiservers (when discovery lists `{loc.group}`)"
    return f"not readable: {loc.why}; {loc.instead}"


def providers_markdown() -> str:
    """docs/providers.md's generated block: how the provider is detected; per provider,
    where each component is read (or why not), how the apiservers are reached, what its
    store is, where Prometheus is, and a first-run checklist.
    """
    words = {"group": "API group", "version": "apiserver version containing", "label": "node label"}
    out = ["| in this order, the first fact seen | names |", "|---|---|"]
    out += [f"| {words[s.kind]} `{s.value}` | {PROFILES[s.provider].title} |" for s in SIGNS]
    out += [f"| none of these ({NO_SIGN}) | {SELF_MANAGED.title} |", ""]
    out += [
        "| provider | " + " | ".join(c.value for c in _SHOWN) + " | apiservers | storage |",
        "|---|" + "---|" * (len(_SHOWN) + 2),
    ]
    for p in PROFILES.values():
        cells = [_where(p.components[c]) for c in _SHOWN]
        out.append(f"| {p.title} | " + " | ".join([*cells, p.apiservers, p.etcd]) + " |")
    for p in PROFILES.values():
        out += ["", f"### {p.title}", "", f"Metrics kept for `--prometheus`: {p.prometheus}.", ""]
        out += [f"{i}. `{step}`" if step.startswith("ktop ") else f"{i}. {step}"
                for i, step in enumerate(p.first_run, 1)]  # fmt: skip
    return "\n".join(out) + "\n"


_SHOWN = (Component.SCHEDULER, Component.CONTROLLER_MANAGER, Component.ETCD)
"""The components a profile places, in the table's order."""
