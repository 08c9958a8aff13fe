"""API errors turned into messages that say what is missing."""

from __future__ import annotations

from dataclasses import dataclass

from ktop.structured import InputRefusedError, load_json


@dataclass(frozen=True, slots=True)
class ApiError(Exception):
    """An HTTP error from the apiserver (or a component's metrics endpoint)."""

    status: int
    verb: str
    what: str
    """The resource or URL path that was read."""
    message: str
    from_kubernetes: bool = True
    """False when the body is not a Kubernetes ``Status``: the answer came from
    behind the apiserver (a proxied pod or service, or a proxy on the way)."""

    def __str__(self) -> str:
        if not self.from_kubernetes:
            text = f": {self.message}" if self.message else ""
            return f"{self.status} on {self.verb} {self.what}, not from the apiserver{text}"
        return describe(self.status, self.verb, self.what, self.message)


def is_status(body: bytes) -> bool:
    """True when the body is a Kubernetes ``Status`` object (the apiserver's own answer)."""
    try:
        data = load_json(body, "the error body")
    except InputRefusedError:
        return False
    return isinstance(data, dict) and data.get("kind") == "Status"


def status_message(body: bytes) -> str:
    """The ``message`` of a ``Status`` body, or the body's start as text."""
    try:
        data = load_json(body, "the error body")
    except InputRefusedError:
        return body[:200].decode("utf-8", errors="replace").strip()
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return str(data["message"])
    return body[:200].decode("utf-8", errors="replace").strip()


def describe(status: int, verb: str, what: str, message: str) -> str:
    """A one-line explanation a user can act on."""
    if status == 401:
        return f"401 Unauthorized on {verb} {what}: credentials expired or rejected"
    if status == 403:
        return (
            f"403 Forbidden: RBAC does not allow '{verb}' on {what} "
            f"(see docs/rbac.yaml){': ' + message if message else ''}"
        )
    if status == 404:
        return f"404 Not Found: {what} is not served by this apiserver"
    if status == 410:
        return f"410 Gone: resourceVersion too old for {what}; relisting"
    if status == 429:
        return f"429 Too Many Requests on {what}: throttled by API Priority and Fairness"
    return f"{status} on {verb} {what}: {message}" if message else f"{status} on {verb} {what}"
