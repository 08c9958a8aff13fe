"""EKS's control-plane metrics API, served for a lab (``LabConfig.eks_layout``).

EKS serves its scheduler's and controller-manager's metrics through its apiservers, as
an aggregated API: ``GET /apis/metrics.eks.amazonaws.com/v1/ksh/container/metrics`` and
``.../kcm/container/metrics`` (RBAC: ``get`` on ``ksh/metrics`` and ``kcm/metrics``).
This small HTTPS server is that API's backend: registered with the lab's apiservers by an
``APIService`` (``ktop/lab/kube.py``), it answers the group's discovery and relays each
path to the lab's real scheduler or controller-manager ``/metrics``, so that a client
reads them exactly as it would on EKS, through the apiserver, under the apiserver's
authentication and RBAC::

    python -m ktop.lab.eks_metrics --listen HOST:PORT --cert C --key K \\
        --scheduler URL --controller-manager URL
"""

from __future__ import annotations

from collections.abc import Sequence

import aiohttp
from aiohttp import web

from ktop.lab.util import serve, server_parser

GROUP = "metrics.eks.amazonaws.com"
VERSION = "v1"
RESOURCES = ("ksh", "kcm")
"""The scheduler's (``ksh``) and the controller-manager's (``kcm``) metrics."""


def resource_list() -> dict[str, object]:
    """The group version's discovery document (what ``kubectl api-resources`` reads)."""
    resources: list[dict[str, object]] = []
    for name in RESOURCES:
        for sub in ("", "/metrics"):
            resources.append(
                {"name": name + sub, "namespaced": False, "kind": "Metrics", "verbs": ["get"]}
            )
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{GROUP}/{VERSION}",
        "resources": resources,
    }


def app(upstreams: dict[str, str]) -> web.Application:
    """The server: discovery, and each resource's metrics relayed from ``upstreams``
    (resource name to its component's ``/metrics`` URL).
    """
    base = f"/apis/{GROUP}/{VERSION}"

    async def discovery(_: web.Request) -> web.Response:
        return web.json_response(resource_list())

    async def metrics(request: web.Request) -> web.Response:
        url = upstreams.get(request.match_info["resource"])
        if url is None:
            raise web.HTTPNotFound()
        # the lab's components serve their own self-signed certificates
        async with (
            aiohttp.ClientSession() as session,
            session.get(url, ssl=False, timeout=aiohttp.ClientTimeout(total=10)) as resp,
        ):
            body = await resp.read()
            return web.Response(
                body=body, status=resp.status, content_type="text/plain", charset="utf-8"
            )

    server = web.Application()
    server.router.add_get(base, discovery)
    server.router.add_get(base + "/{resource}/container/metrics", metrics)
    return server


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until killed."""
    p = server_parser("python -m ktop.lab.eks_metrics")
    p.add_argument("--scheduler", required=True, help="the scheduler's /metrics URL")
    p.add_argument("--controller-manager", required=True, help="its /metrics URL")
    args = p.parse_args(argv)
    serve(app({"ksh": args.scheduler, "kcm": args.controller_manager}), args)


if __name__ == "__main__":
    main()
