"""Control-plane components found through the apiserver, without flags.

On clusters that run the scheduler, controller-manager and etcd as static pods
(in ``kube-system`` on kubeadm and most self-managed clusters, in namespaces of their
own on OpenShift: ``ktop/model/providers.py``), ktop finds their pods by label, reads
the leader from the components' leader-election Leases, and reads metrics through the
apiserver's pod proxy::

    /api/v1/namespaces/NAMESPACE/pods/https:NAME:PORT/proxy/metrics

Only the leader of the scheduler and controller-manager is read (the others
hold no scheduling queue and no zone states); every etcd member is read. The
RBAC this needs is optional (``docs/rbac.yaml``, role ``ktop-components``);
without it, or when a component listens on loopback only (the pod proxy cannot
reach it there), the pane says so.

Everything here but :func:`discover_component` is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ktop.model.events import Component
from ktop.model.providers import SELF_MANAGED, PodLocation
from ktop.sources.convert import ObjectError, mapping, sequence, text
from ktop.sources.live.errors import ApiError
from ktop.sources.live.reads import COMPONENT_LEASE, COMPONENT_POD_PROXY, COMPONENT_PODS
from ktop.sources.live.transport import KubeTransport

StaticComponent = PodLocation
"""How to find one component's pods and its metrics port (the provider's data)."""

STATIC_COMPONENTS: tuple[PodLocation, ...] = tuple(
    loc for loc in SELF_MANAGED.components.values() if isinstance(loc, PodLocation)
)
"""The components a self-managed (kubeadm-like) cluster runs as static pods."""

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


@dataclass(frozen=True, slots=True)
class ProxyTarget:
    """A component pod's metrics through the pod proxy, or why it cannot be read."""

    component: Component
    pod: str
    instance: str
    """The row name: the pod's name."""
    path: str
    """The pod-proxy path, empty when ``reason`` says it cannot be reached."""
    reason: str = ""


def proxy_placeholder(component: Component) -> str:
    """The row name that carries why no pod of ``component`` could be found (the
    component's name is shown beside it).
    """
    return "(pod proxy)"


