"""Finding apiserver instances and Prometheus, and naming APF objects."""

from __future__ import annotations

from typing import Any

from ktop.sources.live.reads import ENDPOINT_SLICES, FLOW_SCHEMAS, PRIORITY_LEVELS, SERVICES
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


async def apf_object_names(t: KubeTransport) -> dict[str, str]:
    """UID to name for FlowSchemas and PriorityLevelConfigurations (paginated)."""
    names: dict[str, str] = {}
    for path in (FLOW_SCHEMAS, PRIORITY_LEVELS):
        cont = ""
        while True:
            query: list[tuple[str, str | int]] = [("limit", 500)]
            if cont:
                query.append(("continue", cont))
            body = (await t.get(path, query)).json()
            for item in body.get("items") or []:
                meta = item.get("metadata") or {}
                if meta.get("uid"):
                    names[str(meta["uid"])] = str(meta.get("name", ""))
            cont = str((body.get("metadata") or {}).get("continue") or "")
            if not cont:
                break
    return names


def prometheus_address(services: list[dict[str, Any]], ports: tuple[str, ...]) -> str:
    """``k8s://NAMESPACE/SERVICE:PORT`` of the first Service with one of ``ports``
    (by name, in order), or empty.
    """
    for svc in sorted(
        services,
        key=lambda s: (
            str((s.get("metadata") or {}).get("namespace", "")),
            str((s.get("metadata") or {}).get("name", "")),
        ),
    ):
        meta = svc.get("metadata") or {}
        names = [str(p.get("name", "")) for p in (svc.get("spec") or {}).get("ports") or []]
        for port in ports:
            if port in names:
                return f"k8s://{meta.get('namespace', '')}/{meta.get('name', '')}:{port}"
    return ""


async def find_prometheus(t: KubeTransport) -> str:
    """The first Prometheus of a common deployment, as ``k8s://...``; empty if none."""
    for selector, ports in PROMETHEUS_SERVICES:
        query: list[tuple[str, str | int]] = [("labelSelector", selector), ("limit", 50)]
        body = (await t.get(SERVICES, query)).json()
        found = prometheus_address(list(body.get("items") or []), ports)
        if found:
            return found
    return ""
