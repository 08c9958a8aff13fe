"""Finding apiserver instances and Prometheus, and naming APF objects."""

from __future__ import annotations

from typing import Any

from ktop.scrub import Secrets
from ktop.sources.convert import ObjectError, mapping, sequence, text
from ktop.sources.live.client import connect
from ktop.sources.live.errors import ApiError
from ktop.sources.live.reads import (
    ENDPOINT_SLICES,
    FLOW_SCHEMAS,
    PRIORITY_LEVELS,
    SERVICES,
    THANOS_QUERIER_ROUTE,
)
from ktop.sources.live.transport import KubeTransport

PROMETHEUS_SERVICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # The Prometheus operator's governing Service, for every Prometheus it runs
    # (kube-prometheus and kube-prometheus-stack both use the operator).
    ("operated-prometheus=true", ("web", "http-web")),
    # kube-prometheus' own Service.
    ("app.kubernetes.io/name=prometheus", ("web", "http-web", "http")),
    # kube-prometheus-stack's Service.
    ("app=kube-prometheus-stack-prometheus", ("http-web", "web")),
)
"""Label selectors of the common Prometheus deployments, with their port names."""
PROMETHEUS_HINT = "give --prometheus URL or k8s://NAMESPACE/SERVICE:PORT"


def endpoints_from_slices(body: dict[str, Any]) -> list[str]:
    """Base URLs (``https://addr:port``) of the ready endpoints in EndpointSlices."""
    out: list[str] = []
    for sl in body.get("items") or []:
        ports = [p.get("port") for p in sl.get("ports") or [] if p.get("port")]
        port = ports[0] if ports else 443
        for ep in sl.get("endpoints") or []:
            if (ep.get("conditions") or {}).get("ready") is False:
                continue
            for addr in ep.get("addresses") or []:
                host = f"[{addr}]" if ":" in addr else addr
                out.append(f"https://{host}:{port}")
    return sorted(set(out))


async def apiserver_endpoints(t: KubeTransport) -> list[str]:
    """The apiserver instances behind the ``default/kubernetes`` Service."""
    query: list[tuple[str, str | int]] = [
        ("labelSelector", "kubernetes.io/service-name=kubernetes"),
        ("limit", 50),
    ]
    return endpoints_from_slices((await t.get(ENDPOINT_SLICES, query)).json())


async def listed(t: KubeTransport, path: str) -> list[Any]:
    """Every object of a collection, read in pages of 500."""
    items: list[Any] = []
    cont = ""
    while True:
        query: list[tuple[str, str | int]] = [("limit", 500)]
        if cont:
            query.append(("continue", cont))
        body = (await t.get(path, query)).json()
        items += _items(body)
        cont = _continue(body)
        if not cont:
            return items


async def apf_object_names(t: KubeTransport) -> dict[str, str]:
    """UID to name for FlowSchemas and PriorityLevelConfigurations (paginated).

    An object whose metadata has the wrong type is left out (its UID then shows unnamed).
    """
    names: dict[str, str] = {}
    for path in (FLOW_SCHEMAS, PRIORITY_LEVELS):
        for item in await listed(t, path):
            try:
                meta = mapping(item, "metadata")
                uid, name = text(meta, "uid"), text(meta, "name")
            except ObjectError:
                continue
            if uid:
                names[uid] = name
    return names


async def cluster_flowschemas(
    kubeconfig: str | None, context: str | None, secrets: Secrets
) -> list[Any]:
    """The cluster's FlowSchemas (one paginated LIST, as the dashboard reads their names)."""
    conn = await connect(kubeconfig, context, secrets=secrets)
    try:
        return await listed(KubeTransport(conn.api, conn.meter), FLOW_SCHEMAS)
    finally:
        await conn.close()


def _items(body: Any) -> list[Any]:
    try:
        return sequence(body, "items")
    except ObjectError:
        return []


def _continue(body: Any) -> str:
    try:
        return text(mapping(body, "metadata"), "continue")
    except ObjectError:
        return ""


def _service(svc: Any) -> tuple[str, str, list[str]] | None:
    """A Service's namespace, name and port names; None when a field has the wrong type."""
    try:
        meta = mapping(svc, "metadata")
        ports = sequence(mapping(svc, "spec"), "ports")
        return text(meta, "namespace"), text(meta, "name"), [text(p, "name") for p in ports]
    except ObjectError:
        return None


def prometheus_address(services: list[dict[str, Any]], ports: tuple[str, ...]) -> str:
    """``k8s://NAMESPACE/SERVICE:PORT`` of the first Service with one of ``ports``
    (by name, in order), or empty. A Service with a field of the wrong type is left out.
    """
    for namespace, name, names in sorted(s for s in map(_service, services) if s is not None):
        for port in ports:
            if port in names:
                return f"k8s://{namespace}/{name}:{port}"
    return ""


async def find_prometheus(t: KubeTransport) -> str:
    """The first Prometheus of a common deployment, as ``k8s://...``; empty if none."""
    for selector, ports in PROMETHEUS_SERVICES:
        query: list[tuple[str, str | int]] = [("labelSelector", selector), ("limit", 50)]
        body = (await t.get(SERVICES, query)).json()
        found = prometheus_address(_items(body), ports)
        if found:
            return found
    return ""


def route_url(route: Any) -> str:
    """The base URL of an OpenShift Route (``https://HOST`` with TLS, else http; its
    ``path``, ``/api`` for Thanos Querier, is the prefix the router lets through, under
    which Prometheus' API already lies), or empty when it has no host or a field has the
    wrong type.
    """
    try:
        spec = mapping(route, "spec")
        host = text(spec, "host")
        tls = spec.get("tls")
    except ObjectError:
        return ""
    return f"{'https' if tls else 'http'}://{host}" if host else ""


async def find_openshift_querier(t: KubeTransport) -> str:
    """The URL of OpenShift's Thanos Querier (its ``thanos-querier`` Route in
    ``openshift-monitoring``), or empty where there is none or it cannot be read (not
    OpenShift, or no ``get`` on routes: the Services are looked at next).
    """
    try:
        return route_url((await t.get(THANOS_QUERIER_ROUTE)).json())
    except ApiError as e:
        if e.status in (403, 404):
            return ""
        raise
