"""OpenShift's Thanos Querier, as a client meets it, served for a lab
(``LabConfig.openshift_layout`` with Prometheus).

On OpenShift the cluster monitoring stack's query endpoint is the ``thanos-querier`` Route
in ``openshift-monitoring``; behind the router an auth proxy takes the user's bearer token,
authenticates it with a TokenReview, allows it with a SubjectAccessReview (``get`` on
``namespaces``, which the ``cluster-monitoring-view`` role grants) and passes ``/api/``
on to Thanos. This small HTTPS server is that proxy in front of the lab's real
Prometheus: the same reviews against the lab's real apiservers, 401 for a token they do
not know, 403 for a user they do not allow, and one access-log line per request on
standard output (``<status> <method> <path> <user>``)::

    python -m ktop.lab.thanos_querier --listen HOST:PORT --cert C --key K \\
        --prometheus URL --apiserver URL --token-file FILE
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from ktop.lab.util import serve, server_parser

ALLOWED = {"verb": "get", "resource": "namespaces"}
"""What a user must be allowed, as OpenShift's proxy asks (``--openshift-delegate-urls``)."""


def app(prometheus: str, apiserver: str, token: str) -> web.Application:
    """The proxy: every ``/api/`` request reviewed, then relayed to ``prometheus``."""
    admin = {"Authorization": f"Bearer {token}"}

    async def review(session: aiohttp.ClientSession, path: str, spec: dict[str, Any]) -> Any:
        body = {"apiVersion": path.split("/")[2] + "/v1", "spec": spec}
        kind = "TokenReview" if "tokenreviews" in path else "SubjectAccessReview"
        async with session.post(
            apiserver + path, json={**body, "kind": kind}, headers=admin, ssl=False
        ) as resp:
            resp.raise_for_status()
            return (await resp.json()).get("status") or {}

    async def relay(request: web.Request) -> web.StreamResponse:
        user = "-"
        try:
            scheme, _, bearer = request.headers.get("Authorization", "").partition(" ")
            async with aiohttp.ClientSession() as session:
                if scheme != "Bearer" or not bearer:
                    return _said(request, 401, user)
                who = await review(
                    session, "/apis/authentication.k8s.io/v1/tokenreviews", {"token": bearer}
                )
                if not who.get("authenticated"):
                    return _said(request, 401, user)
                user = str(who["user"]["username"])
                groups = who["user"].get("groups") or []
                spec = {"user": user, "groups": groups, "resourceAttributes": ALLOWED}
                access = await review(
                    session, "/apis/authorization.k8s.io/v1/subjectaccessreviews", spec
                )
                if not access.get("allowed"):
                    return _said(request, 403, user)
                async with session.request(
                    request.method,
                    prometheus + request.path,
                    params=request.query,
                    data=await request.read(),
                    headers={"Content-Type": request.headers.get("Content-Type", "")},
                ) as upstream:
                    body = await upstream.read()
                    _log(upstream.status, request, user)
                    return web.Response(
                        body=body, status=upstream.status, content_type="application/json"
                    )
        except aiohttp.ClientError as exc:
            _log(502, request, user)
            return web.Response(status=502, text=f"upstream: {exc}")

    server = web.Application()
    server.router.add_route("*", "/api/{tail:.*}", relay)
    return server


def _log(status: int, request: web.Request, user: str) -> None:
    print(f"{status} {request.method} {request.path} {user}", flush=True)


def _said(request: web.Request, status: int, user: str) -> web.Response:
    _log(status, request, user)
    return web.Response(status=status, text="Unauthorized" if status == 401 else "Forbidden")


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until killed."""
    p = server_parser("python -m ktop.lab.thanos_querier")
    p.add_argument("--prometheus", required=True, help="the lab Prometheus' URL")
    p.add_argument("--apiserver", required=True, help="an apiserver's URL (the reviews)")
    p.add_argument("--token-file", required=True, help="a token allowed to create reviews")
    args = p.parse_args(argv)
    token = Path(args.token_file).read_text(encoding="utf-8").strip()
    print(f"serving on {args.listen}", file=sys.stderr, flush=True)
    serve(app(args.prometheus.rstrip("/"), args.apiserver.rstrip("/"), token), args)


if __name__ == "__main__":
    main()
