"""Every request ktop makes to a cluster goes through here, and is counted.

kubernetes-asyncio provides configuration, authentication (tokens, client
certificates, exec plugins) and the HTTP session; ktop issues raw requests
through ``ApiClient.call_api`` so that it can ask for server-side Tables,
read watch streams line by line, count bytes and read the APF headers.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
from kubernetes_asyncio.client import ApiClient
from multidict import CIMultiDict

from ktop import __version__
from ktop.sources.live.body import (
    ACCEPT_ENCODING,
    BodyDecoder,
    ResponseTooLargeError,
    encoding_of,
    read_capped,
    session_decodes,
)
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import ApiError, is_status, status_message
from ktop.structured import load_json

JSON = "application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
TEXT = "text/plain"
USER_AGENT = f"ktop/{__version__}"
WATCH_READ_TIMEOUT_S = 150.0
"""A watch that sends nothing (not even a bookmark) for this long is dead."""
MAX_LINE_BYTES = 64 << 20
"""The longest watch event ktop reads from a compressed stream (etcd's own limit on an
object is 1.5 MiB)."""
CONNECT_TIMEOUT_S = 15.0
"""Time limit for setting up a connection (TCP, TLS, proxy), for every request."""
REQUEST_TIMEOUT_S = 30.0
"""Default time limit for a whole request."""


class RequestTimeoutError(TimeoutError):
    """A request did not finish within its time limit; the message names the limit."""


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


Resolve = Callable[[str], frozenset[str]]
"""Host name to the addresses it resolves to (blocking: run it off the event loop)."""


def resolve_host(host: str) -> frozenset[str]:
    """The addresses ``host`` resolves to; empty when it does not resolve. Blocking."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return frozenset()
    return frozenset(str(info[4][0]) for info in infos)


def _host_port(name: str) -> tuple[str, str]:
    if name.endswith("]") or ":" not in name:
        return name, ""
    host, _, port = name.rpartition(":")
    return host, port


def same_instances(given: Iterable[str], seen: Iterable[str], resolve: Resolve) -> dict[str, str]:
    """Each name in ``seen`` (e.g. Prometheus' ``instance`` labels) that is one of the
    ``given`` instances (``--apiserver``, an authoritative list), mapped to that given
    name: the same name, or the same port and a host that resolves to a shared address.
    Names that are none of them are left out, and no two names map to one instance.
    Calls ``resolve`` (blocking): run it off the event loop.
    """
    wanted = list(dict.fromkeys(given))
    addresses: dict[str, frozenset[str]] = {}

    def addrs(name: str) -> frozenset[str]:
        host = _host_port(name)[0]
        if host not in addresses:
            addresses[host] = resolve(host) or frozenset({host.strip("[]")})
        return addresses[host]

    out: dict[str, str] = {}
    taken: set[str] = set()
    rest = sorted(set(seen))
    for name in rest:
        if name in wanted:
            out[name] = name
            taken.add(name)
    for name in rest:
        if name in out:
            continue
        port = _host_port(name)[1]
        for g in wanted:
            if g not in taken and _host_port(g)[1] == port and addrs(g) & addrs(name):
                out[name] = g
                taken.add(g)
                break
    return out


