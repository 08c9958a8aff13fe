"""Reaching Prometheus the way it is deployed: by URL (bearer token file, basic auth, CA
bundle, client certificate) or, with ``k8s://NAMESPACE/SERVICE:PORT``, through the
apiserver's service proxy with the kubeconfig's credentials. :func:`prometheus_client`
builds the one client; every request it makes is counted by the cost meter (its own
retries are off: a hidden retry would be an uncounted request).

The client's libraries (prometheus-api-client, requests: 130 modules, about 5 MB) are
imported when the first client is built, not by a session without Prometheus.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ktop.files import FileRefusedError, read_secret_file
from ktop.scrub import Secrets
from ktop.sources.live.addresses import (
    K8S_EXPECTED,
    K8S_SCHEME,
    shown,
    split_k8s_address,
    url_problem,
)
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.reads import SERVICE_PROXY

if TYPE_CHECKING:
    from prometheus_api_client import PrometheusConnect

    from ktop.sources.live.token_command import TokenCommand

DESTINATION = "prometheus"
"""The cost meter's name for requests to Prometheus."""
DESTINATION_PROXIED = "prometheus via apiserver"
"""... and for requests to Prometheus through the apiserver's service proxy (they cost
the apiserver too)."""


class PrometheusConfigError(ValueError):
    """A Prometheus address or option that cannot work; the message says why."""


@dataclass(frozen=True, slots=True)
class PrometheusAuth:
    """How to authenticate to Prometheus and check its certificate (all optional)."""

    bearer_token_file: str | None = None
    """Read before every request (projected tokens rotate)."""
    token_command: tuple[str, ...] = ()
    """A command that prints the token (:class:`~.token_command.TokenCommand`)."""
    headers: tuple[str, ...] = ()
    """``NAME:VALUE`` headers sent with every request (a tenant: ``X-Scope-OrgID``)."""
    offset_s: float = 0.0
    """Queries ktop evaluates at "now" are evaluated this long before (a lagging store)."""
    sigv4: bool = False
    """Sign with AWS SigV4 (Amazon Managed Service for Prometheus)."""
    sigv4_region: str | None = None
    """Its region (default: the workspace URL's, else the AWS configuration's)."""
    username: str | None = None
    password_file: str | None = None
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    insecure: bool = False


HEADER_EXPECTED = "NAME:VALUE (a header name, a colon, its value)"
_TOKEN_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # a header name: RFC 9110's token
CREDENTIAL_HEADER = re.compile(r"auth|cookie|token|key|secret|password", re.I)
"""A header whose value is recorded as a secret (a tenant name is not one)."""


def split_header(text: str) -> tuple[str, str] | None:
    """``("X-Scope-OrgID", "tenant-a")`` from ``X-Scope-OrgID: tenant-a``; None when it is
    not a header (no colon, a name that is not a token, a line break in it).
    """
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _TOKEN_NAME.match(name) or any(c in value for c in "\r\n\0"):
        return None
    return name, value


@dataclass(frozen=True, slots=True)
class KubeAccess:
    """How to reach the apiserver with the kubeconfig's credentials (service proxy)."""

    server: str
    verify: bool | str
    """True, False, or a CA bundle file."""
    cert: tuple[str, str] | None
    token: Callable[[], str]
    """The ``Authorization`` header value (empty when the client certificate is used)."""


def service_proxy_url(server: str, address: str) -> str:
    """The service-proxy base URL of ``k8s://NAMESPACE/SERVICE:PORT``.

    ``SERVICE`` may carry a scheme (``https:prometheus:9090``) as the proxy allows;
    ``PORT`` is a port number or name.
    """
    split = split_k8s_address(address)
    if split is None:
        raise PrometheusConfigError(f"{address!r}: expected {K8S_EXPECTED}")
    namespace, service = split
    path = SERVICE_PROXY.format(namespace=quote(namespace), service=quote(service, safe=":"))
    return server.rstrip("/") + path


def _secret_from(option: str, path: str, secrets: Secrets) -> str:
    """The token or password in the file ``option`` names, trimmed as kubectl trims a token
    file and recorded into ``secrets``; :class:`PrometheusConfigError` naming the option
    and the file when it cannot be used.
    """
    try:
        value = read_secret_file(path)
    except FileRefusedError as exc:  # its message names the file
        raise PrometheusConfigError(f"{exc.strerror} (given as {option})") from None
    except OSError as exc:
        raise PrometheusConfigError(
            f"cannot read {path} (given as {option}): {exc.strerror or type(exc).__name__}"
        ) from None
    secrets.add(value)
    return value


def _file_token(path: str, secrets: Secrets) -> Callable[[], str]:
    """The bearer header, read from ``path`` at every request (projected tokens rotate);
    read once now, so that a file that cannot be used is refused before any request.
    """
    option = "--prometheus-token-file"

    def header() -> str:
        return "Bearer " + _secret_from(option, path, secrets)

    header()
    return header


NO_KUBE_TOKEN = (
    "the kubeconfig's credentials are not a bearer token (a client certificate?), and "
    "Thanos Querier's proxy takes only a token: give --prometheus-token-file with a "
    "token of a user allowed to read metrics (cluster-monitoring-view; 'oc whoami -t')"
)


