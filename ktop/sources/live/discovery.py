"""Finding apiserver instances and naming APF objects."""

from __future__ import annotations

from typing import Any

from ktop.sources.live.transport import KubeTransport

ENDPOINT_SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
FLOW_SCHEMAS = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas"
PRIORITY_LEVELS = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations"


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
