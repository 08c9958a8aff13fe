"""Connecting to a cluster: kubeconfig (or in-cluster) to an authenticated ApiClient.

kubernetes-asyncio reads the kubeconfig (client certificates, tokens, token
files, exec credential plugins, ``proxy-url``, ``tls-server-name``); ktop
never writes it back (``persist_config=False``) and re-runs exec plugins
before their tokens expire. Errors are turned into messages that name the
problem (unknown context, unreadable file, failing plugin), and never
contain a credential.
"""

from __future__ import annotations

import asyncio
import copy
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from kubernetes_asyncio import config
from kubernetes_asyncio.client import ApiClient, Configuration
from kubernetes_asyncio.config.config_exception import ConfigException

from ktop.sources.kubeconfig import ContextInfo, KubeconfigError, resolve_context
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import ApiError
from ktop.sources.live.transport import KubeTransport

TOKEN_REFRESH_INTERVAL_S = 60


@dataclass(slots=True)
class Connection:
    """An authenticated client for one context, and what it connects to."""

    context: str
    server: str
    cfg: Configuration
    api: ApiClient
    refresher: asyncio.Task[None] | None = None

    def instance_client(self, base_url: str) -> ApiClient:
        """A client for one apiserver instance (same credentials, another address).

        The TLS name stays the server's, so certificate checks still apply.
        """
        cfg = copy.copy(self.cfg)
        cfg.host = base_url
        if not cfg.tls_server_name:
            cfg.tls_server_name = urlsplit(self.server).hostname
        return ApiClient(configuration=cfg)

    async def close(self) -> None:
        """Stop refreshing and close the HTTP session."""
        if self.refresher is not None:
            self.refresher.cancel()
        await self.api.close()


def in_cluster() -> bool:
    """True inside a pod (the service account environment is present)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


async def connect(kubeconfig: str | None, context: str | None) -> Connection:
    """Load credentials and build the client; raises KubeconfigError with the reason.

    Must run inside the event loop that will use the client.
    """
    cfg = Configuration()
    try:
        info: ContextInfo | None = resolve_context(kubeconfig, context)
    except KubeconfigError:
        if kubeconfig or context or not in_cluster():
            raise
        info = None
    if info is None:
        try:
            config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        except ConfigException as exc:
            raise KubeconfigError(f"in-cluster configuration failed: {exc}") from exc
        return Connection("in-cluster", str(cfg.host), cfg, ApiClient(configuration=cfg))
    try:
        loader = await config.load_kube_config(
            config_file=kubeconfig,
            context=info.name,
            client_configuration=cfg,
            persist_config=False,
        )
    except ConfigException as exc:
        raise KubeconfigError(f"context {info.name!r}: {exc}") from exc
    except OSError as exc:
        raise KubeconfigError(f"context {info.name!r}: credential plugin failed: {exc}") from exc
    conn = Connection(info.name, info.server, cfg, ApiClient(configuration=cfg))
    user = getattr(loader, "_user", None) or {}
    if "exec" in user or getattr(loader, "provider", "") == "gcp":
        conn.refresher = asyncio.create_task(
            config.refresh_token(loader, cfg, interval=TOKEN_REFRESH_INTERVAL_S)
        )
    return conn


class ConnectError(Exception):
    """The server could not be reached or refused ktop; the message says which."""


async def probe(conn: Connection, timeout_s: float = 10.0) -> str:
    """GET /version once; return the server's gitVersion or raise ConnectError."""
    t = KubeTransport(conn.api, CostMeter())
    try:
        body = (await t.get("/version", timeout_s=timeout_s)).json()
    except aiohttp.ClientConnectorCertificateError as exc:
        raise ConnectError(
            f"TLS verification of {conn.server} failed: {exc.certificate_error}"
        ) from exc
    except aiohttp.ClientSSLError as exc:
        raise ConnectError(f"TLS handshake with {conn.server} failed: {exc}") from exc
    except aiohttp.ClientConnectorError as exc:
        raise ConnectError(f"cannot reach {conn.server}: {exc.os_error}") from exc
    except TimeoutError as exc:
        raise ConnectError(f"{conn.server} did not answer within {timeout_s:.0f}s") from exc
    except ApiError as exc:
        if exc.status == 401:
            raise ConnectError(
                f"{conn.server} rejected the credentials of context {conn.context!r} "
                "(expired or revoked); renew them and retry"
            ) from exc
        raise ConnectError(str(exc)) from exc
    return str(body.get("gitVersion", "?"))