def _kube_token(kube: KubeAccess | None) -> Callable[[], str]:
    """The kubeconfig's ``Authorization`` value, at each request (refreshed as the
    apiserver's is); :class:`PrometheusConfigError` when it has no bearer token.
    """
    if kube is None or not kube.token():
        raise PrometheusConfigError(NO_KUBE_TOKEN)
    return kube.token


def _token_command(argv: tuple[str, ...], secrets: Secrets) -> TokenCommand:
    """The command's token source; refused now when the command cannot be found."""
    from ktop.sources.live.token_command import OPTION, TokenCommand  # noqa: PLC0415

    if shutil.which(argv[0]) is None:
        raise PrometheusConfigError(f"{OPTION}: {argv[0]!r}: no such command")
    return TokenCommand(argv, secrets)


def _headers(into: Any, headers: tuple[str, ...], secrets: Secrets) -> None:
    """Set each ``NAME:VALUE`` on ``into``; a credential-like one's value is a secret."""
    for text in headers:
        split = split_header(text)
        if split is None:
            raise PrometheusConfigError(f"--prometheus-header: expected {HEADER_EXPECTED}")
        name, value = split
        if CREDENTIAL_HEADER.search(name):
            secrets.add(value)
        into[name] = value


def prometheus_client(
    address: str,
    meter: CostMeter,
    *,
    auth: PrometheusAuth | None = None,
    kube: KubeAccess | None = None,
    kube_bearer: bool = False,
    timeout_s: float = 10.0,
    secrets: Secrets,
) -> PrometheusConnect:
    """The one way ktop builds a Prometheus client (instant and range queries alike).

    ``address`` is an ``http(s)://`` URL, or ``k8s://NAMESPACE/SERVICE:PORT`` to go
    through the apiserver's service proxy with ``kube``'s credentials. Every request
    is counted by ``meter`` under ``prometheus`` (``prometheus via apiserver`` through the
    service proxy); the library's own retries are off
    (a hidden retry would be an uncounted request: ktop retries at its next poll). The
    credentials read from files are recorded in the session's ``secrets``. With
    ``kube_bearer`` (OpenShift's Thanos Querier, which authenticates the cluster's users)
    and no credential of its own, a URL is sent ``kube``'s bearer token.
    """
    # Imported here: a session without Prometheus never loads requests (see the docstring).
    from prometheus_api_client import PrometheusConnect  # noqa: PLC0415
    from urllib3.util.retry import Retry  # noqa: PLC0415

    from ktop.sources.live.prometheus_session import (  # noqa: PLC0415
        CountedSession,
        bearer_auth,
    )

    auth = auth or PrometheusAuth()
    proxied = address.startswith(K8S_SCHEME)
    if proxied and auth.sigv4:
        raise PrometheusConfigError("--prometheus-sigv4 signs an https:// URL, not k8s://")
    session = CountedSession(meter, DESTINATION_PROXIED if proxied else DESTINATION)
    basic: tuple[str, str] | None = None
    bearer: Callable[[], str] | None = None
    if proxied:
        if kube is None:
            raise PrometheusConfigError(f"{address}: the service proxy needs a kubeconfig")
        url = service_proxy_url(kube.server, address)
        session.verify = kube.verify
        session.cert = kube.cert
        bearer = kube.token
    else:
        if url_problem(address) is not None:
            raise PrometheusConfigError(
                f"{shown(address)}: expected an http(s):// URL or k8s://NAMESPACE/SERVICE:PORT"
            )
        url = address.rstrip("/")
        session.verify = False if auth.insecure else (auth.ca or True)
        if auth.cert:
            session.cert = (auth.cert, auth.key) if auth.key else auth.cert
        given = [auth.bearer_token_file, auth.token_command, auth.username is not None]
        if sum(map(bool, [*given, auth.sigv4])) > 1:
            raise PrometheusConfigError(
                "give one of a token file, a token command, basic auth and SigV4 for Prometheus"
            )
        if auth.bearer_token_file:
            bearer = _file_token(auth.bearer_token_file, secrets)
        if auth.token_command:
            command = _token_command(auth.token_command, secrets)
            bearer, session.on_refused = command.header, command.refused
        if kube_bearer and not any([*given, auth.sigv4]):
            bearer = _kube_token(kube)
        if auth.username is not None:
            password = ""
            if auth.password_file:
                password = _secret_from("--prometheus-password-file", auth.password_file, secrets)
            basic = (auth.username, password)
    _headers(session.headers, auth.headers, secrets)
    session.offset_s = auth.offset_s
    client_auth: Any = basic if basic is not None else (bearer_auth(bearer) if bearer else None)
    if auth.sigv4:
        from ktop.sources.live.prometheus_sigv4 import SigV4Error, sigv4_auth  # noqa: PLC0415

        try:
            client_auth = sigv4_auth(url, auth.sigv4_region, secrets)
        except SigV4Error as exc:
            raise PrometheusConfigError(str(exc)) from None
    return PrometheusConnect(
        url=url,
        session=session,
        auth=client_auth,
        retry=Retry(total=0, connect=0, read=0, redirect=0, status=0),
        timeout=timeout_s,  # requests takes a float
    )
