"""Every request ktop makes to a cluster goes through here, and is counted.

kubernetes-asyncio provides configuration, authentication (tokens, client
certificates, exec plugins) and the HTTP session; ktop issues raw requests
through ``ApiClient.call_api`` so that it can ask for server-side Tables,
read watch streams line by line, count bytes and read the APF headers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
from kubernetes_asyncio.client import ApiClient
from multidict import CIMultiDict

from ktop import __version__
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import ApiError, is_status, status_message

JSON = "application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
TEXT = "text/plain"
USER_AGENT = f"ktop/{__version__}"
WATCH_READ_TIMEOUT_S = 150.0
"""A watch that sends nothing (not even a bookmark) for this long is dead."""

Query = Sequence[tuple[str, str | int]]


def instance_name(address: str) -> str:
    """One name per apiserver (or component) instance, whatever the transport:
    ``host:port`` with the host lower-cased, the scheme and path dropped and the
    port defaulted from the scheme (``https://10.0.0.1`` is ``10.0.0.1:443``).

    Prometheus' ``instance`` label, EndpointSlice addresses and ``--apiserver`` URLs
    all name an instance this way, so a target read through any of them is one row.
    """
    text = address.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    hostport = rest.split("/", 1)[0].split("@")[-1]
    if hostport.startswith("["):
        host, _, tail = hostport.partition("]")
        host, port = host + "]", tail.lstrip(":")
    elif hostport.count(":") == 1:
        host, port = hostport.split(":")
    else:
        host, port = hostport, ""
    if not port:
        port = {"https": "443", "http": "80"}.get(scheme.lower(), "")
    host = host.lower()
    return f"{host}:{port}" if port else host


@dataclass(frozen=True, slots=True)
class Response:
    """A whole response."""

    status: int
    headers: Mapping[str, str]
    """Case-insensitive, as HTTP header names are."""
    body: bytes

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


class KubeTransport:
    """Raw, counted requests over one authenticated ApiClient."""

    def __init__(
        self,
        api: ApiClient,
        meter: CostMeter,
        host: str | None = None,
        destination: str = "",
    ) -> None:
        self.api = api
        self.api.user_agent = USER_AGENT
        self.meter = meter
        self.host = host
        """Send to this base URL instead of the kubeconfig server (one apiserver instance)."""
        self.destination = destination or (
            f"apiserver {instance_name(host)}" if host else "apiserver"
        )
        """Where the cost meter counts this transport's requests."""

    async def _call(
        self, path: str, query: Query, accept: str, timeout: aiohttp.ClientTimeout
    ) -> aiohttp.ClientResponse:
        self.meter.sent(self.destination)
        resp: aiohttp.ClientResponse = await self.api.call_api(
            path,
            "GET",
            query_params=list(query),
            header_params={"Accept": accept, "User-Agent": USER_AGENT},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=timeout,
            _host=self.host,
        )
        self.meter.request(path, resp.headers, resp.status, self.destination)
        return resp

    async def get(
        self, path: str, query: Query = (), accept: str = JSON, timeout_s: float = 30.0
    ) -> Response:
        """GET a path; raise :class:`ApiError` for an HTTP error status."""
        resp = await self._call(path, query, accept, aiohttp.ClientTimeout(total=timeout_s))
        async with resp:
            body = await resp.read()
        self.meter.received(len(body), self.destination)
        if resp.status >= 400:
            raise ApiError(resp.status, "get", path, status_message(body), is_status(body))
        return Response(resp.status, CIMultiDict(resp.headers), body)

    @asynccontextmanager
    async def watch(
        self, path: str, query: Query, accept: str = JSON
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Open a watch stream; yields an iterator over its newline-delimited events."""
        timeout = aiohttp.ClientTimeout(total=None, sock_read=WATCH_READ_TIMEOUT_S)
        resp = await self._call(path, [*query, ("watch", "true")], accept, timeout)
        async with resp:
            if resp.status >= 400:
                body = await resp.read()
                self.meter.received(len(body), self.destination)
                raise ApiError(resp.status, "watch", path, status_message(body))
            self.meter.watch_opened()
            try:
                yield self._lines(resp)
            finally:
                self.meter.watch_closed()

    async def _lines(self, resp: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
        async for line in resp.content:
            self.meter.received(len(line), self.destination)
            if line.strip():
                yield line
