"""Everything the live source reads, as data: the source starts its reads from this
list, and the RBAC ktop needs is derived from it.

``docs/rbac.yaml`` must grant exactly :data:`RESOURCE_READS` and
:data:`NON_RESOURCE_READS` in its required role, and exactly
:data:`OPTIONAL_RESOURCE_READS` in its optional role (a unit test checks both,
and another checks that every request the source makes is one of these).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ktop.model.apf_requests import REQUESTS_PATH
from ktop.model.events import (
    FEED_EVENTS,
    FEED_IDENTITIES,
    FEED_LEASES,
    FEED_NODES,
    FEED_PENDING_PODS,
    FEED_QUOTAS,
)

Query = tuple[tuple[str, str | int], ...]

IDENTITY_SELECTOR = "apiserver.kubernetes.io/identity=kube-apiserver"


@dataclass(frozen=True, slots=True)
class Resource:
    """A resource ktop lists and then watches."""

    feed: str
    path: str
    what: str
    """For messages, e.g. ``nodes`` or ``pods (status.phase=Pending)``."""
    query: Query = ()
    table: bool = False
    """Ask for server-side Tables with object metadata (far smaller than objects)."""
    page_size: int = 500
    watch_metadata: bool = True
    """For Tables: whether watch events carry object metadata too. Nodes' do not: their
    labels (region, zone, rack) come with the list, and a node first seen in the watch is
    fetched whole; a row alone is a few hundred bytes, its metadata several KB."""
    whole_first: int = 0
    """When set (on a resource read as objects): the list's first page holds this many
    whole objects, and the rest of the list continues as Table rows without objects (a
    pending pod's row is a few dozen bytes on the wire, its object several hundred); the
    watch sends whole objects."""


NODES = "/api/v1/nodes"
NODE_COUNT: Query = (("limit", 1),)
"""The query of one LIST of a single node made before reading (its
``remainingItemCount`` tells the cluster's size, e.g. for ``--metrics-only-above``)."""

PENDING_WHOLE = 200
"""Pending pods read whole at start: the sample that says why pods wait (their
PodScheduled messages); the rest of a longer list are rows (wait class and age only)."""

WATCHES: tuple[Resource, ...] = (
    Resource(FEED_NODES, NODES, "nodes", table=True, watch_metadata=False),
    Resource(
        FEED_PENDING_PODS,
        "/api/v1/pods",
        "pods (status.phase=Pending)",
        (("fieldSelector", "status.phase=Pending"),),
        whole_first=PENDING_WHOLE,
    ),
    Resource(
        FEED_EVENTS, "/api/v1/events", "events (type=Warning)", (("fieldSelector", "type=Warning"),)
    ),
    Resource(FEED_QUOTAS, "/api/v1/resourcequotas", "resourcequotas"),
    Resource(
        FEED_IDENTITIES,
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        "apiserver identity leases in kube-system",
        (("labelSelector", IDENTITY_SELECTOR),),
    ),
)
"""Listed (paginated) then watched, one watch each, for as long as ktop runs."""

NODE_LEASES = Resource(
    FEED_LEASES,
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
    "leases in kube-node-lease",
)
"""Node Leases: sampled, never watched (``leases.py``): one page at start, the rest of a
first sweep a page a second, then a page in rotation every round, and the Leases of
not-Ready or lagging nodes by name (``fieldSelector=metadata.name=NAME``, ``limit=1``)."""

NODE_DETAIL = "/api/v1/nodes/{name}"
"""GET of one node that is not Ready (rate-limited, capped)."""

ENDPOINT_SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
FLOW_SCHEMAS = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas"
PRIORITY_LEVELS = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations"
POLLED_LISTS: tuple[str, ...] = (ENDPOINT_SLICES, FLOW_SCHEMAS, PRIORITY_LEVELS)
"""Listed now and then: apiserver instances, and names for the APF headers."""

METRICS = "/metrics"
APF_DUMP = "/debug/api_priority_and_fairness/dump_priority_levels"
APF_REQUESTS = REQUESTS_PATH
"""Read with :data:`~ktop.model.apf_requests.REQUESTS_QUERY` (user, verb, resource of each
queued and executing request): the APF top talkers."""
APF_REQUESTS_MAX_BYTES = 2 << 20
"""Of a request dump only this much is read (about 8,000 requests): enough to name who
holds a saturated level, and a bounded cost when thousands are queued."""
VERSION = "/version"
API_GROUPS = "/apis"
"""The API group list (discovery), read once: it names the provider's own groups."""
NON_RESOURCE_READS: frozenset[str] = frozenset(
    {METRICS, APF_DUMP, APF_REQUESTS, VERSION, API_GROUPS}
)
"""Non-resource URLs ktop GETs: ``/metrics`` and the APF dumps (priority levels, requests)
from each apiserver instance, ``/version`` from the kubeconfig's server (the connection
probe, and once more with ``/apis`` to name the provider)."""

# Optional reads: without them a pane says what is missing, the rest works.
COMPONENT_PODS = "/api/v1/namespaces/{namespace}/pods"
"""Listed (a selector per component) to find control-plane pods, in the namespace the
provider keeps them in (``ktop/model/providers.py``)."""
COMPONENT_POD_PROXY = "/api/v1/namespaces/{namespace}/pods/{pod}/proxy/metrics"
"""A control-plane pod's metrics through the apiserver's pod proxy (``{pod}`` is
``https:NAME:PORT``)."""
COMPONENT_LEASE = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
"""The leader-election Lease of the scheduler or controller-manager."""
SYSTEM_PODS = COMPONENT_PODS.format(namespace="kube-system")
POD_PROXY = COMPONENT_POD_PROXY.replace("{namespace}", "kube-system")
SYSTEM_LEASE = COMPONENT_LEASE.replace("{namespace}", "kube-system")
ONE_NODE = "/api/v1/nodes"
"""Read once with ``limit=1``: one node's providerID and labels name the provider."""
EKS_METRICS = (
    "/apis/metrics.eks.amazonaws.com/v1/ksh/container/metrics",
    "/apis/metrics.eks.amazonaws.com/v1/kcm/container/metrics",
)
"""EKS's scheduler and controller-manager metrics, served by its apiservers."""
SERVICES = "/api/v1/services"
"""Listed (by label) when asked to find Prometheus."""
THANOS_QUERIER_ROUTE = (
    "/apis/route.openshift.io/v1/namespaces/openshift-monitoring/routes/thanos-querier"
)
"""OpenShift's monitoring stack's query endpoint, read when asked to find Prometheus."""
SERVICE_PROXY = "/api/v1/namespaces/{namespace}/services/{service}/proxy"
"""Prometheus through the apiserver's service proxy (``k8s://namespace/service:port``)."""
OPTIONAL_GETS: tuple[str, ...] = (
    POD_PROXY,
    SYSTEM_LEASE,
    SERVICE_PROXY,
    *EKS_METRICS,
    THANOS_QUERIER_ROUTE,
)
OPTIONAL_LISTS: tuple[str, ...] = (SYSTEM_PODS, SERVICES)

_PATH = re.compile(
    r"^/(?:api/v1|apis/(?P<group>[^/]+)/[^/]+)"
    r"(?:/namespaces/[^/]+)?/(?P<resource>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?"
)


def grant(path: str) -> tuple[str, str]:
    """The RBAC ``(apiGroup, resource)`` a request path needs (subresources as
    ``pods/proxy``); raises ValueError for a path that is not a resource path.
    """
    m = _PATH.match(path.split("?", 1)[0])
    if m is None:
        raise ValueError(f"not a resource path: {path}")
    resource = m["resource"]
    if m["sub"]:
        resource = f"{resource}/{m['sub']}"
    return m["group"] or "", resource


def _grants(
    lists: Iterable[str], gets: Iterable[str], watches: Iterable[str] = ()
) -> dict[tuple[str, str], frozenset[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for verbs, paths in ((("list",), lists), (("get",), gets), (("list", "watch"), watches)):
        for path in paths:
            out.setdefault(grant(path), set()).update(verbs)
    return {k: frozenset(v) for k, v in out.items()}


RESOURCE_READS: dict[tuple[str, str], frozenset[str]] = _grants(
    (*POLLED_LISTS, NODE_LEASES.path), (NODE_DETAIL,), (w.path for w in WATCHES)
)
"""(API group, resource) to the verbs ktop needs on it."""

OPTIONAL_RESOURCE_READS: dict[tuple[str, str], frozenset[str]] = {
    k: extra
    for k, verbs in _grants(OPTIONAL_LISTS, OPTIONAL_GETS).items()
    if (extra := verbs - RESOURCE_READS.get(k, frozenset()))
}
"""(API group, resource) to verbs, beyond :data:`RESOURCE_READS`, that turn on optional
views (control-plane pods through the pod proxy, their leader Leases, Prometheus through
the service proxy). Listing pods in kube-system is already allowed by the required role."""


def cluster_list(path: str) -> tuple[str, str]:
    """``(apiVersion, path)`` of the List a read path names, across every namespace
    (``/apis/g/v/namespaces/ns/r`` -> ``("g/v", "/apis/g/v/r")``).
    """
    m = _PATH.match(path)
    if m is None or m["name"]:
        raise ValueError(f"not a list path: {path}")
    prefix = path[: m.start("resource")].split("/namespaces/", 1)[0].rstrip("/")
    version = prefix.removeprefix("/api/").removeprefix("/apis/")
    return version, f"{prefix}/{m['resource']}"


CLUSTER_LISTS: dict[str, tuple[str, str]] = {
    grant(p)[1]: cluster_list(p) for p in (*(w.path for w in WATCHES), *POLLED_LISTS)
}
"""Resource -> ``(apiVersion, path)`` of its List across all namespaces, for every
resource ktop lists (an offline bundle captures these: ``ktop bundle capture``)."""


def needed(path: str, verb: str) -> bool:
    """True when a request (``get``, ``list`` or ``watch``) is one ktop declares."""
    bare = path.split("?", 1)[0]
    if bare in NON_RESOURCE_READS:
        return verb == "get"
    try:
        key = grant(bare)
    except ValueError:
        return False
    return verb in RESOURCE_READS.get(key, frozenset()) | OPTIONAL_RESOURCE_READS.get(
        key, frozenset()
    )
