"""Direct reads of etcd, scheduler and controller-manager metrics endpoints.

Managed clusters often hide these from Prometheus; when the user gives
their URLs, ktop reads them itself: etcd with client certificates, the
scheduler and controller-manager with the kubeconfig's bearer token (they
delegate authentication to the apiserver).

A URL in a message is scrubbed of the shapes of secrets only (user information, a query
parameter that names one): the URL is the user's own option, and every message made
here is an exception that its catcher scrubs whole with the session's known values
(:func:`~ktop.sources.live.scrape.failure_reason`, the bundle command).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from ktop.scrub import scrub_shapes
from ktop.sources.live.body import ACCEPT_ENCODING, read_capped, session_decodes
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import describe
from ktop.sources.live.scrape import Fetch
from ktop.sources.live.transport import CONNECT_TIMEOUT_S, RequestTimeoutError


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """Client certificate, key and CA bundle for an endpoint (all optional)."""

    cert: str | None = None
    key: str | None = None
    ca: str | None = None
    insecure: bool = False


def ssl_context(tls: TlsFiles) -> ssl.SSLContext:
    """An SSL context from the files given."""
    ctx = ssl.create_default_context(cafile=tls.ca)
    if tls.cert:
        ctx.load_cert_chain(tls.cert, keyfile=tls.key)
    if tls.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def http_fetcher(
    session: aiohttp.ClientSession,
    url: str,
    *,
    token: Callable[[], str] | None = None,
    tls: TlsFiles | None = None,
    timeout_s: float = 10.0,
    meter: CostMeter | None = None,
    destination: str = "",
) -> Fetch:
    """A fetch function for one metrics URL; ``meter`` counts its requests under
    ``destination``.
    """
    meter = meter or CostMeter()
    where = destination or url
    ctx = ssl_context(tls) if tls is not None and url.startswith("https") else None

    decode = session_decodes(session)

    async def fetch() -> bytes | None:
        headers = {"Accept": "text/plain"}
        if decode:
            headers["Accept-Encoding"] = ACCEPT_ENCODING
        if token is not None:
            bearer = token()
            if bearer:
                headers["Authorization"] = bearer
        meter.sent(where)
        try:
            async with session.get(
                url, headers=headers, ssl=ctx if ctx is not None else True,
                timeout=aiohttp.ClientTimeout(
                    total=timeout_s, sock_connect=min(timeout_s, CONNECT_TIMEOUT_S)
                ),
            ) as resp:  # fmt: skip
                meter.request(urlsplit(url).path, resp.headers, resp.status, where)
                body, wire = await read_capped(resp, f"GET {scrub_shapes(url)}", decode=decode)
                meter.received(wire, where, decoded=len(body))
        except TimeoutError:
            raise RequestTimeoutError(
                f"GET {scrub_shapes(url)} did not answer within {timeout_s:g}s (request time limit)"
            ) from None
        if resp.status >= 400:
            text = body[:200].decode("utf-8", "replace").strip()
            raise RuntimeError(describe(resp.status, "get", scrub_shapes(url), text))
        return body

    return fetch
