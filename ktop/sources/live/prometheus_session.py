"""The requests session behind ktop's Prometheus client: every request counted by the
cost meter, and the bearer header read again for each request. Imported only when a
Prometheus client is built (:func:`ktop.sources.live.prometheus_connect.prometheus_client`).
"""

from __future__ import annotations

import time
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


INSTANT_QUERY = "/api/v1/query"
REFUSED = (401, 403)


class CountedSession(requests.Session):
    """A requests session whose every request the cost meter counts; an instant query that
    names no time is evaluated ``offset_s`` in the past (a lagging store); a refused answer
    (401, 403) is told to ``on_refused`` (a token command then asks for a new token).
    """

    def __init__(self, meter: CostMeter, destination: str) -> None:
        super().__init__()
        self.meter = meter
        self.destination = destination
        self.headers["User-Agent"] = USER_AGENT
        self.offset_s = 0.0
        self.on_refused: Callable[[], None] | None = None
        self.clock: Callable[[], float] = time.time

    def request(  # type: ignore[override]
        self, method: str, url: str, *args: Any, **kwargs: Any
    ) -> requests.Response:
        """Count the request, send it, count the answer and its bytes."""
        path = urlsplit(url).path
        params = kwargs.get("params")
        if self.offset_s and path.endswith(INSTANT_QUERY) and isinstance(params, dict):
            params.setdefault("time", f"{self.clock() - self.offset_s:.3f}")
        self.meter.sent(self.destination)
        resp = super().request(method, url, *args, **kwargs)
        self.meter.request(path, resp.headers, resp.status_code, self.destination)
        self.meter.received(len(resp.content), self.destination)
        if resp.status_code in REFUSED and self.on_refused is not None:
            self.on_refused()
        return resp


def bearer_auth(header: Callable[[], str]) -> requests.auth.AuthBase:
    """Auth that sets ``Authorization`` from ``header()`` on every request."""
    return _Bearer(header)