@dataclass(frozen=True, slots=True)
class Response:
    """A whole response."""

    status: int
    headers: Mapping[str, str]
    """Case-insensitive, as HTTP header names are."""
    body: bytes

    def json(self) -> Any:
        """The body as JSON; :class:`~ktop.structured.InputRefusedError` (a ValueError)
        when it is not JSON within ktop's limits (the hooks cost nothing measurable on a
        38 MB list of 5,000 nodes).
        """
        return load_json(self.body, "the apiserver's answer")


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
        session = getattr(getattr(api, "rest_client", None), "pool_manager", None)
        self.decodes = isinstance(session, aiohttp.ClientSession) and session_decodes(session)
        """The client's session leaves bodies compressed: ktop asks for gzip, counts the
        bytes as sent and decodes them (:mod:`ktop.sources.live.body`)."""

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": USER_AGENT}
        if self.decodes:
            headers["Accept-Encoding"] = ACCEPT_ENCODING
        return headers

    async def _call(
        self, path: str, query: Query, accept: str, timeout: aiohttp.ClientTimeout
    ) -> aiohttp.ClientResponse:
        self.meter.sent(self.destination)
        resp: aiohttp.ClientResponse = await self.api.call_api(
            path,
            "GET",
            query_params=list(query),
            header_params=self._headers(accept),
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=timeout,
            _host=self.host,
        )
        self.meter.request(path, resp.headers, resp.status, self.destination)
        return resp

    async def get(
        self, path: str, query: Query = (), accept: str = JSON, timeout_s: float = REQUEST_TIMEOUT_S
    ) -> Response:
        """GET a path.

        Raises :class:`ApiError` for an HTTP error status and
        :class:`RequestTimeoutError` (naming the limit) when it takes longer than ``timeout_s``.
        """
        timeout = aiohttp.ClientTimeout(
            total=timeout_s, sock_connect=min(timeout_s, CONNECT_TIMEOUT_S)
        )
        try:
            resp = await self._call(path, query, accept, timeout)
            async with resp:
                body, wire = await read_capped(resp, f"GET {path}", decode=self.decodes)
        except TimeoutError:
            raise RequestTimeoutError(
                f"GET {path} did not answer within {timeout_s:g}s (request time limit)"
            ) from None
        self.meter.received(wire, self.destination, decoded=len(body))
        if resp.status >= 400:
            raise ApiError(resp.status, "get", path, status_message(body), is_status(body))
        return Response(resp.status, CIMultiDict(resp.headers), body)

    async def get_head(
        self,
        path: str,
        query: Query,
        limit: int,
        accept: str = TEXT,
        timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> tuple[Response, bool]:
        """GET a path reading at most ``limit`` bytes of its body: the body (cut after its
        last whole line when the limit was reached) and whether it was cut. The rest is
        never read: the connection is closed. Errors as :meth:`get`.
        """
        timeout = aiohttp.ClientTimeout(
            total=timeout_s, sock_connect=min(timeout_s, CONNECT_TIMEOUT_S)
        )
        chunks: list[bytes] = []
        total, cut = 0, False
        try:
            resp = await self._call(path, query, accept, timeout)
            async with resp:
                # Read until ``limit`` decoded bytes; one chunk may inflate past it, but
                # never past the limit of any body.
                decoder = BodyDecoder(encoding_of(resp, self.decodes), f"GET {path}")
                async for chunk in resp.content.iter_chunked(64 << 10):
                    out = decoder.feed(chunk)
                    chunks.append(out)
                    total += len(out)
                    if total >= limit:
                        cut = True
                        resp.close()
                        break
                else:
                    chunks.append(decoder.finish())
        except TimeoutError:
            raise RequestTimeoutError(
                f"GET {path} did not answer within {timeout_s:g}s (request time limit)"
            ) from None
        body = b"".join(chunks)
        self.meter.received(decoder.wire, self.destination, decoded=len(body))
        if resp.status >= 400:
            raise ApiError(resp.status, "get", path, status_message(body), is_status(body))
        if cut:
            body = body[:limit]
            body = body[: body.rfind(b"\n") + 1]
        return Response(resp.status, CIMultiDict(resp.headers), body), cut

    @asynccontextmanager
    async def watch(
        self, path: str, query: Query, accept: str = JSON
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Open a watch stream; yields an iterator over its newline-delimited events."""
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=CONNECT_TIMEOUT_S, sock_read=WATCH_READ_TIMEOUT_S
        )
        try:
            resp = await self._call(path, [*query, ("watch", "true")], accept, timeout)
        except TimeoutError:
            raise RequestTimeoutError(
                f"watch {path} did not connect within {CONNECT_TIMEOUT_S:g}s "
                "(connection time limit)"
            ) from None
        async with resp:
            if resp.status >= 400:
                body, wire = await read_capped(resp, f"watch {path}", decode=self.decodes)
                self.meter.received(wire, self.destination, decoded=len(body))
                raise ApiError(resp.status, "watch", path, status_message(body))
            self.meter.watch_opened()
            try:
                yield self._lines(resp)
            finally:
                self.meter.watch_closed()

    async def _lines(self, resp: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
        encoding = encoding_of(resp, self.decodes)
        try:
            if encoding:
                async for line in self._inflated_lines(resp, encoding):
                    yield line
                return
            async for line in resp.content:
                self.meter.received(len(line), self.destination)
                if line.strip():
                    yield line
        except TimeoutError:
            raise RequestTimeoutError(
                f"watch sent nothing for {WATCH_READ_TIMEOUT_S:g}s (watch read time limit)"
            ) from None

    async def _inflated_lines(
        self, resp: aiohttp.ClientResponse, encoding: str
    ) -> AsyncIterator[bytes]:
        """The lines of a compressed watch stream (the apiserver sends watches as is,
        but a proxy in between may not); a line may be at most ``MAX_LINE_BYTES``.
        """
        rest = b""
        decoder = BodyDecoder(encoding, "watch stream", 1 << 62)
        async for chunk in resp.content.iter_any():
            before = decoder.decoded
            rest += decoder.feed(chunk)
            self.meter.received(len(chunk), self.destination, decoded=decoder.decoded - before)
            *lines, rest = rest.split(b"\n")
            if len(rest) > MAX_LINE_BYTES:
                raise ResponseTooLargeError(
                    f"watch stream: an event over {MAX_LINE_BYTES >> 20} MiB (size limit)"
                )
            for line in lines:
                if line.strip():
                    yield line + b"\n"
        rest += decoder.finish()
        if rest.strip():
            yield rest
