"""Connecting to a cluster: kubeconfig (or in-cluster) to an authenticated ApiClient.

kubernetes-asyncio reads the kubeconfig (client certificates, tokens, token
files, exec credential plugins, ``proxy-url``, ``tls-server-name``); ktop
never writes it back (``persist_config=False``) and re-runs exec plugins
before their tokens expire. Errors are turned into messages that name the
problem (unknown context, unreadable file, failing plugin), and never
contain a credential: every credential read (the kubeconfig's, an exec plugin's token,
in-cluster or refreshed) is recorded into the session's :class:`~ktop.scrub.Secrets`,
which the connection keeps (:attr:`Connection.secrets`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import os
import ssl
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from kubernetes_asyncio import config
from kubernetes_asyncio.client import ApiClient, Configuration
from kubernetes_asyncio.config.config_exception import ConfigException
from kubernetes_asyncio.config.kube_config import FileOrData, KubeConfigLoader

from ktop.scrub import Secrets
from ktop.sources.kubeconfig import KubeconfigError, ResolvedKubeconfig, load_context
from ktop.sources.live.body import BodyEncodingError, ResponseTooLargeError
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import ApiError
from ktop.sources.live.exec_plugin import EXEC_TIMEOUT_S, ExecPluginError, run_exec_plugin
from ktop.sources.live.memory_files import install as keep_key_files_in_memory
from ktop.sources.live.reads import NODE_COUNT, NODES, VERSION
from ktop.sources.live.transport import KubeTransport, RequestTimeoutError

TOKEN_REFRESH_INTERVAL_S = 60
EXPIRY_MARGIN_S = 120
"""Re-run an exec plugin this long before its credential expires."""
PROBE_TIMEOUT_S = 10.0
"""Time limit for the first request (connection set-up included)."""

log = logging.getLogger(__name__)
keep_key_files_in_memory()  # inline certificates and keys never touch $TMPDIR (Linux)


class _Loader(KubeConfigLoader):
    """kubernetes-asyncio's loader, with ktop's exec plugin runner in place of the library's.

    ktop's runner has a time limit, bounded output and a checked ExecCredential, and
    records what the plugin prints into ``secrets`` (the session's).
    """

    exec_timeout_s = EXEC_TIMEOUT_S
    interactive = True
    """A plugin may prompt on the first run only: later the dashboard owns the terminal."""

    def __init__(self, *args: Any, secrets: Secrets, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.secrets = secrets

    async def load_from_exec_plugin(self) -> bool:
        expiry: datetime | None = getattr(self, "exec_plugin_expiry", None)
        if expiry is not None and expiry - datetime.now(UTC) > timedelta(seconds=EXPIRY_MARGIN_S):
            return True
        assert self._user is not None
        allow, self.interactive = self.interactive, False
        cred = await run_exec_plugin(
            self._user["exec"].value,
            self.exec_timeout_s,
            allow_interaction=allow,
            secrets=self.secrets,
        )
        if cred.token:
            self.token = f"Bearer {cred.token}"
            self.secrets.add(self.token)
        else:
            status = {
                "clientCertificateData": cred.client_certificate_data,
                "clientKeyData": cred.client_key_data,
            }
            pairs = (("clientCertificateData", "cert_file"), ("clientKeyData", "key_file"))
            for key, attr in pairs:
                path = FileOrData(
                    status,
                    None,
                    data_key_name=key,
                    base64_file_content=False,
                    temp_file_path=self._temp_file_path,
                ).as_file()
                setattr(self, attr, path)
        if cred.expires is not None:
            self.exec_plugin_expiry = cred.expires
        return True


@dataclass(slots=True)
class Connection:
    """An authenticated client for one context, and what it connects to."""

    def bearer(self) -> str:
        """The current bearer header value (an exec plugin's refreshed token included)."""
        key = self.cfg.api_key
        return str(key.get("BearerToken", "") or key.get("authorization", ""))

    context: str
    server: str
    cfg: Configuration
    api: ApiClient
    refresher: asyncio.Task[None] | None = None
    refresh_error: str = ""
    """Why the last credential refresh failed (scrubbed), else empty."""
    git_version: str = ""
    """The server's ``gitVersion``, once :func:`probe` read it (it names the provider)."""
    meter: CostMeter = field(default_factory=CostMeter)
    """Counts every request made with this connection, from the first probe on (the
    source that reads the cluster counts with the same meter)."""
    secrets: Secrets = field(default_factory=Secrets, repr=False)
    """The session's credentials, which this connection's (refreshed ones too) are
    recorded into; its messages are scrubbed with them."""

    def instance_client(self, base_url: str) -> ApiClient:
        """A client for one apiserver instance (same credentials, another address).

        The TLS name stays the server's, so certificate checks still apply.
        """
        cfg = copy.copy(self.cfg)
        cfg.host = base_url
        if not cfg.tls_server_name:
            cfg.tls_server_name = urlsplit(self.server).hostname
        return counted_client(cfg)

    async def close(self) -> None:
        """Stop refreshing and close the HTTP session."""
        if self.refresher is not None:
            self.refresher.cancel()
        await self.api.close()


def in_cluster() -> bool:
    """True inside a pod (the service account environment is present)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


async def connect(
    kubeconfig: str | None,
    context: str | None,
    meter: CostMeter | None = None,
    *,
    secrets: Secrets,
) -> Connection:
    """Load credentials and build the client; raises KubeconfigError with the reason.

    ``meter`` (a new one by default) counts the connection's requests. Every credential
    read is recorded into ``secrets`` (the session's), which the connection keeps. Must
    run inside the event loop that will use the client.
    """
    meter = meter or CostMeter()
    cfg = Configuration()
    try:
        resolved: ResolvedKubeconfig | None = load_context(kubeconfig, context, secrets=secrets)
    except KubeconfigError:
        if kubeconfig or context or not in_cluster():
            raise
        resolved = None
    if resolved is None:
        try:
            config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        except ConfigException as exc:
            raise KubeconfigError(
                f"in-cluster configuration failed: {secrets.scrub(exc)}"
            ) from None
        secrets.add(cfg.api_key.get("BearerToken"))
        api = counted_client(cfg)
        return Connection("in-cluster", str(cfg.host), cfg, api, meter=meter, secrets=secrets)
    info = resolved.info
    where = f"kubeconfig {', '.join(info.defined_in or info.files)}: context {info.name!r}"
    loader = _Loader(
        config_dict=resolved.config,
        active_context=info.name,
        config_base_path="",
        secrets=secrets,
    )
    try:
        await loader.load_and_set(cfg)
    except ExecPluginError as exc:
        raise KubeconfigError(f"{where}: {exc}") from None
    except ConfigException as exc:
        raise KubeconfigError(f"{where}: {secrets.scrub(exc)}") from None
    except OSError as exc:
        raise KubeconfigError(
            f"{where}: cannot read a file it names: "
            f"{exc.strerror or type(exc).__name__}" + (f" ({exc.filename})" if exc.filename else "")
        ) from None
    except Exception as exc:  # the library's own checks (base64, types) may raise anything
        raise KubeconfigError(
            f"{where}: credentials could not be loaded "
            f"({type(exc).__name__}: {secrets.scrub(exc)[:200]})"
        ) from None
    secrets.add(cfg.api_key.get("BearerToken"))
    api = _api_client(cfg, where)
    conn = Connection(info.name, info.server, cfg, api, meter=meter, secrets=secrets)
    user = getattr(loader, "_user", None) or {}
    if "exec" in user:
        conn.refresher = asyncio.create_task(_refresh_exec(loader, cfg, conn))
    elif getattr(loader, "provider", "") == "gcp":
        conn.refresher = asyncio.create_task(
            config.refresh_token(loader, cfg, interval=TOKEN_REFRESH_INTERVAL_S)
        )
    return conn


READ_BUFSIZE = 2 << 20
"""The library's read buffer (a watch event may be as large as etcd's 1.5 MiB limit)."""


def counted_client(cfg: Configuration) -> ApiClient:
    """An ApiClient whose session leaves bodies as sent, so that the cost meter counts
    the bytes on the wire and ktop decodes them within its limits
    (:mod:`ktop.sources.live.body`). The library's own connector (TLS, pool) is kept.
    """
    api = ApiClient(configuration=cfg)
    rest = api.rest_client
    given: aiohttp.ClientSession = rest.pool_manager
    connector = given.connector
    given.detach()  # the connector now belongs to the session below
    rest.pool_manager = aiohttp.ClientSession(
        connector=connector, trust_env=True, read_bufsize=READ_BUFSIZE, auto_decompress=False
    )
    return api


def _api_client(cfg: Configuration, where: str) -> ApiClient:
    """The HTTP client; a certificate, key or CA that TLS cannot load is a KubeconfigError
    that begins with ``where`` (the kubeconfig files and the context).
    """
    try:
        return counted_client(cfg)
    except ssl.SSLError as exc:
        raise KubeconfigError(
            f"{where}: the client certificate, key or CA could not be loaded "
            f"({exc.reason or 'not a valid PEM certificate or key'})"
        ) from None
    except OSError as exc:
        raise KubeconfigError(
            f"{where}: cannot read a certificate or key file: {exc.strerror or type(exc).__name__}"
        ) from None


async def _refresh_exec(loader: _Loader, cfg: Configuration, conn: Connection) -> None:
    """Re-run the exec plugin before its credential expires; keep going after a failure."""
    while True:
        await asyncio.sleep(TOKEN_REFRESH_INTERVAL_S)
        try:
            await loader.load_from_exec_plugin()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            conn.refresh_error = conn.secrets.scrub(exc)
            log.warning("credential refresh failed: %s", conn.refresh_error)
            continue
        conn.refresh_error = ""
        with contextlib.suppress(AttributeError):
            cfg.api_key["BearerToken"] = loader.token


class ConnectError(Exception):
    """The server could not be reached or refused ktop; the message says which."""


async def probe(conn: Connection, timeout_s: float = PROBE_TIMEOUT_S) -> str:
    """GET /version once (counted by the connection's meter); return the server's
    gitVersion or raise ConnectError.
    """
    t = KubeTransport(conn.api, conn.meter)
    try:
        resp = await t.get(VERSION, timeout_s=timeout_s)
    except aiohttp.ClientConnectorCertificateError as exc:
        raise ConnectError(
            f"TLS verification of {conn.server} failed: {exc.certificate_error}"
        ) from exc
    except aiohttp.ClientSSLError as exc:
        raise ConnectError(f"TLS handshake with {conn.server} failed: {exc}") from exc
    except aiohttp.ClientConnectorError as exc:
        raise ConnectError(f"cannot reach {conn.server}: {exc.os_error}") from exc
    except (TimeoutError, RequestTimeoutError) as exc:
        raise ConnectError(
            f"{conn.server} did not answer within {timeout_s:g}s (connection time limit)"
        ) from exc
    except ApiError as exc:
        if exc.status == 401:
            raise ConnectError(
                f"{conn.server} rejected the credentials of context {conn.context!r} "
                "(expired or revoked); renew them and retry"
            ) from exc
        raise ConnectError(str(exc)) from exc
    except aiohttp.InvalidURL as exc:
        raise ConnectError(f"server URL of context {conn.context!r} is not valid") from exc
    except aiohttp.ClientError as exc:
        raise ConnectError(f"cannot talk to {conn.server}: {type(exc).__name__}: {exc}") from exc
    except (ResponseTooLargeError, BodyEncodingError) as exc:
        raise ConnectError(f"{conn.server}: {exc}") from exc
    try:
        body = resp.json()
    except ValueError as exc:  # a body that is not JSON
        raise ConnectError(f"{conn.server} did not answer /version with JSON") from exc
    if not isinstance(body, dict):
        raise ConnectError(f"{conn.server} did not answer /version with a JSON object")
    conn.git_version = str(body.get("gitVersion", "?"))
    return conn.git_version


async def node_count(conn: Connection, timeout_s: float = PROBE_TIMEOUT_S) -> int | None:
    """How many nodes the cluster has, from one LIST of a single node (the apiserver's
    ``remainingItemCount``): one small request, whatever the size. None when the server
    does not say (or the request fails): the caller must not guess. Counted by the
    connection's meter.
    """
    t = KubeTransport(conn.api, conn.meter)
    try:
        body = (await t.get(NODES, NODE_COUNT, timeout_s=timeout_s)).json()
    except (aiohttp.ClientError, TimeoutError, RequestTimeoutError, ApiError, ValueError):
        return None
    if not isinstance(body, dict):
        return None
    items = body.get("items")
    meta = body.get("metadata")
    if not isinstance(items, list) or not isinstance(meta, dict):
        return None
    remaining = meta.get("remainingItemCount")
    if isinstance(remaining, int) and remaining >= 0:
        return len(items) + remaining
    return len(items) if not meta.get("continue") else None
