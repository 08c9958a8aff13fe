"""The shapes of the addresses ktop is given to read from, checked before anything connects.

Pure (no I/O): the command line checks ``--apiserver``, ``--prometheus`` and the component
URLs with these as it parses them, and the Prometheus client splits ``k8s://`` addresses
with :func:`split_k8s_address`. A message never repeats a URL's user information (it may
be a password): :func:`shown` replaces it.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

PROMETHEUS_AUTO = "auto"
"""``--prometheus auto``: find an in-cluster Prometheus and read it through the proxy."""
K8S_SCHEME = "k8s://"
"""The address scheme of a Prometheus reached through the apiserver's service proxy."""
K8S_EXPECTED = "k8s://NAMESPACE/SERVICE:PORT (for example k8s://monitoring/prometheus-k8s:web)"
URL_EXPECTED = "an http:// or https:// URL with a host (https://HOST[:PORT][/PATH])"

_HOST = re.compile(r"[A-Za-z0-9._~%!$&'()*+,;=-]+|\[[0-9A-Fa-f:.]+(%[A-Za-z0-9._~-]+)?\]")
"""A URL's host: a name or IPv4 address (RFC 3986 reg-name), or an IPv6 literal."""
_SHOWN = 80
"""At most this many characters of a refused address are repeated."""


def shown(address: str) -> str:
    """``address`` as a message may show it: user information (``user:password@``) replaced
    with ``***@``, control characters escaped, cut at 80 characters.
    """
    scheme, sep, rest = address.partition("://")
    if sep:
        authority_end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
        authority = rest[:authority_end]
        if "@" in authority:
            rest = "***@" + authority.rsplit("@", 1)[1] + rest[authority_end:]
        address = scheme + sep + rest
    elif "@" in address:
        address = "***@" + address.rsplit("@", 1)[1]
    text = repr(address)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 4] + "...'"


def url_problem(address: str) -> str | None:
    """What is wrong with ``address`` as an http(s) URL to read (None: nothing): the
    scheme, the host, the port (1 to 65535), whitespace or control characters.
    """
    if any(c.isspace() or not c.isprintable() for c in address):
        return "spaces or control characters in it"
    scheme = address.partition("://")[0].lower() if "://" in address else ""
    if scheme not in ("http", "https"):
        return f"the scheme is {scheme!r}" if scheme else "no http:// or https:// scheme"
    try:
        parts: SplitResult = urlsplit(address)
        port = parts.port
    except ValueError:
        return "the port is not a number from 1 to 65535"
    host = parts.netloc.rsplit("@", 1)[-1]
    host = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if not host:
        return "no host"
    if not _HOST.fullmatch(host):
        return "the host is not a host name or an IP address"
    if port == 0:
        return "the port is not a number from 1 to 65535"
    return None


def split_k8s_address(address: str) -> tuple[str, str] | None:
    """``(NAMESPACE, SERVICE:PORT)`` of ``k8s://NAMESPACE/SERVICE:PORT`` (None: not one)."""
    if any(c.isspace() or not c.isprintable() for c in address):
        return None
    rest = address.removeprefix(K8S_SCHEME).strip("/")
    namespace, sep, service = rest.partition("/")
    if not sep or not namespace or not service or "/" in service:
        return None
    return namespace, service
