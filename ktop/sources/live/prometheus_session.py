"""The requests session behind ktop's Prometheus client: every request counted by the
cost meter, and the bearer header read again for each request. Imported only when a
Prometheus client is built (:func:`ktop.sources.live.prometheus_connect.prometheus_client`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import requests

from ktop.sources.live.cost import CostMeter
from ktop.sources.live.transport import USER_AGENT


class _Bearer(requests.auth.AuthBase):
    """Sets ``Authorization`` from a callable on every request."""

    def __init__(self, header: Callable[[], str]) -> None:
        self.header = header

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        value = self.header()
        if value:
            r.headers["Authorization"] = value
        return r


class CountedSession(requests.Session):
    """A requests session whose every request the cost meter counts."""

    def __init__(self, meter: CostMeter, destination: str) -> None:
        super().__init__()
        self.meter = meter
        self.destination = destination
        self.headers["User-Agent"] = USER_AGENT

    def request(  # type: ignore[override]
        self, method: str, url: str, *args: Any, **kwargs: Any
    ) -> requests.Response:
        """Count the request, send it, count the answer and its bytes."""
        self.meter.sent(self.destination)
        resp = super().request(method, url, *args, **kwargs)
        self.meter.request(urlsplit(url).path, resp.headers, resp.status_code, self.destination)
        self.meter.received(len(resp.content), self.destination)
        return resp


def bearer_auth(header: Callable[[], str]) -> requests.auth.AuthBase:
    """Auth that sets ``Authorization`` from ``header()`` on every request."""
    return _Bearer(header)