def _flags(pod: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for c in sequence(mapping(pod, "spec"), "containers"):
        for arg in [*sequence(c, "command"), *sequence(c, "args")]:
            if isinstance(arg, str) and arg.startswith("--") and "=" in arg:
                k, _, v = arg.partition("=")
                out[k] = v
    return out


def proxy_path(pod: str, scheme: str, port: int, namespace: str = "kube-system") -> str:
    """The pod-proxy path of a pod's ``/metrics``."""
    return COMPONENT_POD_PROXY.format(namespace=namespace, pod=f"{scheme}:{pod}:{port}")


def proxy_target(spec: StaticComponent, pod: Mapping[str, Any]) -> ProxyTarget:
    """Where a component pod serves metrics to the pod proxy, from its command line."""
    name = text(mapping(pod, "metadata"), "name")
    flags = _flags(pod)
    phase = text(mapping(pod, "status"), "phase")
    if phase and phase != "Running":
        return ProxyTarget(spec.component, name, name, "", f"pod {name} is {phase}")
    if spec.component is Component.ETCD:
        urls = [u for u in flags.get(spec.port_flag, "").split(",") if u]
        reachable = [u for u in urls if (urlsplit(u).hostname or "") not in LOOPBACK]
        if not urls:
            return ProxyTarget(
                spec.component, name, name, "",
                f"{name} has no {spec.port_flag}: metrics only on its client port, "
                "which needs etcd client certificates (give --etcd-metrics)",
            )  # fmt: skip
        if not reachable:
            return ProxyTarget(
                spec.component, name, name, "",
                f"{name} serves metrics on loopback only ({spec.port_flag}={urls[0]}); "
                "the pod proxy cannot reach it",
            )  # fmt: skip
        u = urlsplit(reachable[0])
        port = u.port or spec.default_port
        path = proxy_path(name, u.scheme, port, spec.namespace)
        return ProxyTarget(spec.component, name, name, path)
    bind = flags.get("--bind-address", "")
    raw_port = flags.get(spec.port_flag, str(spec.default_port))
    if not raw_port.isdigit() or not 0 < int(raw_port) < 65536:
        return ProxyTarget(
            spec.component, name, name, "",
            f"{name} has {spec.port_flag}={raw_port[:40]!r}, not a port number",
        )  # fmt: skip
    port = int(raw_port)
    if bind in LOOPBACK:
        return ProxyTarget(
            spec.component, name, name, "",
            f"{name} listens on {bind} only (--bind-address); the pod proxy cannot reach it",
        )  # fmt: skip
    return ProxyTarget(
        spec.component, name, name, proxy_path(name, spec.scheme, port, spec.namespace)
    )


def leader_node(lease: Mapping[str, Any]) -> str:
    """The host that holds a leader-election Lease (``holderIdentity`` is
    ``HOSTNAME_UUID``); empty when nobody holds it.
    """
    holder = text(mapping(lease, "spec"), "holderIdentity")
    return holder.rsplit("_", 1)[0] if "_" in holder else holder


def leader_pod(pods: Sequence[Mapping[str, Any]], node: str) -> Mapping[str, Any] | None:
    """The pod running on the leader's node (static pods are named ``NAME-NODE``)."""
    for pod in pods:
        spec_node = text(mapping(pod, "spec"), "nodeName")
        name = text(mapping(pod, "metadata"), "name")
        if node and (spec_node == node or name.endswith(f"-{node}")):
            return pod
    return None


@dataclass(frozen=True, slots=True)
class Found:
    """What discovery found for one component: targets, or why there are none."""

    component: Component
    targets: tuple[ProxyTarget, ...]
    reason: str = ""


async def discover_component(t: KubeTransport, spec: StaticComponent) -> Found:
    """One component's pods (the leader's only, when it has a Lease), or the reason."""
    ns = spec.namespace
    query: list[tuple[str, str | int]] = [("labelSelector", spec.selector), ("limit", 50)]
    try:
        pods = sequence((await t.get(COMPONENT_PODS.format(namespace=ns), query)).json(), "items")
    except ApiError as e:
        what = f"pods in {ns} ({spec.selector})"
        return Found(
            spec.component, (), str(ApiError(e.status, "list", what, e.message, e.from_kubernetes))
        )
    except ObjectError as e:
        return Found(spec.component, (), f"pods in {ns} ({spec.selector}): {e}")
    if not pods:
        return Found(spec.component, (), f"no static pod labelled {spec.selector} in {ns}")
    if spec.lease:
        lease_ns, lease_name = spec.lease_namespace, spec.lease_name
        try:
            path = COMPONENT_LEASE.format(namespace=lease_ns, name=lease_name)
            lease = (await t.get(path)).json()
        except ApiError as e:
            what = f"lease {spec.lease}"
            return Found(
                spec.component,
                (),
                str(ApiError(e.status, "get", what, e.message, e.from_kubernetes)),
            )
        try:
            node = leader_node(lease)
            pod = leader_pod(pods, node)
        except ObjectError as e:
            return Found(spec.component, (), f"lease {spec.lease} or its pod: {e}")
        if pod is None:
            return Found(
                spec.component, (),
                f"leader {node or '(none)'} of lease {lease_name} runs no pod labelled "
                f"{spec.selector}",
            )  # fmt: skip
        pods = [pod]
    return Found(spec.component, tuple(_target(spec, p) for p in pods))


def _target(spec: StaticComponent, pod: Any) -> ProxyTarget:
    """:func:`proxy_target`, or the reason when a field of the pod has the wrong type."""
    try:
        return proxy_target(spec, pod)
    except ObjectError as e:
        name = _name(pod, spec.component)
        return ProxyTarget(spec.component, name, name, "", f"pod {name} is unreadable: {e}")


def _name(pod: Any, component: Component) -> str:
    try:
        return text(mapping(pod, "metadata"), "name") or proxy_placeholder(component)
    except ObjectError:
        return proxy_placeholder(component)
