"""ktop's own cost: every request it makes is counted here, per destination.

Bytes are counted as they arrive on the wire: ktop asks for gzip and decodes bodies
itself (:mod:`ktop.sources.live.body`), so a compressed ``/metrics`` counts what the
server sent, not what it inflates to (that is kept too, as ``decoded_total``).

Destinations are ``apiserver`` (the kubeconfig's server address),
``apiserver HOST:PORT`` (one instance), ``prometheus`` and ``COMPONENT HOST:PORT``
(a metrics endpoint read directly). Requests that Prometheus answers run in
worker threads, so the counters are guarded by a lock.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping

from ktop.model.events import SelfCost

PF_FLOW_SCHEMA_UID = "X-Kubernetes-PF-FlowSchema-UID"
PF_PRIORITY_LEVEL_UID = "X-Kubernetes-PF-PriorityLevel-UID"


class CostMeter:
    """Counts requests, bytes, open watches and 429s; remembers the APF headers.

    The clock is passed in, so the meter is deterministic in tests.
    """

    def __init__(self, window_s: float = 60.0) -> None:
        self.window_s = window_s
        self.requests_total = 0
        self.requests_sent = 0
        self.bytes_total = 0
        """Bytes received as sent on the wire."""
        self.decoded_total = 0
        """The same bodies' bytes once decoded (what ktop parsed)."""
        self.throttled_total = 0
        self.open_watches = 0
        self.flow_schema_uid = ""
        self.priority_level_uid = ""
        self._marks: deque[tuple[float, int, int]] = deque()
        self.by_path: dict[str, int] = {}
        self.sent_by_destination: dict[str, int] = {}
        self.requests_by_destination: dict[str, int] = {}
        self.bytes_by_destination: dict[str, int] = {}
        self._lock = threading.Lock()

    def sent(self, destination: str = "apiserver") -> None:
        """A request is about to be sent (it may still fail before an answer)."""
        with self._lock:
            self.requests_sent += 1
            d = self.sent_by_destination
            d[destination] = d.get(destination, 0) + 1

    def request(
        self, path: str, headers: Mapping[str, str], status: int, destination: str = "apiserver"
    ) -> None:
        """Count one answered request (a list page, a GET, a scrape or a watch opened)."""
        with self._lock:
            self.requests_total += 1
            key = path.split("?", 1)[0]
            self.by_path[key] = self.by_path.get(key, 0) + 1
            d = self.requests_by_destination
            d[destination] = d.get(destination, 0) + 1
            if status == 429:
                self.throttled_total += 1
        fs = headers.get(PF_FLOW_SCHEMA_UID)
        pl = headers.get(PF_PRIORITY_LEVEL_UID)
        if fs:
            self.flow_schema_uid = fs
        if pl:
            self.priority_level_uid = pl

    def received(
        self, nbytes: int, destination: str = "apiserver", *, decoded: int | None = None
    ) -> None:
        """Count bytes of response bodies (watch streams included) as they came on the
        wire (compressed when the server compressed them); ``decoded`` is their size once
        decoded (the same when not given).
        """
        with self._lock:
            self.bytes_total += nbytes
            self.decoded_total += nbytes if decoded is None else decoded
            d = self.bytes_by_destination
            d[destination] = d.get(destination, 0) + nbytes

    def watch_opened(self) -> None:
        """A watch stream is open."""
        self.open_watches += 1

    def watch_closed(self) -> None:
        """A watch stream ended."""
        self.open_watches = max(0, self.open_watches - 1)

    def sample(self, now: float, names: Mapping[str, str]) -> SelfCost:
        """The cost over the last window, with APF UIDs resolved through ``names``."""
        with self._lock:
            by_destination = tuple(
                (d, n, self.bytes_by_destination.get(d, 0))
                for d, n in sorted(self.requests_by_destination.items())
            )
        self._marks.append((now, self.requests_total, self.bytes_total))
        while len(self._marks) > 1 and self._marks[0][0] < now - self.window_s:
            self._marks.popleft()
        t0, r0, b0 = self._marks[0]
        span = now - t0
        rps = (self.requests_total - r0) / span if span > 0 else 0.0
        bps = (self.bytes_total - b0) / span if span > 0 else 0.0
        return SelfCost(
            at=now,
            window_s=span,
            requests_per_s=rps,
            bytes_per_s=bps,
            open_watches=self.open_watches,
            requests_total=self.requests_total,
            bytes_total=self.bytes_total,
            priority_level=names.get(self.priority_level_uid, self.priority_level_uid),
            flow_schema=names.get(self.flow_schema_uid, self.flow_schema_uid),
            throttled_total=self.throttled_total,
            by_destination=by_destination,
        )
